/**
 * CurveMath owns the bonding curve's integer arithmetic. Quotes, actors, the localnet programs and
 * atomic pricing ladders all call these functions, so a quote equals the executed fill to the unit.
 * Constant product on virtual reserves: virtual quote starts at V, the token reserve at X (supply
 * less the staker allocation), k = V·X; graduation when the real quote raised reaches G.
 *
 * Invariants, for every state reachable from `initialState` (pinned by CurveMath.test.ts):
 * - virtualQuote − realQuote = V, and X − virtualToken = tokens bought less tokens sold back;
 * - virtualQuote·virtualToken never decreases (every rounding favours the curve);
 * - realQuote ≥ 0; on capped-refund (Hood) realQuote ≤ G; complete ⇔ realQuote ≥ G.
 *
 * Results: `quoteBuy`/`quoteSell` never throw. They return `{_tag: "Filled", ...}` or
 * `{_tag: "Refused", reason}`; any trade on a complete curve is `curve_complete`, an amount ≤ 0 or
 * a buy whose net after fee is ≤ 0 is `zero_amount`, selling more than was sold is
 * `exceeds_curve_supply`. A fill of 0 tokens (or 0 quote) is NOT refused: the last raw units of a
 * Hood curve must be able to graduate it, and `minAmountOut` is the trader's guard.
 * Preconditions the caller owns (validated where params are built): V, X, G > 0 and
 * 0 ≤ feeBps < 10000. The small helpers throw RangeError on a programmer error (ceilDiv by 0,
 * isqrt of a negative, slippage or decimals out of range).
 *
 * Rounding, always toward the protocol and the curve, never toward the trader:
 * - buy fee = ceil(amountIn·fee/10000); net = amountIn − fee; tokens out = floor(vTok·net/(vQuote+net));
 * - Hood cap: gross consumed g = ceil(r·10000/(10000−fee)), fee = g − r (see `capGross`);
 * - sell gross = floor(vQuote·t/(vTok+t)); fee = ceil(gross·fee/10000); out = gross − fee;
 * - minAmountOut, progressBps, FDVs (at the quote's decimals) and percents (2 decimals): floor.
 */

export type CrossingModel = "full-fill-surplus" | "capped-refund" // Solana | Hood

export interface CurveParams {
  readonly virtualQuoteRaw: bigint // V
  readonly thresholdRaw: bigint // G: real quote (net of fee) raised at graduation
  readonly tokenReserveRaw: bigint // X = supply less the staker allocation
  readonly feeBps: bigint // curve fee, 100 by default
  readonly crossingModel: CrossingModel
}

export interface CurveState {
  readonly virtualQuoteRaw: bigint // V + real quote raised
  readonly virtualTokenRaw: bigint // tokens still in the curve (starts at X)
  readonly realQuoteRaw: bigint // quote raised so far (net of fees)
  readonly complete: boolean
}

export type TradeRefusal = "curve_complete" | "zero_amount" | "exceeds_curve_supply"

export interface TradeRefused {
  readonly _tag: "Refused"
  readonly reason: TradeRefusal
}

export interface BuyQuote {
  readonly _tag: "Filled"
  readonly amountOut: bigint
  readonly fee: bigint
  /** Gross quote taken from the buyer; `quoteConsumed + refund == amountIn`. */
  readonly quoteConsumed: bigint
  /** Hood only: the part of `amountIn` above the threshold, returned. Always 0 on Solana. */
  readonly refund: bigint
  readonly crossesGraduation: boolean
  readonly next: CurveState
}

export interface SellQuote {
  readonly _tag: "Filled"
  readonly amountOut: bigint
  readonly fee: bigint
  readonly grossOut: bigint
  readonly next: CurveState
}

export type BuyResult = BuyQuote | TradeRefused
export type SellResult = SellQuote | TradeRefused

export const BPS = 10_000n
export const DEFAULT_CURVE_FEE_BPS = 100n

export const ceilDiv = (a: bigint, b: bigint): bigint => {
  if (b === 0n) throw new RangeError("ceilDiv by zero")
  const q = a / b
  // bigint division truncates toward zero; bump only when the exact quotient is positive.
  return a % b !== 0n && a > 0n === b > 0n ? q + 1n : q
}

