/**
 * The trade rail's write side on Hood (issue 28), through `TradeService` over the real wallet
 * provider (PGlite, the account's embedded EVM wallet signs server-side), the attempt runner with
 * row leases and the Hood localnet (Hardhat/EDR) over JSON-RPC:
 * - exact: a seeded random sequence of one-shot buys and sells on a real BondingCurve executes each
 *   trade's quoted `amountOut` to the raw unit (quoted on the curve read just before), ending with a
 *   buy that crosses graduation (capped at the threshold, the rest refunded in the same transaction:
 *   the wallet pays exactly `quoteConsumed` plus the platform fee plus gas); once migrated, a seeded
 *   sequence on the Uniswap v3 pool, exact too; every trade's gas stays under its fixed limit;
 * - the platform fee (through the trade router, in the trade's own transaction): the treasury's
 *   balance moves by exactly each trade's `feeRaw` (the quote's: on `amountConsumed` of a buy, on
 *   `amountOut` of a sell), the wallet pays or receives exactly the quote's figures, the fee totals
 *   and `trade.executed` carry it; a referred account pays 10 % less;
 * - money moves once: 50 concurrent submits of one new id record and send one trade; a repeated id
 *   answers the stored outcome (`replay`) and sends nothing; a changed body is refused;
 * - slippage: a market that moves past the minimum between pricing and send is refused by the
 *   chain's preflight (the curve's `SlippageExceeded`, the router's "Too little received"):
 *   `trade_slippage`, no ETH and no token moved (not even gas, not the platform fee), and the
 *   replay answers the same; one front-run after its preflight reverts once mined:
 *   `trade_slippage`, its gas spent, nothing traded, no fee paid;
 * - crash: a trade signed and recorded but never sent, and one sent whose verdict was never read,
 *   are settled by another instance's recovery pass from the chain (receipt by hash, the wallet's
 *   mined nonce), never resent.
 * Replay a run with FC_SEED=<seed>.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Effect } from "effect"
import fc from "fast-check"
import { type Address, getAddress, type Hash, keccak256, parseEventLogs, serializeTransaction, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bondingCurveAbi, tradeRouterAbi } from "../../src/chain/hood/abi.generated.js"
import { approve, buy, createCurve, type HoodClients, migrate, readCurve, saltOf, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, hoodTestClient, mine, publicClientOf, setAutomine, setEthBalance, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { HOOD_TRADE_GAS } from "../../src/services/trade/HoodTradeChain.js"
import { quoteHoodPool, viemPoolSource } from "../../src/services/trade/HoodPoolQuote.js"
import { tradeBodyHash } from "../../src/services/trade/TradeInputs.js"
import { type TradeCaller, type TradeRequest, type TradeServiceShape, make as makeTrades } from "../../src/services/trade/TradeService.js"
import { makeTradeStore, type TradeRow } from "../../src/services/trade/TradeStore.js"
import type { TradeView } from "../../src/services/trade/TradeViews.js"
import { platformFeeOf, quoteVenue, type VenueQuote } from "../../src/services/trade/VenueQuote.js"
import { platformFeeRaw } from "../../src/domain/PlatformFee.js"
import { feeTotals } from "../../src/services/accounts/AccountRepository.js"
import { fixedPriceSource, PriceSource } from "../../src/services/prices/PriceSource.js"
import { DEFAULT_CEILING_WEI } from "../../src/services/wallets/BackstopPolicy.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { reservationState, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import { tradeReservationId } from "../../src/services/trade/TradeStore.js"
import { toApiError } from "../../api/ErrorTable.js"
import { tradeAnswer } from "../../api/TradeCodes.js"
import { eventually } from "../support/eventually.js"
import { startWalletHarness, type WalletHarness } from "../support/walletHarness.js"

const ETH = 10n ** 18n
const seed = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : Date.now() % 2 ** 31
console.log(`trade.hood: seed ${seed} (replay with FC_SEED=${seed})`)
// The largest buy whose amountIn and 25 bps platform fee (rounded up) stay within the wallet's ceiling.
const MAX_BUY_WEI = (DEFAULT_CEILING_WEI * 10_000n) / 10_025n - 1n

let harness: WalletHarness
let net: StartedHoodLocalnet
let trades: TradeServiceShape
let wallet: Address
let other: HoodClients
let keeper: HoodClients
let launches = 0
/** Runs after pricing, before the trade is signed (the spend gate's call site): the test's way to move the market in between. */
let beforeSign: (() => Promise<void>) | undefined

const ACCOUNT = "acct-hood-trade"
const caller: TradeCaller = { accountId: ACCOUNT, keyId: "kid-h", keyPrefix: "hkid00001", embeddedWallet: "allowed", planFeeBps: 25n, referred: false }
/** A stored key (no limits): the gate books every executed trade on it. */
const storeKey = (id: string, prefix: string, txLimit: { usdMicros: number; reset: "daily" } | null) =>
  sqlRun(
    insertKey(
      { id, prefix, accountId: ACCOUNT, hash: `hash-${id}`, environment: "production", scopes: ["swap:write"], label: null, rateLimitPerMin: 60, dailyLaunchCap: 10, launchChains: ["hood"], embeddedWallet: "allowed", expiresAtMs: null, txLimit, mintedByDeviceId: null, provisionedBy: null },
      Date.now()
    )
  )
