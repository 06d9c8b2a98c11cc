/**
 * `GET /api/v1/markets/hood/{mint}/mark` (spec 2.9 mark, section 4 rule 15, section 8): a Hood
 * token's USD mark from its deepest Uniswap v3 pool, with the pool's fees applied to the sell and
 * buy sides (`src/services/prices/HoodMark.ts` holds the math and the pool read).
 *
 * Order of checks: the per-client limit (600 a minute, `RATE_LIMITED` 429 with `Retry-After`), the
 * mint's format, the read model (the market must be a Hood curve launched here, graduated or
 * graduating: a trading curve is priced by its quote, a recovery market by its claim), then the
 * per-mint cache, then the chain and the price source.
 *
 * Cache: one entry per mint for `cacheTtlMs` (10 s) from the start of its read, holding the 200
 * body or the `MARKET_NOT_FOUND` of a token without a usable pool; concurrent requests for a mint
 * share one read (single flight). Failures of a dependency (`QUOTE_UNAVAILABLE`: the chain could not
 * be read, or the price source failed) are not cached, so the next request tries again. Bounded:
 * at most `cacheMaxEntries` mints (the least recently stored is dropped first); each read has a
 * deadline (`readTimeoutMs`).
 */
import { Effect, Schema } from "effect"
import { type Address, getAddress, type PublicClient, zeroAddress } from "viem"
import type { MarketIndexShape } from "../../actors/MarketIndex.js"
import type { MarketCore } from "../../actors/market/MarketActor.js"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import { formatUnits } from "../../src/domain/CurveMath.js"
import { QuotePairs } from "../../src/domain/QuotePairs.js"
import { MARK_SCALE, markPrices, readDeepestPool, STANDARD_FEE_TIERS } from "../../src/services/prices/HoodMark.js"
import { type PriceAsset, type PriceSourceShape, type PriceUnavailable } from "../../src/services/prices/PriceSource.js"
import { errorReply, JSON_CONTENT_TYPE, type Reply } from "../Http.js"
import { stringParam } from "../QueryParams.js"
import { RateLimiter } from "../RateLimiter.js"
import { shared, type SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import { ReadCache } from "../ReadCache.js"
import { route, type RouteDef } from "../Router.js"
import { refusal } from "../OpenApi.js"

export const MARK_LIMIT_PER_MIN = 600
export const MARK_CACHE_TTL_MS = 10_000
export const MARK_CACHE_MAX_ENTRIES = 10_000
const MINT_FORMAT = /^0x[0-9a-fA-F]{40}$/

export interface MarkRoutesOptions {
  /** A viem public client of the Hood node. */
  readonly publicClient: PublicClient
  readonly addresses: { readonly uniswapV3Factory: string; readonly weth9: string }
  readonly prices: PriceSourceShape
  readonly index: MarketIndexShape
  /** Wall clock for the cache, the rate limit and `asOf` (injectable for tests). */
  readonly nowMs: () => number
  readonly limitPerMin?: number
  /** The counts other API processes admitted (a database shared by replicas): the per-client limits hold across them. */
  readonly sharedLimits?: SharedWindowCounts | undefined
  readonly cacheTtlMs?: number
  readonly cacheMaxEntries?: number
  /** Fee tiers (pips) whose pools are looked up; default the standard four. */
  readonly feeTiers?: ReadonlyArray<number>
  /** Deadline of one chain-and-price read (default 5 s). */
  readonly readTimeoutMs?: number
}

/** An answer worth caching: a body (200) or the not-found of a token without a usable pool. */
type Outcome = { readonly _tag: "Body"; readonly body: string } | { readonly _tag: "Error"; readonly error: ApiError }

const quoteAssetOf = (core: MarketCore): { readonly id: PriceAsset; readonly poolQuote: "weth" | Address } | undefined => {
  const quote = core.identity.quoteMint.toLowerCase()
  const pair = QuotePairs.find((p) => p.chain === "hood" && p.address.toLowerCase() === quote)
  if (pair === undefined || (pair.id !== "eth" && pair.id !== "usdg")) return undefined
  return { id: pair.id, poolQuote: quote === zeroAddress ? "weth" : getAddress(quote) }
}

const notFound = (reason: string, message: string, extra: Record<string, unknown> = {}): ApiError =>
  apiError("MARKET_NOT_FOUND", message, { extra: { reason, routing: { reason }, ...extra } })

const unavailable = (reason: string, message: string): ApiError =>
  apiError("QUOTE_UNAVAILABLE", message, { retryable: true, headers: { "Retry-After": "2" }, extra: { reason } })

const describe = (e: unknown): string =>
  e instanceof Error ? ((e as { shortMessage?: string }).shortMessage ?? e.message) : String(e)

const Decimal = (description: string) => Schema.String.pipe(Schema.pattern(/^[0-9]+(\.[0-9]{1,18})?$/)).annotations({ description })

const MarkResponse = Schema.Struct({
  success: Schema.Literal(true),
  mark: Schema.Struct({
    chain: Schema.Literal("hood"),
    mint: Schema.String,
    priceUsd: Decimal("Mid price in USD per whole token (deepest pool's slot0 times the quote asset's USD price), rounded down"),
    sellUsd: Decimal("priceUsd less the pool's fees: what a seller keeps per token, rounded down"),
    buyUsd: Decimal("priceUsd grossed up by the pool's fees: what a buyer pays per token, rounded up"),
    feeBps: Schema.Number.annotations({ description: "lpFeeBps + hookFeeBps" }),
    lpFeeBps: Schema.Number.annotations({ description: "The pool's LP fee (fee tier / 100)" }),
    hookFeeBps: Schema.Number.annotations({ description: "A hook's fee; 0 on Uniswap v3" }),
    pool: Schema.String.annotations({ description: "The deepest pool's address" }),
    poolFeeTier: Schema.Int.annotations({ description: "Fee tier in hundredths of a bip (3000 = 0.30 %)" }),
    venue: Schema.Literal("dex-evm-v3", "dex-evm-v4"),
    liquidity: Schema.String.annotations({ description: "The pool's in-range liquidity (depth measure)" }),
    sqrtPriceX96: Schema.String,
    tick: Schema.Int,
    blockNumber: Schema.String.annotations({ description: "Block every pool field was read at" }),
    quoteAsset: Schema.Literal("eth", "usdg"),
    quoteToken: Schema.String.annotations({ description: "The pool's quote token (WETH for eth markets)" }),
    priceQuote: Decimal("Mid price in the quote asset per whole token, rounded down"),
    quoteUsd: Schema.String.annotations({ description: "USD price of one whole quote unit used" }),
    asOf: Schema.String.annotations({ description: "When the price was read (ISO 8601); answers are cached up to 10 s" })
  })
}).annotations({ identifier: "HoodMarkResponse" })

export const markRoutes = (options: MarkRoutesOptions): ReadonlyArray<RouteDef> => {
  const { index, nowMs, prices, publicClient } = options
  const limit = options.limitPerMin ?? MARK_LIMIT_PER_MIN
  const limiter = new RateLimiter({ limit, shared: shared(options.sharedLimits, "mark") })
  const ttlMs = options.cacheTtlMs ?? MARK_CACHE_TTL_MS
  const cache = new ReadCache<Outcome, ApiError>(ttlMs, options.cacheMaxEntries ?? MARK_CACHE_MAX_ENTRIES)
  const factory = getAddress(options.addresses.uniswapV3Factory)
  const weth = getAddress(options.addresses.weth9)
  const feeTiers = options.feeTiers ?? STANDARD_FEE_TIERS
  const readTimeoutMs = options.readTimeoutMs ?? 5_000
  const maxAgeSec = Math.max(1, Math.round(ttlMs / 1000))

  /** The chain and price read for one mint: an Outcome to cache, or a dependency failure. */
  const read = (mint: string, core: MarketCore, quote: NonNullable<ReturnType<typeof quoteAssetOf>>, startedMs: number) =>
    Effect.gen(function* () {
      const token = getAddress(mint)
      const poolQuote = quote.poolQuote === "weth" ? weth : quote.poolQuote
      const pools = yield* Effect.tryPromise({
        try: () => readDeepestPool(publicClient, { factory, token, quote: poolQuote, feeTiers }),
        catch: (e) => unavailable("chain_read_failed", `Could not read the Hood pools: ${describe(e)}`)
      })
      const pool = pools.deepest
      if (pool === null) {
        return {
          _tag: "Error",
          error: notFound("no_pool", `No Uniswap pool with liquidity prices ${mint} against ${quote.id} yet`, { lifecycle: core.lifecycle })
        } satisfies Outcome as Outcome
      }
      const usd = yield* prices
        .usd(quote.id)
        .pipe(Effect.mapError((e: PriceUnavailable) => unavailable(`price_${e.reason}`, `No USD price for ${quote.id}: ${e.message}`)))
      const m = markPrices({
        pool,
        tokenDecimals: core.identity.decimals,
        quoteDecimals: core.identity.quoteDecimals,
        quoteUsdRaw: usd.usdRaw,
        quoteUsdScale: usd.scale,
        hookFeePips: 0
      })
      const mark = {
        chain: "hood",
        mint,
        priceUsd: formatUnits(m.priceUsdRaw, MARK_SCALE),
        sellUsd: formatUnits(m.sellUsdRaw, MARK_SCALE),
        buyUsd: formatUnits(m.buyUsdRaw, MARK_SCALE),
        feeBps: m.feePips / 100,
        lpFeeBps: pool.feePips / 100,
        hookFeeBps: 0,
        pool: pool.address,
        poolFeeTier: pool.feePips,
        venue: core.identity.dexVersion === "v3" ? "dex-evm-v3" : "dex-evm-v4",
        liquidity: pool.liquidity.toString(),
        sqrtPriceX96: pool.sqrtPriceX96.toString(),
        tick: pool.tick,
        blockNumber: pools.blockNumber.toString(),
        quoteAsset: quote.id,
        quoteToken: poolQuote,
        priceQuote: formatUnits(m.priceQuoteRaw, MARK_SCALE),
        quoteUsd: formatUnits(usd.usdRaw, usd.scale),
        asOf: new Date(startedMs).toISOString()
      }
      return { _tag: "Body", body: JSON.stringify({ success: true, mark }) } satisfies Outcome as Outcome
    }).pipe(
      Effect.timeoutFail({ duration: readTimeoutMs, onTimeout: () => unavailable("timeout", `The Hood mark read took longer than ${readTimeoutMs} ms`) }),
      Effect.catchAllDefect((d) => Effect.fail(unavailable("chain_read_failed", `The Hood mark read failed: ${describe(d)}`)))
    )

  const reply = (o: Outcome): Reply =>
    o._tag === "Error"
      ? errorReply(o.error)
      : { status: 200, contentType: JSON_CONTENT_TYPE, headers: [["Cache-Control", `public, max-age=${maxAgeSec}`]], body: o.body }

  const mark = route({
    method: "GET",
    path: "/api/v1/markets/hood/{mint}/mark",
    operationId: "getHoodMark",
    summary: "Hood mark: USD price of a graduated token from its deepest Uniswap pool, fee-adjusted (600 per minute per client; cached 10 s)",
    description:
      "A price for carrying positions, not a trade quote. priceUsd is the deepest pool's mid price times the quote asset's USD price; " +
      "sellUsd applies the pool's fees against a seller (rounded down), buyUsd against a buyer (rounded up). feeBps = lpFeeBps + hookFeeBps.",
    tags: ["markets"],
    auth: "public",
    pathParams: {
      mint: stringParam("Hood token address (0x…)", { required: true, pattern: MINT_FORMAT, message: (name) => `${name} must be a 0x-prefixed 20-byte address` })
    },
    responses: {
      200: { description: "The mark (a price for carrying positions, not a trade quote)", schema: MarkResponse, headers: ["Cache-Control"] },
      400: refusal(["VALIDATION_FAILED"], "mint"),
      404: refusal(["MARKET_NOT_FOUND"], "not a Hood market launched here, or no usable price (curve still trading, recovery, no pool with liquidity); error.reason says which"),
      429: { ...refusal(["RATE_LIMITED"], "with Retry-After"), headers: ["Retry-After"] },
      503: { ...refusal(["QUOTE_UNAVAILABLE"], "retryable: the chain or the USD price source failed, or markets are loading"), headers: ["Retry-After"] }
    },
    // The rate limit counts every request, refused parameters included, so it runs first.
    guard: (req) => {
      const limited = limiter.hit(req.remoteAddress, nowMs())
      return limited.allowed
        ? undefined
        : errorReply(
            apiError("RATE_LIMITED", `More than ${limit} mark reads a minute from this client`, {
              headers: { "Retry-After": String(limited.retryAfterSec) },
              extra: { retryAfter: limited.retryAfterSec }
            })
          )
    },
    handler: (_req, input) => {
      const now = nowMs()
      const mint = input.mint.toLowerCase()
      const core = index.market("hood", mint)
      if (core === undefined) {
        if (index.warming()) return errorReply(unavailable("warming", "Markets are loading; retry shortly"))
        const elsewhere = index.find(mint).filter((c) => c !== "hood")[0]
        return errorReply(
          elsewhere === undefined
            ? notFound("token_unknown", `No Hood market for ${mint}`, { discovery: { indexed: false } })
            : notFound("chain_mismatch", `No Hood market for ${mint}; it trades on ${elsewhere}`, { discovery: { indexed: true, chain: elsewhere } })
        )
      }
      if (core.lifecycle === "trading") return errorReply(notFound("curve_trading", "The curve still trades: read its quote, not a mark", { lifecycle: core.lifecycle }))
      if (core.lifecycle === "recovery") return errorReply(notFound("market_recovery", "The market is in recovery: holders claim from the curve", { lifecycle: core.lifecycle }))
      const quote = quoteAssetOf(core)
      if (quote === undefined) return errorReply(notFound("quote_unpriced", `No USD price source for the quote ${core.identity.quoteMint}`))

      return Effect.map(cache.get(mint, now, read(mint, core, quote, now)), reply)
    }
  })

  return [mark]
}
