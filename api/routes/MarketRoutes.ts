/**
 * Public market reads (spec 2.9, section 4 rules 12–14): the market record, the curve quote,
 * launch verification and the feed buckets. Every handler is synchronous over the in-memory
 * `MarketIndex`: no Effect, no I/O, no allocation beyond the reply on the record path (the
 * record's JSON is serialized once per state version by the index).
 *
 * The quote prices through `CurveMath` on the market's latest reserves, the same functions the
 * chain program executes, so a quote equals the fill of a trade landing on that state.
 */
import type { LaunchVisibilityRead } from "../../src/services/launch/LaunchVisibility.js"
import type { AgentLaunchesRead } from "../../actors/AgentLaunches.js"
import { Schema } from "effect"
import type { ChainId } from "../../ingest/ChainEvent.js"
import type { MarketIndexShape } from "../../actors/MarketIndex.js"
import { type MarketCore } from "../../actors/market/MarketActor.js"
import { AGENT_QUOTE_ENDPOINT, curveParamsOf, type FeedRow as FeedRowValue } from "../../actors/market/MarketRecord.js"
import { BUCKETS as feedBuckets, type BucketName, isBucketName } from "../../actors/feeds/FeedBuckets.js"
import { apiError, type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import { Chains, graduationVenueOf } from "../../src/domain/Chain.js"
import { minAmountOut, quoteBuy, quoteSell } from "../../src/domain/CurveMath.js"
import { errorReply, type Header, JSON_CONTENT_TYPE, json, type Reply } from "../Http.js"
import { RateLimiter } from "../RateLimiter.js"
import { shared, type SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import { answer, refusal } from "../OpenApi.js"
import { route, type RouteDef } from "../Router.js"
import { type FeedPlan, FeedPlanParams, matches, project, sortRows } from "../FeedQuery.js"
import { ADDRESS_FORMAT, chainParam, enumParam, intParam, normalizeAddress as normalizeMint, param, parseAddress, stringParam } from "../QueryParams.js"
import { MarketLifecycle, MarketRecordDoc, MarketStatistics } from "./MarketRecordDoc.js"

export const DEFAULT_SLIPPAGE_BPS = 100n
export const QUOTE_LIMIT_PER_MIN = 120
/** Solana amounts are u64 on chain; Hood amounts uint256. */
export const MAX_AMOUNT: Record<ChainId, bigint> = { solana: 2n ** 64n - 1n, hood: 2n ** 256n - 1n }

const MARKET_CACHE = "public, max-age=5"
const VERIFY_CACHE = "public, max-age=60"

export interface MarketRoutesOptions {
  readonly index: MarketIndexShape
  /** Wall clock for staleness and rate limits (injectable for tests). */
  readonly nowMs: () => number
  readonly curveProgram: string
  /**
   * The Hood curve factory (verify `provenance.factory`): the Hood ingester takes a curve only from
   * this factory's `CurveCreated` (an `isCurve` check for an unseen one), so every Hood market
   * served was created by it. Absent: null.
   */
  readonly hoodFactory?: string
  /** Which markets were launched through an agent key (verify's `viaAgentKey`); none when absent. */
  readonly agentLaunches?: AgentLaunchesRead
  /** Launches recorded with a visibility other than `production` (verify and the market record read them). */
  readonly launchVisibility?: LaunchVisibilityRead
  /** The finalstretch read is `stale` when the chain clock is older than this. */
  readonly staleAfterMs?: number
  /** Quotes per minute per client (spec: 120; benchmarks raise it to measure the route, not the refusal). */
  readonly quoteLimitPerMin?: number
  /** The counts other API processes admitted (a database shared by replicas): the per-client limits hold across them. */
  readonly sharedLimits?: SharedWindowCounts | undefined
}

/** `{chain}/{mint}`: the mint's format depends on the chain, so the handler checks it (`parseAddress`). */
export const marketPath = {
  chain: chainParam("solana or hood", { required: true }),
  mint: stringParam("Token mint (Solana, base58) or token address (Hood, 0x…)", { required: true })
}

const AMOUNT_FORMAT = /^\d{1,80}$/

export const quoteQuery = {
  side: enumParam("buy or sell", ["buy", "sell"], { required: true, message: () => "side must be buy or sell" }),
  amountIn: param({
    description: "Raw units: quote for a buy, tokens for a sell; at least 1, at most 2^64-1 on Solana (u64) and 2^256-1 on Hood (uint256)",
    required: true,
    schema: { type: "string", pattern: AMOUNT_FORMAT.source },
    decode: (raw, name) => {
      if (raw === undefined || !AMOUNT_FORMAT.test(raw)) return validationFailed(name, "amountIn must be a whole number of raw units")
      const amount = BigInt(raw)
      if (amount === 0n) return validationFailed(name, "amountIn must be positive")
      return amount > MAX_AMOUNT.hood ? validationFailed(name, "amountIn exceeds the chain's amount range") : amount
    }
  }),
  slippageBps: intParam(`0 to 10000; default ${DEFAULT_SLIPPAGE_BPS}`, { min: 0, max: 10_000, default: Number(DEFAULT_SLIPPAGE_BPS), emptyIsValue: true })
}

const feedQuery = {
  bucket: param<BucketName>({
    description: "new, graduated, onfire or finalstretch",
    required: true,
    schema: { type: "string", enum: [...feedBuckets] },
    decode: (raw, name) =>
      raw === undefined
        ? validationFailed(name, "bucket is required")
        : isBucketName(raw)
          ? raw
          : validationFailed(name, raw === "bluechip" ? "bucket bluechip is deprecated" : `Unknown bucket '${raw}'; expected new, graduated, onfire or finalstretch`)
  }),
  chain: chainParam("solana or hood; both when omitted", { emptyIsValue: true }),
  discovery: enumParam("Accepted for compatibility (`paper`); does not change the rows", ["paper"], {
    emptyIsValue: true,
    message: () => "discovery must be paper"
  }),
  ...FeedPlanParams,
  since_seq: intParam("The cursor of an earlier read: only what changed since (ignored for finalstretch, which is always whole)", {
    min: 0,
    max: 999_999_999_999_999,
    emptyIsValue: true,
    message: "since_seq must be a non-negative integer"
  })
}

const notFound = (index: MarketIndexShape, chain: ChainId, mint: string): ApiError => {
  const elsewhere = index.find(mint).filter((c) => c !== chain)
  const other = elsewhere[0]
  return other !== undefined
    ? apiError("MARKET_NOT_FOUND", `No ${chain} market for ${mint}; it trades on ${other}`, {
        extra: { routing: { reason: "chain_mismatch" }, discovery: { indexed: true, chain: other } }
      })
    : apiError("MARKET_NOT_FOUND", `No market for ${mint} on ${chain}`, {
        extra: { routing: { reason: "token_unknown", quoteRoute: AGENT_QUOTE_ENDPOINT }, discovery: { indexed: false } }
      })
}

const warmingError = (message: string) =>
  apiError("FEED_UNAVAILABLE", message, { headers: { "Retry-After": "2" }, retryable: true })

/** Where a market that the curve cannot serve keeps trading (rule 12). */
const tradingContinues = (core: MarketCore): Record<string, unknown> => {
  switch (core.lifecycle) {
    case "migrated":
      return {
        reason: "curve_migrated",
        tradingContinues: {
          venue: graduationVenueOf(core.chain, core.identity.dexVersion ?? undefined),
          pool: core.chain === "hood" ? null : (core.pool?.address ?? null),
          quoteRoute: AGENT_QUOTE_ENDPOINT
        }
      }
    case "completed":
      return {
        reason: core.chain === "solana" ? "solana_graduating" : "hood_graduating",
        tradingContinues: { venue: graduationVenueOf(core.chain, core.identity.dexVersion ?? undefined), pool: null, afterMigration: true }
      }
    case "recovery":
      return { reason: "market_recovery", tradingContinues: null }
    case "trading":
      return { reason: "curve_refused" }
  }
}

const QuoteResponse = Schema.Struct({
  success: Schema.Literal(true),
  chain: Schema.Literal(...Chains),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  amountIn: Schema.String,
  slippageBps: Schema.Int,
  crossingModel: Schema.Literal("full-fill-surplus", "capped-refund"),
  quote: Schema.Struct({
    amountOut: Schema.String,
    fee: Schema.String,
    minAmountOut: Schema.String,
    crossesGraduation: Schema.optional(Schema.Boolean),
    refund: Schema.optional(Schema.String),
    quoteConsumed: Schema.optional(Schema.String)
  })
}).annotations({ identifier: "QuoteResponse" })

const MarketResponse = Schema.Struct({
  success: Schema.Literal(true),
  market: MarketRecordDoc
}).annotations({ identifier: "MarketResponse" })

/** Spec 2.9 feed row, every member `feedRow` (actors/market/MarketRecord.ts) writes (the `satisfies` keeps the two in step). */
const feedRowFields = {
  chain: Schema.Literal(...Chains),
  address: Schema.String,
  name: Schema.String,
  symbol: Schema.String,
  image: Schema.NullOr(Schema.String),
  lifecycle: MarketLifecycle,
  progressBps: Schema.Int,
  createdAt: Schema.String,
  migratedAt: Schema.NullOr(Schema.String),
  isAgent: Schema.Boolean,
  ...MarketStatistics
} satisfies { readonly [K in keyof FeedRowValue]: Schema.Schema.Any }

const FeedRow = Schema.Struct(feedRowFields).annotations({ identifier: "FeedRow", description: "A feed row (spec 2.9), as a read without `fields` answers it" })

const { chain: _chain, address: _address, ...projectable } = feedRowFields
/** A row projected by `fields`: `chain` and `address`, then each named field (`statsAsOf`, not a row member, reads null). */
const FeedRowProjected = Schema.Struct({
  chain: feedRowFields.chain,
  address: feedRowFields.address,
  ...(Object.fromEntries(Object.entries(projectable).map(([k, v]) => [k, Schema.optional(v)])) as { [K in keyof typeof projectable]: Schema.optional<(typeof projectable)[K]> }),
  statsAsOf: Schema.optional(Schema.Null)
}).annotations({ identifier: "FeedRowProjected", description: "A feed row projected by `fields`: chain, address and the named fields" })

const FeedResponse = Schema.Struct({
  success: Schema.Literal(true),
  bucket: Schema.String,
  tokens: Schema.Array(Schema.Union(FeedRow, FeedRowProjected)),
  matched: Schema.Int,
  scanned: Schema.Int,
  cursor: Schema.Int,
  warming: Schema.Boolean,
  reset: Schema.Boolean,
  removed: Schema.Array(Schema.String),
  organicScoreGuidance: Schema.optional(Schema.String),
  asOf: Schema.optional(Schema.NullOr(Schema.String)),
  stale: Schema.optional(Schema.Boolean),
  feed: Schema.optional(Schema.String),
  exact: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "FeedResponse" })

/** `GET /api/v1/verify/...` (spec 2.9): a launch of this service with its attribution (Solana) or provenance (Hood), or `{candleLaunched: false}`. */
const Verification = Schema.Union(
  Schema.Struct({ success: Schema.Literal(true), candleLaunched: Schema.Literal(false) }),
  Schema.Struct({
    success: Schema.Literal(true),
    candleLaunched: Schema.Literal(true),
    chain: Schema.Literal("solana"),
    mint: Schema.String,
    tier: Schema.NullOr(Schema.Literal("open", "exclusive")),
    quoteMint: Schema.String,
    graduated: Schema.Boolean,
    pool: Schema.NullOr(Schema.String),
    createdAt: Schema.String.annotations({ description: "ISO 8601" }),
    creator: Schema.String,
    viaAgentKey: Schema.Boolean,
    attribution: Schema.Struct({ program: Schema.String, signer: Schema.String })
  }),
  Schema.Struct({
    success: Schema.Literal(true),
    candleLaunched: Schema.Literal(true),
    chain: Schema.Literal("hood"),
    mint: Schema.String,
    tier: Schema.NullOr(Schema.Literal("open", "exclusive")),
    quoteMint: Schema.String,
    graduated: Schema.Boolean,
    pool: Schema.Null,
    createdAt: Schema.String.annotations({ description: "ISO 8601" }),
    creator: Schema.String,
    viaAgentKey: Schema.Boolean,
    provenance: Schema.Struct({
      curve: Schema.String,
      factory: Schema.NullOr(Schema.String),
      configHash: Schema.NullOr(Schema.String),
      dexVersion: Schema.NullOr(Schema.Literal("v3", "v4"))
    })
  })
).annotations({ identifier: "Verification" })

const FEED_GRAMMAR = [
  "where := cond (',' cond)*, cond := field op value, op one of >= <= != = > <; all conditions must hold.",
  "sort := ['-'] field ('-' = descending). fields := field (',' field)* (chain and address always included).",
  "limit 1..200 (default 50). Fields: chain, address, name, symbol, image, lifecycle, progressBps, createdAt,",
  "migratedAt, isAgent, price, marketCap, volume1h, trades1h, volume24h, trades24h, buys24h, sells24h, volumeTotal,",
  "tradesTotal, lastTradeAt, statsAsOf. Decimal fields compare exactly; null never matches.",
  "since_seq: rows changed since that cursor (reset: true with the whole list when it is too old)."
].join(" ")

/**
 * The market record of a launch recorded as `test`, `local` or `hidden`: the chain is public, so
 * the market is served, but not as this service's launch (`candleLaunched: false`, no
 * `launchpad`), as verify answers it. Rare (only such launches), so the cached JSON is rewritten.
 */
const notLaunchedHere = (json: string): string => {
  const record = JSON.parse(json) as Record<string, unknown>
  return JSON.stringify({ ...record, candleLaunched: false, launchpad: null })
}

export const marketRoutes = (options: MarketRoutesOptions): ReadonlyArray<RouteDef> => {
  const { index, nowMs } = options
  const quoteLimit = options.quoteLimitPerMin ?? QUOTE_LIMIT_PER_MIN
  const quoteLimiter = new RateLimiter({ limit: quoteLimit, shared: shared(options.sharedLimits, "market-quote") })
  const staleAfterMs = options.staleAfterMs ?? 60_000

  const market = route({
    method: "GET",
    path: "/api/v1/markets/{chain}/{mint}",
    operationId: "getMarket",
    summary: "Market record: lifecycle, trade flags, venue, fees, migration block and statistics",
    tags: ["markets"],
    auth: "public",
    pathParams: marketPath,
    responses: {
      200: { description: "The market", schema: MarketResponse, headers: ["Cache-Control"] },
      400: refusal(["VALIDATION_FAILED"], "invalid chain or mint"),
      404: refusal(["MARKET_NOT_FOUND"], "with error.routing.reason and error.discovery"),
      503: refusal(["FEED_UNAVAILABLE"], "while the engine warms up")
    },
    handler: (_req, { chain, mint: raw }) => {
      const mint = parseAddress(chain, raw, "mint")
      if (typeof mint !== "string") return errorReply(mint)
      const record = index.get(chain, mint)
      if (record === undefined) {
        return errorReply(index.warming() ? warmingError("Markets are loading; retry shortly") : notFound(index, chain, mint))
      }
      return {
        status: 200,
        contentType: JSON_CONTENT_TYPE,
        headers: [["Cache-Control", MARKET_CACHE]],
        body: `{"success":true,"market":${options.launchVisibility?.restricted(chain, mint) === undefined ? record.json : notLaunchedHere(record.json)}}`
      }
    }
  })

  const quote = route({
    method: "GET",
    path: "/api/v1/markets/{chain}/{mint}/quote",
    operationId: "getQuote",
    summary: "Curve quote with the program's integer math (120 requests per minute per client)",
    tags: ["markets"],
    auth: "public",
    pathParams: marketPath,
    query: quoteQuery,
    responses: {
      200: { description: "The quote", schema: QuoteResponse, headers: ["Cache-Control"] },
      400: refusal(["VALIDATION_FAILED"], "naming the field"),
      404: refusal(["MARKET_NOT_FOUND"], "not a curve launched here; use the agent quote route"),
      409: refusal(["MARKET_NOT_TRADABLE"], "naming where trading continues"),
      429: { ...refusal(["RATE_LIMITED"], "with Retry-After"), headers: ["Retry-After"] },
      503: refusal(["QUOTE_UNAVAILABLE"], "while the engine warms up")
    },
    // The rate limit counts every request, refused parameters included, so it runs first.
    guard: (req) => {
      const limited = quoteLimiter.hit(req.remoteAddress, nowMs())
      return limited.allowed
        ? undefined
        : errorReply(
            apiError("RATE_LIMITED", `More than ${quoteLimit} quotes a minute from this client`, {
              headers: { "Retry-After": String(limited.retryAfterSec) },
              extra: { retryAfter: limited.retryAfterSec }
            })
          )
    },
    handler: (_req, { amountIn, chain, mint: rawMint, side, slippageBps }) => {
      const mint = parseAddress(chain, rawMint, "mint")
      if (typeof mint !== "string") return errorReply(mint)
      // The declaration bounds amountIn by the wider chain (Hood's uint256); Solana's is u64.
      if (amountIn > MAX_AMOUNT[chain]) return errorReply(validationFailed("amountIn", "amountIn exceeds the chain's amount range"))
      const core = index.market(chain, mint)
      if (core === undefined) {
        return errorReply(index.warming() ? apiError("QUOTE_UNAVAILABLE", "Markets are loading; retry shortly", { headers: { "Retry-After": "2" } }) : notFound(index, chain, mint))
      }
      if (core.lifecycle !== "trading") {
        return errorReply(apiError("MARKET_NOT_TRADABLE", `The curve no longer trades (${core.lifecycle})`, { extra: tradingContinues(core) }))
      }
      const params = curveParamsOf(core)
      const result = side === "buy" ? quoteBuy(params, core.curveState, amountIn) : quoteSell(params, core.curveState, amountIn)
      if (result._tag === "Refused") {
        return result.reason === "curve_complete"
          ? errorReply(apiError("MARKET_NOT_TRADABLE", "The curve is complete", { extra: tradingContinues(core) }))
          : errorReply(validationFailed("amountIn", result.reason === "zero_amount" ? "amountIn buys nothing after the fee" : "amountIn exceeds the tokens the curve has sold"))
      }
      const body: Record<string, unknown> = {
        amountOut: result.amountOut.toString(),
        fee: result.fee.toString(),
        minAmountOut: minAmountOut(result.amountOut, BigInt(slippageBps)).toString()
      }
      if ("crossesGraduation" in result) {
        body.crossesGraduation = result.crossesGraduation
        if (result.refund > 0n) {
          body.refund = result.refund.toString()
          body.quoteConsumed = result.quoteConsumed.toString()
        }
      }
      return json(
        200,
        {
          success: true,
          chain,
          mint,
          side,
          amountIn: amountIn.toString(),
          slippageBps,
          crossingModel: params.crossingModel,
          quote: body
        },
        [["Cache-Control", MARKET_CACHE]]
      )
    }
  })

  const verify = route({
    method: "GET",
    path: "/api/v1/verify/{chain}/{mint}",
    operationId: "verifyLaunch",
    summary: "Whether this service launched the mint, with attribution (Solana) or provenance (Hood)",
    tags: ["markets"],
    auth: "public",
    pathParams: marketPath,
    responses: {
      200: answer("Verification; unknown mints and launches recorded as test, local or hidden answer {candleLaunched: false}", Verification, ["Cache-Control"]),
      400: refusal(["VALIDATION_FAILED"], "invalid chain")
    },
    handler: (_req, { chain, mint: raw }) => {
      const core = ADDRESS_FORMAT[chain].test(raw) ? index.market(chain, normalizeMint(chain, raw)) : undefined
      const headers: ReadonlyArray<Header> = [["Cache-Control", VERIFY_CACHE]]
      // Spec 2.9: "Unknown mint or non-production visibility: 200 with {candleLaunched: false}".
      if (core === undefined || options.launchVisibility?.restricted(chain, core.mint) !== undefined) return json(200, { success: true, candleLaunched: false }, headers)
      const id = core.identity
      return json(
        200,
        {
          success: true,
          candleLaunched: true,
          chain,
          mint: core.mint,
          tier: id.mode === "open" || id.mode === "exclusive" ? id.mode : null,
          quoteMint: id.quoteMint,
          graduated: core.lifecycle === "migrated",
          pool: chain === "hood" ? null : (core.pool?.address ?? null),
          createdAt: new Date(id.createdAtMs).toISOString(),
          creator: id.creator,
          viaAgentKey: options.agentLaunches?.has(chain, core.mint) ?? false,
          ...(chain === "solana"
            ? { attribution: { program: options.curveProgram, signer: id.creator } }
            : { provenance: { curve: id.curveAddress, factory: options.hoodFactory ?? null, configHash: id.configHash, dexVersion: id.dexVersion } })
        },
        headers
      )
    }
  })

  const feed = route({
    method: "GET",
    path: "/api/v1/markets/feed",
    operationId: "getFeed",
    summary: "Feed buckets: new, graduated, onfire, finalstretch",
    description: FEED_GRAMMAR,
    tags: ["markets"],
    auth: "public",
    query: feedQuery,
    responses: {
      200: { description: "Bucket rows", schema: FeedResponse },
      400: refusal(["VALIDATION_FAILED"], "unknown bucket or chain, or a malformed query, naming the field"),
      503: { ...refusal(["FEED_UNAVAILABLE"], "with Retry-After while the engine starts"), headers: ["Retry-After"] }
    },
    handler: (_req, input) => {
      const { bucket, chain } = input
      const sinceSeq = bucket === "finalstretch" ? undefined : input.since_seq
      if (index.warming()) return errorReply(warmingError("The feed is loading; retry shortly"))
      const read = index.feed(bucket, chain, sinceSeq)
      return feedReply(read, input, bucket === "finalstretch", nowMs(), staleAfterMs)
    }
  })

  return [feed, market, quote, verify]
}

const feedReply = (
  read: ReturnType<MarketIndexShape["feed"]>,
  plan: FeedPlan,
  whole: boolean,
  nowMs: number,
  staleAfterMs: number
): Reply => {
  const scanned = read.tokens.length
  const matching = read.tokens.filter((row) => matches(plan, row))
  const removed = [...read.removed]
  // In a delta, a changed row that no longer matches the filter leaves the reader's view.
  if (!read.reset) for (const row of read.tokens) if (!matches(plan, row)) removed.push(row.address)
  const rows = sortRows(plan, matching).slice(0, plan.limit).map((row) => project(plan, row))
  const asOfMs = read.asOf === null ? null : Date.parse(read.asOf)
  return json(200, {
    success: true,
    bucket: read.bucket,
    tokens: rows,
    matched: matching.length,
    scanned,
    cursor: read.seq,
    warming: false,
    reset: whole ? true : read.reset,
    removed: whole ? [] : removed,
    organicScoreGuidance: "Organic scores are not computed by this server; rows are exact on-chain statistics.",
    ...(whole ? { asOf: read.asOf, stale: asOfMs === null || nowMs - asOfMs > staleAfterMs, feed: "live", exact: true } : {})
  })
}