/** floor(sqrt(n)), exact. Newton from a power of two above the root, so it only descends. */
export const isqrt = (n: bigint): bigint => {
  if (n < 0n) throw new RangeError("isqrt of a negative number")
  if (n < 2n) return n
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2))
  for (;;) {
    const y = (x + n / x) >> 1n
    if (y >= x) return x
    x = y
  }
}

export const stakerAllocationRaw = (supplyRaw: bigint, stakerAllocationBps: bigint): bigint =>
  (supplyRaw * stakerAllocationBps) / BPS

export const tokenReserveRaw = (supplyRaw: bigint, stakerAllocationBps: bigint): bigint =>
  supplyRaw - stakerAllocationRaw(supplyRaw, stakerAllocationBps)

export const initialState = (p: CurveParams): CurveState => ({
  virtualQuoteRaw: p.virtualQuoteRaw,
  virtualTokenRaw: p.tokenReserveRaw,
  realQuoteRaw: 0n,
  complete: false
})

const refused = (reason: TradeRefusal): TradeRefused => ({ _tag: "Refused", reason })

/**
 * Smallest gross g whose net after the ceil fee is r: g = ceil(r·B/(B−f)), B = 10000.
 * The net of g is g − ceil(g·f/B) = floor(g·(B−f)/B). Exactly r because:
 * - g ≥ r·B/(B−f) ⇒ g·(B−f)/B ≥ r ⇒ floor(...) ≥ r;
 * - g < r·B/(B−f) + 1 ⇒ g·(B−f)/B < r + (B−f)/B ≤ r + 1 ⇒ floor(...) ≤ r.
 * So fee(g) = g − r, and since floor(x·(B−f)/B) is non-decreasing in x, a buyer whose own net
 * exceeds r paid more than g: the refund amountIn − g is positive.
 */
const capGross = (r: bigint, feeBps: bigint): bigint => ceilDiv(r * BPS, BPS - feeBps)

const fillBuy = (
  p: CurveParams,
  s: CurveState,
  net: bigint,
  fee: bigint,
  quoteConsumed: bigint,
  refund: bigint
): BuyQuote => {
  const amountOut = (s.virtualTokenRaw * net) / (s.virtualQuoteRaw + net)
  const realQuoteRaw = s.realQuoteRaw + net
  const complete = realQuoteRaw >= p.thresholdRaw
  return {
    _tag: "Filled",
    amountOut,
    fee,
    quoteConsumed,
    refund,
    crossesGraduation: s.realQuoteRaw < p.thresholdRaw && complete,
    next: {
      virtualQuoteRaw: s.virtualQuoteRaw + net,
      virtualTokenRaw: s.virtualTokenRaw - amountOut,
      realQuoteRaw,
      complete
    }
  }
}

export const quoteBuy = (p: CurveParams, s: CurveState, amountInRaw: bigint): BuyResult => {
  if (s.complete) return refused("curve_complete")
  if (amountInRaw <= 0n) return refused("zero_amount")
  const fee = ceilDiv(amountInRaw * p.feeBps, BPS)
  const net = amountInRaw - fee
  if (net <= 0n) return refused("zero_amount")
  const remaining = p.thresholdRaw - s.realQuoteRaw
  if (p.crossingModel === "capped-refund" && net > remaining) {
    // Hood never passes its threshold: fill exactly the remainder and refund the rest.
    const gross = capGross(remaining, p.feeBps)
    return fillBuy(p, s, remaining, gross - remaining, gross, amountInRaw - gross)
  }
  // Solana fills in full; any surplus over G stays in the pool.
  return fillBuy(p, s, net, fee, amountInRaw, 0n)
}

/**
 * grossOut never exceeds realQuote, so no clamp: with k = vQuote·vTok ≥ V·X (it never decreases)
 * and vTok + t ≤ X (checked), vQuote − grossOut = ceil(vQuote·vTok/(vTok+t)) ≥ V·X/X = V, and
 * vQuote − V is exactly realQuote.
 */
