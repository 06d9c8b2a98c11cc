/**
 * Exact money for the market-data reads: raw quote amounts to USD through a `PriceSource` price
 * (a `bigint` of 10^-scale USD per whole quote unit), never a float.
 *
 * Conventions (docs/decisions): USD amounts are truncated toward zero to the micro-dollar (6
 * places); USD per whole token to 18 places (memecoin prices need them); trailing zeros dropped.
 * Amounts in different quote assets are never added together: `QuoteTotals` keeps one total per
 * quote asset and adds them up in USD only, each asset's total converted once.
 */
import { Effect } from "effect"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { formatUnits } from "../../domain/CurveMath.js"
import { QuotePairs, type QuotePair } from "../../domain/QuotePairs.js"
import type { PriceSourceShape, UsdPrice } from "./PriceSource.js"

export const USD_DECIMALS = 6
export const USD_PRICE_DECIMALS = 18

const USD_TEXT = /^([0-9]{1,30})(?:\.([0-9]{1,6}))?$/

/**
 * `"12.5"` → 12,500,000 micro-dollars; undefined when not a non-negative decimal of at most 6
 * places (and 30 integer digits). Callers with a stricter grammar check it first.
 */
export const parseUsdMicros = (text: string): bigint | undefined => {
  const m = USD_TEXT.exec(text)
  if (m === null) return undefined
  return BigInt(m[1]!) * 10n ** BigInt(USD_DECIMALS) + BigInt(((m[2] ?? "") + "000000").slice(0, USD_DECIMALS))
}

/** The quote pair a market trades against (Hood addresses compare lower-case). */
export const quotePairOf = (chain: ChainId, quoteMint: string): QuotePair | undefined => {
  const key = chain === "hood" ? quoteMint.toLowerCase() : quoteMint
  return QuotePairs.find((p) => p.chain === chain && (chain === "hood" ? p.address.toLowerCase() : p.address) === key)
}

/** USD of `quoteRaw` raw quote units in micro-dollars, truncated toward zero; null without a price. */
export const usdMicrosOf = (quoteRaw: bigint, quoteDecimals: number, price: UsdPrice | null): bigint | null =>
  price === null ? null : (quoteRaw * price.usdRaw * 10n ** BigInt(USD_DECIMALS)) / 10n ** BigInt(quoteDecimals + price.scale)

/** USD of `quoteRaw` raw quote units, as a decimal string; null without a price. */
export const usdOf = (quoteRaw: bigint, quoteDecimals: number, price: UsdPrice | null): string | null => {
  const micros = usdMicrosOf(quoteRaw, quoteDecimals, price)
  return micros === null ? null : formatUnits(micros, USD_DECIMALS)
}

/** USD per whole token at the spot reserves; null without a price or with no token reserve. */
export const usdPerToken = (
  quoteReserveRaw: bigint,
  tokenReserveRaw: bigint,
  decimals: number,
  quoteDecimals: number,
  price: UsdPrice | null
): string | null => {
  if (price === null || tokenReserveRaw <= 0n) return null
  const num = quoteReserveRaw * 10n ** BigInt(decimals) * price.usdRaw * 10n ** BigInt(USD_PRICE_DECIMALS)
  const den = tokenReserveRaw * 10n ** BigInt(quoteDecimals + price.scale)
  return formatUnits(num / den, USD_PRICE_DECIMALS)
}

/** Prices of the quote assets a read needs, each asked once; an unavailable price is null. */
export const usdPrices = (
  prices: PriceSourceShape,
  pairs: Iterable<QuotePair | undefined>
): Effect.Effect<ReadonlyMap<string, UsdPrice | null>> =>
  Effect.gen(function* () {
    const out = new Map<string, UsdPrice | null>()
    for (const pair of pairs) {
      if (pair === undefined || out.has(pair.id)) continue
      out.set(pair.id, yield* prices.usd(pair.id).pipe(Effect.orElseSucceed(() => null)))
    }
    return out
  })

/** One quote asset's total in a `QuoteTotals`. */
export interface QuoteTotal {
  readonly pair: QuotePair
  readonly price: UsdPrice | null
  readonly raw: bigint
}

/** Per-quote-asset totals and their USD sum (each asset's total converted once). */
export class QuoteTotals {
  readonly #totals = new Map<string, { readonly pair: QuotePair; readonly price: UsdPrice | null; raw: bigint }>()

  /** Adds `amountRaw` of `pair`'s quote asset; an amount with no known quote asset is left out. */
  add(pair: QuotePair | undefined, price: UsdPrice | null, amountRaw: bigint): void {
    if (pair === undefined) return
    const e = this.#totals.get(pair.id)
    if (e === undefined) this.#totals.set(pair.id, { pair, price, raw: amountRaw })
    else e.raw += amountRaw
  }

  /** The totals, by quote asset id. */
  byQuote(): ReadonlyArray<QuoteTotal> {
    return [...this.#totals.values()].sort((a, b) => (a.pair.id < b.pair.id ? -1 : 1))
  }

  /** Micro-dollars of all assets; null when one with a non-zero total has no price. */
  usdMicros(): bigint | null {
    let micros = 0n
    for (const e of this.#totals.values()) {
      const u = usdMicrosOf(e.raw, e.pair.decimals, e.price)
      if (u === null) {
        if (e.raw !== 0n) return null
        continue
      }
      micros += u
    }
    return micros
  }
}
