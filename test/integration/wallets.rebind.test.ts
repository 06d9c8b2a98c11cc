/**
 * TEE wallets and TEE rebind over real HTTP (uWS), on PGlite and on a PostgreSQL server.
 *
 * Binding states of one TEE wallet and the test covering each move:
 *
 *   created(bound to key A) --rebind preview-->  unchanged (writes nothing)       "previews ..."
 *   bound(A) --commit, expect A--> bound(B)  + audit row                           "commits by device token ..."
 *   bound(A) --commit, expect B--> REBIND_STALE                                    "REBIND_STALE ..."
 *   bound(A) --open build claim--> REBIND_BUILD_OPEN                               "REBIND_BUILD_OPEN ..."
 *   bound(A) --signed, unsettled--> REBIND_FORWARD_OPEN / RECONCILE_INCOMPLETE     "REBIND_FORWARD_OPEN ..."
 *   bound(B) --commit to B--> unchanged[]                                          "commits by device token ..."
 *   bound(B) --commit to a selected-scope key--> bound(C) + assignment rows        "a selected-scope target ..."
 *
 * Every refusal asserts status, code, `field` or `reason`, and that no binding, audit row or
 * assignment changed.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createKeyPairFromPrivateKeyBytes,
  createTransactionMessage,
  getAddressFromPublicKey,
  getBase58Decoder,
  getTransactionEncoder,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes
} from "@solana/kit"
import { Effect, Either } from "effect"
import { type Hex, serializeTransaction } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toApiError } from "../../api/ErrorTable.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { CLAIM_LIFETIME_MS } from "../../src/services/wallets/WalletService.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { checkAnswersInThisFile } from "../support/contractRoutes.js"

// Every answer is checked against the wallet routes' own OpenAPI document (test/support/contract.ts).
checkAnswersInThisFile()

let h: WalletHarness

const REBIND = "/api/v1/agent/tee-wallets/rebind"
const A1 = "a1aaaaaa"
const A2 = "a2aaaaaa"
const A3 = "a3aaaaaa"

interface Tee {
  readonly id: string
  readonly address: string
  readonly chain: string
  readonly label: string
}

const createTee = async (as: string, body: Record<string, unknown>) => h.call("POST", "/api/v1/agent/tee-wallets", as, body)

const teeOf = (r: { body: any }): Tee => ({ id: r.body.wallet.id, address: r.body.wallet.address, chain: r.body.wallet.chain, label: r.body.wallet.label })

/** Everything a rebind may change: bindings, audit rows, assignments. */
const snapshot = async () => ({
  bindings: await h.query((sql) => sql`SELECT id, bound_key_id, bound_key_prefix FROM wallets WHERE kind = 'tee' ORDER BY seq`),
  audits: await h.query((sql) => sql`SELECT id FROM tee_rebinds ORDER BY seq`),
  assignments: await h.query((sql) => sql`SELECT key_id, wallet_id FROM key_wallet_assignments ORDER BY key_id, wallet_id`)
})

const BLOCKHASH = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash

const solanaTx = (payer: string, lamports: bigint): Uint8Array =>
  new Uint8Array(
    getTransactionEncoder().encode(
      compileTransaction(
        appendTransactionMessageInstructions(
          [
            {
              programAddress: address("11111111111111111111111111111111"),
              accounts: [
                { address: address(payer), role: AccountRole.WRITABLE_SIGNER },
                { address: address("9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"), role: AccountRole.WRITABLE }
              ],
              data: Uint8Array.from([2, 0, 0, 0, ...new Uint8Array(new BigUint64Array([lamports]).buffer)])
            }
          ],
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: BLOCKHASH, lastValidBlockHeight: 10n },
            setTransactionMessageFeePayer(address(payer), createTransactionMessage({ version: 0 }))
          )
        )
      )
    )
  )

const evmTx = (nonce: number): Uint8Array => {
  const hex: Hex = serializeTransaction({ chainId: 31337, type: "eip1559", nonce, to: "0x000000000000000000000000000000000000dEaD", value: 1n, gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n })
  return new Uint8Array(Buffer.from(hex.slice(2), "hex"))
}

