/**
 * The agent transfer rail on Solana (spec document 2: 2.1, "Transaction-limit rules", section 6
 * `transfer.executed`), main (embedded) payer, over the real wallet provider and tables (PGlite),
 * the one attempt runner and the Solana localnet over its RPC. Balances are read from the ledger
 * and compared to the unit: a transfer moves the exact raw amount once; the same id replays and
 * never resends; 50 concurrent requests under one id make one transfer; a refusal records nothing
 * (no row, no event, no balance change); a transfer a dead process left `sending` is settled from
 * the chain by another process's recovery pass and never sent by it.
 */
import { requestMemo } from "../../src/chain/solana/client/RequestMemo.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { reservationState, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { address, getBase58Decoder } from "@solana/kit"
import { Clock, Context, Effect, Exit, Layer, Ref, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mapFailure } from "../../api/ErrorTable.js"
import { type ErrorCode, ErrorCodes } from "../../src/domain/ErrorCodes.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { USDC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { AccountEvents, type RecordedEvent, layerTest as recordingEvents } from "../../src/services/accounts/AccountEvents.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { makeSolanaTransfers, SOLANA_FEE_LAMPORTS, TOKEN_ACCOUNT_RENT } from "../../src/services/transfers/SolanaTransfers.js"
import { type TransferCaller, type TransferInput, makeTransferService, requestHashOf, type TransferServiceShape } from "../../src/services/transfers/TransferService.js"
import { MAIN_PAYER, makeTransferStore, transferReservationId, type TransferRow } from "../../src/services/transfers/TransferStore.js"
import { eventually } from "../support/eventually.js"
import * as WithdrawalAddresses from "../../src/services/transfers/WithdrawalAddresses.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"

let h: WalletHarness
let ledger: Ledger
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
let transfers: TransferServiceShape
let addresses: WithdrawalAddresses.WithdrawalAddressesShape
let events: Ref.Ref<ReadonlyArray<RecordedEvent>>
let main: string
let tee: { id: string; address: string }
let rpcUrl: string

const SOL = 1_000_000_000n
const caller: TransferCaller = { accountId: "acct-a", keyId: "kid-a1", keyPrefix: "a1aaaaaa", embeddedWallet: "allowed" }
/** Keys of acct-a with a daily USD txLimit, stored (the spend gate reads a key's limits from storage, never from the request). */
const limitedCaller = (keyId: string, keyPrefix: string): TransferCaller => ({ ...caller, keyId, keyPrefix })
const storeKey = (id: string, prefix: string, txLimitUsd: number | null) =>
  Effect.runPromise(
    insertKey(
      { id, prefix, accountId: "acct-a", hash: `hash-${id}`, environment: "production", scopes: ["transfer:write"], label: null, rateLimitPerMin: 60, dailyLaunchCap: 10, launchChains: ["solana"], embeddedWallet: "allowed", expiresAtMs: null, txLimit: txLimitUsd === null ? null : { usdMicros: txLimitUsd * 1_000_000, reset: "daily" }, mintedByDeviceId: null, provisionedBy: null },
      Date.now()
    ).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
  )
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const lamports = (a: string) => ledger.getAccount(address(a))?.lamports ?? 0n
const rows = (id?: string) =>
  h.query<{ client_transfer_id: string; state: string; signature: string }>((sql) =>
    id === undefined ? sql`SELECT client_transfer_id, state, signature FROM transfers` : sql`SELECT client_transfer_id, state, signature FROM transfers WHERE client_transfer_id = ${id}`
  )
const executed = async () => (await Effect.runPromise(Ref.get(events))).filter((e) => e.event === "transfer.executed")
const body = (clientTransferId: string, o: Partial<TransferInput> = {}): TransferInput => ({
  clientTransferId,
  chain: "solana",
  asset: "sol",
  amountRaw: SOL / 10n,
  to: tee.address,
  dryRun: false,
  ...o
})
/** The wire refusal (status, code, reason) of a failed build. */
const refusalOf = async (input: TransferInput, as: TransferCaller = caller) => {
  const r = await Effect.runPromise(Effect.either(mapFailure(transfers.build(as, input))))
  if (r._tag === "Right") throw new Error(`expected a refusal, got ${JSON.stringify(r.right)}`)
  return { status: r.left.status ?? ErrorCodes[r.left.code as ErrorCode].status, code: r.left.code, reason: (r.left.extra as { reason?: string } | undefined)?.reason, field: r.left.field }
}
const solanaAddress = () => getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))

