/**
 * The agent quote's venue math (issue 28; launch spec 2.9 and section 4 rule 12; document 2, 2.2):
 * an exact-input trade priced on the venue the market trades on NOW, with the program's own
 * integer math, so the executed amount equals `amountOut` to the raw unit when the market has not
 * moved:
 * - the bonding curve (both chains): `CurveMath.quoteBuy`/`quoteSell`, Hood's crossing buy capped at
 *   the threshold with its refund;
 * - the Solana graduated pool: `PoolMath`, what svc-curve's `pool_swap` executes;
 * - the Hood graduated pool (Uniswap v3): `UniswapV3Math.swapExactInput`, what `UniswapV3Pool.swap`
 *   executes behind the SwapRouter's `exactInputSingle` (default price limit).
 *
 * Fees (all raw units):
 * - venue fee: the curve fee / the Solana pool fee (both in quote) / the v3 LP fee (in the asset
 *   paid in: quote on a buy, the token on a sell). It is inside the venue's math: `amountOut` is
 *   already net of it.
 * - creator fee: the creator's part of the venue fee. Curve: `floor(fee·creatorShareBps/10000)`
 *   (svc-curve's fee vault split, the Hood fee splitter's streamer share); Solana pool: PoolMath's
 *   `creatorFee` (the pool's creator bps); Hood pool: the streamer's share of the LP fee as it
 *   accrues to the graduation position (collected later, so an estimate to a unit).
 * - platform fee: the plan's agent trade fee, 10 % less for a referred account (`PlatformFee`),
 *   OUTSIDE the venue's math, as the atomic ladder's buy legs and the dev buys charge it: on a buy
 *   `ceil(quoteConsumed·bps)` paid to the treasury beside the swap (the buyer spends
 *   `quoteConsumed + platformFee`; a Hood crossing buy's refund is never charged); on a sell
 *   `ceil(amountOut·bps)` of the quoted proceeds, paid to the treasury from them (the seller keeps
 *   `amountOut − platformFee`). A build fixes these amounts from its quote, so it collects exactly
 *   what the quote says.
 *
 * `priceImpactBps`: how far the fill is below the venue's spot price before the trade, fees
 * excluded: `10000 − floor(10000·grossOut / ideal)` with `ideal = netIn × spot` (net of a fee taken
 * from the input; gross of one taken from the output), clamped to 0..10000, so rounded up.
 *
 * Pure: no clock, no I/O. A Hood pool quote may answer `Need` (a tick-bitmap word or a tick the
 * swap walks over that the caller has not read yet).
 */
import {
  BPS,
  type CurveParams,
  type CurveState,
  minAmountOut,
  quoteBuy,
  quoteSell,
  type TradeRefusal
} from "../../domain/CurveMath.js"
import { platformFeeRaw, REFERRAL_DISCOUNT_PCT } from "../../domain/PlatformFee.js"
import { type TickView, type V3PoolState, swapExactInput } from "../../domain/UniswapV3Math.js"
import { type PoolFees, type PoolReserves, quotePoolBuy, quotePoolSell } from "../../chain/solana/program/PoolMath.js"

export type Side = "buy" | "sell"

/** Spec 2.9 `venue` names of where a market trades. */
export type VenueName = "svc-curve" | "dex" | "hood-dex"

export type VenueState =
  | {
      readonly _tag: "Curve"
      readonly params: CurveParams
      readonly state: CurveState
      /** The creator's share of the curve fee, in bps. */
      readonly creatorShareBps: bigint
    }
  | { readonly _tag: "SolanaPool"; readonly reserves: PoolReserves; readonly fees: PoolFees }
  | {
      readonly _tag: "HoodPool"
      readonly pool: V3PoolState
      readonly view: TickView
      /** The launched token is the pool's token0 (it sorts below the quote asset). */
      readonly tokenIsToken0: boolean
      /** The creator's share of the LP fee the graduation position collects, in bps. */
      readonly creatorShareBps: bigint
    }

