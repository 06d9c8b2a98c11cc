/**
 * Judging an on-chain oracle's latest answer as a USD price: the feed hands over what it last read
 * (a fixed-point `price · 10^exponent`, its confidence in the same units, the publish time and
 * whether the publisher vouches for it), this module decides whether it may value anything.
 * It fails closed with `PriceUnavailable`:
 * - `provider_failed`: nothing read yet (the feed has not connected, or the account is missing);
 * - `invalid`: price ≤ 0, a status other than trading (Pyth: an update not fully verified),
 *   an exponent that would need more than `MAX_SCALE` places, or a confidence wider than
 *   `maxConfidenceBps` of the price;
 * - `stale`: published longer than `maxAgeMs` before now (the Effect `Clock`), or in the future
 *   beyond `maxAgeMs` (a clock that far apart is as untrustworthy as an old price).
 * The price is exact: `usdRaw / 10^scale` is the oracle's number, no float on the way.
 */
import { Clock, Effect } from "effect"
import type { OracleFeed, OracleObservation } from "../../domain/OracleObservation.js"
import { MAX_SCALE, type PriceAsset, type PriceSourceShape, PriceUnavailable, type UsdPrice } from "./PriceSource.js"

export type { OracleFeed, OracleObservation }

export interface OracleLimits {
  readonly maxAgeMs: number
  /** Widest confidence accepted, in basis points of the price. */
  readonly maxConfidenceBps: number
}

export const DEFAULT_ORACLE_LIMITS: OracleLimits = { maxAgeMs: 60_000, maxConfidenceBps: 200 }

/** Pure: the observation as a price, or why it may not be used. */
export const judgeObservation = (
  asset: PriceAsset,
  source: string,
  o: OracleObservation | undefined,
  nowMs: number,
  limits: OracleLimits
): UsdPrice | PriceUnavailable => {
  const refuse = (reason: PriceUnavailable["reason"], message: string) => new PriceUnavailable({ asset, reason, message: `${source}: ${message}` })
  if (o === undefined) return refuse("provider_failed", "no price has been read yet")
  if (!o.trading) return refuse("invalid", "the price is not trading (not fully verified)")
  if (o.price <= 0n) return refuse("invalid", `unusable price ${o.price}e${o.exponent}`)
  if (o.conf * 10_000n > o.price * BigInt(limits.maxConfidenceBps)) {
    return refuse("invalid", `confidence ±${o.conf} is wider than ${limits.maxConfidenceBps} bps of ${o.price}`)
  }
  const ageMs = nowMs - o.publishTimeMs
  if (ageMs > limits.maxAgeMs) return refuse("stale", `price is ${ageMs} ms old (max ${limits.maxAgeMs})`)
  if (-ageMs > limits.maxAgeMs) return refuse("stale", `price is published ${-ageMs} ms in the future`)
  if (o.exponent < -MAX_SCALE || o.exponent > 30) return refuse("invalid", `exponent ${o.exponent} is out of range`)
  const usdRaw = o.exponent >= 0 ? o.price * 10n ** BigInt(o.exponent) : o.price
  return { asset, usdRaw, scale: o.exponent >= 0 ? 0 : -o.exponent, asOfMs: o.publishTimeMs, source }
}

/**
 * A price source over oracle feeds for some assets and a fallback for the rest (the stablecoins
 * and the platform token have no oracle here: docs/decisions.md "Oracle prices").
 */
export const oraclePriceSource = (
  feeds: Readonly<Partial<Record<PriceAsset, OracleFeed>>>,
  fallback: PriceSourceShape,
  limits: OracleLimits = DEFAULT_ORACLE_LIMITS
): PriceSourceShape => ({
  usd: (asset) => {
    const feed = feeds[asset]
    if (feed === undefined) return fallback.usd(asset)
    return Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
      const judged = judgeObservation(asset, feed.name, feed.latest(), nowMs, limits)
      return judged instanceof PriceUnavailable ? Effect.fail(judged) : Effect.succeed(judged)
    })
  }
})
