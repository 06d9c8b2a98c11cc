/**
 * Withdrawal addresses and trusted linked wallets over the engine's real wiring (Stack +
 * accountStackApi, uWS, PGlite, the real key, session and device-token auth, the webhook
 * outbox). Spec document 2: 2.1, section 4 rule 3, section 5 rule 7, section 6. Every refusal
 * asserts its status and code and that nothing was recorded (rows and outbox queried).
 */
import { getBase58Decoder } from "@solana/kit"
import { getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LevelScopes } from "../../src/services/keys/Scopes.js"
import { TRUST_BATCH_MAX } from "../../src/services/transfers/TrustedWallets.js"
import { WITHDRAWAL_ADDRESSES_MAX } from "../../src/services/transfers/WithdrawalAddresses.js"
import { call } from "../support/accountsHarness.js"
import { type StackHarness, startStackHarness } from "../support/stackHarness.js"

let h: StackHarness

beforeAll(async () => {
  // Every answer is checked against the mounted routes' OpenAPI document.
  h = await startStackHarness({ contract: true })
}, 120_000)
afterAll(async () => {
  if (h !== undefined) await h.close()
})

const solanaAddress = () => getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))
const evmAddress = () => privateKeyToAccount(generatePrivateKey()).address
const EVENTS = ["withdrawal_address.added", "withdrawal_address.revoked", "linked_wallet.trusted", "linked_wallet.untrusted"]

const outbox = (accountId: string) =>
  h.query<{ event: string; data: Record<string, any> }>("SELECT event, data FROM webhook_deliveries WHERE account_id = $1 ORDER BY created_at, id", accountId)
const addressRows = (accountId: string) =>
  h.query<{ id: string; address: string; revoked_at: Date | null }>("SELECT id, address, revoked_at FROM withdrawal_addresses WHERE account_id = $1 ORDER BY seq", accountId)

/** An account with a webhook endpoint for the transfer events, Solana and EVM delegated, and a Withdraw key. */
const setup = async () => {
  const a = await h.newAccount()
  await h.delegate(a.accountId, "solana")
  await h.delegate(a.accountId, "evm")
  await h.subscribe(a.session, EVENTS)
  const withdraw = await h.issue(a.session, { scopes: LevelScopes.readwritetransfer })
  return { ...a, withdraw }
}