const record = (tee: Tee, keyId: string, nonce = 0) =>
  Effect.runPromise(
    Effect.either(
      h.service.recordBuilt({
        accountId: "acct-a",
        walletId: tee.id,
        keyId,
        chain: tee.chain as "solana" | "evm",
        transaction: tee.chain === "solana" ? solanaTx(tee.address, BigInt(1 + nonce)) : evmTx(nonce),
        purpose: "test"
      }).pipe(Effect.mapError(toApiError))
    )
  )

const txOf = (tee: Tee, nonce = 0) => (tee.chain === "solana" ? solanaTx(tee.address, BigInt(1 + nonce)) : evmTx(nonce))
const encodeTx = (tee: Tee, bytes: Uint8Array) => (tee.chain === "solana" ? Buffer.from(bytes).toString("base64") : `0x${Buffer.from(bytes).toString("hex")}`)

const buildAndSign = async (tee: Tee, as: string, keyId: string, nonce: number) => {
  const claim = await record(tee, keyId, nonce)
  if (Either.isLeft(claim)) throw new Error(`record refused: ${claim.left.message}`)
  const r = await h.call("POST", `/api/v1/agent/wallets/${tee.id}/sign`, as, { claimId: claim.right.claimId, transaction: encodeTx(tee, txOf(tee, nonce)) })
  return { claimId: claim.right.claimId, r }
}

const linkSolana = async (as: string) => {
  const seed = crypto.getRandomValues(new Uint8Array(32))
  const pair = await createKeyPairFromPrivateKeyBytes(seed)
  const addr = await getAddressFromPublicKey(pair.publicKey)
  const c = await h.call("GET", `/api/v1/agent/wallets/link-challenge?chain=solana&address=${addr}`, as)
  const signature = getBase58Decoder().decode(await signBytes(pair.privateKey, new TextEncoder().encode(c.body.message)))
  const r = await h.call("POST", "/api/v1/agent/wallets", as, { chain: "solana", address: addr, signature })
  expect(r.status).toBe(200)
  return r.body.wallet.id as string
}

