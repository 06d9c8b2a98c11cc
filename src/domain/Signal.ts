/**
 * The signal: what every detector emits, the tape (`/v1/signals`) and the stream serve, and the
 * ClickHouse `signals` table stores. Field names follow the market-data service's snake_case
 * (spec 4.5 filters: `pattern`, `chain`, `asset`, `min_mcap_usd`, `min_age_minutes`, `venues`,
 * `group`, `quality`; 2.7 filters: `min_usd`, `wallet_ids`, `groups`, `direction`).
 * The exact definition of each pattern is in docs/signals.md.
 *
 * Invariants:
 * - `id` is a function of the pattern, the chain, the asset and the ids of the inputs that
 *   triggered the signal (chain event ids, mention ids), never of time or randomness: a replay of
 *   the same inputs yields the same ids, and the table collapses a re-emitted copy.
 * - Money is exact: `size_usd` and `mcap_usd` are decimal strings floored at 6 fractional digits
 *   (micro-USD), computed from raw integers and the price input; null when the quote asset has no
 *   USD price. `quality` is a function of `confidence` alone (`qualityOf`).
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import type { Chain } from "./Chain.js"

export const PATTERNS = ["confluence", "deployer", "large_move", "dormancy", "intra_book", "new_ticker", "distribution", "kol_mention"] as const
export type Pattern = (typeof PATTERNS)[number]
export const isPattern = (u: unknown): u is Pattern => typeof u === "string" && (PATTERNS as ReadonlyArray<string>).includes(u)

/** Quality tiers, best first. `curated` (the tape's default) is `high` + `medium`. */
export const QUALITIES = ["high", "medium", "low"] as const
export type Quality = (typeof QUALITIES)[number]
/** Values of the `quality` query parameter: a tier, `curated` (high and medium) or `all`. */
export const QUALITY_FILTERS = ["curated", "all", "high", "medium", "low"] as const
export type QualityFilter = (typeof QUALITY_FILTERS)[number]
export const isQualityFilter = (u: unknown): u is QualityFilter => typeof u === "string" && (QUALITY_FILTERS as ReadonlyArray<string>).includes(u)

/** Confidence 70..100 is high, 40..69 medium, 0..39 low. */
export const QUALITY_HIGH_MIN = 70
export const QUALITY_MEDIUM_MIN = 40

export const qualityOf = (confidence: number): Quality =>
  confidence >= QUALITY_HIGH_MIN ? "high" : confidence >= QUALITY_MEDIUM_MIN ? "medium" : "low"

export const matchesQuality = (filter: QualityFilter, quality: Quality): boolean =>
  filter === "all" ? true : filter === "curated" ? quality !== "low" : filter === quality

/** The market record's venue names (launch spec 2.9): the curve, the Solana pool, the Hood pool. */
export type Venue = "svc-curve" | "dex" | "hood-dex"
export const VENUES: ReadonlyArray<Venue> = ["svc-curve", "dex", "hood-dex"]
export const venueOf = (chain: Chain, venue: "curve" | "pool"): Venue => (venue === "curve" ? "svc-curve" : chain === "solana" ? "dex" : "hood-dex")

/** `in`: money flowing into the token (buys, up moves); `out`: out of it (sells, down moves). */
export type Direction = "in" | "out"

/** Pattern-specific facts; values are JSON scalars or string lists (raw amounts as decimal strings). */
export type SignalDetails = Readonly<Record<string, string | number | boolean | ReadonlyArray<string>>>

export interface Signal {
  readonly id: string
  readonly pattern: Pattern
  readonly chain: Chain
  /** The token (mint on Solana, token contract on Hood). */
  readonly asset: string
  /** The token's symbol when known. */
  readonly symbol: string | null
  readonly direction: Direction
  /** Addresses involved, in the order the detector met them (at most SIGNAL_WALLETS_MAX). */
  readonly wallets: ReadonlyArray<string>
  /** Tracked-wallet ids among `wallets` (src/services/tracking), sorted. */
  readonly wallet_ids: ReadonlyArray<string>
  /** Tracked groups of those wallets, sorted. */
  readonly groups: ReadonlyArray<string>
  /** USD value of the money in the signal (see docs/signals.md per pattern); null: no USD price. */
  readonly size_usd: string | null
  /** Market cap in USD at the signal; null: unknown market or no USD price. */
  readonly mcap_usd: string | null
  /** Whole minutes since the token's creation, at the signal; null when the creation was not seen. */
  readonly age_minutes: number | null
  readonly venue: Venue | null
  /** 0..100, per-pattern formula (docs/signals.md). */
  readonly confidence: number
  readonly quality: Quality
  /** Block time of the triggering input, ISO 8601 UTC, and the same in ms. */
  readonly at: string
  readonly at_ms: number
  /** Chain position of the triggering event (the total-order key), or `m:<ms>:<mention id>` for a mention. */
  readonly position: string
  readonly details: SignalDetails
}

