/**
 * A spend's USD value for the spend gate (`SpendGate.ts`): raw units of a chain's quote asset at
 * the price source's rate, in micro-dollars; null without a price (a USD cap then fails closed on
 * service-controlled signing). Every rail values its attempt with this one function.
 */
import { Effect, Option } from "effect"
import type { Chain } from "../../domain/Chain.js"
import { findQuotePair } from "../../domain/QuotePairs.js"
import { usdMicrosOf } from "../prices/Money.js"
import { isPriceAsset, type PriceSourceShape, type UsdPrice } from "../prices/PriceSource.js"

/** USD micro-dollars of `raw` units of the chain's quote asset; null without a price. */
export const usdOfQuote = (prices: PriceSourceShape, chain: Chain, asset: string, raw: bigint): Effect.Effect<bigint | null> =>
  Effect.map(isPriceAsset(asset) ? Effect.option(prices.usd(asset)) : Effect.succeed(Option.none<UsdPrice>()), (price) =>
    usdMicrosOf(raw, findQuotePair(chain, asset)?.decimals ?? 9, Option.getOrNull(price))
  )