describe("withdrawal addresses", () => {
  it("a session adds per chain (Solana base58 key, EVM checksummed), lists and gets one added event each", async () => {
    const a = await setup()
    const sol = solanaAddress()
    const evm = evmAddress()
    const s = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "solana", address: sol, label: "  cold  " } })
    expect(s.status, JSON.stringify(s.body)).toBe(200)
    expect(s.body).toMatchObject({ success: true, created: true, address: { chain: "solana", address: sol, label: "cold" } })
    const e = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "hood", address: evm } })
    expect(e.status, JSON.stringify(e.body)).toBe(200)
    expect(e.body.address).toMatchObject({ chain: "evm", address: evm })
    expect(e.body.address.label).toBeUndefined()

    const all = await call(h.url, "GET", "/api/v1/agent/withdrawal-addresses", { apiKey: a.withdraw.key })
    expect(all.status).toBe(200)
    expect(all.body.addresses.map((x: { address: string }) => x.address)).toEqual([sol, evm])
    const onlySol = await call(h.url, "GET", "/api/v1/agent/withdrawal-addresses?chain=solana", { session: a.session })
    expect(onlySol.body.addresses.map((x: { address: string }) => x.address)).toEqual([sol])

    expect((await outbox(a.accountId)).map((r) => [r.event, r.data])).toEqual([
      ["withdrawal_address.added", { chain: "solana", address: sol, label: "cold" }],
      ["withdrawal_address.added", { chain: "evm", address: evm }]
    ])
  })

  it("adding an address already active returns it and writes no second row or event", async () => {
    const a = await setup()
    const evm = evmAddress()
    const first = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "evm", address: evm } })
    const again = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "evm", address: evm } })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ created: false, address: { id: first.body.address.id } })
    expect(await addressRows(a.accountId)).toHaveLength(1)
    expect(await outbox(a.accountId)).toHaveLength(1)
  })

  it("LOOSEN_REQUIRES_SESSION: an agent key (even Withdraw) and a device token cannot add; nothing recorded", async () => {
    const a = await setup()
    const body = { chain: "solana", address: solanaAddress() }
    const byKey = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { apiKey: a.withdraw.key, body })
    expect([byKey.status, byKey.body.error.code]).toEqual([403, "LOOSEN_REQUIRES_SESSION"])
    const device = await h.deviceToken(a.session)
    const byDevice = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { bearer: device, body })
    expect([byDevice.status, byDevice.body.error.code]).toEqual([403, "LOOSEN_REQUIRES_SESSION"])
    expect(await addressRows(a.accountId)).toHaveLength(0)
    expect(await outbox(a.accountId)).toHaveLength(0)
  })

  it("validates per chain: not a 32-byte base58 key, an EVM address without or with a wrong EIP-55 checksum", async () => {
    const a = await setup()
    const evm = evmAddress()
    const lower = evm.toLowerCase()
    const wrongCase = evm.slice(0, 2) + [...evm.slice(2)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join("")
    const bad: ReadonlyArray<[string, string]> = [
      ["solana", getBase58Decoder().decode(new Uint8Array(31).fill(7))],
      ["solana", "0OIl" + solanaAddress().slice(4)],
      ["solana", evm],
      ["evm", lower],
      ["evm", wrongCase],
      ["evm", "0x1234"],
      ["evm", solanaAddress()]
    ]
    for (const [chain, address] of bad) {
      // A wrong-case address may happen to be valid only when it has no letters: then it is the same address.
      if (chain === "evm" && address === wrongCase && getAddress(wrongCase) === wrongCase) continue
      const r = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain, address } })
      expect([r.status, r.body.error.code, r.body.error.field], `${chain} ${address}`).toEqual([400, "VALIDATION_FAILED", "address"])
    }
    const badChain = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "btc", address: evm } })
    expect([badChain.status, badChain.body.error.field]).toEqual([400, "chain"])
    expect(await addressRows(a.accountId)).toHaveLength(0)
    expect(await outbox(a.accountId)).toHaveLength(0)
  })

  it(`holds at most ${WITHDRAWAL_ADDRESSES_MAX} active addresses: the next is refused, a revoke makes room`, async () => {
    const a = await setup()
    for (let i = 0; i < WITHDRAWAL_ADDRESSES_MAX; i++) {
      const r = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: i % 2 === 0 ? "solana" : "evm", address: i % 2 === 0 ? solanaAddress() : evmAddress() } })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
    }
    const over = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "solana", address: solanaAddress() } })
    expect([over.status, over.body.error.code, over.body.error.reason, over.body.error.limit]).toEqual([409, "VALIDATION_FAILED", "withdrawal_address_limit", WITHDRAWAL_ADDRESSES_MAX])
    expect(await addressRows(a.accountId)).toHaveLength(WITHDRAWAL_ADDRESSES_MAX)
    const [first] = await addressRows(a.accountId)
    expect((await call(h.url, "DELETE", `/api/v1/agent/withdrawal-addresses/${first!.id}`, { session: a.session })).status).toBe(200)
    const room = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "solana", address: solanaAddress() } })
    expect(room.status).toBe(200)
  }, 120_000)

  it("revoke: a Withdraw key may narrow; one revoked event; idempotent; another account's id and a Write key are refused", async () => {
    const a = await setup()
    const b = await setup()
    const sol = solanaAddress()
    const added = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "solana", address: sol, label: "ops" } })
    const id = added.body.address.id as string

    const foreign = await call(h.url, "DELETE", `/api/v1/agent/withdrawal-addresses/${id}`, { session: b.session })
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "VALIDATION_FAILED"])
    const write = await h.issue(a.session, { scopes: LevelScopes.readwrite })
    const noScope = await call(h.url, "DELETE", `/api/v1/agent/withdrawal-addresses/${id}`, { apiKey: write.key })
    expect([noScope.status, noScope.body.error.code]).toEqual([403, "SCOPE_MISSING"])
    expect((await addressRows(a.accountId))[0]!.revoked_at).toBeNull()

    const revoked = await call(h.url, "DELETE", `/api/v1/agent/withdrawal-addresses/${id}`, { apiKey: a.withdraw.key })
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
    expect(revoked.body).toMatchObject({ success: true, id })
    const again = await call(h.url, "DELETE", `/api/v1/agent/withdrawal-addresses/${id}`, { session: a.session })
    expect(again.body).toEqual(revoked.body)
    const unknown = await call(h.url, "DELETE", "/api/v1/agent/withdrawal-addresses/wad_nope", { session: a.session })
    expect(unknown.status).toBe(404)

    expect((await outbox(a.accountId)).map((r) => [r.event, r.data])).toEqual([
      ["withdrawal_address.added", { chain: "solana", address: sol, label: "ops" }],
      ["withdrawal_address.revoked", { chain: "solana", address: sol, label: "ops" }]
    ])
    expect((await call(h.url, "GET", "/api/v1/agent/withdrawal-addresses", { session: a.session })).body.addresses).toEqual([])
    // Re-adding after a revoke is a new approval with its own event.
    expect((await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "solana", address: sol } })).body.created).toBe(true)
  })

  it("a failing outbox write rolls the add back: the event and the row are one transaction", async () => {
    const a = await setup()
    await h.query(`CREATE OR REPLACE FUNCTION transfers_test_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$ LANGUAGE plpgsql`)
    await h.query(`CREATE TRIGGER transfers_test_refuse BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION transfers_test_refuse()`)
    try {
      const r = await call(h.url, "POST", "/api/v1/agent/withdrawal-addresses", { session: a.session, body: { chain: "solana", address: solanaAddress() } })
      expect([r.status, r.body.error.code]).toEqual([500, "INTERNAL"])
    } finally {
      await h.query("DROP TRIGGER transfers_test_refuse ON webhook_deliveries")
    }
    expect(await addressRows(a.accountId)).toHaveLength(0)
  })
})