export const SIGNAL_WALLETS_MAX = 25

/** Deterministic id: `sig_` + the first 24 hex digits of sha256 over the pattern, chain, asset and trigger ids. */
export const signalId = (pattern: Pattern, chain: Chain, asset: string, triggerIds: ReadonlyArray<string>): string =>
  `sig_${bytesToHex(sha256(utf8ToBytes([pattern, chain, asset, ...triggerIds].join("\u0000")))).slice(0, 24)}`

// ---------------------------------------------------------------------------------------------
// USD (exact)

/** USD per one WHOLE unit of a quote asset, as `num / 10^scale` (exact decimal). */
export interface UsdPrice {
  readonly num: bigint
  readonly scale: number
}

/** The price input: USD per whole quote unit, undefined (or null) when unknown. Takes the quote asset's mint or contract. */
export type UsdPriceFn = (chain: Chain, quoteMint: string) => UsdPrice | null | undefined

export const MICROS = 1_000_000n

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** Micro-USD of `raw` quote units (floored); null when the price is unknown. */
export const usdMicrosOf = (raw: bigint, quoteDecimals: number, price: UsdPrice | null | undefined): bigint | null => {
  if (price === null || price === undefined) return null
  return (raw * price.num * MICROS) / pow10(quoteDecimals + price.scale)
}

/** Whole USD → micro-USD, for thresholds. */
export const usd = (whole: number): bigint => BigInt(Math.round(whole * 1_000_000))

export const formatMicros = (micros: bigint | null): string | null => {
  if (micros === null) return null
  const sign = micros < 0n ? "-" : ""
  const abs = micros < 0n ? -micros : micros
  const whole = abs / MICROS
  const frac = (abs % MICROS).toString().padStart(6, "0").replace(/0+$/, "")
  return sign + whole.toString() + (frac === "" ? "" : `.${frac}`)
}

/** Market cap in quote raw units from the reserves after a trade: floor(quote·supply / token) (as MarketRecord). */
export const marketCapQuoteRaw = (quoteReserveRaw: bigint, tokenReserveRaw: bigint, supplyRaw: bigint): bigint | null =>
  tokenReserveRaw <= 0n ? null : (quoteReserveRaw * supplyRaw) / tokenReserveRaw

export const ageMinutes = (createdAtMs: number | null, atMs: number): number | null =>
  createdAtMs === null ? null : Math.max(0, Math.floor((atMs - createdAtMs) / 60_000))

export const clampConfidence = (n: number): number => Math.max(0, Math.min(100, Math.round(n)))

const sortedUnique = (xs: Iterable<string>): Array<string> => [...new Set(xs)].sort()

/** What a detector knows when it emits; `build` fills id, quality, time and the derived lists. */
export interface SignalDraft {
  readonly pattern: Pattern
  readonly chain: Chain
  readonly asset: string
  readonly symbol: string | null
  readonly direction: Direction
  readonly wallets: ReadonlyArray<string>
  readonly walletIds: Iterable<string>
  readonly groups: Iterable<string>
  readonly sizeUsdMicros: bigint | null
  readonly mcapUsdMicros: bigint | null
  readonly createdAtMs: number | null
  readonly venue: Venue | null
  readonly confidence: number
  readonly atMs: number
  readonly position: string
  readonly triggerIds: ReadonlyArray<string>
  readonly details: SignalDetails
}

export const buildSignal = (d: SignalDraft): Signal => {
  const confidence = clampConfidence(d.confidence)
  return {
    id: signalId(d.pattern, d.chain, d.asset, d.triggerIds),
    pattern: d.pattern,
    chain: d.chain,
    asset: d.asset,
    symbol: d.symbol,
    direction: d.direction,
    wallets: d.wallets.slice(0, SIGNAL_WALLETS_MAX),
    wallet_ids: sortedUnique(d.walletIds),
    groups: sortedUnique(d.groups),
    size_usd: formatMicros(d.sizeUsdMicros),
    mcap_usd: formatMicros(d.mcapUsdMicros),
    age_minutes: ageMinutes(d.createdAtMs, d.atMs),
    venue: d.venue,
    confidence,
    quality: qualityOf(confidence),
    at: new Date(d.atMs).toISOString(),
    at_ms: d.atMs,
    position: d.position,
    details: d.details
  }
}

/** Age buckets of the `age` filter (spec 4.5): `<1h`, `1-24h`, `>24h`. */
export const ageBucketOf = (ageMinutesValue: number | null): "<1h" | "1-24h" | ">24h" | null =>
  ageMinutesValue === null ? null : ageMinutesValue < 60 ? "<1h" : ageMinutesValue <= 24 * 60 ? "1-24h" : ">24h"
