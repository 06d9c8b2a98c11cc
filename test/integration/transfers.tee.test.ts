/**
 * The TEE payer on the Solana transfer rail (spec document 2: 2.1 "out of the bound TEE wallet to
 * its pinned vault or a wallet the owner linked while signed in or marked trusted", 3.2, 4.1
 * "Transaction-limit rules", section 6 `transfer.executed`), through `TransferService` over the
 * real wallet service (PGlite, sign claims, the relay), the attempt runner and the Solana localnet.
 * Balances are read from the ledger and compared to the unit.
 *
 * - the build records the unsigned transaction with its sign claim (`built`, nothing sent); the
 *   relay signs those bytes; the submit sends them once: the exact lamports move, one event;
 * - a destination not allowed for a TEE source (a wallet an agent key linked and nobody trusted,
 *   the embedded wallet, an approved withdrawal address, a stranger) moves nothing;
 * - once `transfer:bound` is gone: the relay and the submit refuse `SCOPE_MISSING`, nothing moves;
 * - a forged or changed signed transaction is refused and nothing changes;
 * - 50 concurrent same-id submits move the funds once;
 * - a relay-signed build the caller broadcast itself (never submitted) is settled from the chain
 *   once by the recovery pass; an unbroadcast one stays `built`;
 * - the hold of an unsigned transfer counts on the key's txLimit until the sweep releases it, after
 *   the hold is 30 minutes old and the sign claim's own lifetime has passed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { address, createKeyPairFromPrivateKeyBytes, getAddressFromPublicKey, getBase58Decoder, getTransactionDecoder, getTransactionEncoder, signBytes } from "@solana/kit"
import { Context, Effect, Exit, Layer, Ref, Scope, TestClock, TestContext } from "effect"
import { webcrypto } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mapFailure } from "../../api/ErrorTable.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { type ErrorCode, ErrorCodes } from "../../src/domain/ErrorCodes.js"
import { AccountEvents, type RecordedEvent, layerTest as recordingEvents } from "../../src/services/accounts/AccountEvents.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { reservationState, sweep, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import { makeSolanaTransfers, SOLANA_FEE_LAMPORTS } from "../../src/services/transfers/SolanaTransfers.js"
import { makeTransferService, type TransferCaller, type TransferInput, type TransferServiceShape, type TransferView } from "../../src/services/transfers/TransferService.js"
import { transferReservationId } from "../../src/services/transfers/TransferStore.js"
import * as TrustedWallets from "../../src/services/transfers/TrustedWallets.js"
import * as WithdrawalAddresses from "../../src/services/transfers/WithdrawalAddresses.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { eventually } from "../support/eventually.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"

const SOL = 1_000_000_000n
const ACCOUNT = "acct-a"
const WITHDRAW = ["launch:write", "launch:read", "activity:write", "swap:write", "account:read", "transfer:write", "transfer:bound"]

let h: WalletHarness
let ledger: Ledger
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
let transfers: TransferServiceShape
let events: Ref.Ref<ReadonlyArray<RecordedEvent>>
let tee: { id: string; address: string }
let vault: string
let main: string
let bySession: { id: string; address: string }
let byAgent: { id: string; address: string }
let trust: TrustedWallets.TrustedWalletsShape
let addresses: WithdrawalAddresses.WithdrawalAddressesShape
let rpcUrl: string
let eventsPort: Context.Tag.Service<typeof AccountEvents>

/** key-a1 at the Withdraw level (its stored row has the same scopes); `scopes` narrows it as an access change would. */
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
const lamports = (a: string) => ledger.getAccount(address(a))?.lamports ?? 0n
const rows = (id?: string) =>
  h.query<{ client_transfer_id: string; state: string; signature: string }>((sql) =>
    id === undefined ? sql`SELECT client_transfer_id, state, signature FROM transfers` : sql`SELECT client_transfer_id, state, signature FROM transfers WHERE client_transfer_id = ${id}`
  )