describe("trusted linked wallets", () => {
  it("a device token marks trust in one batch (one event: batchId, actor device, wallets); a session clears it", async () => {
    const a = await setup()
    const w1 = await h.linkEvm(a.session, a.accountId, "desk")
    const w2 = await h.linkEvm(a.session, a.accountId)
    const device = await h.deviceToken(a.session)

    const marked = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { bearer: device, body: { walletIds: [w1.id, w2.id], trusted: true } })
    expect(marked.status, JSON.stringify(marked.body)).toBe(200)
    expect(marked.body).toMatchObject({ success: true, changed: 2, wallets: [{ id: w1.id, trusted: true }, { id: w2.id, trusted: true }] })
    expect(marked.body.batchId).toMatch(/^tb_/)
    const listed = await call(h.url, "GET", "/api/v1/agent/wallets/trusted", { apiKey: a.withdraw.key })
    expect(listed.body.wallets.map((w: { id: string }) => w.id)).toEqual([w1.id, w2.id])

    // Nothing changes: no event.
    const same = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { session: a.session, body: { walletIds: [w1.id], trusted: true } })
    expect(same.body.changed).toBe(0)

    const cleared = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { session: a.session, body: { walletIds: [w2.id, w1.id], trusted: false } })
    expect(cleared.body.changed).toBe(2)

    const events = await outbox(a.accountId)
    expect(events.map((e) => e.event)).toEqual(["linked_wallet.trusted", "linked_wallet.untrusted"])
    expect(events[0]!.data).toEqual({
      batchId: marked.body.batchId,
      actor: "device",
      wallets: [
        { id: w1.id, chain: "evm", address: w1.address, label: "desk" },
        { id: w2.id, chain: "evm", address: w2.address }
      ]
    })
    expect(events[1]!.data).toMatchObject({ batchId: cleared.body.batchId, actor: "session", wallets: [{ id: w2.id }, { id: w1.id }] })
    expect((await call(h.url, "GET", "/api/v1/agent/wallets/trusted", { session: a.session })).body.wallets).toEqual([])
  })

  it("refuses an agent key, an unknown, foreign or revoked wallet (the whole batch) and a bad batch; nothing changes", async () => {
    const a = await setup()
    const b = await setup()
    const mine = await h.linkEvm(a.session, a.accountId)
    const gone = await h.linkEvm(a.session, a.accountId)
    expect((await call(h.url, "DELETE", `/api/v1/agent/wallets/${gone.id}`, { session: a.session })).status).toBe(200)
    const theirs = await h.linkEvm(b.session, b.accountId)

    const byKey = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { apiKey: a.withdraw.key, body: { walletIds: [mine.id], trusted: true } })
    expect([byKey.status, byKey.body.error.code]).toEqual([401, "UNAUTHORIZED"])
    for (const other of [theirs.id, gone.id, "w_unknown"]) {
      const r = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { session: a.session, body: { walletIds: [mine.id, other], trusted: true } })
      expect([r.status, r.body.error.code, r.body.error.walletId]).toEqual([404, "VALIDATION_FAILED", other])
    }
    const dup = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { session: a.session, body: { walletIds: [mine.id, mine.id], trusted: true } })
    expect([dup.status, dup.body.error.field]).toEqual([400, "walletIds"])
    const empty = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { session: a.session, body: { walletIds: [], trusted: true } })
    expect([empty.status, empty.body.error.field]).toEqual([400, "walletIds"])
    const tooMany = Array.from({ length: TRUST_BATCH_MAX + 1 }, (_, i) => `w_${i}`)
    const over = await call(h.url, "POST", "/api/v1/agent/wallets/trust", { session: a.session, body: { walletIds: tooMany, trusted: true } })
    expect([over.status, over.body.error.field]).toEqual([400, "walletIds"])

    expect(await h.query("SELECT 1 FROM wallets WHERE trusted_at IS NOT NULL AND account_id IN ($1, $2)", a.accountId, b.accountId)).toHaveLength(0)
    expect(await outbox(a.accountId)).toHaveLength(0)
  })
})

