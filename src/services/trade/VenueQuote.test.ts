import { describe, expect, it } from "vitest"
import { type CurveParams, initialState, quoteBuy } from "../../domain/CurveMath.js"
import { maxUsableTick, Q96, sqrtRatioAtTick, tickViewOf } from "../../domain/UniswapV3Math.js"
import { newMarket, foldCore } from "../../../test/support/marketCores.js"
import { marketVenueOf } from "./MarketVenue.js"
import { impactBps, minOutOf, platformFeeOf, quoteVenue, type VenueFill } from "./VenueQuote.js"

const hood: CurveParams = { virtualQuoteRaw: 1_000n * 10n ** 18n, thresholdRaw: 10n ** 18n, tokenReserveRaw: 10n ** 27n, feeBps: 100n, crossingModel: "capped-refund" }
const filled = (q: ReturnType<typeof quoteVenue>): VenueFill => {
  if (q._tag !== "Filled") throw new Error(`not filled: ${q._tag}`)
  return q
}
const SHARES = { solana: 3_000n, hood: 3_000n }

describe("quoteVenue on the curve", () => {
  it("a Hood crossing buy is capped: refund and consumed from CurveMath, fees on what was consumed only", () => {
    const amountIn = 5n * 10n ** 18n
    const q = filled(quoteVenue({ _tag: "Curve", params: hood, state: initialState(hood), creatorShareBps: 3_000n }, "buy", amountIn))
    const c = quoteBuy(hood, initialState(hood), amountIn)
    if (c._tag !== "Filled") throw new Error("curve refused")
    expect(q).toMatchObject({ venue: "svc-curve", amountOut: c.amountOut, refund: c.refund, amountConsumed: c.quoteConsumed, crossesGraduation: true, venueFeeRaw: c.fee })
    expect(q.refund + q.amountConsumed).toBe(amountIn)
    expect(q.creatorFeeRaw).toBe((c.fee * 3_000n) / 10_000n)
    const platform = platformFeeOf(q, "buy", { planFeeBps: 100n, referred: false })
    // 1 % of the consumed quote, not of the refunded part.
    expect(platform.feeRaw).toBe((q.amountConsumed + 99n) / 100n)
    expect(platform.charged).toBe("on_top_of_input")
  })

  it("a sell pays the platform fee from the quoted proceeds; a referred account 10 % less", () => {
    const bought = quoteBuy(hood, initialState(hood), 10n ** 17n)
    if (bought._tag !== "Filled") throw new Error("curve refused")
    const q = filled(quoteVenue({ _tag: "Curve", params: hood, state: bought.next, creatorShareBps: 0n }, "sell", bought.amountOut / 2n))
    expect(platformFeeOf(q, "sell", { planFeeBps: 25n, referred: true })).toEqual({
      planFeeBps: 25,
      referralDiscountPct: 10,
      feeRaw: (q.amountOut * 25n * 90n + 999_999n) / 1_000_000n,
      charged: "from_output"
    })
    expect(q.creatorFeeRaw).toBe(0n)
  })

  it("refusals are CurveMath's: a complete curve, an amount that nets nothing, selling more than was sold", () => {
    const s = initialState(hood)
    expect(quoteVenue({ _tag: "Curve", params: hood, state: { ...s, complete: true }, creatorShareBps: 0n }, "buy", 10n)).toEqual({ _tag: "Refused", reason: "curve_complete" })
    expect(quoteVenue({ _tag: "Curve", params: hood, state: s, creatorShareBps: 0n }, "buy", 1n)).toEqual({ _tag: "Refused", reason: "zero_amount" })
    expect(quoteVenue({ _tag: "Curve", params: hood, state: s, creatorShareBps: 0n }, "sell", 1n)).toEqual({ _tag: "Refused", reason: "exceeds_curve_supply" })
    expect(quoteVenue({ _tag: "Curve", params: hood, state: s, creatorShareBps: 0n }, "buy", 0n)).toEqual({ _tag: "Refused", reason: "zero_amount" })
  })

  it("price impact grows with size and is 0 for a dust trade", () => {
    const v = { _tag: "Curve" as const, params: hood, state: initialState(hood), creatorShareBps: 0n }
    const small = filled(quoteVenue(v, "buy", 10n ** 12n))
    const large = filled(quoteVenue(v, "buy", 10n ** 20n * 5n))
    expect(small.priceImpactBps).toBeLessThanOrEqual(1)
    expect(large.priceImpactBps).toBeGreaterThan(small.priceImpactBps)
    // Constant product: a net of 1 % of the virtual quote moves the fill ~1 % below spot.
    const pct = filled(quoteVenue(v, "buy", (hood.virtualQuoteRaw / 100n) * 2n))
    expect(pct.priceImpactBps).toBeGreaterThan(0)
  })
})