const claims = () => h.query<{ n: number }>((sql) => sql`SELECT count(*)::int AS n FROM sign_claims WHERE purpose = 'transfer'`).then((r) => r[0]?.n ?? 0)
const executed = async () => (await Effect.runPromise(Ref.get(events))).filter((e) => e.event === "transfer.executed")
const reservation = (id: string) => sqlRun(reservationState(transferReservationId({ accountId: ACCOUNT, clientTransferId: id })))
const body = (clientTransferId: string, o: Partial<TransferInput> = {}): TransferInput => ({
  clientTransferId,
  chain: "solana",
  asset: "sol",
  amountRaw: SOL / 10n,
  to: vault,
  dryRun: false,
  payer: "tee",
  linkedWalletId: tee.id,
  ...o
})
const solanaAddress = () => getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))
/** The wire refusal (status, code, reason, field) of a failed call. */
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
/** The sign relay's signature of a build (the TEE wallet's key, custodied by the provider). */
const relaySigned = async (b: TransferView, as: Principal = principalOf()) => {
  const signed = await Effect.runPromise(
    h.service.signClaimed(as, tee.id, { claimId: b.signClaim?.claimId ?? "", transaction: new Uint8Array(Buffer.from(b.transaction ?? "", "base64")) })
  )
  return new Uint8Array(Buffer.from(signed.signedTransaction, "base64"))
}
const submit = (clientTransferId: string, signedTransaction: Uint8Array, as: TransferCaller = caller) => transfers.submit(as, { clientTransferId, signedTransaction })