const rebindSuite = (databaseUrl: () => Promise<string | undefined>) => {
  let t1: Tee
  let t2: Tee
  let t3: Tee
  let linkedId: string

  beforeAll(async () => {
    h = await startWalletHarness({ databaseUrl: await databaseUrl() })
    t1 = teeOf(await createTee("sess-a", { chain: "solana", keyPrefix: A1, label: "bot-1", allowLaunch: true }))
    t2 = teeOf(await createTee("sess-a", { chain: "solana", keyPrefix: A1, label: "bot-2" }))
    t3 = teeOf(await createTee("dev-a", { chain: "evm", keyPrefix: A1, label: "bot-3" }))
    await createTee("sess-a", { chain: "solana", keyPrefix: A1, label: "dup" })
    await createTee("sess-a", { chain: "solana", keyPrefix: A1, label: "dup" })
    linkedId = await linkSolana("sess-a")
  }, 120_000)

  afterAll(async () => {
    await h?.close()
  }, 120_000)

  describe("TEE wallets", () => {
    it("creates a TEE wallet bound to one key, with every field", async () => {
      const r = await h.call("GET", "/api/v1/agent/wallets", "key-a1")
      const row = r.body.wallets.find((w: { id: string }) => w.id === t1.id)
      expect(Object.keys(row).sort()).toEqual(["address", "allowLaunch", "boundKeyPrefix", "chain", "createdAt", "id", "label", "walletKind"])
      expect(row).toMatchObject({ chain: "solana", walletKind: "tee", label: "bot-1", allowLaunch: true, boundKeyPrefix: A1 })
      expect(r.body.wallets.find((w: { id: string }) => w.id === t3.id)).toMatchObject({ chain: "evm", walletKind: "tee", allowLaunch: false })
    })

    it("refuses creation by an agent key, on Free, and for a key that cannot hold it; nothing recorded", async () => {
      const before = await snapshot()
      const providerBefore = await h.query((sql) => sql`SELECT id FROM wp_wallets WHERE custody = 'tee'`)
      expect((await createTee("key-a1", { chain: "solana", keyPrefix: A1 })).body.error.code).toBe("UNAUTHORIZED")
      const free = await createTee("sess-f", { chain: "solana", keyPrefix: "ffffffff" })
      expect(free.status).toBe(403)
      expect(free.body.error.code).toBe("TIER_REQUIRED")
      for (const [prefix, reason] of [["nope0000", "not_found"], ["b1bbbbbb", "not_found"], ["revoked1", "revoked"], ["expired1", "expired"], ["testkey1", "test_key"], ["arrrrrrr", "missing_scope"]]) {
        const r = await createTee("sess-a", { chain: "solana", keyPrefix: prefix })
        expect(r.status, prefix).toBe(400)
        expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "keyPrefix", reason })
      }
      expect((await createTee("sess-a", { chain: "solana", keyPrefix: A1, vaultDestination: "0xabc" })).body.error.field).toBe("vaultDestination")
      expect(await snapshot()).toEqual(before)
      expect(await h.query((sql) => sql`SELECT id FROM wp_wallets WHERE custody = 'tee'`)).toEqual(providerBefore)
    })

    it("only the bound key builds and signs for it; no signer authorization is needed", async () => {
      const { claimId, r } = await buildAndSign(t1, "key-a1", "kid-a1", 100)
      expect(r.status).toBe(200)
      await Effect.runPromise(h.service.settleClaim(claimId, "confirmed"))
      const other = await record(t1, "kid-a2")
      expect(Either.isLeft(other) && other.left).toMatchObject({ code: "VALIDATION_FAILED", field: "linkedWalletId", extra: { reason: "key_not_bound" } })
      const claim = await record(t1, "kid-a1", 101)
      if (Either.isLeft(claim)) throw claim.left
      const stolen = await h.call("POST", `/api/v1/agent/wallets/${t1.id}/sign`, "key-a2", { claimId: claim.right.claimId, transaction: encodeTx(t1, txOf(t1, 101)) })
      expect(stolen.status).toBe(403)
      expect(stolen.body.error).toMatchObject({ code: "UNRECOGNIZED_TRANSACTION", reason: "key_not_bound" })
      await Effect.runPromise(h.service.settleClaim(claim.right.claimId, "expired"))
    })

    it("the owner turns allowLaunch on; launch payer resolution follows it", async () => {
      const payer = (walletId: string) =>
        Effect.runPromise(Effect.either(h.service.resolvePayer(principals["key-a1"] as Principal, walletId, "solana", "launch").pipe(Effect.mapError(toApiError))))
      const before = await payer(t2.id)
      expect(Either.isLeft(before) && before.left).toMatchObject({ extra: { reason: "launch_not_allowed" } })
      expect((await h.call("PATCH", `/api/v1/agent/wallets/${t2.id}`, "key-a1", { allowLaunch: true })).body.error.code).toBe("UNAUTHORIZED")
      const r = await h.call("PATCH", `/api/v1/agent/wallets/${t2.id}`, "dev-a", { allowLaunch: true })
      expect(r.status).toBe(200)
      expect(r.body.wallet).toMatchObject({ id: t2.id, allowLaunch: true })
      expect(Either.isRight(await payer(t2.id))).toBe(true)
      const linked = await h.call("PATCH", `/api/v1/agent/wallets/${linkedId}`, "sess-a", { allowLaunch: true })
      expect(linked.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "allowLaunch" })
      expect((await h.call("PATCH", `/api/v1/agent/wallets/${t2.id}`, "sess-a", {})).body.error.field).toBe("body")
      expect((await h.call("PATCH", `/api/v1/agent/wallets/${t2.id}`, "sess-a", { allowLaunch: "yes" })).body.error.field).toBe("allowLaunch")
      expect((await h.call("PATCH", `/api/v1/agent/wallets/${t2.id}`, "sess-a", { allowLaunch: false })).body.wallet.allowLaunch).toBe(false)
    })
  })

  describe("rebind refusals (nothing changes)", () => {
    let before: Awaited<ReturnType<typeof snapshot>>
    beforeAll(async () => {
      before = await snapshot()
    })
    const unchangedAfter = async () => expect(await snapshot()).toEqual(before)

    it("takes a session or device token, never an agent key", async () => {
      const r = await h.call("POST", REBIND, "key-a1", { dryRun: true, toKeyPrefix: A2, wallets: [t1.id] })
      expect(r.status).toBe(401)
      expect(r.body.error.code).toBe("UNAUTHORIZED")
      expect((await h.call("GET", "/api/v1/agent/tee-wallets/rebinds", "key-a1")).status).toBe(401)
      await unchangedAfter()
    })

    it("REBIND_TOO_MANY outside 1 to 200 wallets", async () => {
      const none = await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: [] })
      expect(none.status).toBe(400)
      expect(none.body.error).toMatchObject({ code: "REBIND_TOO_MANY", max: 200, count: 0 })
      const ids = Array.from({ length: 201 }, (_, i) => `wal_${i}`)
      const many = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A2, walletIds: ids, expect: Object.fromEntries(ids.map((id) => [id, A1])) })
      expect(many.status).toBe(400)
      expect(many.body.error).toMatchObject({ code: "REBIND_TOO_MANY", count: 201 })
      await unchangedAfter()
    })

    it("REBIND_TARGET_INVALID with its reason", async () => {
      for (const [prefix, reason] of [["b1bbbbbb", "not_found"], ["zzzzzzzz", "not_found"], ["revoked1", "revoked"], ["expired1", "expired"], ["testkey1", "test_key"], ["arrrrrrr", "missing_scope"]]) {
        for (const body of [
          { dryRun: true, toKeyPrefix: prefix, wallets: [t1.id] },
          { toKeyPrefix: prefix, walletIds: [t1.id], expect: { [t1.id]: A1 } }
        ]) {
          const r = await h.call("POST", REBIND, "sess-a", body)
          expect(r.status, prefix).toBe(400)
          expect(r.body.error).toMatchObject({ code: "REBIND_TARGET_INVALID", reason })
        }
      }
      await unchangedAfter()
    })

    it("REBIND_WALLET_INVALID: not_found, not_tee, inactive, authority_not_verified, ambiguous with matches", async () => {
      const revoked = teeOf(await createTee("sess-a", { chain: "solana", keyPrefix: A1, label: "gone" }))
      await h.call("DELETE", `/api/v1/agent/wallets/${revoked.id}`, "sess-a")
      const unverified = teeOf(await createTee("sess-a", { chain: "solana", keyPrefix: A1, label: "remote" }))
      await h.query((sql) => sql`UPDATE wallets SET authority_status = 'pending' WHERE id = ${unverified.id} RETURNING id`)
      before = await snapshot()
      const cases: Array<[string, string]> = [
        ["no-such-wallet", "not_found"],
        [linkedId, "not_tee"],
        [revoked.id, "inactive"],
        [unverified.address, "authority_not_verified"],
        ["dup", "ambiguous"]
      ]
      for (const [selector, reason] of cases) {
        const r = await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: [t1.id, selector] })
        expect(r.status, selector).toBe(400)
        expect(r.body.error).toMatchObject({ code: "REBIND_WALLET_INVALID", reason })
        if (reason === "ambiguous") {
          expect(r.body.error.matches).toHaveLength(2)
          expect(r.body.error.matches.every((m: { label: string }) => m.label === "dup")).toBe(true)
        }
      }
      const commit = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A2, walletIds: [revoked.id], expect: { [revoked.id]: A1 } })
      expect(commit.body.error).toMatchObject({ code: "REBIND_WALLET_INVALID", reason: "inactive" })
      const foreign = await h.call("POST", REBIND, "sess-b", { toKeyPrefix: "b1bbbbbb", walletIds: [t1.id], expect: { [t1.id]: A1 } })
      expect(foreign.body.error).toMatchObject({ code: "REBIND_WALLET_INVALID", reason: "not_found" })
      await unchangedAfter()
    })

    it("a commit with selectors, without expect, or missing an id in expect is VALIDATION_FAILED", async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ toKeyPrefix: A2, walletIds: [t1.id], expect: { [t1.id]: A1 }, wallets: [t1.id] }, "wallets"],
        [{ toKeyPrefix: A2, walletIds: [t1.id], expect: { [t1.id]: A1 }, labelPrefix: "bot" }, "labelPrefix"],
        [{ toKeyPrefix: A2, walletIds: [t1.id] }, "expect"],
        [{ toKeyPrefix: A2, walletIds: [t1.id, t2.id], expect: { [t1.id]: A1 } }, `expect.${t2.id}`],
        [{ toKeyPrefix: A2, walletIds: "x", expect: {} }, "walletIds"],
        [{ walletIds: [t1.id], expect: { [t1.id]: A1 } }, "toKeyPrefix"],
        [{ dryRun: "yes", toKeyPrefix: A2, wallets: [t1.id] }, "dryRun"],
        [{ dryRun: true, toKeyPrefix: A2 }, "wallets"]
      ]
      for (const [body, field] of cases) {
        const r = await h.call("POST", REBIND, "sess-a", body)
        expect(r.status, field).toBe(400)
        expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field })
      }
      await unchangedAfter()
    })

    it("REBIND_STALE when a binding changed since the preview, naming the current one", async () => {
      const r = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A2, walletIds: [t1.id, t2.id], expect: { [t1.id]: A1, [t2.id]: A3 } })
      expect(r.status).toBe(409)
      expect(r.body.error).toMatchObject({ code: "REBIND_STALE", walletIds: [t2.id], current: { [t2.id]: A1 } })
      await unchangedAfter()
    })

    it("REBIND_BUILD_OPEN while a build is inside its 30-minute window, with walletIds and retryAfter", async () => {
      const claim = await record(t2, "kid-a1", 7)
      if (Either.isLeft(claim)) throw claim.left
      for (const body of [
        { dryRun: true, toKeyPrefix: A2, wallets: [t1.id, t2.id] },
        { toKeyPrefix: A2, walletIds: [t1.id, t2.id], expect: { [t1.id]: A1, [t2.id]: A1 } }
      ]) {
        const r = await h.call("POST", REBIND, "sess-a", body)
        expect(r.status).toBe(409)
        expect(r.body.error).toMatchObject({ code: "REBIND_BUILD_OPEN", walletIds: [t2.id], retryAfter: claim.right.expiresAtMs })
      }
      // Past its window the build no longer holds the wallet.
      h.clock.ms += CLAIM_LIFETIME_MS
      try {
        const r = await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: [t2.id] })
        expect(r.status).toBe(200)
      } finally {
        h.clock.ms -= CLAIM_LIFETIME_MS
      }
      await Effect.runPromise(h.service.settleClaim(claim.right.claimId, "expired"))
      await unchangedAfter()
    })

    it("REBIND_FORWARD_OPEN for an unsettled forwarded sign (Solana pending, Hood unexpirable); REBIND_RECONCILE_INCOMPLETE when the chain read fails", async () => {
      const sol = await buildAndSign(t1, "key-a1", "kid-a1", 8)
      expect(sol.r.status).toBe(200)
      const commit = { toKeyPrefix: A2, walletIds: [t1.id], expect: { [t1.id]: A1 } }
      const pending = await h.call("POST", REBIND, "sess-a", commit)
      expect(pending.status).toBe(409)
      expect(pending.body.error).toMatchObject({ code: "REBIND_FORWARD_OPEN", reason: "pending", walletIds: [t1.id] })
      h.chainOutcomes.set(sol.claimId, "unavailable")
      const incomplete = await h.call("POST", REBIND, "sess-a", commit)
      expect(incomplete.status).toBe(503)
      expect(incomplete.body.error).toMatchObject({ code: "REBIND_RECONCILE_INCOMPLETE", retryable: true })
      expect((await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: [t1.id] })).status).toBe(503)
      // Once the chain says it landed, the sign is settled (a fact, kept) and no longer holds the wallet.
      h.chainOutcomes.set(sol.claimId, "confirmed")
      expect((await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: [t1.id] })).status).toBe(200)

      const hood = await buildAndSign(t3, "key-a1", "kid-a1", 9)
      expect(hood.r.status).toBe(200)
      const unexpirable = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A2, walletIds: [t3.id], expect: { [t3.id]: A1 } })
      expect(unexpirable.status).toBe(409)
      expect(unexpirable.body.error).toMatchObject({ code: "REBIND_FORWARD_OPEN", reason: "unexpirable", walletIds: [t3.id] })
      h.chainOutcomes.set(hood.claimId, "failed")

      // A Solana sign past its transaction's expiry is provably expired: no chain read needed.
      const late = await buildAndSign(t2, "key-a1", "kid-a1", 10)
      expect(late.r.status).toBe(200)
      h.chainOutcomes.set(late.claimId, "unavailable")
      h.clock.ms += CLAIM_LIFETIME_MS
      try {
        expect((await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: [t2.id] })).status).toBe(200)
      } finally {
        h.clock.ms -= CLAIM_LIFETIME_MS
      }
      h.chainOutcomes.set(late.claimId, "failed")
      expect((await snapshot()).bindings).toEqual(before.bindings)
      expect((await snapshot()).audits).toEqual([])
    })

    it("REBIND_SCOPE_FULL when a selected-scope target would pass 1,000 assignments", async () => {
      await h.query(
        (sql) => sql`INSERT INTO key_wallet_assignments (key_id, wallet_id, account_id, created_at)
          SELECT 'kid-a3', 'filler_' || g, 'acct-a', now() FROM generate_series(1, 1000) AS g RETURNING key_id`
      )
      const r = await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A3, wallets: [t2.id] })
      expect(r.status).toBe(409)
      expect(r.body.error).toMatchObject({ code: "REBIND_SCOPE_FULL", max: 1000 })
      const c = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A3, walletIds: [t2.id], expect: { [t2.id]: A1 } })
      expect(c.body.error).toMatchObject({ code: "REBIND_SCOPE_FULL", max: 1000 })
      await h.query((sql) => sql`DELETE FROM key_wallet_assignments WHERE wallet_id LIKE 'filler_%' RETURNING key_id`)
      await unchangedAfter()
    })
  })

  describe("rebind", () => {
    it("previews by label, address and id (and by label prefix), writing nothing", async () => {
      const before = await snapshot()
      const r = await h.call("POST", REBIND, "sess-a", { dryRun: true, toKeyPrefix: A2, wallets: ["bot-1", t2.address, t3.id] })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ success: true, dryRun: true, unchanged: [] })
      expect(r.body.toKey).toEqual({
        keyPrefix: A2,
        label: `label ${A2}`,
        paused: false,
        walletScope: "all",
        tradeReady: { sol: true, usdc: false },
        hoodTradeReady: { eth: true, usdg: true },
        missingCaps: ["usdc"],
        launchScope: { launchWrite: true, allowLaunchWallets: 1 }
      })
      expect(r.body.rebound).toEqual([
        { id: t1.id, address: t1.address, label: "bot-1", fromKeyPrefix: A1, allowLaunch: true, chain: "solana" },
        { id: t2.id, address: t2.address, label: "bot-2", fromKeyPrefix: A1, allowLaunch: false, chain: "solana" },
        { id: t3.id, address: t3.address, label: "bot-3", fromKeyPrefix: A1, allowLaunch: false, chain: "evm" }
      ])
      const byPrefix = await h.call("POST", REBIND, "dev-a", { dryRun: true, toKeyPrefix: A2, wallets: [], labelPrefix: "bot-" })
      expect(byPrefix.body.rebound.map((w: { id: string }) => w.id).sort()).toEqual([t1.id, t2.id, t3.id].sort())
      expect(await snapshot()).toEqual(before)
    })

    it("commits by device token: only the binding moves, audited; the old key gets key_not_bound, the new one signs", async () => {
      const preview = await h.call("POST", REBIND, "dev-a", { dryRun: true, toKeyPrefix: A2, wallets: [t1.id, t2.id, t3.id] })
      const expectMap = Object.fromEntries(preview.body.rebound.map((w: { id: string; fromKeyPrefix: string }) => [w.id, w.fromKeyPrefix]))
      const r = await h.call("POST", REBIND, "dev-a", { toKeyPrefix: A2, walletIds: [t1.id, t2.id, t3.id], expect: expectMap })
      expect(r.status).toBe(200)
      expect(r.body.dryRun).toBe(false)
      expect(r.body.rebound).toHaveLength(3)
      for (const w of r.body.rebound) expect(w.auditId).toMatch(/^rbd_/)
      const list = await h.call("GET", "/api/v1/agent/wallets", "sess-a")
      const rows = list.body.wallets.filter((w: { id: string }) => [t1.id, t2.id, t3.id].includes(w.id))
      expect(rows.map((w: { boundKeyPrefix: string }) => w.boundKeyPrefix)).toEqual([A2, A2, A2])
      expect(rows.find((w: { id: string }) => w.id === t1.id)).toMatchObject({ address: t1.address, allowLaunch: true, label: "bot-1" })

      const old = await record(t1, "kid-a1", 20)
      expect(Either.isLeft(old) && old.left).toMatchObject({ extra: { reason: "key_not_bound" } })
      const fresh = await buildAndSign(t1, "key-a2", "kid-a2", 21)
      expect(fresh.r.status).toBe(200)
      await Effect.runPromise(h.service.settleClaim(fresh.claimId, "confirmed"))

      const history = await h.call("GET", "/api/v1/agent/tee-wallets/rebinds", "sess-a")
      expect(history.body.rebinds).toHaveLength(3)
      expect(history.body.rebinds[0]).toMatchObject({ fromKeyPrefix: A1, toKeyPrefix: A2, actor: "device", actorDevicePrefix: "dvcaaaaa" })
      expect(history.body.rebinds.map((x: { walletId: string }) => x.walletId)).toEqual([t3.id, t2.id, t1.id])

      // Again with the new bindings: nothing moves.
      const again = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A2, walletIds: [t1.id], expect: { [t1.id]: A2 } })
      expect(again.body.rebound).toEqual([])
      expect(again.body.unchanged).toEqual([{ id: t1.id, address: t1.address, label: "bot-1", allowLaunch: true, chain: "solana" }])
      expect((await h.query((sql) => sql`SELECT id FROM tee_rebinds`)).length).toBe(3)
    })

    it("a selected-scope target (paused) gets one assignment row per moved wallet", async () => {
      const r = await h.call("POST", REBIND, "sess-a", { toKeyPrefix: A3, walletIds: [t1.id, t2.id], expect: { [t1.id]: A2, [t2.id]: A2 } })
      expect(r.status).toBe(200)
      expect(r.body.toKey).toMatchObject({ keyPrefix: A3, paused: true, walletScope: "selected" })
      expect(await h.query((sql) => sql`SELECT key_id, wallet_id FROM key_wallet_assignments ORDER BY wallet_id`)).toEqual(
        [t1.id, t2.id].sort().map((id) => ({ key_id: "kid-a3", wallet_id: id }))
      )
      const session = await h.call("GET", `/api/v1/agent/tee-wallets/rebinds?walletId=${t1.id}&limit=1`, "sess-a")
      expect(session.body.rebinds).toEqual([
        { auditId: expect.stringMatching(/^rbd_/), walletId: t1.id, address: t1.address, chain: "solana", fromKeyPrefix: A2, toKeyPrefix: A3, actor: "session", at: expect.any(String) }
      ])
      expect((await h.call("GET", "/api/v1/agent/tee-wallets/rebinds?limit=0", "dev-a")).body.rebinds).toHaveLength(1)
      expect((await h.call("GET", "/api/v1/agent/tee-wallets/rebinds?limit=abc", "dev-a")).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "limit" })
      expect((await h.call("GET", "/api/v1/agent/tee-wallets/rebinds", "sess-b")).body.rebinds).toEqual([])
    })
  })
}

describe("TEE rebind on embedded PGlite", () => rebindSuite(async () => undefined))

const serverUrl = postgresUrl()
describe.skipIf(serverUrl === undefined)(
  serverUrl === undefined ? `TEE rebind on a PostgreSQL server (${noPostgresReason})` : "TEE rebind on a PostgreSQL server",
  () => rebindSuite(() => freshPostgresDatabase(serverUrl as string))
)
