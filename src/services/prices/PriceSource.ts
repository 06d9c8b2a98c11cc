/**
 * `PriceSource`: USD prices of the quote assets (SOL, ETH, USDC, USDG and the platform token SVC)
 * as exact decimals — a `bigint` of units of 10^-scale USD per WHOLE unit of the asset, never a
 * float — for reads that value positions in dollars (the Hood mark, spec 2.9; section 8 limits).
 *
 * Two implementations share one shape:
 * - `fixedPriceSource` / `layerLocalnet`: configured prices (the localnets have no market to
 *   price against). Defaults in `LOCALNET_USD_PRICES_DEFAULT`; `LOCALNET_USD_PRICES` overrides them
 *   as `asset=decimal` pairs (`eth=3000,usdg=1`); an asset given an empty value (`usdg=`) is left
 *   unpriced and answers `PriceUnavailable` with reason `not_configured`.
 * - `providerPriceSource`: adapts any real feed (an oracle, an exchange API) given as a function
 *   that returns a decimal string and the time it was observed; this module validates the answer
 *   (a positive decimal of at most `MAX_SCALE` places, not older than `maxAgeMs`) so a feed that
 *   fails, answers garbage or goes stale is a typed `PriceUnavailable` (`provider_failed`,
 *   `invalid`, `stale`), which the routes map to `QUOTE_UNAVAILABLE` (503, retryable).
 *
 * Invariants: a successful price is > 0 with 0 ≤ scale ≤ MAX_SCALE; `asOfMs` is when the price was
 * observed (the provider's time, or the clock for fixed prices).
 */
import { Clock, Config, ConfigError, Context, Effect, Either, Layer, Schema } from "effect"

export const PriceAssets = ["sol", "eth", "usdc", "usdg", "svc"] as const
export type PriceAsset = (typeof PriceAssets)[number]

export const isPriceAsset = (s: unknown): s is PriceAsset => typeof s === "string" && (PriceAssets as ReadonlyArray<string>).includes(s)

/** Most fractional digits a price may carry (a tighter price is refused, never rounded). */
export const MAX_SCALE = 18

export interface UsdPrice {
  readonly asset: PriceAsset
  /** USD per whole unit of the asset = usdRaw / 10^scale. */
  readonly usdRaw: bigint
  readonly scale: number
  readonly asOfMs: number
  /** Which implementation answered (`localnet-fixed`, or the provider's name). */
  readonly source: string
}

export class PriceUnavailable extends Schema.TaggedError<PriceUnavailable>()("PriceUnavailable", {
  asset: Schema.String,
  reason: Schema.Literal("not_configured", "provider_failed", "invalid", "stale"),
  message: Schema.String
}) {}

export interface PriceSourceShape {
  readonly usd: (asset: PriceAsset) => Effect.Effect<UsdPrice, PriceUnavailable>
}

export class PriceSource extends Context.Tag("curvestream/PriceSource")<PriceSource, PriceSourceShape>() {}

/** A positive decimal string (`3000`, `0.0125`) → `{raw, scale}`; undefined when malformed or too precise. */
export const parseUsdDecimal = (text: string): { readonly raw: bigint; readonly scale: number } | undefined => {
  const m = /^(\d{1,30})(?:\.(\d{1,64}))?$/.exec(text.trim())
  if (m === null) return undefined
  const fraction = (m[2] ?? "").replace(/0+$/, "")
  if (fraction.length > MAX_SCALE) return undefined
  const raw = BigInt(m[1]! + fraction)
  return raw > 0n ? { raw, scale: fraction.length } : undefined
}

/** The localnet's prices unless configured otherwise (round, plausible numbers; documented in the report). */
export const LOCALNET_USD_PRICES_DEFAULT: Readonly<Record<PriceAsset, string>> = {
  sol: "150",
  eth: "3000",
  usdc: "1",
  usdg: "1",
  svc: "0.01"
}

export type FixedPrices = Readonly<Partial<Record<PriceAsset, string>>>

/** `eth=3000,usdg=1` → a map; refuses unknown assets and malformed prices (an empty value unprices the asset). */
export const parseFixedPrices = (text: string): FixedPrices | string => {
  const out: Partial<Record<PriceAsset, string>> = {}
  for (const part of text.split(",")) {
    if (part.trim() === "") continue
    const eq = part.indexOf("=")
    const asset = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase()
    const value = eq === -1 ? "" : part.slice(eq + 1).trim()
    if (!isPriceAsset(asset)) return `unknown asset '${asset}' (expected ${PriceAssets.join(", ")})`
    if (value !== "" && parseUsdDecimal(value) === undefined) return `price of ${asset} must be a positive decimal with at most ${MAX_SCALE} places`
    out[asset] = value
  }
  return out
}