/** Links a fresh Solana wallet with a challenge signed by its key, as `p` (a session or an agent key). */
const link = async (p: Principal, label: string) => {
  const keyPair = await createKeyPairFromPrivateKeyBytes(webcrypto.getRandomValues(new Uint8Array(32)))
  const a = await getAddressFromPublicKey(keyPair.publicKey)
  const challenge = new TextEncoder().encode(h.provider.linkChallenge(ACCOUNT, "solana", a))
  const signature = getBase58Decoder().decode(await signBytes(keyPair.privateKey, challenge))
  const view = await Effect.runPromise(h.service.link(p, { chain: "solana", address: a, signature, label }))
  return { id: view.id, address: a as string }
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
        launchChains: ["solana"],
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
  // The wallet service's clock (sign claims) on real time, as the spend gate's.
  h.clock.ms = Date.now()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true, ledger: { blockhashValiditySlots: 750 } }), scope)), SolanaLocalnet)
  ledger = net.ledger
  rpcUrl = net.rpcUrl
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  events = await Effect.runPromise(Ref.make<ReadonlyArray<RecordedEvent>>([]))
  eventsPort = Context.get(await Effect.runPromise(Layer.build(recordingEvents(events)).pipe(Effect.scoped)), AccountEvents)
  await Effect.runPromise(h.sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'TEETRANSFERS') ON CONFLICT (id) DO NOTHING`)
  await storeKey("kid-a1", "a1aaaaaa", null)
  await storeKey("kid-a2", "a2aaaaaa", 50)
  const embedded = await Effect.runPromise(h.provider.ensureEmbeddedWallet(ACCOUNT, "solana"))
  main = embedded.address
  vault = solanaAddress()
  const created = await Effect.runPromise(h.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: "a1aaaaaa", label: "tee", vaultDestination: vault }))
  tee = { id: created.id, address: created.address }
  ledger.requestAirdrop(address(tee.address), 20n * SOL)
  bySession = await link(principals["sess-a"] as Principal, "signed-in")
  byAgent = await link(principalOf(), "agent-linked")
  transfers = await Effect.runPromise(
    makeTransferService({
      solanaRpcUrl: net.rpcUrl,
      provider: h.provider,
      events: eventsPort,
      wallets: h.service,
      prices: fixedPriceSource({ sol: "100", usdc: "1", svc: "0.01", eth: "3000", usdg: "1" }),
      pollIntervalMs: 20,
      confirmTimeoutMs: 15_000
    }).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
  )
  trust = await Effect.runPromise(TrustedWallets.make().pipe(Effect.provideService(SqlClient.SqlClient, h.sql), Effect.provideService(AccountEvents, eventsPort)))
  addresses = await Effect.runPromise(WithdrawalAddresses.make({}).pipe(Effect.provideService(SqlClient.SqlClient, h.sql), Effect.provideService(AccountEvents, eventsPort)))
}, 120_000)

afterAll(async () => {
  clearInterval(ticker)
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await h?.close()
})

describe("transfer rail, TEE payer on Solana", () => {
  it("to the pinned vault: built with its sign claim, nothing sent; the relay signs; the submit moves the exact lamports once, one transfer.executed", async () => {
    const before = { tee: lamports(tee.address), vault: lamports(vault) }
    const claimsBefore = await claims()
    // A dry run checks everything and records, claims and holds nothing.
    const dry = await run(transfers.build(caller, body("tee-vault", { dryRun: true })))
    expect(dry._tag === "Right" && dry.right).toMatchObject({ status: "ready", payer: "tee", destinationKind: "vault", createsAccount: false })
    expect(await rows("tee-vault")).toEqual([])
    expect(await claims()).toBe(claimsBefore)
    expect(await reservation("tee-vault")).toBeUndefined()
    const b = await built(body("tee-vault"))
    expect(b).toMatchObject({ status: "built", payer: "tee", linkedWalletId: tee.id, from: tee.address, to: vault, destinationClass: "approved", destinationKind: "vault", replay: false })
    expect(b).not.toHaveProperty("signature")
    expect(await rows("tee-vault")).toEqual([{ client_transfer_id: "tee-vault", state: "built", signature: "" }])
    expect(await reservation("tee-vault")).toBe("held")
    expect(lamports(tee.address)).toBe(before.tee)
    // A repeat of the build answers the stored build.
    const again = await run(transfers.build(caller, body("tee-vault")))
    expect(again._tag === "Right" && again.right).toMatchObject({ status: "built", transaction: b.transaction, signClaim: b.signClaim, replay: true })

    const signed = await relaySigned(b)
    const r = await run(submit("tee-vault", signed))
    if (r._tag === "Left") throw new Error(JSON.stringify(r.left))
    expect(r.right).toMatchObject({ status: "confirmed", payer: "tee", destinationKind: "vault", replay: false })
    expect(lamports(vault) - before.vault).toBe(SOL / 10n)
    expect(before.tee - lamports(tee.address)).toBe(SOL / 10n + SOLANA_FEE_LAMPORTS)
    expect(await reservation("tee-vault")).toBe("booked")
    expect((await executed()).filter((e) => e.data.signature === r.right.signature)).toEqual([
      {
        accountId: ACCOUNT,
        event: "transfer.executed",
        data: { chain: "solana", asset: "sol", amountRaw: (SOL / 10n).toString(), from: tee.address, to: vault, destinationClass: "approved", signature: r.right.signature, destinationKind: "vault" }
      }
    ])
    // The same submit again answers the transfer as it stands and sends nothing.
    const replay = await run(submit("tee-vault", signed))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", signature: r.right.signature, replay: true })
    expect(lamports(vault) - before.vault).toBe(SOL / 10n)
  }, 60_000)

  it("to a wallet the owner linked while signed in, and to one an agent linked once the owner marks it trusted: own, with its id", async () => {
    const b = await built(body("tee-linked", { to: bySession.address, amountRaw: 3_000_000n }))
    expect(b).toMatchObject({ destinationClass: "own", destinationKind: "linked", walletId: bySession.id })
    const r = await run(submit("tee-linked", await relaySigned(b)))
    expect(r._tag === "Right" && r.right.status).toBe("confirmed")
    expect(lamports(bySession.address)).toBe(3_000_000n)

    await Effect.runPromise(trust.setTrust(principals["sess-a"] as Principal, [byAgent.id], true))
    try {
      const t = await built(body("tee-trusted", { to: byAgent.address, amountRaw: 2_000_000n }))
      expect(t).toMatchObject({ destinationClass: "own", walletId: byAgent.id })
      const s = await run(submit("tee-trusted", await relaySigned(t)))
      expect(s._tag === "Right" && s.right.status).toBe("confirmed")
      expect(lamports(byAgent.address)).toBe(2_000_000n)
    } finally {
      await Effect.runPromise(trust.setTrust(principals["sess-a"] as Principal, [byAgent.id], false))
    }
  }, 60_000)

  it("VALIDATION_FAILED destination_not_allowed: a destination not allowed for a TEE source moves nothing (no row, no claim, no hold)", async () => {
    const approved = solanaAddress()
    await Effect.runPromise(addresses.add(principals["sess-a"] as Principal, { chain: "solana", address: approved }))
    const before = { rows: (await rows()).length, claims: await claims(), events: (await executed()).length, tee: lamports(tee.address), agent: lamports(byAgent.address) }
    const stranger = solanaAddress()
    for (const [id, to] of [
      ["n-agent", byAgent.address],
      ["n-embedded", main],
      ["n-approved", approved],
      ["n-stranger", stranger]
    ] as const) {
      expect(await refusalOf(transfers.build(caller, body(id, { to })))).toEqual({ status: 400, code: "VALIDATION_FAILED", reason: "destination_not_allowed", field: "to" })
      expect(await reservation(id)).toBeUndefined()
    }
    expect(await refusalOf(transfers.build(caller, body("n-self", { to: tee.address })))).toMatchObject({ status: 400, reason: "same_wallet" })
    // The payer must be a TEE wallet bound to this key, on Solana.
    expect(await refusalOf(transfers.build(caller, body("n-linked-payer", { linkedWalletId: bySession.id })))).toMatchObject({
      status: 400,
      code: "VALIDATION_FAILED",
      field: "linkedWalletId",
      reason: "wallet_not_signable"
    })
    expect(await refusalOf(transfers.build(callerOf(WITHDRAW, "kid-a2", "a2aaaaaa"), body("n-other-key")))).toMatchObject({
      status: 400,
      field: "linkedWalletId",
      reason: "key_not_bound"
    })
    expect(await refusalOf(transfers.build(caller, body("n-hood", { chain: "hood", asset: "eth", to: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" })))).toMatchObject({
      status: 400,
      field: "chain",
      reason: "chain_unsupported"
    })
    expect((await rows()).length).toBe(before.rows)
    expect(await claims()).toBe(before.claims)
    expect((await executed()).length).toBe(before.events)
    expect(lamports(tee.address)).toBe(before.tee)
    expect(lamports(byAgent.address)).toBe(before.agent)
    expect(lamports(stranger)).toBe(0n)
  })

  it("SCOPE_MISSING once transfer:bound is gone: at build, at the sign relay and at POST /transfer/submit; nothing moves", async () => {
    expect(await refusalOf(transfers.build(narrowed, body("s-build")))).toMatchObject({ status: 403, code: "SCOPE_MISSING" })
    expect(await rows("s-build")).toEqual([])

    // Built while the key held it; then the key is narrowed (an access change applies on its next request).
    const b = await built(body("s-submit", { amountRaw: 4_000_000n }))
    expect(await refusalOf(h.service.signClaimed(narrowed.principal!, tee.id, { claimId: b.signClaim!.claimId, transaction: new Uint8Array(Buffer.from(b.transaction!, "base64")) }))).toMatchObject({
      status: 403,
      code: "SCOPE_MISSING"
    })
    // Signed before the change (the relay refused nothing then), submitted after it.
    const signed = await relaySigned(b)
    const before = { vault: lamports(vault), events: (await executed()).length }
    expect(await refusalOf(submit("s-submit", signed, narrowed))).toMatchObject({ status: 403, code: "SCOPE_MISSING" })
    expect(await rows("s-submit")).toEqual([{ client_transfer_id: "s-submit", state: "built", signature: "" }])
    expect(lamports(vault)).toBe(before.vault)
    expect((await executed()).length).toBe(before.events)
    // Another key of the account cannot submit it either (it is this key's build).
    expect(await refusalOf(submit("s-submit", signed, callerOf(WITHDRAW, "kid-a2", "a2aaaaaa")))).toMatchObject({ status: 404, code: "JOB_NOT_FOUND" })
    // With the scope back, the same bytes go through once.
    const r = await run(submit("s-submit", signed))
    expect(r._tag === "Right" && r.right.status).toBe("confirmed")
    expect(lamports(vault) - before.vault).toBe(4_000_000n)
  }, 60_000)

  it("a forged or changed signed transaction is refused (VALIDATION_FAILED 409 signedTransaction) and nothing changes", async () => {
    const b = await built(body("f-1", { amountRaw: 5_000_000n }))
    const other = await built(body("f-2", { amountRaw: 6_000_000n }))
    const unsigned = new Uint8Array(Buffer.from(b.transaction!, "base64"))
    const otherSigned = await relaySigned(other)
    // The built message with a forged signature in the TEE wallet's slot.
    const decoded = getTransactionDecoder().decode(unsigned)
    const forged = new Uint8Array(getTransactionEncoder().encode({ ...decoded, signatures: { ...decoded.signatures, [tee.address]: crypto.getRandomValues(new Uint8Array(64)) } } as never))
    const before = { vault: lamports(vault), tee: lamports(tee.address), events: (await executed()).length }
    for (const bytes of [unsigned, otherSigned, forged, new Uint8Array([1, 2, 3])]) {
      expect(await refusalOf(submit("f-1", bytes))).toEqual({ status: 409, code: "VALIDATION_FAILED", reason: undefined, field: "signedTransaction" })
    }
    expect(await rows("f-1")).toEqual([{ client_transfer_id: "f-1", state: "built", signature: "" }])
    expect(await reservation("f-1")).toBe("held")
    expect(lamports(vault)).toBe(before.vault)
    expect(lamports(tee.address)).toBe(before.tee)
    expect((await executed()).length).toBe(before.events)
    // A main-payer id has nothing to submit; an unknown id is not found.
    expect(await refusalOf(submit("never-built", otherSigned))).toMatchObject({ status: 404, code: "JOB_NOT_FOUND", field: "clientTransferId" })
  }, 60_000)

  it("50 concurrent same-id submits move the funds once", async () => {
    const b = await built(body("c-race", { amountRaw: 12_345n }))
    const signed = await relaySigned(b)
    const before = { vault: lamports(vault), tee: lamports(tee.address) }
    const answers = await Promise.all(Array.from({ length: 50 }, () => run(submit("c-race", signed))))
    const ok = answers.flatMap((a) => (a._tag === "Right" ? [a.right] : []))
    expect(ok).toHaveLength(50)
    expect(ok.filter((a) => !a.replay)).toHaveLength(1)
    const settled = await run(submit("c-race", signed))
    expect(settled._tag === "Right" && settled.right.status).toBe("confirmed")
    const signature = settled._tag === "Right" ? settled.right.signature : ""
    expect(lamports(vault) - before.vault).toBe(12_345n)
    expect(before.tee - lamports(tee.address)).toBe(12_345n + SOLANA_FEE_LAMPORTS)
    expect(await rows("c-race")).toEqual([{ client_transfer_id: "c-race", state: "confirmed", signature }])
    expect((await executed()).filter((e) => e.data.signature === signature)).toHaveLength(1)
  }, 90_000)

  it("a relay-signed transfer the node refuses at preflight (the wallet is short now) decides nothing while its blockhash is valid: broadcast by the caller once funded, it confirms once, its hold booked", async () => {
    const short = await built(body("pf-1", { amountRaw: 3_333n }))
    const signedShort = await relaySigned(short)
    // Another transfer takes all the wallet holds (its fee included): pf-1 cannot pay its fee now.
    const drain = await built(body("pf-drain", { amountRaw: lamports(tee.address) - 5_000n }))
    const d = await run(submit("pf-drain", await relaySigned(drain)))
    expect(d._tag === "Right" && d.right.status).toBe("confirmed")
    expect(lamports(tee.address)).toBe(0n)
    try {
      const fast = await Effect.runPromise(
        makeTransferService({
          solanaRpcUrl: rpcUrl,
          provider: h.provider,
          events: eventsPort,
          wallets: h.service,
          prices: fixedPriceSource({ sol: "100", usdc: "1", svc: "0.01", eth: "3000", usdg: "1" }),
          pollIntervalMs: 20,
          confirmTimeoutMs: 300
        }).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
      )
      const refused = await run(fast.submit(caller, { clientTransferId: "pf-1", signedTransaction: signedShort }))
      // Not failed: the relay handed these bytes out, and they can still land. In flight, the hold kept.
      expect(refused._tag === "Right" && refused.right.status).toBe("sending")
      expect(await rows("pf-1")).toMatchObject([{ state: "sending" }])
      expect(await reservation("pf-1")).toBe("held")
      // Funded again, the caller broadcasts the very same bytes: they land once, and the transfer with them.
      ledger.requestAirdrop(address(tee.address), 20n * SOL)
      const before = lamports(vault)
      await Effect.runPromise(makeSolanaTransfers(rpcUrl).port.send(Buffer.from(signedShort).toString("base64")))
      await eventually(async () => lamports(vault) - before === 3_333n, { what: "the broadcast bytes land", deadlineMs: 30_000 })
      // As above: passes until the chain reports it confirmed (one pass leaves a pending one for the next).
      await eventually(
        async () => {
          await Effect.runPromise(transfers.recover)
          return (await rows("pf-1"))[0]?.state === "confirmed"
        },
        { what: "pf-1 settled from the chain", deadlineMs: 30_000, intervalMs: 100 }
      )
      expect(await reservation("pf-1")).toBe("booked")
      const [settled] = await rows("pf-1")
      expect((await executed()).filter((e) => e.data.signature === settled?.signature)).toHaveLength(1)
      expect(lamports(vault) - before).toBe(3_333n)
    } finally {
      if (lamports(tee.address) < SOL) ledger.requestAirdrop(address(tee.address), 20n * SOL)
    }
  }, 120_000)

  it("a relay-signed build the caller broadcast itself is settled once by the recovery pass; one it never broadcast stays built", async () => {
    const kept = await built(body("b-kept", { amountRaw: 1_111n }))
    await relaySigned(kept)
    const b = await built(body("b-self", { amountRaw: 7_777n }))
    const signed = await Effect.runPromise(
      h.service.signClaimed(principalOf(), tee.id, { claimId: b.signClaim!.claimId, transaction: new Uint8Array(Buffer.from(b.transaction!, "base64")) })
    )
    const before = lamports(vault)
    await Effect.runPromise(makeSolanaTransfers(rpcUrl).port.send(signed.signedTransaction))
    await eventually(async () => lamports(vault) - before === 7_777n, { what: "the broadcast transfer lands", deadlineMs: 30_000 })
    expect(await rows("b-self")).toEqual([{ client_transfer_id: "b-self", state: "built", signature: "" }])
    // A pass leaves a transfer the chain reports pending (landed, not yet confirmed) for the next
    // pass, as the engine's periodic pass would run it: so the test runs passes until it settles.
    await eventually(
      async () => {
        await Effect.runPromise(transfers.watchTee)
        return (await rows("b-self"))[0]?.state === "confirmed"
      },
      { what: "the recovery pass settles it", deadlineMs: 30_000, intervalMs: 100 }
    )
    expect(await rows("b-self")).toEqual([{ client_transfer_id: "b-self", state: "confirmed", signature: signed.signature }])
    expect(await reservation("b-self")).toBe("booked")
    expect((await executed()).filter((e) => e.data.signature === signed.signature)).toHaveLength(1)
    // Again: nothing more; a submit of the same bytes answers it as it stands.
    await Effect.runPromise(transfers.watchTee)
    expect((await executed()).filter((e) => e.data.signature === signed.signature)).toHaveLength(1)
    const replay = await run(submit("b-self", new Uint8Array(Buffer.from(signed.signedTransaction, "base64"))))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", signature: signed.signature, replay: true })
    expect(lamports(vault) - before).toBe(7_777n)
    expect(await rows("b-kept")).toEqual([{ client_transfer_id: "b-kept", state: "built", signature: "" }])
    // Its blockhash expires unlanded: the relay's bytes can never land and its one claim is spent,
    // so the pass settles it failed (hold released, no event) and it leaves the pass's list.
    expect(await reservation("b-kept")).toBe("held")
    const eventsBefore = (await executed()).length
    ledger.advanceSlots(800)
    await eventually(
      async () => {
        await Effect.runPromise(transfers.watchTee)
        return (await rows("b-kept"))[0]?.state === "failed"
      },
      { what: "the lapsed build settles failed", deadlineMs: 30_000, intervalMs: 100 }
    )
    expect(await reservation("b-kept")).toBe("released")
    expect((await executed()).length).toBe(eventsBefore)
  }, 90_000)

  it("a relay-signed build the caller broadcast itself and then submits is confirmed once (the node's AlreadyProcessed is not a refusal)", async () => {
    const b = await built(body("b-both", { amountRaw: 3_333n }))
    const signed = await Effect.runPromise(
      h.service.signClaimed(principalOf(), tee.id, { claimId: b.signClaim!.claimId, transaction: new Uint8Array(Buffer.from(b.transaction!, "base64")) })
    )
    const before = lamports(vault)
    await Effect.runPromise(makeSolanaTransfers(rpcUrl).port.send(signed.signedTransaction))
    await eventually(async () => lamports(vault) - before === 3_333n, { what: "the broadcast transfer lands", deadlineMs: 30_000 })
    const r = await run(submit("b-both", new Uint8Array(Buffer.from(signed.signedTransaction, "base64"))))
    expect(r._tag === "Right" && r.right).toMatchObject({ status: "confirmed", signature: signed.signature })
    expect(await reservation("b-both")).toBe("booked")
    expect((await executed()).filter((e) => e.data.signature === signed.signature)).toHaveLength(1)
    expect(lamports(vault) - before).toBe(3_333n)
  }, 90_000)

  it("KEY_LIMIT_REACHED: an unsigned TEE transfer to a linked wallet counts until the sweep releases its hold, after the hold is 30 minutes old and its sign claim's lifetime has passed", async () => {
    const limited = callerOf(WITHDRAW, "kid-a2", "a2aaaaaa")
    // The TEE wallet is bound to key a1; bind a second one to a2 for this key's window.
    const t2 = await Effect.runPromise(h.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: "a2aaaaaa", label: "tee-2" }))
    ledger.requestAirdrop(address(t2.address), 5n * SOL)
    const window = () => sqlRun(windowUsedUsdMicros("kid-a2", "daily", Date.now()))
    // The claim is made 10 minutes after the hold (the wallet service's clock ahead), so the two lifetimes differ.
    const holdAtMs = Date.now()
    h.clock.ms = holdAtMs + 10 * 60_000
    try {
      // 0.3 SOL at $100 is $30 of a $50 daily txLimit.
      const b = await built(body("h-1", { to: bySession.address, amountRaw: (3n * SOL) / 10n, linkedWalletId: t2.id }), limited)
      expect(b.status).toBe("built")
    } finally {
      h.clock.ms = Date.now()
    }
    expect(await window()).toBe(30_000_000n)
    // Unsigned, it counts: another $30 is over the window, refused, nothing recorded.
    expect(await refusalOf(transfers.build(limited, body("h-2", { to: bySession.address, amountRaw: (3n * SOL) / 10n, linkedWalletId: t2.id })))).toMatchObject({
      status: 403,
      code: "KEY_LIMIT_REACHED"
    })
    expect(await rows("h-2")).toEqual([])
    const sweepAt = (ms: number) =>
      sqlRun(Effect.gen(function* () {
        yield* TestClock.setTime(ms)
        return yield* sweep()
      }).pipe(Effect.provide(TestContext.TestContext)))
    // 30 minutes old, its claim still alive: kept.
    await sweepAt(holdAtMs + 30 * 60_000 + 60_000)
    expect(await reservation("h-1")).toBe("held")
    expect(await window()).toBe(30_000_000n)
    // Past the claim's own 30-minute lifetime too: the sweep releases it and the window has room again.
    await sweepAt(holdAtMs + 40 * 60_000 + 60_000)
    expect(await reservation("h-1")).toBe("released")
    expect(await window()).toBe(0n)
    const after = await built(body("h-3", { to: bySession.address, amountRaw: (3n * SOL) / 10n, linkedWalletId: t2.id }), limited)
    expect(after.status).toBe("built")
  }, 60_000)
})