beforeAll(async () => {
  h = await startWalletHarness()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true, ledger: { blockhashValiditySlots: 750 } }), scope)), SolanaLocalnet)
  ledger = net.ledger
  rpcUrl = net.rpcUrl
  // 20 ms slots: a blockhash lives 750 of them (15 s), as in trade.solana, so 50 concurrent builds on
  // a loaded machine still send before theirs expires (150 slots, 3 s, failed them all there).
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  events = await Effect.runPromise(Ref.make<ReadonlyArray<RecordedEvent>>([]))
  const eventsPort = Context.get(await Effect.runPromise(Layer.build(recordingEvents(events)).pipe(Effect.scoped)), AccountEvents)
  const embedded = await Effect.runPromise(h.provider.ensureEmbeddedWallet("acct-a", "solana"))
  await Effect.runPromise(h.provider.setDelegation("acct-a", "solana", "active"))
  main = embedded.address
  ledger.requestAirdrop(address(main), 10n * SOL)
  ledger.mintTestTokens(USDC_MINT_ADDRESS, address(main), 1_000_000_000n)
  const created = await Effect.runPromise(h.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: "a1aaaaaa", label: "tee" }))
  tee = { id: created.id, address: created.address }
  transfers = await Effect.runPromise(
    makeTransferService({
      solanaRpcUrl: net.rpcUrl,
      provider: h.provider,
      events: eventsPort,
      prices: fixedPriceSource({ sol: "100", eth: "3000", usdc: "1", usdg: "1", svc: "0.01" }),
      pollIntervalMs: 20,
      confirmTimeoutMs: 15_000
    }).pipe(Effect.provideService(SqlClient.SqlClient, h.sql))
  )
  await Effect.runPromise(h.sql`INSERT INTO accounts (id, plan, referral_code) VALUES ('acct-a', 'max', 'TRANSFERS') ON CONFLICT (id) DO NOTHING`)
  await storeKey("kid-a1", "a1aaaaaa", null)
  await storeKey("kid-a5", "a5aaaaaa", 5)
  await storeKey("kid-a9", "a9aaaaaa", 50)
  await storeKey("kid-a2", "a2aaaaaa", 50)
  addresses = await Effect.runPromise(WithdrawalAddresses.make({}).pipe(Effect.provideService(SqlClient.SqlClient, h.sql), Effect.provideService(AccountEvents, eventsPort)))
}, 120_000)

afterAll(async () => {
  clearInterval(ticker)
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await h?.close()
})

