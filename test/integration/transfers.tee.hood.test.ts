/**
 * The TEE payer on the Hood transfer rail (spec document 2: 2.1 "out of the bound TEE wallet to
 * its pinned vault or a wallet the owner linked while signed in or marked trusted", 3.2, 4.1
 * "Transaction-limit rules": the hold until a sweep releases it, "on Hood, the operation's
 * expiry"; section 6 `transfer.executed`), through `TransferService` over the real wallet service
 * (PGlite, sign claims, the relay), the attempt runner and the Hood localnet over JSON-RPC.
 * Balances are read from the chain and compared to the unit (the TEE wallet pays the amount plus
 * its receipt's gas exactly).
 *
 * - the build records the unsigned EIP-1559 transaction with its sign claim (`built`, nothing
 *   sent); the relay signs those bytes; the submit sends them once: the exact wei move, one event;
 * - a destination not allowed for a TEE source moves nothing (no row, no claim, no hold);
 * - once `transfer:bound` is gone: the build, the relay and the submit refuse `SCOPE_MISSING`;
 * - a forged or changed signed transaction is refused and nothing changes;
 * - 50 concurrent same-id submits move the funds once; 20 concurrent same-id builds record one
 *   build, one open claim and one hold;
 * - a relay-signed build the caller broadcast itself is settled once by the recovery pass; one
 *   whose nonce the wallet used otherwise settles failed, nothing moved, its hold released;
 * - a crash between the record of `sending` and the send: the recovery pass broadcasts the same
 *   signed bytes again (the server cannot sign for the TEE wallet) and it confirms once;
 * - the hold of an unsigned TEE transfer counts on the key's txLimit until the sweep releases it,
 *   after the hold is 30 minutes old and the sign claim's (the operation's) lifetime has passed;
 *   a relay-signed one keeps it whatever its age (its bytes have no expiry) until its nonce is
 *   used by another transaction (failed, the hold released);
 * - a refused send of the caller-held bytes decides nothing ("nonce too low" for bytes the
 *   caller broadcast, a preflight revert on a balance short now): only the receipt or the nonce
 *   passed settles the transfer;
 * - a malleated (high-s) twin of the relay's signature is refused and nothing changes;
 * - the sign claim follows the transfer whoever settles it (a recovery pass too).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Ref, TestClock, TestContext } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import {
  type Address,
  encodeAbiParameters,
  getAddress,
  type Hash,
  type Hex,
  hexToBigInt,
  keccak256,
  numberToHex,
  parseTransaction,
  recoverTransactionAddress,
  serializeTransaction
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mapFailure } from "../../api/ErrorTable.js"
import { curveTokenAbi } from "../../src/chain/hood/abi.generated.js"
import { type HoodClients, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, hoodTestClient, publicClientOf, setEthBalance, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { type ErrorCode, ErrorCodes } from "../../src/domain/ErrorCodes.js"
import { AccountEvents, type RecordedEvent, layerTest as recordingEvents } from "../../src/services/accounts/AccountEvents.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { reservationState, sweep, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import { makeTransferService, type TransferCaller, type TransferInput, type TransferServiceShape, type TransferView } from "../../src/services/transfers/TransferService.js"
import { makeTransferStore, transferReservationId } from "../../src/services/transfers/TransferStore.js"
import * as TrustedWallets from "../../src/services/transfers/TrustedWallets.js"
import * as WithdrawalAddresses from "../../src/services/transfers/WithdrawalAddresses.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { eventually } from "../support/eventually.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"

const ETH = 10n ** 18n
const ACCOUNT = "acct-a"
const WITHDRAW = ["launch:write", "launch:read", "activity:write", "swap:write", "account:read", "transfer:write", "transfer:bound"]

let h: WalletHarness
let net: StartedHoodLocalnet
let transfers: TransferServiceShape
let events: Ref.Ref<ReadonlyArray<RecordedEvent>>
let tee: { id: string; address: Address }
let vault: Address
let main: Address
let bySession: { id: string; address: Address }
let byAgent: { id: string; address: Address }
let trust: TrustedWallets.TrustedWalletsShape
let addresses: WithdrawalAddresses.WithdrawalAddressesShape
let trader: HoodClients
let usdg: Address
/** The same service over a JSON-RPC proxy of the node that can fail the transaction lookup, with a short confirm timeout. */
let proxied: TransferServiceShape
let proxy: Server
let failTransactionLookup = false

const principalOf = (scopes: ReadonlyArray<string> = WITHDRAW): Principal => ({ ...(principals["key-a1"] as Principal), scopes })
const callerOf = (scopes: ReadonlyArray<string> = WITHDRAW, keyId = "kid-a1", keyPrefix = "a1aaaaaa"): TransferCaller => ({
  accountId: ACCOUNT,
  keyId,
  keyPrefix,
  embeddedWallet: "denied",
  principal: { ...principalOf(scopes), keyId, keyPrefix }
})
const caller = callerOf()
const narrowed = callerOf(WITHDRAW.filter((s) => s !== "transfer:bound"))

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const sqlRun = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, h.sql))
const pc = () => publicClientOf(net)
const eth = (a: Address) => pc().getBalance({ address: a })
const rows = (id?: string) =>
  h.query<{ client_transfer_id: string; state: string; signature: string }>((sql) =>
    id === undefined
      ? sql`SELECT client_transfer_id, state, signature FROM transfers WHERE chain = 'hood'`
      : sql`SELECT client_transfer_id, state, signature FROM transfers WHERE client_transfer_id = ${id}`
  )