export interface VenueFill {
  readonly _tag: "Filled"
  readonly venue: VenueName
  readonly amountOut: bigint
  /** Buy: the quote the venue takes (`amountIn − refund`); sell: the tokens in. */
  readonly amountConsumed: bigint
  /** Hood capped-refund crossing: quote returned. 0 otherwise. */
  readonly refund: bigint
  readonly crossesGraduation: boolean
  readonly venueFeeRaw: bigint
  readonly venueFeeAsset: "quote" | "token"
  /** The venue's fee rate: bps on the curve and the Solana pool, pips / 100 on Uniswap v3 (3000 pips = 30). */
  readonly venueFeeBps: number
  readonly creatorFeeRaw: bigint
  readonly priceImpactBps: number
}

export type VenueRefusal = TradeRefusal | "exceeds_pool_liquidity"

export type VenueQuote =
  | VenueFill
  | { readonly _tag: "Refused"; readonly reason: VenueRefusal }
  | { readonly _tag: "Need"; readonly word: number }
  | { readonly _tag: "Need"; readonly tick: number }

const Q192 = 1n << 192n

/** `10000 − floor(10000·grossOut·den / (netIn·num))`, clamped: the fill against `netIn·num/den`. */
export const impactBps = (netIn: bigint, grossOut: bigint, num: bigint, den: bigint): number => {
  const ideal = netIn * num
  if (ideal <= 0n) return 0
  const got = (grossOut * den * BPS) / ideal
  return got >= BPS ? 0 : Number(BPS - got)
}

const refused = (reason: VenueRefusal): VenueQuote => ({ _tag: "Refused", reason })

const quoteCurve = (v: Extract<VenueState, { _tag: "Curve" }>, side: Side, amountIn: bigint): VenueQuote => {
  const { state } = v
  if (side === "buy") {
    const q = quoteBuy(v.params, state, amountIn)
    if (q._tag === "Refused") return q
    return {
      _tag: "Filled",
      venue: "svc-curve",
      amountOut: q.amountOut,
      amountConsumed: q.quoteConsumed,
      refund: q.refund,
      crossesGraduation: q.crossesGraduation,
      venueFeeRaw: q.fee,
      venueFeeAsset: "quote",
      venueFeeBps: Number(v.params.feeBps),
      creatorFeeRaw: (q.fee * v.creatorShareBps) / BPS,
      priceImpactBps: impactBps(q.quoteConsumed - q.fee, q.amountOut, state.virtualTokenRaw, state.virtualQuoteRaw)
    }
  }
  const q = quoteSell(v.params, state, amountIn)
  if (q._tag === "Refused") return q
  return {
    _tag: "Filled",
    venue: "svc-curve",
    amountOut: q.amountOut,
    amountConsumed: amountIn,
    refund: 0n,
    crossesGraduation: false,
    venueFeeRaw: q.fee,
    venueFeeAsset: "quote",
    venueFeeBps: Number(v.params.feeBps),
    creatorFeeRaw: (q.fee * v.creatorShareBps) / BPS,
    priceImpactBps: impactBps(amountIn, q.grossOut, state.virtualQuoteRaw, state.virtualTokenRaw)
  }
}

const quoteSolanaPool = (v: Extract<VenueState, { _tag: "SolanaPool" }>, side: Side, amountIn: bigint): VenueQuote => {
  const r = v.reserves
  const q = side === "buy" ? quotePoolBuy(r, v.fees, amountIn) : quotePoolSell(r, v.fees, amountIn)
  if (q._tag === "Refused") return q
  return {
    _tag: "Filled",
    venue: "dex",
    amountOut: q.amountOut,
    amountConsumed: amountIn,
    refund: 0n,
    crossesGraduation: false,
    venueFeeRaw: q.fee,
    venueFeeAsset: "quote",
    venueFeeBps: Number(v.fees.feeBps),
    creatorFeeRaw: q.creatorFee,
    priceImpactBps:
      side === "buy"
        ? impactBps(amountIn - q.fee, q.amountOut, r.tokenReserveRaw, r.quoteReserveRaw)
        : impactBps(amountIn, q.amountOut + q.fee, r.quoteReserveRaw, r.tokenReserveRaw)
  }
}