describe("impactBps", () => {
  it("is 10000 − floor(10000·got/ideal), clamped", () => {
    expect(impactBps(100n, 100n, 1n, 1n)).toBe(0)
    expect(impactBps(100n, 99n, 1n, 1n)).toBe(100)
    expect(impactBps(3n, 2n, 1n, 1n)).toBe(3334) // got 6666.67 bps of ideal, floored: impact rounded up
    expect(impactBps(100n, 200n, 1n, 1n)).toBe(0)
    expect(impactBps(0n, 0n, 1n, 1n)).toBe(0)
  })
})

describe("quoteVenue on the pools", () => {
  it("the Solana pool is PoolMath: fee and creator part in quote", () => {
    const q = filled(quoteVenue({ _tag: "SolanaPool", reserves: { quoteReserveRaw: 10n ** 12n, tokenReserveRaw: 10n ** 15n }, fees: { feeBps: 150n, creatorFeeBps: 100n } }, "buy", 10n ** 9n))
    expect(q.venue).toBe("dex")
    expect(q.venueFeeRaw).toBe(15_000_000n)
    expect(q.creatorFeeRaw).toBe(10_000_000n)
    expect(q.venueFeeBps).toBe(150)
  })

  it("the Hood pool: fee in the asset paid in, v3 fee as bps, and a swap past the price range is refused", () => {
    const L = 10n ** 20n
    const m = maxUsableTick(60)
    const view = tickViewOf(new Map([[-m, L], [m, -L]]), 60)
    const pool = { sqrtPriceX96: Q96, tick: 0, liquidity: L, feePips: 3000, tickSpacing: 60 }
    const buy = filled(quoteVenue({ _tag: "HoodPool", pool, view, tokenIsToken0: true, creatorShareBps: 3_000n }, "buy", 10n ** 18n))
    expect(buy).toMatchObject({ venue: "hood-dex", venueFeeAsset: "quote", venueFeeBps: 30, venueFeeRaw: 3n * 10n ** 15n })
    const sell = filled(quoteVenue({ _tag: "HoodPool", pool, view, tokenIsToken0: true, creatorShareBps: 3_000n }, "sell", 10n ** 18n))
    expect(sell.venueFeeAsset).toBe("token")
    expect(quoteVenue({ _tag: "HoodPool", pool: { ...pool, liquidity: 10n }, view: tickViewOf(new Map([[-m, 10n], [m, -10n]]), 60), tokenIsToken0: true, creatorShareBps: 0n }, "buy", 10n ** 40n)).toEqual({
      _tag: "Refused",
      reason: "exceeds_pool_liquidity"
    })
    expect(sqrtRatioAtTick(0)).toBe(Q96)
  })

  it("minAmountOut applies the slippage to the fill, rounded down", () => {
    const q = filled(quoteVenue({ _tag: "SolanaPool", reserves: { quoteReserveRaw: 10n ** 12n, tokenReserveRaw: 10n ** 15n }, fees: { feeBps: 50n, creatorFeeBps: 0n } }, "buy", 10n ** 9n))
    expect(minOutOf(q, 50n)).toBe((q.amountOut * 9_950n) / 10_000n)
  })
})

describe("marketVenueOf", () => {
  it("trading → the curve; migrated Solana → the pool at its latest reserves; completed and recovery → closed, naming where trading continues", () => {
    const { market, core } = newMarket("solana", { mint: "VenueMint1111111111111111111111111111111111" })
    const trading = marketVenueOf(core, SHARES)
    expect(trading._tag === "Local" && trading.state._tag).toBe("Curve")
    const events = [market.created(), ...market.buy("t1", 1_000n * 10n ** 9n)]
    const completed = foldCore(events)
    expect(completed.lifecycle).toBe("completed")
    expect(marketVenueOf(completed, SHARES)).toEqual({ _tag: "Closed", reason: "solana_graduating", tradingContinues: { venue: "dex-solana-v2", afterMigration: true } })
    const migrated = foldCore([...events, market.migrated(50)])
    const pool = marketVenueOf(migrated, SHARES)
    expect(pool).toMatchObject({ _tag: "Local", state: { _tag: "SolanaPool", fees: { feeBps: 50n, creatorFeeBps: 0n } } })
    expect(pool._tag === "Local" && pool.state._tag === "SolanaPool" && pool.state.reserves.quoteReserveRaw).toBe(migrated.pool!.quoteReserveRaw)
  })

  it("a migrated Hood market is its v3 pool (read from the chain); without a known pool it is closed", () => {
    const { market } = newMarket("hood", { mint: "0x00000000000000000000000000000000000000aa" })
    const events = [market.created(), ...market.buy("0x01", 10n ** 24n)]
    const migrated = foldCore([...events, market.migrated(30)])
    expect(marketVenueOf(migrated, SHARES)).toEqual({ _tag: "Closed", reason: "pool_unknown", tradingContinues: { venue: "dex-evm-v4", afterMigration: false } })
    const withPool = { ...migrated, pool: { ...migrated.pool!, dexPool: "0x00000000000000000000000000000000000000bb" } }
    expect(marketVenueOf(withPool, SHARES)).toEqual({ _tag: "HoodPool", pool: "0x00000000000000000000000000000000000000bb" })
  })
})