const claims = () => h.query<{ n: number }>((sql) => sql`SELECT count(*)::int AS n FROM sign_claims WHERE purpose = 'transfer' AND chain = 'evm'`).then((r) => r[0]?.n ?? 0)
const executed = async () => (await Effect.runPromise(Ref.get(events))).filter((e) => e.event === "transfer.executed")
const reservation = (id: string) => sqlRun(reservationState(transferReservationId({ accountId: ACCOUNT, clientTransferId: id })))
const body = (clientTransferId: string, o: Partial<TransferInput> = {}): TransferInput => ({
  clientTransferId,
  chain: "hood",
  asset: "eth",
  amountRaw: ETH / 100n,
  to: vault,
  dryRun: false,
  payer: "tee",
  linkedWalletId: tee.id,
  ...o
})
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address
const hexBytes = (hex: string) => new Uint8Array(Buffer.from(hex.slice(2), "hex"))
const refusalOf = async <A, E>(call: Effect.Effect<A, E>) => {
  const r = await Effect.runPromise(Effect.either(mapFailure(call as Effect.Effect<A, never>)))
  if (r._tag === "Right") throw new Error(`expected a refusal, got ${JSON.stringify(r.right)}`)
  return { status: r.left.status ?? ErrorCodes[r.left.code as ErrorCode].status, code: r.left.code, reason: (r.left.extra as { reason?: string } | undefined)?.reason, field: r.left.field }
}
const built = async (input: TransferInput, as: TransferCaller = caller): Promise<TransferView> => {
  const r = await run(transfers.build(as, input))
  if (r._tag === "Left") throw new Error(`${input.clientTransferId}: ${JSON.stringify(r.left)}`)
  expect(r.right.status).toBe("built")
  return r.right
}
/** The sign relay's signature of a build (the TEE wallet's key, custodied by the provider): the 0x-hex signed transaction. */
const relaySigned = async (b: TransferView, as: Principal = principalOf(), walletId = tee.id) => {
  const signed = await Effect.runPromise(h.service.signClaimed(as, walletId, { claimId: b.signClaim?.claimId ?? "", transaction: hexBytes(b.transaction ?? "0x") }))
  return signed.signedTransaction as Hex
}
const submit = (clientTransferId: string, signed: Hex, as: TransferCaller = caller) => transfers.submit(as, { clientTransferId, signedTransaction: hexBytes(signed) })
const claimStateOf = (b: TransferView) =>
  h.query<{ state: string }>((sql) => sql`SELECT state FROM sign_claims WHERE id = ${b.signClaim?.claimId ?? ""}`).then((r) => r[0]?.state)
const sweepAt = (ms: number) =>
  sqlRun(
    Effect.gen(function* () {
      yield* TestClock.setTime(ms)
      return yield* sweep()
    }).pipe(Effect.provide(TestContext.TestContext))
  )
/** Sets an address's USDG balance on the localnet (`balanceOf`, the token's fourth storage slot). */
const setUsdg = (owner: Address, raw: bigint) =>
  hoodTestClient(net).setStorageAt({
    address: usdg,
    index: keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [owner, 3n])),
    value: numberToHex(raw, { size: 32 })
  })
const gasOf = async (hash: string) => {
  const r = await pc().getTransactionReceipt({ hash: hash as Hash })
  return { weiRaw: r.gasUsed * r.effectiveGasPrice, status: r.status }
}

/** Links a fresh EVM wallet with a challenge signed by its key, as `p` (a session or an agent key). */
const link = async (p: Principal, label: string) => {
  const account = privateKeyToAccount(generatePrivateKey())
  const signature = await account.signMessage({ message: h.provider.linkChallenge(ACCOUNT, "evm", account.address) })
  const view = await Effect.runPromise(h.service.link(p, { chain: "evm", address: account.address, signature, label }))
  return { id: view.id, address: getAddress(account.address) }
}

const storeKey = (id: string, prefix: string, txLimitUsd: number | null) =>
  sqlRun(
    insertKey(
      {
        id,
        prefix,
        accountId: ACCOUNT,
        hash: `hash-${id}`,
        environment: "production",
        scopes: WITHDRAW,
        label: null,
        rateLimitPerMin: 60,
        dailyLaunchCap: 10,
        launchChains: ["hood"],
        embeddedWallet: "denied",
        expiresAtMs: null,
        txLimit: txLimitUsd === null ? null : { usdMicros: txLimitUsd * 1_000_000, reset: "daily" },
        mintedByDeviceId: null,
        provisionedBy: null
      },
      Date.now()
    )
  )