/** Configured prices. `prices[asset]` undefined or "" → `not_configured`. Time from the `Clock`. */
export const fixedPriceSource = (prices: FixedPrices): PriceSourceShape => {
  const parsed = new Map<PriceAsset, { raw: bigint; scale: number }>()
  for (const asset of PriceAssets) {
    const text = prices[asset]
    if (text === undefined || text === "") continue
    const p = parseUsdDecimal(text)
    if (p === undefined) throw new RangeError(`invalid fixed price for ${asset}: '${text}'`)
    parsed.set(asset, p)
  }
  return {
    usd: (asset) => {
      const p = parsed.get(asset)
      return p === undefined
        ? Effect.fail(new PriceUnavailable({ asset, reason: "not_configured", message: `No USD price is configured for ${asset}` }))
        : Effect.map(Clock.currentTimeMillis, (asOfMs) => ({ asset, usdRaw: p.raw, scale: p.scale, asOfMs, source: "localnet-fixed" }))
    }
  }
}

export interface ProviderQuote {
  /** USD per whole unit, as a decimal string. */
  readonly usd: string
  readonly observedAtMs: number
}

/**
 * A real feed behind the same shape: `fetch` answers one asset's price (or rejects). Validation
 * and staleness are checked here, so every provider fails the same typed way.
 */
export const providerPriceSource = (options: {
  readonly name: string
  readonly fetch: (asset: PriceAsset) => Promise<ProviderQuote>
  /** A quote observed longer ago than this is `stale` (default 60 s). */
  readonly maxAgeMs?: number
  /** Deadline of one fetch (default 2 s). */
  readonly timeoutMs?: number
}): PriceSourceShape => {
  const maxAgeMs = options.maxAgeMs ?? 60_000
  const timeoutMs = options.timeoutMs ?? 2_000
  return {
    usd: (asset) =>
      Effect.tryPromise({
        try: () => options.fetch(asset),
        catch: (e) => new PriceUnavailable({ asset, reason: "provider_failed", message: `${options.name}: ${e instanceof Error ? e.message : String(e)}` })
      }).pipe(
        Effect.timeoutFail({
          duration: timeoutMs,
          onTimeout: () => new PriceUnavailable({ asset, reason: "provider_failed", message: `${options.name}: no answer within ${timeoutMs} ms` })
        }),
        Effect.zip(Clock.currentTimeMillis),
        Effect.flatMap(([q, nowMs]) => {
          const p = parseUsdDecimal(q.usd)
          if (p === undefined) return Effect.fail(new PriceUnavailable({ asset, reason: "invalid", message: `${options.name}: unusable price '${q.usd}'` }))
          const ageMs = nowMs - q.observedAtMs
          if (ageMs > maxAgeMs) return Effect.fail(new PriceUnavailable({ asset, reason: "stale", message: `${options.name}: price is ${ageMs} ms old` }))
          return Effect.succeed({ asset, usdRaw: p.raw, scale: p.scale, asOfMs: q.observedAtMs, source: options.name })
        })
      )
  }
}

/** `LOCALNET_USD_PRICES`: overrides of the localnet defaults (see the module comment). */
export const localnetPricesConfig: Config.Config<FixedPrices> = Config.string("LOCALNET_USD_PRICES").pipe(
  Config.withDefault(""),
  Config.mapOrFail((text) => {
    const parsed = parseFixedPrices(text)
    return typeof parsed === "string"
      ? Either.left(ConfigError.InvalidData(["LOCALNET_USD_PRICES"], parsed))
      : Either.right({ ...LOCALNET_USD_PRICES_DEFAULT, ...parsed })
  })
)

/** Fixed prices for tests (time from the `Clock`). */
export const layerTest = (prices: FixedPrices): Layer.Layer<PriceSource> => Layer.succeed(PriceSource, fixedPriceSource(prices))

/** The localnet's price source: defaults overridden by `LOCALNET_USD_PRICES`. */
export const layerLocalnet: Layer.Layer<PriceSource, ConfigError.ConfigError> = Layer.effect(
  PriceSource,
  Effect.map(localnetPricesConfig, (prices) => fixedPriceSource(prices))
)
