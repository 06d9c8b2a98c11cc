/**
 * `GET /api/v1/trade/agent/quote` (issue 28; launch spec 2.9 `trade`, section 4 rules 12-13;
 * document 2, 2.2): the trade rail's quote, on the venue the market trades on now (the curve, the
 * Solana pool after migration, the Hood Uniswap v3 pool after graduation), with the fee breakdown
 * for the caller's plan. Public: without a key the Free plan's fee; with a valid `x-api-key` the
 * key's account plan and referral discount (an invalid key is `UNAUTHORIZED`, never a silent Free).
 *
 * Hot path: without a key, on the curve and the Solana pool, the handler is synchronous over the
 * in-memory `MarketIndex` (no Effect), as the market quote. A key is one `AgentAuth.authenticate`
 * (its LRU; the key's own per-minute limit); the Hood pool quote reads the pool at one block.
 * Keyless requests share the market quote's per-client limit (120 a minute).
 *
 * Refusals (the spec's codes; the service decides nothing of HTTP): VALIDATION_FAILED naming the
 * field; MARKET_NOT_FOUND for a mint not launched here (`routing.reason` `external_token`: this
 * server quotes only its own curves and their graduated pools) or on the other chain
 * (`chain_mismatch`, `discovery.chain`); MARKET_NOT_TRADABLE (409) while a curve graduates or in
 * recovery, with the market record's `trade.reason` and where trading continues; QUOTE_UNAVAILABLE
 * (503, retryable) while the index warms or the Hood pool cannot be read; RATE_LIMITED.
 */