beforeAll(async () => {
  h = await startWalletHarness()
  h.clock.ms = Date.now()
  net = await startHoodLocalnet()
  trader = clientsFor(net, net.roles.traders[0]!)
  usdg = getAddress(net.addresses.usdg)
  events = await Effect.runPromise(Ref.make<ReadonlyArray<RecordedEvent>>([]))
  const eventsPort = Context.get(await Effect.runPromise(Layer.build(recordingEvents(events)).pipe(Effect.scoped)), AccountEvents)
  await Effect.runPromise(h.sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'TEEHOODXFER') ON CONFLICT (id) DO NOTHING`)
  await storeKey("kid-a1", "a1aaaaaa", null)
  await storeKey("kid-a2", "a2aaaaaa", 50)
  main = getAddress((await Effect.runPromise(h.provider.ensureEmbeddedWallet(ACCOUNT, "evm"))).address)
  vault = freshAddress()
  const created = await Effect.runPromise(h.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: "a1aaaaaa", label: "tee", vaultDestination: vault }))
  tee = { id: created.id, address: getAddress(created.address) }
  await setEthBalance(hoodTestClient(net), tee.address, 20n * ETH)
  const hash = await trader.wallet.writeContract({ address: usdg, abi: curveTokenAbi, functionName: "transfer", args: [tee.address, 1_000n * 10n ** 6n], chain: null })
  await pc().waitForTransactionReceipt({ hash })
  bySession = await link(principals["sess-a"] as Principal, "signed-in")
  byAgent = await link(principalOf(), "agent-linked")
  transfers = await Effect.runPromise(
    makeTransferService({
      solanaRpcUrl: "http://127.0.0.1:1",
      hood: { chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, usdg, unsentGraceMs: 300 },
      provider: h.provider,
      events: eventsPort,
      wallets: h.service,
      prices: fixedPriceSource({ eth: "3000", usdg: "1" }),
      pollIntervalMs: 20,
      confirmTimeoutMs: 15_000
    }).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
  )
  proxy = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString()
      const message = JSON.parse(text) as { id?: unknown; method?: string }
      if (failTransactionLookup && message.method === "eth_getTransactionByHash") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: "header not found" } }))
        return
      }
      void fetch(net.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: text })
        .then(async (upstream) => {
          res.writeHead(upstream.status, { "content-type": "application/json" })
          res.end(await upstream.text())
        })
        .catch(() => {
          res.writeHead(502)
          res.end()
        })
    })
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  proxied = await Effect.runPromise(
    makeTransferService({
      solanaRpcUrl: "http://127.0.0.1:1",
      hood: { chain: net.chain, rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, factory: net.addresses.factory, usdg, unsentGraceMs: 300 },
      provider: h.provider,
      events: eventsPort,
      wallets: h.service,
      prices: fixedPriceSource({ eth: "3000", usdg: "1" }),
      pollIntervalMs: 20,
      confirmTimeoutMs: 3_000
    }).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
  )
  trust = await Effect.runPromise(TrustedWallets.make().pipe(Effect.provideService(SqlClient.SqlClient, h.sql), Effect.provideService(AccountEvents, eventsPort)))
  addresses = await Effect.runPromise(WithdrawalAddresses.make({}).pipe(Effect.provideService(SqlClient.SqlClient, h.sql), Effect.provideService(AccountEvents, eventsPort)))
}, 180_000)

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy === undefined ? resolve() : proxy.close(() => resolve())))
  await net?.close()
  await h?.close()
})

describe("transfer rail, TEE payer on Hood", () => {
  it("to the pinned vault: built with its sign claim, nothing sent; the relay signs; the submit moves the exact wei once, the TEE wallet pays it plus its gas; one transfer.executed", async () => {
    const before = { tee: await eth(tee.address), vault: await eth(vault), claims: await claims() }
    const dry = await run(transfers.build(caller, body("ht-vault", { dryRun: true })))
    expect(dry._tag === "Right" && dry.right).toMatchObject({ status: "ready", chain: "hood", payer: "tee", destinationKind: "vault" })
    expect(await rows("ht-vault")).toEqual([])
    expect(await claims()).toBe(before.claims)
    expect(await reservation("ht-vault")).toBeUndefined()
    const b = await built(body("ht-vault"))
    expect(b).toMatchObject({ status: "built", chain: "hood", payer: "tee", linkedWalletId: tee.id, from: tee.address, to: vault, destinationClass: "approved", destinationKind: "vault", replay: false })
    expect(b).not.toHaveProperty("signature")
    expect(b).not.toHaveProperty("lastValidBlockHeight")
    // The unsigned EIP-1559 transaction from the TEE wallet's next nonce: the value to the vault.
    const unsigned = parseTransaction(b.transaction as Hex)
    expect(getAddress(unsigned.to!)).toBe(vault)
    expect(unsigned).toMatchObject({ value: ETH / 100n, nonce: await pc().getTransactionCount({ address: tee.address, blockTag: "pending" }) })
    expect(await rows("ht-vault")).toEqual([{ client_transfer_id: "ht-vault", state: "built", signature: "" }])
    expect(await reservation("ht-vault")).toBe("held")
    expect(await eth(tee.address)).toBe(before.tee)
    const again = await run(transfers.build(caller, body("ht-vault")))
    expect(again._tag === "Right" && again.right).toMatchObject({ status: "built", transaction: b.transaction, signClaim: b.signClaim, replay: true })

    const signed = await relaySigned(b)
    const r = await run(submit("ht-vault", signed))
    if (r._tag === "Left") throw new Error(JSON.stringify(r.left))
    expect(r.right).toMatchObject({ status: "confirmed", payer: "tee", destinationKind: "vault", replay: false, signature: keccak256(signed) })
    const gas = await gasOf(r.right.signature!)
    expect(gas.status).toBe("success")
    expect((await eth(vault)) - before.vault).toBe(ETH / 100n)
    expect(before.tee - (await eth(tee.address))).toBe(ETH / 100n + gas.weiRaw)
    expect(await reservation("ht-vault")).toBe("booked")
    expect((await executed()).filter((e) => e.data.signature === r.right.signature)).toEqual([
      {
        accountId: ACCOUNT,
        event: "transfer.executed",
        data: { chain: "hood", asset: "eth", amountRaw: (ETH / 100n).toString(), from: tee.address, to: vault, destinationClass: "approved", signature: r.right.signature, destinationKind: "vault" }
      }
    ])
    const replay = await run(submit("ht-vault", signed))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", signature: r.right.signature, replay: true })
    expect((await eth(vault)) - before.vault).toBe(ETH / 100n)
  }, 60_000)

  it("USDG to a wallet the owner linked while signed in, and ETH to one an agent linked once the owner marks it trusted: own, with its id", async () => {
    const b = await built(body("ht-linked", { asset: "usdg", amountRaw: 2_500_000n, to: bySession.address }))
    expect(b).toMatchObject({ destinationClass: "own", destinationKind: "linked", walletId: bySession.id })
    const ethBefore = await eth(tee.address)
    const r = await run(submit("ht-linked", await relaySigned(b)))
    expect(r._tag === "Right" && r.right.status).toBe("confirmed")
    expect(await tokenBalance(pc(), usdg, bySession.address)).toBe(2_500_000n)
    expect(ethBefore - (await eth(tee.address))).toBe((await gasOf(r._tag === "Right" ? r.right.signature! : "")).weiRaw)

    await Effect.runPromise(trust.setTrust(principals["sess-a"] as Principal, [byAgent.id], true))
    try {
      const t = await built(body("ht-trusted", { to: byAgent.address, amountRaw: 7_000n }))
      expect(t).toMatchObject({ destinationClass: "own", walletId: byAgent.id })
      const s = await run(submit("ht-trusted", await relaySigned(t)))
      expect(s._tag === "Right" && s.right.status).toBe("confirmed")
      expect(await eth(byAgent.address)).toBe(7_000n)
    } finally {
      await Effect.runPromise(trust.setTrust(principals["sess-a"] as Principal, [byAgent.id], false))
    }
  }, 60_000)

  it("VALIDATION_FAILED destination_not_allowed: a destination not allowed for a TEE source moves nothing (no row, no claim, no hold); same_wallet; asset_unsupported", async () => {
    const approved = freshAddress()
    await Effect.runPromise(addresses.add(principals["sess-a"] as Principal, { chain: "evm", address: approved }))
    const before = { rows: (await rows()).length, claims: await claims(), events: (await executed()).length, tee: await eth(tee.address), agent: await eth(byAgent.address) }
    const stranger = freshAddress()
    for (const [id, to] of [
      ["hn-agent", byAgent.address],
      ["hn-embedded", main],
      ["hn-approved", approved],
      ["hn-stranger", stranger]
    ] as const) {
      expect(await refusalOf(transfers.build(caller, body(id, { to })))).toEqual({ status: 400, code: "VALIDATION_FAILED", reason: "destination_not_allowed", field: "to" })
      expect(await reservation(id)).toBeUndefined()
    }
    expect(await refusalOf(transfers.build(caller, body("hn-self", { to: tee.address.toLowerCase() })))).toMatchObject({ status: 400, reason: "same_wallet" })
    expect(await refusalOf(transfers.build(caller, body("hn-asset", { asset: freshAddress() })))).toMatchObject({ status: 400, field: "asset", reason: "asset_unsupported" })
    expect(await refusalOf(transfers.build(caller, body("hn-poor", { amountRaw: 1_000n * ETH })))).toMatchObject({ status: 402, code: "INSUFFICIENT_OWNER_BALANCE" })
    expect(await refusalOf(transfers.build(callerOf(WITHDRAW, "kid-a2", "a2aaaaaa"), body("hn-other-key")))).toMatchObject({ status: 400, field: "linkedWalletId", reason: "key_not_bound" })
    expect((await rows()).length).toBe(before.rows)
    expect(await claims()).toBe(before.claims)
    expect((await executed()).length).toBe(before.events)
    expect(await eth(tee.address)).toBe(before.tee)
    expect(await eth(byAgent.address)).toBe(before.agent)
    expect(await eth(stranger)).toBe(0n)
  })

  it("SCOPE_MISSING once transfer:bound is gone: at build, at the sign relay and at POST /transfer/submit; nothing moves", async () => {
    expect(await refusalOf(transfers.build(narrowed, body("hs-build")))).toMatchObject({ status: 403, code: "SCOPE_MISSING" })
    expect(await rows("hs-build")).toEqual([])
    const b = await built(body("hs-submit", { amountRaw: 4_000n }))
    expect(await refusalOf(h.service.signClaimed(narrowed.principal!, tee.id, { claimId: b.signClaim!.claimId, transaction: hexBytes(b.transaction!) }))).toMatchObject({
      status: 403,
      code: "SCOPE_MISSING"
    })
    const signed = await relaySigned(b)
    const before = { vault: await eth(vault), events: (await executed()).length }
    expect(await refusalOf(submit("hs-submit", signed, narrowed))).toMatchObject({ status: 403, code: "SCOPE_MISSING" })
    expect(await rows("hs-submit")).toEqual([{ client_transfer_id: "hs-submit", state: "built", signature: "" }])
    expect(await eth(vault)).toBe(before.vault)
    expect((await executed()).length).toBe(before.events)
    const r = await run(submit("hs-submit", signed))
    expect(r._tag === "Right" && r.right.status).toBe("confirmed")
    expect((await eth(vault)) - before.vault).toBe(4_000n)
  }, 60_000)

  it("a forged or changed signed transaction is refused (VALIDATION_FAILED 409 signedTransaction) and nothing changes", async () => {
    const b = await built(body("hf-1", { amountRaw: 5_000n }))
    const other = await built(body("hf-2", { amountRaw: 6_000n }))
    const otherSigned = await relaySigned(other)
    // The built transaction signed by another key; and the built transaction with its value changed, signed by that key.
    const stranger = privateKeyToAccount(generatePrivateKey())
    const parsed = parseTransaction(b.transaction as Hex)
    const byStranger = await stranger.signTransaction(parsed as never)
    const changed = serializeTransaction({ ...(parsed as never as Parameters<typeof serializeTransaction>[0]), value: 5_001n } as never)
    const before = { vault: await eth(vault), tee: await eth(tee.address), events: (await executed()).length }
    for (const bytes of [b.transaction as Hex, otherSigned, byStranger, changed, "0x010203" as Hex]) {
      expect(await refusalOf(submit("hf-1", bytes))).toEqual({ status: 409, code: "VALIDATION_FAILED", reason: undefined, field: "signedTransaction" })
    }
    expect(await rows("hf-1")).toEqual([{ client_transfer_id: "hf-1", state: "built", signature: "" }])
    expect(await reservation("hf-1")).toBe("held")
    expect(await eth(vault)).toBe(before.vault)
    expect(await eth(tee.address)).toBe(before.tee)
    expect((await executed()).length).toBe(before.events)
  }, 60_000)

  it("50 concurrent same-id submits move the funds once", async () => {
    // Builds never sent (hf-1, hf-2) take no nonce: this one is on the wallet's next.
    const b = await built(body("hc-race", { amountRaw: 12_345n }))
    const signed = await relaySigned(b)
    const before = { vault: await eth(vault), tee: await eth(tee.address) }
    const answers = await Promise.all(Array.from({ length: 50 }, () => run(submit("hc-race", signed))))
    const ok = answers.flatMap((a) => (a._tag === "Right" ? [a.right] : []))
    expect(ok).toHaveLength(50)
    expect(ok.filter((a) => !a.replay)).toHaveLength(1)
    const settled = await run(submit("hc-race", signed))
    expect(settled._tag === "Right" && settled.right.status).toBe("confirmed")
    const signature = settled._tag === "Right" ? settled.right.signature! : ""
    expect((await eth(vault)) - before.vault).toBe(12_345n)
    expect(before.tee - (await eth(tee.address))).toBe(12_345n + (await gasOf(signature)).weiRaw)
    expect(await rows("hc-race")).toEqual([{ client_transfer_id: "hc-race", state: "confirmed", signature }])
    expect((await executed()).filter((e) => e.data.signature === signature)).toHaveLength(1)
  }, 90_000)

  it("20 concurrent same-id builds record one build: every answer is that build, one claim stays open, one hold", async () => {
    const open = () => h.query<{ n: number }>((sql) => sql`SELECT count(*)::int AS n FROM sign_claims WHERE purpose = 'transfer' AND chain = 'evm' AND state = 'open'`).then((r) => r[0]?.n ?? 0)
    const openBefore = await open()
    const answers = await Promise.all(Array.from({ length: 20 }, () => run(transfers.build(caller, body("hr-build", { amountRaw: 2_222n })))))
    const ok = answers.flatMap((a) => (a._tag === "Right" ? [a.right] : []))
    expect(ok).toHaveLength(20)
    expect(await rows("hr-build")).toEqual([{ client_transfer_id: "hr-build", state: "built", signature: "" }])
    const stored = await run(transfers.build(caller, body("hr-build", { amountRaw: 2_222n })))
    const view = stored._tag === "Right" ? stored.right : undefined
    for (const a of ok) expect({ transaction: a.transaction, signClaim: a.signClaim }).toEqual({ transaction: view?.transaction, signClaim: view?.signClaim })
    // The racing requests' own claims were made and retired: one more open claim, the build's.
    expect((await open()) - openBefore).toBe(1)
    expect(await reservation("hr-build")).toBe("held")
  }, 60_000)

  it("IDEMPOTENCY_CONFLICT prior_build_identical: a second id whose build would be the first's very bytes (same content, the same next nonce) is refused, retryable, recording nothing; not once the first's claim lapsed unsigned", async () => {
    const first = await built(body("twin-a", { amountRaw: 3_333n }))
    const claimsBefore = await claims()
    const again = await refusalOf(transfers.build(caller, body("twin-b", { amountRaw: 3_333n })))
    expect(again).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT" })
    const raw = await run(transfers.build(caller, body("twin-b", { amountRaw: 3_333n })))
    expect(raw._tag === "Left" ? { retryable: raw.left.retryable, details: raw.left.details } : raw).toEqual({
      retryable: true,
      details: { reason: "prior_build_identical", clientTransferId: "twin-a" }
    })
    expect(await rows("twin-b")).toEqual([])
    expect(await claims()).toBe(claimsBefore)
    expect(await reservation("twin-b")).toBeUndefined()
    // Other content builds other bytes: not refused.
    await built(body("twin-c", { amountRaw: 3_334n }))
    expect(first.transaction).toBeDefined()
    // A build whose sign claim lapsed unsigned can never land: the same bytes again are not refused.
    h.clock.ms = Date.now() - 31 * 60_000
    try {
      await built(body("twin-old", { amountRaw: 4_444n }))
    } finally {
      h.clock.ms = Date.now()
    }
    const renewed = await built(body("twin-new", { amountRaw: 4_444n }))
    expect(renewed.transaction).toBe((await built(body("twin-old", { amountRaw: 4_444n }))).transaction)
  }, 60_000)

  it("a relay-signed build the caller broadcast itself is settled once by the recovery pass; one whose nonce the wallet used otherwise settles failed, nothing moved", async () => {
    // Two builds on the same next nonce: the one broadcast lands, the other can never.
    const kept = await built(body("hb-kept", { amountRaw: 1_111n }))
    const keptSigned = await relaySigned(kept)
    const b = await built(body("hb-self", { amountRaw: 7_777n }))
    expect(parseTransaction(b.transaction as Hex).nonce).toBe(parseTransaction(kept.transaction as Hex).nonce)
    const signed = await relaySigned(b)
    const before = await eth(vault)
    await pc().sendRawTransaction({ serializedTransaction: signed })
    await eventually(async () => (await eth(vault)) - before === 7_777n, { what: "the broadcast transfer lands", deadlineMs: 30_000 })
    expect(await rows("hb-self")).toEqual([{ client_transfer_id: "hb-self", state: "built", signature: "" }])
    await Effect.runPromise(transfers.watchTee)
    await eventually(async () => (await rows("hb-self"))[0]?.state === "confirmed", { what: "the recovery pass settles it", deadlineMs: 30_000 })
    expect(await rows("hb-self")).toEqual([{ client_transfer_id: "hb-self", state: "confirmed", signature: keccak256(signed) }])
    expect(await reservation("hb-self")).toBe("booked")
    expect((await executed()).filter((e) => e.data.signature === keccak256(signed))).toHaveLength(1)
    // Submitted afterwards: the node already has it (not a refusal); answered as it stands.
    const replay = await run(submit("hb-self", signed))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", replay: true })
    await Effect.runPromise(transfers.watchTee)
    await eventually(async () => (await rows("hb-kept"))[0]?.state === "failed", { what: "the build whose nonce was used settles failed", deadlineMs: 30_000 })
    expect(await reservation("hb-kept")).toBe("released")
    expect((await eth(vault)) - before).toBe(7_777n)
    expect((await executed()).filter((e) => e.data.signature === keccak256(keptSigned))).toHaveLength(0)
  }, 90_000)

  it("a relay-signed build the caller broadcast and then submits is confirmed once (the node holding it is not a refusal)", async () => {
    const b = await built(body("hb-both", { amountRaw: 3_333n }))
    const signed = await relaySigned(b)
    const before = await eth(vault)
    await pc().sendRawTransaction({ serializedTransaction: signed })
    const r = await run(submit("hb-both", signed))
    expect(r._tag === "Right" && r.right).toMatchObject({ status: "confirmed", signature: keccak256(signed) })
    expect(await reservation("hb-both")).toBe("booked")
    expect((await eth(vault)) - before).toBe(3_333n)
  }, 60_000)

  it("a crash between the record of sending and the send: the recovery pass broadcasts the same signed bytes and settles it once", async () => {
    const b = await built(body("hk-crash", { amountRaw: 9_999n }))
    const signed = await relaySigned(b)
    // What a process killed right after saving `sending` leaves: the row with its signed bytes, nothing sent.
    const store = makeTransferStore(h.sql, { enqueue: () => Effect.void } as never, Clock.make())
    const row = (await Effect.runPromise(store.get(ACCOUNT, "hk-crash")))!
    const saved = await sqlRun(store.save(row, { ...row, state: "sending", signature: keccak256(signed), signedTransaction: signed }))
    expect(saved).toBe(true)
    const before = await eth(vault)
    expect(await pc().getTransactionCount({ address: tee.address, blockTag: "pending" })).toBe(Number(parseTransaction(signed).nonce))
    await Effect.runPromise(transfers.recover)
    await eventually(async () => (await rows("hk-crash"))[0]?.state === "confirmed", { what: "the recovery pass settles it", deadlineMs: 30_000 })
    expect((await eth(vault)) - before).toBe(9_999n)
    expect(await reservation("hk-crash")).toBe("booked")
    // A transfer's sign claim follows the transfer, whoever settles it (here the recovery pass).
    expect(await claimStateOf(b)).toBe("confirmed")
    await Effect.runPromise(transfers.recover)
    expect((await eth(vault)) - before).toBe(9_999n)
  }, 60_000)

  it("KEY_LIMIT_REACHED: an unsigned TEE transfer counts until the sweep releases its hold, after the hold is 30 minutes old and its sign claim's (the operation's) lifetime has passed", async () => {
    const limited = callerOf(WITHDRAW, "kid-a2", "a2aaaaaa")
    const t2 = await Effect.runPromise(h.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: "a2aaaaaa", label: "tee-2", vaultDestination: vault }))
    await setEthBalance(hoodTestClient(net), getAddress(t2.address), 5n * ETH)
    const window = () => sqlRun(windowUsedUsdMicros("kid-a2", "daily", Date.now()))
    const holdAtMs = Date.now()
    h.clock.ms = holdAtMs + 10 * 60_000
    try {
      // 0.01 ETH at $3,000 is $30 of a $50 daily txLimit.
      expect((await built(body("hh-1", { linkedWalletId: t2.id }), limited)).status).toBe("built")
    } finally {
      h.clock.ms = Date.now()
    }
    expect(await window()).toBe(30_000_000n)
    expect(await refusalOf(transfers.build(limited, body("hh-2", { linkedWalletId: t2.id })))).toMatchObject({ status: 403, code: "KEY_LIMIT_REACHED" })
    expect(await rows("hh-2")).toEqual([])
    await sweepAt(holdAtMs + 30 * 60_000 + 60_000)
    expect(await reservation("hh-1")).toBe("held")
    expect(await window()).toBe(30_000_000n)
    await sweepAt(holdAtMs + 40 * 60_000 + 60_000)
    expect(await reservation("hh-1")).toBe("released")
    expect(await window()).toBe(0n)
    // Other content: the same content now would be hh-1's very transaction, whose claim can still be signed (IDEMPOTENCY_CONFLICT).
    expect((await built(body("hh-3", { linkedWalletId: t2.id, amountRaw: ETH / 100n - 1n }), limited)).status).toBe("built")
  }, 60_000)

  it("the hold is released only for an unsigned transfer whose sign claims are unconsumed: a relay-signed build never submitted keeps it past the sweep; once its nonce is used by another transaction it settles failed, the hold released", async () => {
    const b = await built(body("hw-signed", { amountRaw: 2_468n }))
    const signed = await relaySigned(b)
    expect(await claimStateOf(b)).toBe("signed")
    // Hold and claim far past their lifetimes: the caller still holds bytes that can land (an EVM transaction has no expiry).
    await sweepAt(Date.now() + 2 * 60 * 60_000)
    expect(await reservation("hw-signed")).toBe("held")
    await Effect.runPromise(transfers.watchTee)
    expect(await rows("hw-signed")).toEqual([{ client_transfer_id: "hw-signed", state: "built", signature: "" }])
    // Another transaction on the same nonce lands: these bytes never can.
    const other = await built(body("hw-other", { amountRaw: 1_357n }))
    expect(parseTransaction(other.transaction as Hex).nonce).toBe(parseTransaction(b.transaction as Hex).nonce)
    const r = await run(submit("hw-other", await relaySigned(other)))
    expect(r._tag === "Right" && r.right.status).toBe("confirmed")
    await Effect.runPromise(transfers.watchTee)
    await eventually(async () => (await rows("hw-signed"))[0]?.state === "failed", { what: "the build whose nonce was used settles failed", deadlineMs: 30_000 })
    expect(await reservation("hw-signed")).toBe("released")
    expect(await claimStateOf(b)).toBe("failed")
    expect((await executed()).filter((e) => e.data.signature === keccak256(signed))).toHaveLength(0)
  }, 60_000)

  it("a refused send of the caller-held bytes decides nothing: the caller broadcast them (mined), the submit's lookup is unreadable and the node answers nonce too low; the receipt confirms it, never failed", async () => {
    const b = await built(body("hr-known", { amountRaw: 4_444n }))
    const signed = await relaySigned(b)
    const before = await eth(vault)
    await pc().waitForTransactionReceipt({ hash: await pc().sendRawTransaction({ serializedTransaction: signed }) })
    failTransactionLookup = true
    try {
      const r = await run(proxied.submit(caller, { clientTransferId: "hr-known", signedTransaction: hexBytes(signed) }))
      if (r._tag === "Left") throw new Error(JSON.stringify(r.left))
      expect(r.right).toMatchObject({ status: "confirmed", signature: keccak256(signed) })
    } finally {
      failTransactionLookup = false
    }
    expect(await rows("hr-known")).toEqual([{ client_transfer_id: "hr-known", state: "confirmed", signature: keccak256(signed) }])
    expect(await reservation("hr-known")).toBe("booked")
    expect(await claimStateOf(b)).toBe("confirmed")
    expect((await eth(vault)) - before).toBe(4_444n)
    expect((await executed()).filter((e) => e.data.signature === keccak256(signed))).toHaveLength(1)
  }, 60_000)

  it("a refused send of the caller-held bytes decides nothing: the preflight reverts (the TEE wallet's USDG short now), the transfer stays sending with its hold; topped up, the caller broadcasts the same bytes and it confirms once", async () => {
    const b = await built(body("hr-short", { asset: "usdg", amountRaw: 3_000_000n }))
    const signed = await relaySigned(b)
    const had = await tokenBalance(pc(), usdg, tee.address)
    const vaultHad = await tokenBalance(pc(), usdg, vault)
    await setUsdg(tee.address, 0n)
    expect(await tokenBalance(pc(), usdg, tee.address)).toBe(0n)
    const r = await run(proxied.submit(caller, { clientTransferId: "hr-short", signedTransaction: hexBytes(signed) }))
    if (r._tag === "Left") throw new Error(JSON.stringify(r.left))
    expect(r.right).toMatchObject({ status: "sending", signature: keccak256(signed) })
    expect(await rows("hr-short")).toEqual([{ client_transfer_id: "hr-short", state: "sending", signature: keccak256(signed) }])
    expect(await reservation("hr-short")).toBe("held")
    expect(await claimStateOf(b)).toBe("signed")
    // Nothing was mined on its nonce (no revert spent it).
    expect(await pc().getTransactionCount({ address: tee.address, blockTag: "latest" })).toBe(parseTransaction(signed).nonce)
    await setUsdg(tee.address, had)
    await pc().waitForTransactionReceipt({ hash: await pc().sendRawTransaction({ serializedTransaction: signed }) })
    await Effect.runPromise(transfers.recover)
    await eventually(async () => (await rows("hr-short"))[0]?.state === "confirmed", { what: "the recovery pass settles it", deadlineMs: 30_000 })
    expect(await reservation("hr-short")).toBe("booked")
    expect(await claimStateOf(b)).toBe("confirmed")
    expect((await tokenBalance(pc(), usdg, vault)) - vaultHad).toBe(3_000_000n)
    expect((await executed()).filter((e) => e.data.signature === keccak256(signed))).toHaveLength(1)
  }, 60_000)

  it("a malleated (high-s) twin of the relay's signature is refused (VALIDATION_FAILED 409 signedTransaction) and nothing changes", async () => {
    const b = await built(body("hm-high-s", { amountRaw: 8_642n }))
    const signed = await relaySigned(b)
    const parsed = parseTransaction(signed)
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const twin = serializeTransaction(parsed as Parameters<typeof serializeTransaction>[0], {
      r: parsed.r!,
      s: numberToHex(n - hexToBigInt(parsed.s!), { size: 32 }),
      yParity: parsed.yParity === 0 ? 1 : 0
    })
    // The same signer under another hash.
    expect(getAddress(await recoverTransactionAddress({ serializedTransaction: twin as never }))).toBe(tee.address)
    expect(keccak256(twin)).not.toBe(keccak256(signed))
    const before = { vault: await eth(vault), events: (await executed()).length }
    expect(await refusalOf(submit("hm-high-s", twin))).toEqual({ status: 409, code: "VALIDATION_FAILED", reason: undefined, field: "signedTransaction" })
    expect(await rows("hm-high-s")).toEqual([{ client_transfer_id: "hm-high-s", state: "built", signature: "" }])
    expect(await reservation("hm-high-s")).toBe("held")
    expect(await claimStateOf(b)).toBe("signed")
    expect(await eth(vault)).toBe(before.vault)
    expect((await executed()).length).toBe(before.events)
    // The canonical bytes still go through.
    const r = await run(submit("hm-high-s", signed))
    expect(r._tag === "Right" && r.right).toMatchObject({ status: "confirmed", signature: keccak256(signed) })
  }, 60_000)
})