describe("access-change warnings over the real wallets", () => {
  it("VAULT_TRANSFER_READY appears once a TEE wallet bound to the key has a vault pinned", async () => {
    const a = await setup()
    const k = await h.issue(a.session, { scopes: LevelScopes.readwrite })
    const preview = () => call(h.url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/access`, { session: a.session, body: { access: "readwritetransfer", dryRun: true } })
    const tee = await call(h.url, "POST", "/api/v1/agent/tee-wallets", { session: a.session, body: { chain: "solana", keyPrefix: k.keyPrefix } })
    expect(tee.status, JSON.stringify(tee.body)).toBe(200)
    const before = await preview()
    expect(before.body.warnings.map((w: { code: string }) => w.code)).toEqual(["MOVES_FUNDS", "LINKED_TRANSFER_NEEDS_LIMITS"])
    expect(before.body.effects.boundTeeWallets).toEqual({ count: 1, sample: [tee.body.wallet.address] })

    const vaulted = await call(h.url, "POST", "/api/v1/agent/tee-wallets", { session: a.session, body: { chain: "solana", keyPrefix: k.keyPrefix, vaultDestination: solanaAddress() } })
    expect(vaulted.status, JSON.stringify(vaulted.body)).toBe(200)
    const after = await preview()
    expect(after.body.warnings.map((w: { code: string }) => w.code)).toEqual(["MOVES_FUNDS", "LINKED_TRANSFER_NEEDS_LIMITS", "VAULT_TRANSFER_READY"])
    expect(after.body.effects.linkedTransferReady).toEqual({ txLimit: false, assets: { sol: false, usdc: false, svc: false } })
  })
})