const prices = fixedPriceSource({ eth: "3000" })
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const sqlRun = <A>(e: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, harness.sql) as Effect.Effect<A>)
const rowCount = (clientTradeId: string) =>
  sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM agent_trades WHERE client_trade_id = ${clientTradeId}`)).then((r) => r[0]?.n ?? 0)
const events = () =>
  sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ data: unknown }>`SELECT data FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'trade.executed' ORDER BY created_at`))

const pc = () => publicClientOf(net)
const eth = (a: Address) => pc().getBalance({ address: a })
/** Where the trade router pays the platform fee (the fee splitter's treasury, read from the router). */
let treasury: Address
/** The account's Hood ETH fee total (`account_fee_totals`). */
const hoodFeeTotal = () => sqlRun(feeTotals(ACCOUNT)).then((rows) => BigInt(rows.find((r) => r.chain === "hood" && r.quoteAsset === "eth")?.feeRawSum ?? "0"))
const nonceOf = (a: Address) => pc().getTransactionCount({ address: a, blockTag: "latest" })

const request = (clientTradeId: string, mint: Address, side: "buy" | "sell", amountInRaw: bigint, more: Partial<TradeRequest> = {}): TradeRequest => ({
  clientTradeId,
  chain: "hood",
  mint,
  side,
  amountInRaw,
  slippageBps: 0,
  payer: "main",
  ...more
})

const executed = async (r: TradeRequest): Promise<TradeView> => {
  const out = await run(trades.submit(caller, r, false))
  if (out._tag === "Left") throw new Error(`seed ${seed}: ${r.clientTradeId}: ${JSON.stringify(out.left)}`)
  if (!("status" in out.right) || "accepted" in out.right) throw new Error("not a settled trade")
  return out.right
}

/** What the wallet paid in gas for every transaction it sent in blocks after `afterBlock` (its approvals included). */
const gasSpentSince = async (afterBlock: bigint): Promise<bigint> => {
  let spent = 0n
  const head = await pc().getBlockNumber()
  for (let b = afterBlock + 1n; b <= head; b++) {
    const block = await pc().getBlock({ blockNumber: b, includeTransactions: true })
    for (const tx of block.transactions) {
      if (getAddress(tx.from) !== wallet) continue
      const r = await pc().getTransactionReceipt({ hash: tx.hash })
      spent += r.gasUsed * r.effectiveGasPrice
    }
  }
  return spent
}

const receiptOf = (view: TradeView) => pc().getTransactionReceipt({ hash: view.signature as Hash })

/** A fresh ETH-quoted v3 curve, small V and G so a sequence can cross graduation. */
const launch = async (virtualQuoteRaw = 2n * ETH, thresholdRaw = 4n * ETH) => {
  const label = `hood-trade-${seed}-${launches++}`
  return createCurve(other, net.addresses.factory, { name: label, symbol: "HT", quoteToken: zeroAddress, virtualQuoteRaw, thresholdRaw, dexVersion: "v3", salt: saltOf(label) })
}

const curveQuote = async (curve: Address, side: "buy" | "sell", amount: bigint) => {
  const s = await readCurve(pc(), curve)
  return { snapshot: s, q: quoteVenue({ _tag: "Curve", params: s.params, state: s.state, creatorShareBps: 3000n }, side, amount) }
}

const filled = (q: VenueQuote | Exclude<VenueQuote, { _tag: "Need" }>) => {
  if (q._tag !== "Filled") throw new Error(`seed ${seed}: no fill ${JSON.stringify(q, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`)
  return q
}

beforeAll(async () => {
  harness = await startWalletHarness()
  net = await startHoodLocalnet()
  other = clientsFor(net, net.roles.traders[0]!)
  keeper = clientsFor(net, net.roles.keeper)
  await sqlRun(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.zipRight(
        sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'HOODTRADES')`,
        sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
            VALUES ('wh-hood-trade', ${ACCOUNT}, 'https://example.com/hook', '["trade.executed"]'::jsonb, 'x', 'x', 'active', now())`
      )
    )
  )
  const embedded = await Effect.runPromise(harness.provider.ensureEmbeddedWallet(ACCOUNT, "evm"))
  await Effect.runPromise(harness.provider.setDelegation(ACCOUNT, "evm", "active"))
  wallet = getAddress(embedded.address)
  treasury = getAddress(await pc().readContract({ address: net.addresses.tradeRouter!, abi: tradeRouterAbi, functionName: "treasury" }))
  await setEthBalance(hoodTestClient(net), wallet, 10n ** 6n * ETH)
  await storeKey("kid-h", "hkid00001", null)
  // The real provider; the test's hook runs after pricing, before the embedded wallet signs.
  const provider: typeof harness.provider = {
    ...harness.provider,
    signWithEmbedded: (...args) => Effect.zipRight(Effect.promise(async () => beforeSign?.()), harness.provider.signWithEmbedded(...args))
  }
  trades = await Effect.runPromise(
    makeTrades(
      {
        solanaRpcUrl: "http://127.0.0.1:1",
        treasury: "11111111111111111111111111111111",
        hood: { chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, swapRouter: net.addresses.swapRouter!, tradeRouter: net.addresses.tradeRouter!, weth9: net.addresses.weth9 },
        pollIntervalMs: 20,
        confirmTimeoutMs: 15_000
      }
    ).pipe(Effect.provideService(WalletProvider, provider), Effect.provideService(PriceSource, prices), Effect.provideService(SqlClient.SqlClient, harness.sql))
  )
}, 120_000)

afterAll(async () => {
  await net?.close()
  await harness?.close()
})

describe("Hood one-shot trades", () => {
  it("execute the quote's amountOut to the raw unit on the curve, through a buy that crosses graduation, then on the v3 pool; gas under its limits", async () => {
    const c = await launch()
    const ops = fc.sample(
      fc.array(
        fc.oneof(
          fc.record({ side: fc.constant("buy" as const), amount: fc.bigInt({ min: ETH / 1000n, max: ETH }) }),
          fc.record({ side: fc.constant("sell" as const), percent: fc.integer({ min: 1, max: 100 }) })
        ),
        { minLength: 4, maxLength: 8 }
      ),
      { seed, numRuns: 1 }
    )[0]!
    let n = 0
    let crossed = false
    let fees = 0n
    const eventsBefore = (await events()).length
    const feeTotalBefore = await hoodFeeTotal()
    // The random sequence, then a buy of more than the threshold: it crosses graduation.
    for (const op of [{ side: "buy" as const, amount: ETH / 10n }, ...ops, { side: "buy" as const, amount: 6n * ETH }]) {
      const held = await tokenBalance(pc(), c.token, wallet)
      const amount = op.side === "buy" ? op.amount : (held * BigInt(op.percent)) / 100n
      if (amount === 0n) continue
      const { snapshot, q: quoted } = await curveQuote(c.curve, op.side, amount)
      if (snapshot.phase !== "trading") break
      if (quoted._tag === "Refused" && quoted.reason === "zero_amount") continue
      const q = filled(quoted)
      const fee = platformFeeOf(q, op.side, caller).feeRaw
      fees += fee
      const ethBefore = await eth(wallet)
      const treasuryBefore = await eth(treasury)
      const blockBefore = await pc().getBlockNumber()
      const view = await executed(request(`curve-${seed}-${n++}`, c.token, op.side, amount))
      expect(view).toMatchObject({ status: "executed", venue: "svc-curve", chain: "hood", expectedOut: q.amountOut.toString(), amountOut: q.amountOut.toString(), fee: { bps: 25, feeRaw: fee.toString() } })
      expect(fee).toBeGreaterThan(0n)
      const receipt = await receiptOf(view)
      // The trade's gas and, before a wallet's first sell of the token, its approval's.
      const gasPaid = await gasSpentSince(blockBefore)
      expect(receipt.gasUsed).toBeLessThan(op.side === "buy" ? HOOD_TRADE_GAS.curveBuy : HOOD_TRADE_GAS.curveSell)
      expect((await tokenBalance(pc(), c.token, wallet)) - held).toBe(op.side === "buy" ? q.amountOut : -amount)
      // The treasury got exactly the quote's platform fee, in the trade's own transaction.
      expect((await eth(treasury)) - treasuryBefore).toBe(fee)
      // The router keeps nothing.
      expect(await eth(net.addresses.tradeRouter!)).toBe(0n)
      expect(await tokenBalance(pc(), c.token, net.addresses.tradeRouter!)).toBe(0n)
      if (op.side === "sell") expect((await eth(wallet)) - ethBefore).toBe(q.amountOut - fee - gasPaid)
      if (op.side === "buy") {
        // The crossing buy pays only quoteConsumed and the fee on it: its refund came back in the same transaction, uncharged.
        expect(ethBefore - (await eth(wallet))).toBe(q.amountConsumed + fee + gasPaid)
        const trade = parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "Trade" })[0]!.args
        expect(trade.refund).toBe(q.refund)
        if (q.crossesGraduation) {
          crossed = true
          expect(q.refund).toBeGreaterThan(0n)
        }
      }
    }
    expect(crossed).toBe(true)
    expect((await readCurve(pc(), c.curve)).phase).toBe("completed")
    // Complete, not migrated: not tradable, nothing recorded.
    const graduating = await run(trades.submit(caller, request(`graduating-${seed}`, c.token, "buy", ETH / 10n), false))
    expect(graduating._tag === "Left" && toApiError(graduating.left)).toMatchObject({ code: "MARKET_NOT_TRADABLE", httpStatus: 409 })
    expect(graduating._tag === "Left" && graduating.left.details).toMatchObject({ reason: "hood_graduating" })
    expect(await rowCount(`graduating-${seed}`)).toBe(0)

    const migrated = await migrate(keeper, c.curve)
    const pool = getAddress(parseEventLogs({ abi: bondingCurveAbi, eventName: "CurveMigrated", logs: migrated.receipt.logs })[0]!.args.pool)
    const swaps = fc.sample(
      fc.array(fc.record({ side: fc.constantFrom("buy" as const, "sell" as const), bps: fc.integer({ min: 1, max: 20_000 }) }), { minLength: 4, maxLength: 8 }),
      { seed: seed + 1, numRuns: 1 }
    )[0]!
    for (const s of [{ side: "buy" as const, bps: 5_000 }, { side: "sell" as const, bps: 5_000 }, ...swaps]) {
      const held = await tokenBalance(pc(), c.token, wallet)
      // Buys up to 2x the pool's WETH, within the wallet's backstop ceiling (a buy over it is the
      // policy's refusal, not this property's subject); sells a share of what the wallet holds.
      // The transaction moves amountIn plus the 25 bps fee, so the largest buy leaves room for it.
      const deep = ((await tokenBalance(pc(), net.addresses.weth9, pool)) * BigInt(s.bps)) / 10_000n
      const amount = s.side === "buy" ? (deep > MAX_BUY_WEI ? MAX_BUY_WEI : deep) : (held * BigInt(Math.min(s.bps, 10_000))) / 10_000n
      if (amount === 0n) continue
      const quoted = await quoteHoodPool(viemPoolSource(pc()), { pool, token: c.token, side: s.side, amountIn: amount, creatorShareBps: 3000n })
      if (quoted._tag !== "Quoted") throw new Error(`seed ${seed}: too deep`)
      if (quoted.quote._tag === "Refused" && quoted.quote.reason === "zero_amount") continue
      const q = filled(quoted.quote)
      const fee = platformFeeOf(q, s.side, caller).feeRaw
      fees += fee
      const ethBefore = await eth(wallet)
      const treasuryBefore = await eth(treasury)
      const blockBefore = await pc().getBlockNumber()
      const view = await executed(request(`pool-${seed}-${n++}`, c.token, s.side, amount))
      expect(view).toMatchObject({ status: "executed", venue: "hood-dex", expectedOut: q.amountOut.toString(), amountOut: q.amountOut.toString(), fee: { bps: 25, feeRaw: fee.toString() } })
      expect((await eth(treasury)) - treasuryBefore).toBe(fee)
      expect(await eth(net.addresses.tradeRouter!)).toBe(0n)
      expect(await tokenBalance(pc(), c.token, net.addresses.tradeRouter!)).toBe(0n)
      expect(await tokenBalance(pc(), net.addresses.weth9, net.addresses.tradeRouter!)).toBe(0n)
      const receipt = await receiptOf(view)
      // The trade's gas and, before a wallet's first sell of the token, its approval's.
      const gasPaid = await gasSpentSince(blockBefore)
      expect(receipt.gasUsed).toBeLessThan(s.side === "buy" ? HOOD_TRADE_GAS.poolBuy : HOOD_TRADE_GAS.poolSell)
      expect((await tokenBalance(pc(), c.token, wallet)) - held).toBe(s.side === "buy" ? q.amountOut : -amount)
      // A sell pays ETH (the router unwraps WETH), less the fee; a buy spends exactly amountIn and the fee.
      expect((await eth(wallet)) - ethBefore).toBe(s.side === "buy" ? -(amount + fee + gasPaid) : q.amountOut - fee - gasPaid)
      const last = await events()
      expect(last[last.length - 1]!.data).toMatchObject({ chain: "hood", mint: c.token, quoteAsset: "eth", fee: { bps: 25, feeRaw: fee.toString() } })
    }
    // One trade.executed per executed trade, with the spec's payload; the fee totals grew by every fee.
    const emitted = await events()
    expect(emitted.length).toBe(eventsBefore + n)
    expect((await hoodFeeTotal()) - feeTotalBefore).toBe(fees)
  }, 300_000)

  it("50 concurrent submits of one new id record and send one trade; a repeat answers the stored outcome and sends nothing; a changed body is refused", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    const { q: quoted } = await curveQuote(c.curve, "buy", ETH / 4n)
    const q = filled(quoted)
    const nonceBefore = await nonceOf(wallet)
    const answers = await Promise.all(Array.from({ length: 50 }, () => run(trades.submit(caller, request(`race-${seed}`, c.token, "buy", ETH / 4n), false))))
    const signatures = new Set(answers.flatMap((a) => (a._tag === "Right" && "signature" in a.right ? [a.right.signature] : [])))
    const refusals = answers.flatMap((a) => (a._tag === "Left" ? [a.left.reason] : []))
    expect(signatures.size).toBe(1)
    expect(refusals.filter((r) => r !== "pending")).toEqual([]) // names any other refusal
    expect(await rowCount(`race-${seed}`)).toBe(1)
    expect(answers.filter((a) => a._tag === "Right" && "replay" in a.right && a.right.replay === false).length).toBe(1)
    expect(await tokenBalance(pc(), c.token, wallet)).toBe(q.amountOut)
    // One transaction left the wallet.
    expect(await nonceOf(wallet)).toBe(nonceBefore + 1)

    const ethBefore = await eth(wallet)
    const again = await executed(request(`race-${seed}`, c.token, "buy", ETH / 4n))
    expect(again).toMatchObject({ replay: true, status: "executed", amountOut: q.amountOut.toString() })
    expect([...signatures]).toEqual([again.signature])
    expect(await eth(wallet)).toBe(ethBefore)
    expect(await nonceOf(wallet)).toBe(nonceBefore + 1)
    const changed = await run(trades.submit(caller, request(`race-${seed}`, c.token, "buy", ETH / 5n), false))
    expect(changed._tag === "Left" && toApiError(changed.left)).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", httpStatus: 409 })
  }, 120_000)

  it("the one spend gate on Hood: a buy over the key's USD window is KEY_LIMIT_REACHED and moves nothing; one that fits holds, then books at ETH's price; a sell is never refused", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    // $3,000 an ETH: a $1,000 daily window fits a 0.25 ETH buy and its 0.25 % fee ($751.875), not a second one.
    await storeKey("kid-h-cap", "hcap00001", { usdMicros: 1_000_000_000, reset: "daily" })
    const who: TradeCaller = { ...caller, keyId: "kid-h-cap", keyPrefix: "hcap00001" }
    const windowOf = () => sqlRun(windowUsedUsdMicros("kid-h-cap", "daily", Date.now()))
    const first = await run(trades.submit(who, request(`gate-1-${seed}`, c.token, "buy", ETH / 4n), false))
    expect(first._tag).toBe("Right")
    expect(await sqlRun(reservationState(tradeReservationId({ accountId: ACCOUNT, clientTradeId: `gate-1-${seed}` })))).toBe("booked")
    expect(await windowOf()).toBe(751_875_000n)

    const ethBefore = await eth(wallet)
    const nonceBefore = await nonceOf(wallet)
    const dry = await run(trades.dryRun(who, request(`gate-dry-${seed}`, c.token, "buy", ETH / 4n)))
    expect(dry._tag === "Left" && toApiError(dry.left)).toMatchObject({ code: "KEY_LIMIT_REACHED", httpStatus: 403 })
    const over = await run(trades.submit(who, request(`gate-2-${seed}`, c.token, "buy", ETH / 4n), false))
    expect(over._tag === "Left" && toApiError(over.left)).toMatchObject({ code: "KEY_LIMIT_REACHED", httpStatus: 403 })
    expect(await rowCount(`gate-2-${seed}`)).toBe(0)
    expect(await eth(wallet)).toBe(ethBefore)
    expect(await nonceOf(wallet)).toBe(nonceBefore)
    expect(await windowOf()).toBe(751_875_000n)

    // A sell past the window is not refused, and counts the ETH it received.
    const held = await tokenBalance(pc(), c.token, wallet)
    const sold = await run(trades.submit(who, request(`gate-sell-${seed}`, c.token, "sell", held / 2n), false))
    expect(sold._tag).toBe("Right")
    expect(await windowOf()).toBeGreaterThan(751_875_000n)
  }, 120_000)

  it("slippage: a market that moved past the minimum is refused by the chain (curve and pool): trade_slippage, nothing moved, and the replay answers the same", async () => {
    const c = await launch(5n * ETH, 8n * ETH)
    await approve(other, c.token, net.addresses.swapRouter!, 2n ** 255n)
    const moveWith = (f: () => Promise<unknown>) => {
      beforeSign = async () => {
        beforeSign = undefined
        await f()
      }
    }
    const refusedAndStill = async (id: string, r: TradeRequest) => {
      const tokens = await tokenBalance(pc(), c.token, wallet)
      const wei = await eth(wallet)
      const nonce = await nonceOf(wallet)
      const treasuryWei = await eth(treasury)
      const feeTotal = await hoodFeeTotal()
      const moved = await run(trades.submit(caller, r, false))
      expect(moved._tag === "Left" && moved.left.reason).toBe("trade_slippage")
      expect(moved._tag === "Left" && toApiError(moved.left)).toMatchObject({ code: "SLIPPAGE_EXCEEDED" })
      // Refused before broadcast: not a token, not a wei (not even gas), no nonce used.
      expect(await tokenBalance(pc(), c.token, wallet)).toBe(tokens)
      expect(await eth(wallet)).toBe(wei)
      expect(await nonceOf(wallet)).toBe(nonce)
      // No platform fee either: the treasury did not move and the fee totals did not grow.
      expect(await eth(treasury)).toBe(treasuryWei)
      expect(await hoodFeeTotal()).toBe(feeTotal)
      const read = await run(trades.trade(caller, id))
      expect(read._tag === "Right" && tradeAnswer(read.right)).toMatchObject({ status: "failed", errorCode: "SLIPPAGE_EXCEEDED", amountOut: null })
      const replay = await run(trades.submit(caller, r, false))
      expect(replay._tag === "Left" && replay.left.reason).toBe("trade_slippage")
    }
    // On the curve: another trader buys between pricing and signing.
    moveWith(() => buy(other, c.curve, { amountInRaw: ETH, quoteToken: zeroAddress }))
    await refusedAndStill(`slip-curve-${seed}`, request(`slip-curve-${seed}`, c.token, "buy", ETH / 2n, { slippageBps: 10 }))
    // A minimum above the quote is refused before anything is signed.
    const { q } = await curveQuote(c.curve, "buy", ETH / 2n)
    const early = await run(trades.submit(caller, request(`slip-early-${seed}`, c.token, "buy", ETH / 2n, { minAmountOutRaw: filled(q).amountOut + 1n }), false))
    expect(early._tag === "Left" && toApiError(early.left)).toMatchObject({ code: "SLIPPAGE_EXCEEDED", field: "minAmountOut" })
    expect(await rowCount(`slip-early-${seed}`)).toBe(0)

    // On the pool: graduate, hold some tokens, then another trader sells between pricing and signing.
    await buy(other, c.curve, { amountInRaw: 20n * ETH, quoteToken: zeroAddress })
    await migrate(keeper, c.curve)
    const bought = await executed(request(`slip-pool-hold-${seed}`, c.token, "buy", ETH))
    // A first sell approves the router (its own transaction, moving no money); the refused one below needs none.
    await executed(request(`slip-pool-prime-${seed}`, c.token, "sell", BigInt(bought.amountOut!) / 10n))
    const held = await tokenBalance(pc(), c.token, wallet)
    const otherHeld = await tokenBalance(pc(), c.token, other.wallet.account.address)
    const { swapExactIn } = await import("../../src/chain/hood/client/HoodClient.js")
    moveWith(() =>
      swapExactIn(other, { router: net.addresses.swapRouter!, tokenIn: c.token, tokenOut: net.addresses.weth9, fee: 3000, amountInRaw: otherHeld / 4n, payWithEth: false })
    )
    await refusedAndStill(`slip-pool-${seed}`, request(`slip-pool-${seed}`, c.token, "sell", held / 2n, { slippageBps: 10 }))
  }, 120_000)

  it("a trade front-run after its preflight reverts once mined: trade_slippage, its gas spent and nothing traded", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    const tc = hoodTestClient(net)
    const id = `slip-mined-${seed}`
    const tokens = await tokenBalance(pc(), c.token, wallet)
    const wei = await eth(wallet)
    const treasuryWei = await eth(treasury)
    const feeTotal = await hoodFeeTotal()
    await setAutomine(tc, false)
    try {
      const submitted = run(trades.submit(caller, request(id, c.token, "buy", ETH / 2n, { slippageBps: 10 }), false))
      // Past its preflight and in the node's pool, not mined yet.
      const hash = await eventually(
        async () => {
          const row = await sqlRun(makeTradeStore(harness.sql, Clock.make()).get(ACCOUNT, id))
          if (row === undefined) return undefined
          const tx = await pc().getTransaction({ hash: row.signature as Hash }).catch(() => undefined)
          return tx === undefined ? undefined : (row.signature as Hash)
        },
        { what: "the trade in the node's pool", intervalMs: 10 }
      )
      // A block builder orders another trader's buy first (the localnet's pool is FIFO: the test
      // takes the trade's own signed bytes out of the pool and puts them back behind the buy).
      const pending = await pc().getTransaction({ hash })
      const raw = serializeTransaction(
        {
          type: "eip1559",
          chainId: net.chain.id,
          nonce: pending.nonce,
          gas: pending.gas,
          maxFeePerGas: pending.maxFeePerGas!,
          maxPriorityFeePerGas: pending.maxPriorityFeePerGas!,
          to: pending.to!,
          value: pending.value,
          data: pending.input
        },
        { r: pending.r, s: pending.s, yParity: pending.yParity ?? 0 }
      )
      expect(keccak256(raw)).toBe(hash)
      await tc.request({ method: "hardhat_dropTransaction", params: [hash] } as never)
      await other.wallet.writeContract({ address: c.curve, abi: bondingCurveAbi, functionName: "buy", args: [2n * ETH, 0n], value: 2n * ETH, gas: 400_000n })
      await pc().sendRawTransaction({ serializedTransaction: raw })
      await mine(tc)
      const out = await submitted
      expect(out._tag === "Left" && out.left.reason).toBe("trade_slippage")
      const receipt = await pc().getTransactionReceipt({ hash })
      expect(receipt.status).toBe("reverted")
      // Nothing traded: the tokens did not move, the ETH only by the reverted transaction's gas.
      expect(await tokenBalance(pc(), c.token, wallet)).toBe(tokens)
      expect(wei - (await eth(wallet))).toBe(receipt.gasUsed * receipt.effectiveGasPrice)
      // The revert took the platform fee back with everything else.
      expect(await eth(treasury)).toBe(treasuryWei)
      expect(await hoodFeeTotal()).toBe(feeTotal)
      const read = await run(trades.trade(caller, id))
      expect(read._tag === "Right" && tradeAnswer(read.right)).toMatchObject({ status: "failed", errorCode: "SLIPPAGE_EXCEEDED", amountOut: null })
      expect(await events().then((e) => e.some((x) => (x.data as { clientTradeId?: string }).clientTradeId === id))).toBe(false)
    } finally {
      await setAutomine(tc, true)
    }
  }, 60_000)

  it("a referred account pays 10 % less platform fee, rounded up after the discount: the treasury gets exactly that, buy and sell", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    const referred: TradeCaller = { ...caller, referred: true }
    // An amount whose discounted fee rounds up (25 bps × 90 % of 0.1 ETH + 1 wei is not whole).
    const amount = ETH / 10n + 1n
    const feeTotalBefore = await hoodFeeTotal()
    let paid = 0n
    for (const side of ["buy", "sell"] as const) {
      const size = side === "buy" ? amount : (await tokenBalance(pc(), c.token, wallet)) / 3n
      const { q: quoted } = await curveQuote(c.curve, side, size)
      const q = filled(quoted)
      const base = side === "buy" ? q.amountConsumed : q.amountOut
      const fee = platformFeeRaw(base, 25n, true)
      expect(fee).toBe(platformFeeOf(q, side, referred).feeRaw)
      expect(fee).toBeLessThan(platformFeeRaw(base, 25n, false))
      expect(fee).toBe((base * 25n * 90n + 999_999n) / 1_000_000n)
      const treasuryBefore = await eth(treasury)
      const ethBefore = await eth(wallet)
      const blockBefore = await pc().getBlockNumber()
      const out = await run(trades.submit(referred, request(`referred-${side}-${seed}`, c.token, side, size), false))
      if (out._tag === "Left" || !("status" in out.right) || "accepted" in out.right) throw new Error(`seed ${seed}: ${JSON.stringify(out)}`)
      expect(out.right).toMatchObject({ status: "executed", amountOut: q.amountOut.toString(), fee: { bps: 25, feeRaw: fee.toString() } })
      expect((await eth(treasury)) - treasuryBefore).toBe(fee)
      const gasPaid = await gasSpentSince(blockBefore)
      expect((await eth(wallet)) - ethBefore).toBe(side === "buy" ? -(size + fee + gasPaid) : q.amountOut - fee - gasPaid)
      paid += fee
    }
    expect((await hoodFeeTotal()) - feeTotalBefore).toBe(paid)
  }, 120_000)

  it("refusals record nothing: a token not launched here, a key that denies the embedded wallet, a sell beyond the balance; the dry run records nothing", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    const external = await run(trades.submit(caller, request(`ext-${seed}`, net.addresses.weth9, "buy", ETH), false))
    expect(external._tag === "Left" && toApiError(external.left)).toMatchObject({ code: "MARKET_NOT_FOUND", httpStatus: 404, field: "mint" })
    const denied = await run(trades.submit({ ...caller, embeddedWallet: "denied" }, request(`denied-${seed}`, c.token, "buy", ETH), false))
    expect(denied._tag === "Left" && toApiError(denied.left)).toMatchObject({ code: "EMBEDDED_WALLET_NOT_PERMITTED", httpStatus: 403 })
    await buy(other, c.curve, { amountInRaw: ETH, quoteToken: zeroAddress })
    const tooMuch = await run(trades.submit(caller, request(`sell-too-much-${seed}`, c.token, "sell", 10n ** 18n), false))
    expect(tooMuch._tag === "Left" && toApiError(tooMuch.left)).toMatchObject({ code: "INSUFFICIENT_OWNER_BALANCE", httpStatus: 402 })
    const dry = await run(trades.dryRun(caller, request(`dry-${seed}`, c.token, "buy", ETH)))
    const { q } = await curveQuote(c.curve, "buy", ETH)
    expect(dry._tag === "Right" && dry.right).toMatchObject({
      dryRun: true,
      payer: "main",
      quoteAsset: "eth",
      wallet,
      venue: "svc-curve",
      expectedOut: filled(q).amountOut.toString(),
      fee: { bps: 25, feeRaw: platformFeeOf(filled(q), "buy", caller).feeRaw.toString() }
    })
    for (const id of [`ext-${seed}`, `denied-${seed}`, `sell-too-much-${seed}`, `dry-${seed}`]) expect(await rowCount(id)).toBe(0)
  }, 60_000)
})

/**
 * A process that died with trades in flight (rows `sending`, leases gone): one signed and recorded
 * but never sent, one sent whose verdict was never read. Both were signed on the wallet's next
 * nonce, so the sent one takes it and the unsent one can never land. Another instance's recovery
 * pass settles both from the chain: the sent one executed once (one `trade.executed`), the unsent
 * one `NEVER_LANDED` (the wallet's mined nonce passed its own, no receipt); neither is sent again.
 */
/** Another service instance on the same database and chain (a restarted process). */
const instance = (more: { readonly hoodUnsentGraceMs?: number } = {}) =>
  Effect.runPromise(
    makeTrades({
      solanaRpcUrl: "http://127.0.0.1:1",
      treasury: "11111111111111111111111111111111",
      hood: { chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, swapRouter: net.addresses.swapRouter!, tradeRouter: net.addresses.tradeRouter!, weth9: net.addresses.weth9 },
      pollIntervalMs: 20,
      confirmTimeoutMs: 15_000,
      ...more
    }).pipe(Effect.provideService(WalletProvider, harness.provider), Effect.provideService(PriceSource, prices), Effect.provideService(SqlClient.SqlClient, harness.sql))
  )

/** What a process records before it sends a curve buy: the signed trade, `sending`, on the wallet's next nonce. */
const recorder = (c: { readonly token: Address; readonly curve: Address }) => {
  const store = makeTradeStore(harness.sql, Clock.make())
  const hood = trades.hood!
  return async (clientTradeId: string, amountInRaw: bigint) => {
    const { snapshot, q: quoted } = await curveQuote(c.curve, "buy", amountInRaw)
    const q = filled(quoted)
    const fee = platformFeeOf(q, "buy", caller).feeRaw
    const built = await Effect.runPromise(
      hood.build({ wallet, venue: "svc-curve", side: "buy", mint: c.token, curve: snapshot.curve, poolFee: 0, amountInRaw, minAmountOutRaw: q.amountOut, platformFeeRaw: fee, deadlineS: 2n ** 40n })
    )
    const signed = await Effect.runPromise(harness.provider.signWithEmbedded(ACCOUNT, "evm", built.bytes))
    const row: TradeRow = {
      accountId: ACCOUNT, clientTradeId, chain: "hood", mint: c.token, side: "buy", venue: "svc-curve", quoteMint: zeroAddress, quoteAsset: "eth", payer: "main",
      wallet, keyId: "kid-h", bodyHash: tradeBodyHash(request(clientTradeId, c.token, "buy", amountInRaw)), state: "sending", amountInRaw, expectedOutRaw: q.amountOut,
      minAmountOutRaw: q.amountOut, amountOutRaw: null, feeBps: 25, feeRaw: fee, signature: signed.signature, lastValidBlockHeight: BigInt(built.nonce),
      errorCode: null, error: null, createdAtMs: Date.now(), spendUsdMicros: null
    }
    expect(await sqlRun(store.save(undefined, row, []))).toBe(true)
    return { row, signed, q, nonce: built.nonce }
  }
}

describe("Hood trades left in flight by a dead process", () => {
  it("are settled from the chain by a recovery pass, never resent", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    const store = makeTradeStore(harness.sql, Clock.make())
    const recordSigned = recorder(c)
    const heldBefore = await tokenBalance(pc(), c.token, wallet)
    const unsent = await recordSigned(`crash-before-${seed}`, ETH / 20n)
    const sentBefore = await recordSigned(`crash-after-${seed}`, ETH / 10n)
    expect(sentBefore.nonce).toBe(unsent.nonce)
    // The dead process sent the second one, then died before reading its verdict.
    expect(await Effect.runPromise(trades.hood!.send(sentBefore.signed.signedTransaction as `0x${string}`))).toBeUndefined()
    const eventsBefore = (await events()).length

    const otherInstance = await instance()
    const nonceBefore = await nonceOf(wallet)
    expect(await Effect.runPromise(otherInstance.resumeInFlight)).toBe(2)
    const settled = await eventually(
      async () => {
        const a = await sqlRun(store.get(ACCOUNT, unsent.row.clientTradeId))
        const b = await sqlRun(store.get(ACCOUNT, sentBefore.row.clientTradeId))
        return a?.state !== "sending" && b?.state !== "sending" ? { a, b } : undefined
      },
      { what: "both in-flight Hood trades settled", deadlineMs: 60_000, intervalMs: 50 }
    )
    expect(settled.b).toMatchObject({ state: "executed", amountOutRaw: sentBefore.q.amountOut })
    expect(settled.a).toMatchObject({ state: "failed", errorCode: "never_landed" })
    expect((await tokenBalance(pc(), c.token, wallet)) - heldBefore).toBe(sentBefore.q.amountOut)
    expect((await events()).length).toBe(eventsBefore + 1)
    // Nothing was sent by the recovery: the wallet's nonce did not move.
    expect(await nonceOf(wallet)).toBe(nonceBefore)
    expect(await Effect.runPromise(otherInstance.resumeInFlight)).toBe(0)
    const replay = await run(trades.submit(caller, request(unsent.row.clientTradeId, c.token, "buy", ETH / 20n), false))
    expect(replay._tag === "Left" && replay.left.reason).toBe("never_landed")
  }, 120_000)

  it("a trade recorded but never sent, with nothing after it, is settled NEVER_LANDED once its nonce is released by a zero-value transfer", async () => {
    const c = await launch(5n * ETH, 50n * ETH)
    const store = makeTradeStore(harness.sql, Clock.make())
    const unsent = await recorder(c)(`crash-alone-${seed}`, ETH / 20n)
    const held = await tokenBalance(pc(), c.token, wallet)
    const wei = await eth(wallet)
    const nonceBefore = await nonceOf(wallet)
    expect(BigInt(nonceBefore)).toBe(BigInt(unsent.nonce))
    const restarted = await instance({ hoodUnsentGraceMs: 0 })
    expect(await Effect.runPromise(restarted.resumeInFlight)).toBe(1)
    const settled = await eventually(
      async () => {
        const r = await sqlRun(store.get(ACCOUNT, unsent.row.clientTradeId))
        return r?.state !== "sending" ? r : undefined
      },
      { what: "the never-sent Hood trade settled", deadlineMs: 60_000, intervalMs: 50 }
    )
    expect(settled).toMatchObject({ state: "failed", errorCode: "never_landed" })
    // One transaction took the nonce: the release, a transfer to the wallet itself; the trade never went out.
    expect(await nonceOf(wallet)).toBe(nonceBefore + 1)
    expect(await tokenBalance(pc(), c.token, wallet)).toBe(held)
    const block = await pc().getBlock({ includeTransactions: true })
    const release = block.transactions.find((t) => getAddress(t.from) === wallet)!
    expect(release).toMatchObject({ to: wallet.toLowerCase(), value: 0n })
    expect(release.hash).not.toBe(unsent.row.signature)
    const r = await pc().getTransactionReceipt({ hash: release.hash })
    expect(wei - (await eth(wallet))).toBe(r.gasUsed * r.effectiveGasPrice)
    expect(await pc().getTransactionReceipt({ hash: unsent.row.signature as Hash }).catch(() => undefined)).toBeUndefined()
  }, 120_000)
})