const quoteHoodPool = (v: Extract<VenueState, { _tag: "HoodPool" }>, side: Side, amountIn: bigint): VenueQuote => {
  // A buy pays the quote asset in: token0 in exactly when the token is token1.
  const zeroForOne = side === "buy" ? !v.tokenIsToken0 : v.tokenIsToken0
  const s = swapExactInput(v.pool, v.view, zeroForOne, amountIn)
  if (s._tag === "Need") return s
  // The router would take only part of amountIn and leave the rest unspent; never quote that as a fill.
  if (s.partial) return refused("exceeds_pool_liquidity")
  if (s.amountOut === 0n && s.amountIn === 0n) return refused("zero_amount")
  // Spot as token1 per token0 = √P²/2^192; out per in for token0 in, its inverse for token1 in.
  const p2 = v.pool.sqrtPriceX96 * v.pool.sqrtPriceX96
  const [num, den] = zeroForOne ? [p2, Q192] : [Q192, p2]
  return {
    _tag: "Filled",
    venue: "hood-dex",
    amountOut: s.amountOut,
    amountConsumed: s.amountIn,
    refund: 0n,
    crossesGraduation: false,
    venueFeeRaw: s.feeAmount,
    venueFeeAsset: side === "buy" ? "quote" : "token",
    venueFeeBps: v.pool.feePips / 100,
    creatorFeeRaw: (s.feeAmount * v.creatorShareBps) / BPS,
    priceImpactBps: impactBps(s.amountIn - s.feeAmount, s.amountOut, num, den)
  }
}

/** The venue's fill of an exact input of `amountIn` raw units (quote on a buy, tokens on a sell; > 0). */
export const quoteVenue = (v: VenueState, side: Side, amountIn: bigint): VenueQuote => {
  if (amountIn <= 0n) return refused("zero_amount")
  switch (v._tag) {
    case "Curve":
      return quoteCurve(v, side, amountIn)
    case "SolanaPool":
      return quoteSolanaPool(v, side, amountIn)
    case "HoodPool":
      return quoteHoodPool(v, side, amountIn)
  }
}

export interface PlatformCharge {
  /** The plan's agent trade fee. */
  readonly planFeeBps: bigint
  readonly referred: boolean
}

export interface PlatformFeeLine {
  readonly planFeeBps: number
  /** 10 for a referred account, else 0 (percent off the platform fee). */
  readonly referralDiscountPct: number
  readonly feeRaw: bigint
  /** Buy: paid beside the swap on top of what the venue takes; sell: paid from the quoted proceeds. */
  readonly charged: "on_top_of_input" | "from_output"
}

/** Document 2, 2.2: the platform fee of a fill, charged outside the venue's math (see the module note). */
export const platformFeeOf = (fill: VenueFill, side: Side, c: PlatformCharge): PlatformFeeLine => ({
  planFeeBps: Number(c.planFeeBps),
  referralDiscountPct: c.referred ? Number(REFERRAL_DISCOUNT_PCT) : 0,
  feeRaw: platformFeeRaw(side === "buy" ? fill.amountConsumed : fill.amountOut, c.planFeeBps, c.referred),
  charged: side === "buy" ? "on_top_of_input" : "from_output"
})

/** The chain-enforced minimum of a fill (the program's minimum out, Uniswap's `amountOutMinimum`). */
export const minOutOf = (fill: VenueFill, slippageBps: bigint): bigint => minAmountOut(fill.amountOut, slippageBps)