export const quoteSell = (p: CurveParams, s: CurveState, tokensInRaw: bigint): SellResult => {
  if (s.complete) return refused("curve_complete")
  if (tokensInRaw <= 0n) return refused("zero_amount")
  if (tokensInRaw > p.tokenReserveRaw - s.virtualTokenRaw) return refused("exceeds_curve_supply")
  const grossOut = (s.virtualQuoteRaw * tokensInRaw) / (s.virtualTokenRaw + tokensInRaw)
  const fee = ceilDiv(grossOut * p.feeBps, BPS)
  return {
    _tag: "Filled",
    amountOut: grossOut - fee,
    fee,
    grossOut,
    next: {
      virtualQuoteRaw: s.virtualQuoteRaw - grossOut,
      virtualTokenRaw: s.virtualTokenRaw + tokensInRaw,
      realQuoteRaw: s.realQuoteRaw - grossOut,
      complete: false
    }
  }
}

export const minAmountOut = (amountOut: bigint, slippageBps: bigint): bigint => {
  if (slippageBps < 0n || slippageBps > BPS) throw new RangeError("slippageBps must be 0..10000")
  return (amountOut * (BPS - slippageBps)) / BPS
}

export const progressBps = (p: CurveParams, s: CurveState): bigint => {
  if (s.realQuoteRaw <= 0n) return 0n
  const bps = (s.realQuoteRaw * BPS) / p.thresholdRaw
  return bps > BPS ? BPS : bps
}

/** Exact decimal string of `raw / 10^decimals`: no exponent, no trailing fractional zeros. */
export const formatUnits = (raw: bigint, decimals: number): string => {
  if (!Number.isSafeInteger(decimals) || decimals < 0) throw new RangeError("decimals must be a whole number ≥ 0")
  const sign = raw < 0n ? "-" : ""
  const digits = (raw < 0n ? -raw : raw).toString()
  if (decimals === 0) return sign + digits
  const padded = digits.padStart(decimals + 1, "0")
  const whole = padded.slice(0, -decimals)
  const fraction = padded.slice(-decimals).replace(/0+$/, "")
  return sign + whole + (fraction === "" ? "" : `.${fraction}`)
}

/** `part/whole` as a percent floored to 2 decimals, always written with both ("50.00"). */
const percent2 = (part: bigint, whole: bigint): string => {
  const hundredths = (part * 100n * 100n) / whole
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, "0")}`
}

export interface CurveTermsInput {
  symbol: string
  quoteDecimals: number
  virtualQuoteRaw: bigint
  thresholdRaw: bigint
  supplyRaw: bigint
  tokenDecimals: number
  stakerAllocationBps: bigint
  feeBps: bigint
  firstBuyInRaw: bigint /* 1 SOL, or 66,000 platform-token units, in raw */
}

export interface CurveTerms {
  symbol: string
  virtualQuoteRaw: string
  thresholdRaw: string
  raise: string
  startFdv: string
  bondingFdv: string
  supplySoldPct: string
  firstBuyRaw: string
  firstBuySupplyPct: string
}

/**
 * Spec 2.2's curveTerms. Raw quote times supply/X needs no token decimals (the ratio is
 * dimensionless), so `tokenDecimals` is carried for callers but unused. The first buy goes through
 * `quoteBuy` on the virgin curve with the Solana crossing model (exp-* modes are Solana only); a
 * refused first buy reports "0".
 */
export const curveTerms = (i: CurveTermsInput): CurveTerms => {
  const v = i.virtualQuoteRaw
  const g = i.thresholdRaw
  const x = tokenReserveRaw(i.supplyRaw, i.stakerAllocationBps)
  const params: CurveParams = {
    virtualQuoteRaw: v,
    thresholdRaw: g,
    tokenReserveRaw: x,
    feeBps: i.feeBps,
    crossingModel: "full-fill-surplus"
  }
  const firstBuy = quoteBuy(params, initialState(params), i.firstBuyInRaw)
  const firstBuyRaw = firstBuy._tag === "Filled" ? firstBuy.amountOut : 0n
  return {
    symbol: i.symbol,
    virtualQuoteRaw: v.toString(),
    thresholdRaw: g.toString(),
    raise: formatUnits(g, i.quoteDecimals),
    startFdv: formatUnits((v * i.supplyRaw) / x, i.quoteDecimals),
    bondingFdv: formatUnits(((v + g) * (v + g) * i.supplyRaw) / (v * x), i.quoteDecimals),
    // tokens sold by graduation on the continuous curve = X·G/(V+G)
    supplySoldPct: percent2(x * g, (v + g) * i.supplyRaw),
    firstBuyRaw: firstBuyRaw.toString(),
    firstBuySupplyPct: percent2(firstBuyRaw, i.supplyRaw)
  }
}