import { Effect, Schema } from "effect"
import { type Address, getAddress } from "viem"
import type { MarketIndexShape } from "../../actors/MarketIndex.js"
import type { MarketCore } from "../../actors/market/MarketActor.js"
import type { ChainId } from "../../ingest/ChainEvent.js"
import { apiError, type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import { Chains, crossingModelOf, graduationVenueOf } from "../../src/domain/Chain.js"
import type { Plan } from "../../src/domain/Plans.js"
import { quoteHoodPool, type HoodPoolSource } from "../../src/services/trade/HoodPoolQuote.js"
import { type CreatorShares, marketVenueOf } from "../../src/services/trade/MarketVenue.js"
import { minOutOf, type PlatformCharge, platformFeeOf, quoteVenue, type Side, type VenueQuote } from "../../src/services/trade/VenueQuote.js"
import { AGENT_QUOTE_ENDPOINT } from "../../actors/market/MarketRecord.js"
import { API_KEY_HEADER, AGENT_AUTH_HEADERS, type AgentAuth } from "../auth/AgentKeyAuth.js"
import { errorReply, json, type Reply, type Request } from "../Http.js"
import { RateLimiter } from "../RateLimiter.js"
import { shared, type SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import { route, type RouteDef } from "../Router.js"
import { parseAddress } from "../QueryParams.js"
import { MAX_AMOUNT, marketPath, QUOTE_LIMIT_PER_MIN, quoteQuery } from "./MarketRoutes.js"
import { refusal } from "../OpenApi.js"

/** How long a quote is offered (`expiresAt`): well inside a Solana blockhash's life (60-90 s). */
export const AGENT_QUOTE_TTL_MS = 30_000

export interface TradeQuoteRoutesOptions {
  readonly index: MarketIndexShape
  readonly nowMs: () => number
  readonly agentAuth: AgentAuth
  /** The live plan table's Free plan: the fee of a request without a key. */
  readonly freePlan: Plan
  /** Reads a Hood graduated pool at one block; null without a Hood RPC (the pool then answers QUOTE_UNAVAILABLE). */
  readonly hoodPools: HoodPoolSource | null
  readonly creatorShares: CreatorShares
  /** Keyless quotes per minute per client (spec: the market quote's 120). */
  readonly quoteLimitPerMin?: number
  /** The counts other API processes admitted (a database shared by replicas): the per-client limits hold across them. */
  readonly sharedLimits?: SharedWindowCounts | undefined
}

const { chain: chainParam, mint: mintParam } = marketPath

const Amount = Schema.String.annotations({ description: "Raw units (decimal string)" })

const FeeLine = Schema.Struct({ feeRaw: Amount, asset: Schema.Literal("quote", "token") })

export const AgentQuoteResponse = Schema.Struct({
  success: Schema.Literal(true),
  chain: Schema.Literal(...Chains),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  amountIn: Amount,
  slippageBps: Schema.Int,
  venue: Schema.Literal("svc-curve", "dex", "hood-dex").annotations({ description: "Where the trade executes now (spec 2.9 venue)" }),
  graduationVenue: Schema.String,
  crossingModel: Schema.Literal("full-fill-surplus", "capped-refund"),
  quoteMint: Schema.String,
  amountOut: Amount.annotations({ description: "What the venue pays out (tokens on a buy, quote on a sell), net of the venue fee" }),
  minAmountOut: Amount.annotations({ description: "amountOut less slippageBps, rounded down: the chain-enforced minimum (program minimum out, Uniswap amountOutMinimum)" }),
  amountConsumed: Amount.annotations({ description: "What the venue takes of amountIn (less than amountIn only on a Hood crossing buy: the rest is refunded)" }),
  refund: Amount,
  crossesGraduation: Schema.Boolean,
  priceImpactBps: Schema.Int.annotations({ description: "Fill below the venue's spot price before the trade, fees excluded, rounded up" }),
  fees: Schema.Struct({
    platform: Schema.Struct({
      plan: Schema.Literal("free", "pro", "max"),
      planFeeBps: Schema.Int,
      referralDiscountPct: Schema.Int,
      feeRaw: Amount,
      asset: Schema.Literal("quote"),
      charged: Schema.Literal("on_top_of_input", "from_output")
    }),
    venue: Schema.Struct({ bps: Schema.Number, feeRaw: Amount, asset: Schema.Literal("quote", "token") }),
    creator: FeeLine.annotations({ description: "The creator's part of the venue fee (inside it, not on top)" })
  }),
  totalQuoteInRaw: Schema.optional(Amount).annotations({ description: "Buy: what the buyer spends (amountConsumed + platform fee; any refund comes back)" }),
  netQuoteOutRaw: Schema.optional(Amount).annotations({ description: "Sell: what the seller keeps at the quoted fill (amountOut − platform fee)" }),
  asOf: Schema.Struct({
    position: Schema.optional(Schema.String).annotations({ description: "The engine's last applied chain position for the market (curve, Solana pool)" }),
    block: Schema.optional(Amount).annotations({ description: "The Hood block the pool was read at" })
  }),
  expiresAt: Schema.Int.annotations({ description: "Epoch ms after which a build must quote again" })
}).annotations({ identifier: "AgentQuoteResponse" })

interface QuoteInput {
  readonly chain: ChainId
  readonly mint: string
  readonly side: Side
  readonly amountIn: bigint
  readonly slippageBps: number
}

interface Caller extends PlatformCharge {
  readonly plan: Plan["id"]
}

const notFound = (index: MarketIndexShape, chain: ChainId, mint: string): ApiError => {
  const other = index.find(mint).find((c) => c !== chain)
  return other !== undefined
    ? apiError("MARKET_NOT_FOUND", `No ${chain} market for ${mint}; it trades on ${other}`, {
        extra: { routing: { reason: "chain_mismatch" }, discovery: { indexed: true, chain: other } }
      })
    : apiError("MARKET_NOT_FOUND", `${mint} was not launched on this service: the agent quote prices this service's curves and their graduated pools only, and this server has no route for external tokens`, {
        extra: { routing: { reason: "external_token" }, discovery: { indexed: false } }
      })
}

const unavailable = (message: string) => apiError("QUOTE_UNAVAILABLE", message, { retryable: true, headers: { "Retry-After": "2" } })

const refusalOf = (q: Exclude<VenueQuote, { _tag: "Filled" } | { _tag: "Need" }>, core: MarketCore): ApiError => {
  switch (q.reason) {
    case "curve_complete":
      return apiError("MARKET_NOT_TRADABLE", "The curve is complete", {
        extra: { reason: core.chain === "solana" ? "solana_graduating" : "hood_graduating", tradingContinues: { venue: graduationVenueOf(core.chain, core.identity.dexVersion ?? undefined), afterMigration: true } }
      })
    case "zero_amount":
      return validationFailed("amountIn", "amountIn buys nothing after the venue fee")
    case "exceeds_curve_supply":
      return validationFailed("amountIn", "amountIn exceeds the tokens the curve has sold")
    case "exceeds_pool_liquidity":
      return validationFailed("amountIn", "amountIn is more than the pool can fill within its price range")
  }
}

const body = (i: QuoteInput, core: MarketCore, q: Extract<VenueQuote, { _tag: "Filled" }>, caller: Caller, asOf: Record<string, string>, expiresAt: number) => {
  const platform = platformFeeOf(q, i.side, caller)
  return {
    success: true,
    chain: i.chain,
    mint: core.mint,
    side: i.side,
    amountIn: i.amountIn.toString(),
    slippageBps: i.slippageBps,
    venue: q.venue,
    graduationVenue: graduationVenueOf(core.chain, core.identity.dexVersion ?? undefined),
    crossingModel: crossingModelOf(core.chain),
    quoteMint: core.identity.quoteMint,
    amountOut: q.amountOut.toString(),
    minAmountOut: minOutOf(q, BigInt(i.slippageBps)).toString(),
    amountConsumed: q.amountConsumed.toString(),
    refund: q.refund.toString(),
    crossesGraduation: q.crossesGraduation,
    priceImpactBps: q.priceImpactBps,
    fees: {
      platform: {
        plan: caller.plan,
        planFeeBps: platform.planFeeBps,
        referralDiscountPct: platform.referralDiscountPct,
        feeRaw: platform.feeRaw.toString(),
        asset: "quote",
        charged: platform.charged
      },
      venue: { bps: q.venueFeeBps, feeRaw: q.venueFeeRaw.toString(), asset: q.venueFeeAsset },
      creator: { feeRaw: q.creatorFeeRaw.toString(), asset: q.venueFeeAsset }
    },
    ...(i.side === "buy" ? { totalQuoteInRaw: (q.amountConsumed + platform.feeRaw).toString() } : { netQuoteOutRaw: (q.amountOut - platform.feeRaw).toString() }),
    asOf,
    expiresAt
  }
}

export const tradeQuoteRoutes = (options: TradeQuoteRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, creatorShares, hoodPools, index, nowMs } = options
  const limit = options.quoteLimitPerMin ?? QUOTE_LIMIT_PER_MIN
  const limiter = new RateLimiter({ limit, shared: shared(options.sharedLimits, "trade-quote") })
  const free: Caller = { plan: options.freePlan.id, planFeeBps: BigInt(options.freePlan.feeBps), referred: false }

  /** The quote for a caller: a Reply when the venue is in memory, an Effect for the Hood pool. */
  const quote = (i: QuoteInput, caller: Caller): Reply | Effect.Effect<Reply, ApiError> => {
    const core = index.market(i.chain, i.mint)
    if (core === undefined) return errorReply(index.warming() ? unavailable("Markets are loading; retry shortly") : notFound(index, i.chain, i.mint))
    const venue = marketVenueOf(core, creatorShares)
    switch (venue._tag) {
      case "Closed":
        return venue.reason === "pool_unknown"
          ? errorReply(unavailable("The graduated pool is not known yet; retry shortly"))
          : errorReply(
              apiError("MARKET_NOT_TRADABLE", venue.tradingContinues === null ? "The market is in recovery: claims only" : `The curve is graduating; trading continues on ${venue.tradingContinues.venue} once its pool is seeded`, {
                extra: { reason: venue.reason, tradingContinues: venue.tradingContinues === null ? null : { ...venue.tradingContinues, quoteRoute: AGENT_QUOTE_ENDPOINT } }
              })
            )
      case "Local": {
        const q = quoteVenue(venue.state, i.side, i.amountIn)
        if (q._tag === "Need") return errorReply(unavailable("The venue needs a chain read"))
        if (q._tag === "Refused") return errorReply(refusalOf(q, core))
        return json(200, body(i, core, q, caller, { position: core.lastPosition }, nowMs() + AGENT_QUOTE_TTL_MS))
      }
      case "HoodPool": {
        if (hoodPools === null) return errorReply(unavailable("No Hood RPC is configured to read the pool"))
        const pool: Address = getAddress(venue.pool)
        return Effect.tryPromise(() => quoteHoodPool(hoodPools, { pool, token: core.mint, side: i.side, amountIn: i.amountIn, creatorShareBps: creatorShares.hood })).pipe(
          Effect.mapError(() => unavailable("The Hood pool could not be read; retry")),
          Effect.flatMap((r) => {
            if (r._tag === "TooDeep") return Effect.fail(unavailable("The swap walks more ticks than one quote reads"))
            const q = r.quote
            if (q._tag === "Refused") return Effect.fail(refusalOf(q, core))
            return Effect.succeed(json(200, body(i, core, q, caller, { block: r.blockNumber.toString() }, nowMs() + AGENT_QUOTE_TTL_MS)))
          })
        )
      }
    }
  }

  const agentQuote = route({
    method: "GET",
    path: AGENT_QUOTE_ENDPOINT,
    operationId: "getAgentQuote",
    summary: "Trade quote on the venue the market trades on now (curve, Solana pool, Hood Uniswap v3 pool), with the plan's fees",
    description: [
      "Public: without x-api-key the Free plan's platform fee; with a valid key the key's plan (Free 1 %, Pro 0.5 %, Max 0.25 % from the live plan table) less 10 % for a referred account. An invalid key is UNAUTHORIZED.",
      "Exact input: amountIn is quote (buy) or tokens (sell) in raw units. amountOut is what the venue executes on the quoted state, to the raw unit; minAmountOut applies slippageBps (default 100) and is what the chain enforces.",
      "The platform fee is outside the venue's math: a buy pays it beside the swap on top of amountConsumed (never on a Hood crossing buy's refund); a sell pays it from the quoted proceeds.",
      "Only markets launched on this service are quoted (their curve, then their graduated pool); any other mint is MARKET_NOT_FOUND with routing.reason external_token."
    ].join(" "),
    tags: ["trade"],
    auth: "public",
    headers: AGENT_AUTH_HEADERS,
    query: { chain: chainParam, mint: mintParam, ...quoteQuery },
    responses: {
      200: { description: "The quote", schema: AgentQuoteResponse },
      400: refusal(["VALIDATION_FAILED"], "naming the field (chain, mint, side, amountIn, slippageBps)"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"], "a key was sent and is not valid, or expired"),
      403: refusal(["VALIDATION_FAILED"], "a key was sent and is paused (reason key_paused)"),
      404: refusal(["MARKET_NOT_FOUND"], "routing.reason external_token (not launched here) or chain_mismatch (discovery.chain)"),
      409: refusal(["MARKET_NOT_TRADABLE"], "reason solana_graduating, hood_graduating, migration_delayed or market_recovery, and tradingContinues"),
      429: { ...refusal(["RATE_LIMITED"], "with Retry-After (keyless: 120 a minute per client; with a key: the key's per-minute limit)"), headers: ["Retry-After"] },
      503: { ...refusal(["QUOTE_UNAVAILABLE"], "retryable: the index warming, or the Hood pool unreadable"), headers: ["Retry-After"] }
    },
    guard: (req: Request) => {
      // A keyed request counts against its key's limit (authenticate); a keyless one against its address.
      if (req.headers[API_KEY_HEADER] !== undefined) return undefined
      const limited = limiter.hit(req.remoteAddress, nowMs())
      return limited.allowed
        ? undefined
        : errorReply(
            apiError("RATE_LIMITED", `More than ${limit} quotes a minute from this client`, {
              headers: { "Retry-After": String(limited.retryAfterSec) },
              extra: { retryAfter: limited.retryAfterSec }
            })
          )
    },
    handler: (req, { amountIn, chain, mint: rawMint, side, slippageBps }) => {
      const mint = parseAddress(chain, rawMint, "mint")
      if (typeof mint !== "string") return errorReply(mint)
      if (amountIn > MAX_AMOUNT[chain]) return errorReply(validationFailed("amountIn", "amountIn exceeds the chain's amount range"))
      const input: QuoteInput = { chain, mint, side, amountIn, slippageBps }
      if (req.headers[API_KEY_HEADER] === undefined) return quote(input, free)
      return Effect.flatMap(agentAuth.authenticate(req.headers), (p) => {
        const out = quote(input, { plan: p.plan.id, planFeeBps: BigInt(p.plan.feeBps), referred: p.account.referredBy !== null })
        return Effect.isEffect(out) ? out : Effect.succeed(out)
      })
    }
  })

  return [agentQuote]
}
