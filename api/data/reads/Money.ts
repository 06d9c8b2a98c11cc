/**
 * Exact money for the token reads: raw quote amounts to USD decimal strings through a
 * `PriceSource` price (a `bigint` of 10^-scale USD per whole quote unit), never a float.
 *
 * Conventions (docs/decisions): USD amounts are truncated toward zero to the micro-dollar (6
 * places); USD per whole token to 18 places (memecoin prices need them); trailing zeros dropped.
 */
import { Effect } from "effect"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { formatUnits } from "../../../src/domain/CurveMath.js"
import { QuotePairs, type QuotePair } from "../../../src/domain/QuotePairs.js"
import type { PriceSourceShape, UsdPrice } from "../../../src/services/prices/PriceSource.js"

export const USD_DECIMALS = 6
export const USD_PRICE_DECIMALS = 18

/** The quote pair a market trades against (Hood addresses compare lower-case). */
export const quotePairOf = (chain: ChainId, quoteMint: string): QuotePair | undefined => {
  const key = chain === "hood" ? quoteMint.toLowerCase() : quoteMint
  return QuotePairs.find((p) => p.chain === chain && (chain === "hood" ? p.address.toLowerCase() : p.address) === key)
}

/** USD of `quoteRaw` raw quote units, as a decimal string; null without a price. */
export const usdOf = (quoteRaw: bigint, quoteDecimals: number, price: UsdPrice | null): string | null => {
  if (price === null) return null
  const micros = (quoteRaw * price.usdRaw * 10n ** BigInt(USD_DECIMALS)) / 10n ** BigInt(quoteDecimals + price.scale)
  return formatUnits(micros, USD_DECIMALS)
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
