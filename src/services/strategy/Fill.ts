/**
 * The replay's fill model, pure and exact (`bigint` raw units and micro-USD):
 *
 * - A fill happens immediately AFTER a trade of the token (the "fill trade": the first trade
 *   strictly after the signal for an entry, the trade after the one that crossed a price level
 *   for an exit, the first trade at or after the deadline for a time exit), on the virtual
 *   reserves that trade left (`V` quote, `X` tokens): constant product, the curve's own formula
 *   (`tokens = floor(X·net / (V + net))`, `quote = floor(V·x / (X + x))`), so the price impact
 *   of our own size is counted exactly. The curve fee is `ceil(amount · curveFeeBps / 10000)`
 *   on the quote side (in on a buy, out on a sell), like the chain program.
 * - A fill trade without reserves (a venue that reports none) fills at that trade's fee-free
 *   price worsened by `fallbackSlippageBps`.
 * - The platform fee (the plan's agent trade fee) is `ceil(usd · platformFeeBps / 10000)`: taken
 *   from the stake before buying, from the proceeds after selling.
 * - Slippage is reported as what the fill lost against the fill trade's marginal price (`V/X`,
 *   or the trade's price), after fees are set apart.
 * - USD: quote raw × `usdMicrosPerQuoteUnit` / 10^quoteDecimals, floored (one rate per chain for
 *   the whole replay).
 * Graduation crossings are not modelled: a fill never changes the curve's lifecycle.
 */
import { BPS, ceilDiv } from "../../domain/CurveMath.js"

export interface ChainPricing {
  readonly quoteDecimals: number
  readonly tokenDecimals: number
  /** Micro-USD per one whole quote unit (SOL, ETH). */
  readonly usdMicrosPerQuoteUnit: bigint
}

export interface FeeModel {
  readonly curveFeeBps: bigint
  readonly platformFeeBps: bigint
  readonly fallbackSlippageBps: bigint
}

/** What a fill trade offers: its fee-free price (`q/k`) and its post-trade reserves. */
export interface FillBook {
  readonly quoteRaw: bigint
  readonly tokenRaw: bigint
  readonly reserveQuoteRaw: bigint
  readonly reserveTokenRaw: bigint
}

export const quoteToUsdMicros = (raw: bigint, p: ChainPricing): bigint =>
  (raw * p.usdMicrosPerQuoteUnit) / 10n ** BigInt(p.quoteDecimals)

export const usdMicrosToQuote = (micros: bigint, p: ChainPricing): bigint =>
  p.usdMicrosPerQuoteUnit === 0n ? 0n : (micros * 10n ** BigInt(p.quoteDecimals)) / p.usdMicrosPerQuoteUnit

const hasReserves = (b: FillBook) => b.reserveQuoteRaw > 0n && b.reserveTokenRaw > 0n
const hasPrice = (b: FillBook) => b.quoteRaw > 0n && b.tokenRaw > 0n
export const priceable = (b: FillBook): boolean => hasReserves(b) || hasPrice(b)

export interface BuyFill {
  readonly platformFeeUsdMicros: bigint
  /** Quote sent to the venue, curve fee included. */
  readonly quoteInRaw: bigint
  readonly curveFeeRaw: bigint
  readonly slippageRaw: bigint
  readonly tokensRaw: bigint
}