describe("transfer rail, main payer on Solana", () => {
  it("moves the exact raw amount once to an own wallet; one transfer.executed with the spec's payload", async () => {
    const before = { main: lamports(main), tee: lamports(tee.address) }
    const r = await run(transfers.build(caller, body("t-own")))
    if (r._tag === "Left") throw new Error(JSON.stringify(r.left))
    expect(r.right).toMatchObject({ status: "confirmed", from: main, to: tee.address, destinationClass: "own", destinationKind: "tee", walletId: tee.id, replay: false })
    expect(lamports(tee.address) - before.tee).toBe(SOL / 10n)
    expect(before.main - lamports(main)).toBe(SOL / 10n + SOLANA_FEE_LAMPORTS)
    expect(await rows("t-own")).toEqual([{ client_transfer_id: "t-own", state: "confirmed", signature: r.right.signature }])
    const ev = (await executed()).filter((e) => e.data.signature === r.right.signature)
    expect(ev).toEqual([
      {
        accountId: "acct-a",
        event: "transfer.executed",
        data: { chain: "solana", asset: "sol", amountRaw: (SOL / 10n).toString(), from: main, to: tee.address, destinationClass: "own", signature: r.right.signature, walletId: tee.id, destinationKind: "tee" }
      }
    ])

    // The same id replays: same signature, nothing sent again.
    const again = await run(transfers.build(caller, body("t-own")))
    expect(again._tag === "Right" && again.right).toMatchObject({ status: "confirmed", signature: r.right.signature, replay: true })
    expect(lamports(tee.address) - before.tee).toBe(SOL / 10n)
    expect((await executed()).filter((e) => e.data.signature === r.right.signature)).toHaveLength(1)
    // Another body under the same id is refused.
    expect(await refusalOf(body("t-own", { amountRaw: 2n }))).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT", field: "clientTransferId" })
  })

  it("50 concurrent requests under one id make one transfer", async () => {
    const before = lamports(tee.address)
    const answers = await Promise.all(Array.from({ length: 50 }, () => run(transfers.build(caller, body("t-race", { amountRaw: 12_345n })))))
    const ok = answers.flatMap((a) => (a._tag === "Right" ? [a.right] : []))
    expect(ok).toHaveLength(50)
    expect(new Set(ok.map((a) => a.signature)).size).toBe(1)
    expect(ok.filter((a) => !a.replay)).toHaveLength(1)
    expect(await rows("t-race")).toHaveLength(1)
    const settled = await run(transfers.build(caller, body("t-race", { amountRaw: 12_345n })))
    expect(settled._tag === "Right" && settled.right.status).toBe("confirmed")
    expect(lamports(tee.address) - before).toBe(12_345n)
    expect((await executed()).filter((e) => e.data.signature === ok[0]!.signature)).toHaveLength(1)
  }, 60_000)

  it("SPL to an approved withdrawal address: creates its token account, moves the exact units, destinationClass approved", async () => {
    const out = solanaAddress()
    await Effect.runPromise(addresses.add(principals["sess-a"] as Principal, { chain: "solana", address: out }))
    const before = { usdc: tokenBalance(ledger, ataOf(address(main), USDC_MINT_ADDRESS)), sol: lamports(main) }
    const dry = await run(transfers.build(caller, body("t-usdc", { asset: "usdc", amountRaw: 2_500_000n, to: out, dryRun: true })))
    expect(dry._tag === "Right" && dry.right).toMatchObject({ status: "ready", destinationClass: "approved", destinationKind: "withdrawal_address", createsAccount: true })
    expect(await rows("t-usdc")).toHaveLength(0)
    const r = await run(transfers.build(caller, body("t-usdc", { asset: "usdc", amountRaw: 2_500_000n, to: out })))
    if (r._tag === "Left") throw new Error(JSON.stringify(r.left))
    expect(r.right).toMatchObject({ status: "confirmed", destinationClass: "approved", destinationKind: "withdrawal_address" })
    expect(r.right).not.toHaveProperty("walletId")
    expect(tokenBalance(ledger, ataOf(address(out), USDC_MINT_ADDRESS))).toBe(2_500_000n)
    expect(before.usdc - tokenBalance(ledger, ataOf(address(main), USDC_MINT_ADDRESS))).toBe(2_500_000n)
    expect(before.sol - lamports(main)).toBe(SOLANA_FEE_LAMPORTS + TOKEN_ACCOUNT_RENT)
    expect((await executed()).find((e) => e.data.signature === r.right.signature)?.data).toMatchObject({ asset: "usdc", amountRaw: "2500000", destinationClass: "approved", to: out })
  })

  it("refusals record nothing: not own and not approved, the source itself, a denied key, over balance, over the txLimit, an unknown mint", async () => {
    const before = { rows: (await rows()).length, events: (await executed()).length, main: lamports(main) }
    const stranger = solanaAddress()
    expect(await refusalOf(body("r1", { to: stranger }))).toMatchObject({ status: 400, code: "VALIDATION_FAILED", field: "to", reason: "destination_not_allowed" })
    expect(lamports(stranger)).toBe(0n)
    expect(await refusalOf(body("r2", { to: main }))).toMatchObject({ status: 400, reason: "same_wallet" })
    expect(await refusalOf(body("r3"), { ...caller, embeddedWallet: "denied" })).toMatchObject({ status: 403, code: "EMBEDDED_WALLET_NOT_PERMITTED" })
    expect(await refusalOf(body("r4", { amountRaw: 1_000n * SOL }))).toMatchObject({ status: 402, code: "INSUFFICIENT_OWNER_BALANCE" })
    // 0.1 SOL at $100 is $10: over a $5 daily txLimit.
    expect(await refusalOf(body("r5"), limitedCaller("kid-a5", "a5aaaaaa"))).toMatchObject({ status: 403, code: "KEY_LIMIT_REACHED" })
    // A launched token has no USD price here: a key with a txLimit fails closed.
    expect(await refusalOf(body("r6", { asset: solanaAddress() }), limitedCaller("kid-a5", "a5aaaaaa"))).toMatchObject({
      status: 403,
      code: "KEY_LIMIT_REACHED",
      reason: "limit_unavailable"
    })
    expect(await refusalOf(body("r7", { asset: solanaAddress() }))).toMatchObject({ status: 400, field: "asset", reason: "asset_unsupported" })
    // This service runs no Hood node: a Hood transfer is refused on its chain.
    expect(await refusalOf(body("r7h", { chain: "hood", asset: "eth", to: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" }))).toMatchObject({
      status: 400,
      code: "VALIDATION_FAILED",
      field: "chain",
      reason: "chain_unsupported"
    })
    await Effect.runPromise(h.provider.setDelegation("acct-a", "solana", "revoked"))
    try {
      expect(await refusalOf(body("r8"))).toMatchObject({ status: 403, code: "DELEGATION_REVOKED" })
    } finally {
      await Effect.runPromise(h.provider.setDelegation("acct-a", "solana", "active"))
    }
    expect((await rows()).length).toBe(before.rows)
    expect((await executed()).length).toBe(before.events)
    expect(lamports(main)).toBe(before.main)
    // Under the txLimit it goes through.
    const within = await run(transfers.build(limitedCaller("kid-a9", "a9aaaaaa"), body("r9")))
    expect(within._tag === "Right" && within.right.status).toBe("confirmed")
  })

  it("the txLimit window is the spend gate's: another rail's open hold counts, and its release frees the room", async () => {
    const limited = limitedCaller("kid-a2", "a2aaaaaa")
    const hold = (state: "held" | "released") =>
      Effect.runPromise(
        h.sql`
          INSERT INTO spend_reservations (id, account_id, key_id, rail, purpose, chain, asset, side, amount_raw, usd_micros, state, created_at, expires_at)
          VALUES ('trade:hold-a2', 'acct-a', 'kid-a2', 'main', 'trade', 'solana', 'sol', 'buy', 450000000, 45000000, ${state}, now(), now() + interval '30 minutes')
          ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state`
      )
    // $45 held by a trade's build plus this $10 transfer is over the $50 window.
    await hold("held")
    expect(await refusalOf(body("w1"), limited)).toMatchObject({ status: 403, code: "KEY_LIMIT_REACHED" })
    await hold("released")
    const after = await run(transfers.build(limited, body("w2")))
    expect(after._tag === "Right" && after.right.status).toBe("confirmed")
    // The confirmed transfer is booked on the key's window ($10), its hold settled once.
    const window = () => Effect.runPromise(windowUsedUsdMicros("kid-a2", "daily", Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, h.sql)))
    const reservation = (id: string) => Effect.runPromise(reservationState(transferReservationId({ accountId: "acct-a", clientTransferId: id })).pipe(Effect.provideService(SqlClient.SqlClient, h.sql)))
    expect(await window()).toBe(10_000_000n)
    expect(await reservation("w2")).toBe("booked")
    // A dry run decides and holds nothing; $45 more would pass the $50 window: refused, nothing recorded or held.
    const dry = await run(transfers.build(limited, body("w3", { dryRun: true })))
    expect(dry._tag === "Right" && dry.right.status).toBe("ready")
    expect(await reservation("w3")).toBeUndefined()
    expect(await refusalOf(body("w4", { amountRaw: (SOL * 45n) / 100n }), limited)).toMatchObject({ status: 403, code: "KEY_LIMIT_REACHED" })
    expect(await reservation("w4")).toBeUndefined()
    expect(await rows("w4")).toEqual([])
    expect(await window()).toBe(10_000_000n)
  })
})

describe("a process that died mid-transfer (recovery by another process's pass)", () => {
  /** A transfer recorded `sending` and signed as the dead process left it; `sent`: whether its bytes left before it died. */
  const crashed = async (clientTransferId: string, amountRaw: bigint, sent: boolean) => {
    const chain = makeSolanaTransfers(rpcUrl)
    const built = await Effect.runPromise(chain.build({ owner: main, to: tee.address, mint: null, amountRaw, decimals: null, createsAccount: false, memo: requestMemo("transfer", "acct-a", clientTransferId) }))
    const signed = await Effect.runPromise(h.provider.signWithEmbedded("acct-a", "solana", built.wire))
    const input = body(clientTransferId, { amountRaw })
    const row: TransferRow = {
      ...MAIN_PAYER,
      accountId: "acct-a",
      clientTransferId,
      keyId: caller.keyId,
      keyPrefix: caller.keyPrefix,
      requestHash: requestHashOf(input),
      chain: "solana",
      asset: "sol",
      mint: null,
      amountRaw,
      from: main,
      to: tee.address,
      destinationClass: "own",
      destinationKind: "tee",
      toWalletId: tee.id,
      state: "sending",
      signature: signed.signature,
      lastValidBlockHeight: built.lastValidBlockHeight,
      error: null,
      createdAtMs: Date.now()
    }
    const store = makeTransferStore(h.sql, { enqueue: () => Effect.void }, Clock.make())
    expect(await Effect.runPromise(store.save(undefined, row).pipe(Effect.provideService(SqlClient.SqlClient, h.sql)))).toBe(true)
    if (sent) await Effect.runPromise(chain.port.send(signed.signedTransaction))
    return { input, signature: signed.signature }
  }
  const stateOfRow = async (id: string) => (await rows(id))[0]?.state

  it("sent before the crash: the pass settles it confirmed from the chain, once, and sends nothing itself", async () => {
    const before = lamports(tee.address)
    const { input, signature } = await crashed("t-crash-sent", 777n, true)
    expect(await Effect.runPromise(transfers.recover)).toBe(1)
    await eventually(async () => (await stateOfRow("t-crash-sent")) === "confirmed", { what: "the recovered transfer settles confirmed", deadlineMs: 30_000 })
    expect(lamports(tee.address) - before).toBe(777n)
    expect((await executed()).filter((e) => e.data.signature === signature)).toHaveLength(1)
    const replay = await run(transfers.build(caller, input))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", signature, replay: true })
  }, 60_000)

  it("never sent before the crash: the pass never sends it; it settles failed once its blockhash expires and the id is spent", async () => {
    const before = { tee: lamports(tee.address), main: lamports(main) }
    const { input, signature } = await crashed("t-crash-unsent", 888n, false)
    // A request under the id meanwhile answers it as it stands, and sends nothing.
    const meanwhile = await run(transfers.build(caller, input))
    expect(meanwhile._tag === "Right" && meanwhile.right).toMatchObject({ status: "sending", signature, replay: true })
    expect(await Effect.runPromise(transfers.recover)).toBe(1)
    // Past the blockhash's 750 slots at once, not by the 20 ms ticker (a loaded machine slows it).
    for (let i = 0; i < 760; i++) ledger.advanceSlot()
    await eventually(async () => (await stateOfRow("t-crash-unsent")) === "failed", { what: "the unsent transfer settles failed", deadlineMs: 45_000 })
    expect(lamports(tee.address)).toBe(before.tee)
    expect(lamports(main)).toBe(before.main)
    expect((await executed()).filter((e) => e.data.signature === signature)).toHaveLength(0)
    expect(await refusalOf(input)).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT", reason: "failed" })
  }, 60_000)
})