/** Buys with `stakeUsdMicros` (platform fee included) on the book. */
export const buy = (stakeUsdMicros: bigint, book: FillBook, pricing: ChainPricing, fees: FeeModel): BuyFill => {
  const platformFeeUsdMicros = ceilDiv(stakeUsdMicros * fees.platformFeeBps, BPS)
  const quoteInRaw = usdMicrosToQuote(stakeUsdMicros - platformFeeUsdMicros, pricing)
  const curveFeeRaw = ceilDiv(quoteInRaw * fees.curveFeeBps, BPS)
  const net = quoteInRaw - curveFeeRaw
  let tokensRaw = 0n
  let slippageRaw = 0n
  if (net > 0n && hasReserves(book)) {
    const V = book.reserveQuoteRaw
    const X = book.reserveTokenRaw
    tokensRaw = (X * net) / (V + net)
    slippageRaw = net - (tokensRaw * V) / X
  } else if (net > 0n && hasPrice(book)) {
    const atPrice = (net * book.tokenRaw) / book.quoteRaw
    tokensRaw = (atPrice * (BPS - fees.fallbackSlippageBps)) / BPS
    slippageRaw = net - (tokensRaw * book.quoteRaw) / book.tokenRaw
  }
  return { platformFeeUsdMicros, quoteInRaw, curveFeeRaw, slippageRaw, tokensRaw }
}

export interface SellFill {
  /** Quote the venue paid before its fee. */
  readonly grossRaw: bigint
  readonly curveFeeRaw: bigint
  readonly slippageRaw: bigint
  readonly platformFeeUsdMicros: bigint
  /** What reaches the account, in micro-USD. */
  readonly proceedsUsdMicros: bigint
}

/** Sells `tokensRaw` on the book. */
export const sell = (tokensRaw: bigint, book: FillBook, pricing: ChainPricing, fees: FeeModel): SellFill => {
  let grossRaw = 0n
  let slippageRaw = 0n
  if (tokensRaw > 0n && hasReserves(book)) {
    const V = book.reserveQuoteRaw
    const X = book.reserveTokenRaw
    grossRaw = (V * tokensRaw) / (X + tokensRaw)
    slippageRaw = (tokensRaw * V) / X - grossRaw
  } else if (tokensRaw > 0n && hasPrice(book)) {
    const atPrice = (tokensRaw * book.quoteRaw) / book.tokenRaw
    grossRaw = (atPrice * (BPS - fees.fallbackSlippageBps)) / BPS
    slippageRaw = atPrice - grossRaw
  }
  const curveFeeRaw = ceilDiv(grossRaw * fees.curveFeeBps, BPS)
  const usd = quoteToUsdMicros(grossRaw - curveFeeRaw, pricing)
  const platformFeeUsdMicros = ceilDiv(usd * fees.platformFeeBps, BPS)
  return { grossRaw, curveFeeRaw, slippageRaw, platformFeeUsdMicros, proceedsUsdMicros: usd - platformFeeUsdMicros }
}

/** Liquidation value at the book's marginal price, no fees (for marks of open positions). */
export const markUsdMicros = (tokensRaw: bigint, book: FillBook, pricing: ChainPricing): bigint => {
  const quote = hasReserves(book)
    ? (tokensRaw * book.reserveQuoteRaw) / book.reserveTokenRaw
    : hasPrice(book)
      ? (tokensRaw * book.quoteRaw) / book.tokenRaw
      : 0n
  return quoteToUsdMicros(quote, pricing)
}

/** USD per whole token, scaled by 10^18, of `quoteRaw` paid for `tokensRaw`. */
export const usdPerToken18 = (quoteRaw: bigint, tokensRaw: bigint, pricing: ChainPricing): bigint =>
  tokensRaw === 0n
    ? 0n
    : (quoteRaw * pricing.usdMicrosPerQuoteUnit * 10n ** BigInt(pricing.tokenDecimals) * 10n ** 12n) /
      (tokensRaw * 10n ** BigInt(pricing.quoteDecimals))

/** A 10^18-scaled decimal as text without trailing zeros ("0.000000012"). */
export const formatScaled18 = (v: bigint): string => {
  const neg = v < 0n
  const abs = neg ? -v : v
  const whole = abs / 10n ** 18n
  const frac = (abs % 10n ** 18n).toString().padStart(18, "0").replace(/0+$/, "")
  return `${neg ? "-" : ""}${whole}${frac === "" ? "" : `.${frac}`}`
}
