/**
 * The public agent reads of the main service (spec launch-and-market-reads 2.9, section 4, 8):
 * - `GET /api/v1/users/{idOrWallet}/agent`: the agent record. The user is an account id, a
 *   handle, or a wallet of the account; unknown: 404 with a plain `{error}` body.
 * - `GET /api/v1/markets/agents/{profileId}/copy-score`: a published agent's copy score from its
 *   wallet's last 30 days of trades (ClickHouse); unknown or unpublished: 404 `MARKET_NOT_FOUND`.
 *   60 a minute per client; cached 60 s per profile.
 * - `GET /api/v1/markets/cohorts/{cohort}`: published agents in `steady`, `high_conviction` or
 *   `early_finder` (`src/services/agents/CopyScore.ts` defines them), ranked; `limit` 1 to 50
 *   (default 10), `truncated` when more qualified. 60 a minute per client; cached 2 min.
 *
 * Order of checks: the client's rate limit, then the parameters, then the caches and reads.
 * A ClickHouse or database failure is `FEED_UNAVAILABLE` 503 (retryable) and is not cached.
 * Bounded: every cache has a maximum of keys; the cohorts read at most `PUBLISHED_SCAN_MAX`
 * published profiles, `COHORT_READ_CONCURRENCY` at a time.
 */
import type { LaunchVisibilityRead } from "../../src/services/launch/LaunchVisibility.js"
import type { AgentLaunchesRead } from "../../actors/AgentLaunches.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import type { MarketIndexShape } from "../../actors/MarketIndex.js"
import type { ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { walletHistory } from "../../clickhouse/queries/WalletReads.js"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import type { AccountWalletsShape } from "../../src/services/accounts/AccountWallets.js"
import type { TierServiceShape } from "../../src/services/accounts/TierService.js"
import { type AgentProfile, findProfile, PROFILE_ID_FORMAT, profileOfAccount, publishedProfiles, resolveUser } from "../../src/services/agents/AgentProfiles.js"
import {
  assess,
  type Cohort,
  cohortRank,
  Cohorts,
  COPY_WINDOW_MS,
  type CopyAssessment,
  type CopyInputs,
  copyInputs,
  type TokenContext
} from "../../src/services/agents/CopyScore.js"
import type { PriceSourceShape, UsdPrice } from "../../src/services/prices/PriceSource.js"
import { quotePairOf, usdPrices } from "../../src/services/prices/Money.js"
import { errorReply, json, JSON_CONTENT_TYPE, type Reply } from "../Http.js"
import { enumParam, intParam, param, stringParam } from "../QueryParams.js"
import { RateLimiter } from "../RateLimiter.js"
import { shared, type SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import { ReadCache } from "../ReadCache.js"
import { route, type RouteDef } from "../Router.js"
import { plainError, refusal } from "../OpenApi.js"

export const COPY_SCORE_LIMIT_PER_MIN = 60
export const COHORT_LIMIT_PER_MIN = 60
export const AGENT_RECORD_LIMIT_PER_MIN = 120
export const COPY_SCORE_TTL_MS = 60_000
export const COHORT_TTL_MS = 120_000
export const AGENT_RECORD_TTL_MS = 30_000
export const CACHE_MAX_ENTRIES = 10_000
export const COHORT_LIMIT_MAX = 50
export const COHORT_LIMIT_DEFAULT = 10
const COHORT_READ_CONCURRENCY = 2

export interface AgentRoutesOptions {
  readonly sql: SqlClient.SqlClient
  readonly clickhouse: ClickHouseShape
  readonly index: MarketIndexShape
  /** Which markets were launched through an agent key (`launchesViaApi`); none when absent. */
  readonly agentLaunches?: AgentLaunchesRead
  /** Launches recorded with a visibility other than `production`: not counted in the public agent record. */
  readonly launchVisibility?: LaunchVisibilityRead
  readonly prices: PriceSourceShape
  readonly tiers: TierServiceShape
  readonly wallets: AccountWalletsShape
  readonly nowMs: () => number
  readonly limits?: { readonly copyScore?: number; readonly cohorts?: number; readonly agentRecord?: number }
  /** The counts other API processes admitted (a database shared by replicas): the per-client limits hold across them. */
  readonly sharedLimits?: SharedWindowCounts | undefined
}

interface Scored {
  readonly profile: AgentProfile
  readonly inputs: CopyInputs
  readonly assessment: CopyAssessment
  readonly computedAtMs: number
}

const unavailable = (what: string, e: unknown): ApiError =>
  apiError("FEED_UNAVAILABLE", `${what} could not be read; retry shortly`, {
    retryable: true,
    headers: { "Retry-After": "2" },
    extra: { reason: "history_unavailable", detail: e instanceof Error ? e.message : String((e as { message?: unknown })?.message ?? e) }
  })

const agentNotFound = (profileId: string) =>
  apiError("MARKET_NOT_FOUND", `No published agent ${profileId}`, { extra: { reason: "agent_not_found" } })

const limited = (limiter: RateLimiter, limit: number, what: string, key: string, now: number): Reply | undefined => {
  const d = limiter.hit(key, now)
  if (d.allowed) return undefined
  return errorReply(
    apiError("RATE_LIMITED", `More than ${limit} ${what} a minute from this client`, {
      headers: { "Retry-After": String(d.retryAfterSec) },
      extra: { retryAfter: d.retryAfterSec }
    })
  )
}

const cachedJson = (body: string, maxAgeSec: number): Reply => ({
  status: 200,
  contentType: JSON_CONTENT_TYPE,
  headers: [["Cache-Control", `public, max-age=${maxAgeSec}`]],
  body
})

const Usd = Schema.NullOr(Schema.String.pipe(Schema.pattern(/^-?[0-9]+(\.[0-9]{1,6})?$/)))
const NullInt = Schema.NullOr(Schema.Int)

const CopyScoreResponse = Schema.Struct({
  success: Schema.Literal(true),
  score: Schema.Struct({
    profileId: Schema.String,
    name: Schema.String,
    wallet: Schema.String,
    chain: Schema.Literal("solana", "hood"),
    assessment: Schema.Struct({
      score: NullInt.annotations({ description: "0-100; null with fewer than 5 closed tokens or no USD price" }),
      grade: Schema.NullOr(Schema.Literal("A", "B", "C", "D", "F")),
      label: Schema.Literal("consistent", "mixed", "losing", "insufficient_history"),
      notes: Schema.Array(Schema.String)
    }),
    inputs: Schema.Struct({
      trades: Schema.Int,
      tokensTraded: Schema.Int,
      tokensClosed: Schema.Int,
      winRateBps: NullInt,
      realizedPnlUsd: Usd,
      spentUsd: Usd,
      returnBps: NullInt,
      medianHoldSeconds: NullInt,
      earlyEntryBps: NullInt,
      avgEntryUsd: Usd,
      activeDays: Schema.Int,
      lastTradeAt: Schema.NullOr(Schema.String),
      historyTruncated: Schema.Boolean
    }).annotations({ description: "Over the last 30 days; null = not measured" }),
    window: Schema.Struct({ from: Schema.String, to: Schema.String }),
    computedAt: Schema.String
  })
}).annotations({ identifier: "CopyScoreResponse" })

const CohortResponse = Schema.Struct({
  success: Schema.Literal(true),
  cohort: Schema.Literal(...Cohorts),
  members: Schema.Array(Schema.Struct({ profileId: Schema.String, name: Schema.String, address: Schema.String })),
  truncated: Schema.Boolean,
  computedAt: Schema.String
}).annotations({ identifier: "CohortResponse" })

const AgentRecordResponse = Schema.Struct({
  success: Schema.Literal(true),
  agent: Schema.Struct({
    enabled: Schema.Boolean,
    address: Schema.NullOr(Schema.String).annotations({ description: "The account's first eligible Solana wallet (embedded first), else its agent profile's wallet" }),
    username: Schema.NullOr(Schema.String),
    launches: Schema.Int.annotations({ description: "Markets live in this engine created by one of the account's wallets" }),
    launchesViaApi: Schema.Int.annotations({ description: "Of those, launched through an agent key" }),
    tier: Schema.Literal("max", "pro", "believer", "free"),
    profileId: Schema.NullOr(Schema.String).annotations({ description: "The published agent profile (copy score), if any" })
  })
}).annotations({ identifier: "AgentRecordResponse" })

export const agentRoutes = (options: AgentRoutesOptions): ReadonlyArray<RouteDef> => {
  const { clickhouse, index, nowMs, prices, tiers, wallets } = options
  const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(e, SqlClient.SqlClient, options.sql)
  const copyLimit = options.limits?.copyScore ?? COPY_SCORE_LIMIT_PER_MIN
  const cohortLimit = options.limits?.cohorts ?? COHORT_LIMIT_PER_MIN
  const recordLimit = options.limits?.agentRecord ?? AGENT_RECORD_LIMIT_PER_MIN
  const copyLimiter = new RateLimiter({ limit: copyLimit, shared: shared(options.sharedLimits, "copy-score") })
  const cohortLimiter = new RateLimiter({ limit: cohortLimit, shared: shared(options.sharedLimits, "cohorts") })
  const recordLimiter = new RateLimiter({ limit: recordLimit, shared: shared(options.sharedLimits, "agent-record") })
  const scores = new ReadCache<Scored, ApiError>(COPY_SCORE_TTL_MS, CACHE_MAX_ENTRIES)
  const cohortCache = new ReadCache<ReadonlyMap<Cohort, ReadonlyArray<AgentProfile>>, ApiError>(COHORT_TTL_MS, Cohorts.length)
  const records = new ReadCache<Reply, ApiError>(AGENT_RECORD_TTL_MS, CACHE_MAX_ENTRIES)

  /** Score one profile now: its wallet's trades, today's quote prices, the markets' launch times. */
  const score = (profile: AgentProfile, startedMs: number): Effect.Effect<Scored, ApiError> =>
    Effect.gen(function* () {
      const history = yield* walletHistory(clickhouse, profile.chain, profile.wallet).pipe(Effect.mapError((e) => unavailable("The agent's trades", e)))
      const mints = new Set(history.trades.map((t) => t.mint))
      const pairOf = (mint: string) => {
        const core = index.market(profile.chain, mint)
        return core === undefined ? undefined : quotePairOf(profile.chain, core.identity.quoteMint)
      }
      const usd = yield* usdPrices(prices, [...mints].map(pairOf))
      const token = (mint: string): TokenContext => {
        const core = index.market(profile.chain, mint)
        const pair = pairOf(mint)
        const price: UsdPrice | null = pair === undefined ? null : (usd.get(pair.id) ?? null)
        return {
          launchedAtMs: core?.identity.createdAtMs,
          usdMicros:
            price === null || pair === undefined
              ? undefined
              : (raw: bigint) => (raw * price.usdRaw * 1_000_000n) / 10n ** BigInt(pair.decimals + price.scale)
        }
      }
      const inputs = copyInputs(history.trades, history.truncated, startedMs, token)
      return { profile, inputs, assessment: assess(inputs), computedAtMs: startedMs }
    })

  // Keyed by the scored wallet too: a republished profile with another wallet is scored afresh.
  const scoreCached = (profile: AgentProfile, now: number) => scores.get(`${profile.id}:${profile.chain}:${profile.wallet}`, now, score(profile, now))

  const copyScore = route({
    method: "GET",
    path: "/api/v1/markets/agents/{profileId}/copy-score",
    operationId: "getAgentCopyScore",
    summary: "A published agent's copy score from its last 30 days of trades (60 per minute per client; cached 60 s)",
    description:
      "score = win rate (40) + return on closed tokens (30) + active days (20) + closed-token sample (10); null below 5 closed tokens. " +
      "Inputs are null when not measured.",
    tags: ["agents"],
    auth: "public",
    pathParams: {
      // An id that cannot exist is an unknown agent (404), not a malformed request.
      profileId: param({
        description: "The agent profile id (ap_…)",
        required: true,
        schema: { type: "string", pattern: PROFILE_ID_FORMAT.source },
        decode: (raw) => (raw !== undefined && PROFILE_ID_FORMAT.test(raw) ? raw : agentNotFound(raw ?? ""))
      })
    },
    responses: {
      200: { description: "The copy score", schema: CopyScoreResponse, headers: ["Cache-Control"] },
      404: refusal(["MARKET_NOT_FOUND"], "unknown or unpublished agent (reason agent_not_found)"),
      429: { ...refusal(["RATE_LIMITED"], "with Retry-After"), headers: ["Retry-After"] },
      503: { ...refusal(["FEED_UNAVAILABLE"], "retryable: trade history could not be read"), headers: ["Retry-After"] }
    },
    guard: (req) => limited(copyLimiter, copyLimit, "copy-score reads", req.remoteAddress, nowMs()),
    handler: (_req, { profileId: id }) => {
      const now = nowMs()
      return Effect.gen(function* () {
        const profile = yield* withSql(findProfile(id)).pipe(Effect.mapError((e) => unavailable("The agent", e)))
        if (profile === undefined || !profile.published) return errorReply(agentNotFound(id))
        const s = yield* scoreCached(profile, now)
        return cachedJson(
          JSON.stringify({
            success: true,
            score: {
              profileId: profile.id,
              name: profile.name,
              wallet: profile.wallet,
              chain: profile.chain,
              assessment: s.assessment,
              inputs: s.inputs,
              window: { from: new Date(s.computedAtMs - COPY_WINDOW_MS).toISOString(), to: new Date(s.computedAtMs).toISOString() },
              computedAt: new Date(s.computedAtMs).toISOString()
            }
          }),
          COPY_SCORE_TTL_MS / 1000
        )
      })
    }
  })

  /** Every cohort's ranked members over the published profiles (one scan serves all three). */
  const computeCohorts = (now: number): Effect.Effect<ReadonlyMap<Cohort, ReadonlyArray<AgentProfile>>, ApiError> =>
    Effect.gen(function* () {
      const profiles = yield* withSql(publishedProfiles()).pipe(Effect.mapError((e) => unavailable("The agents", e)))
      const scored = yield* Effect.forEach(profiles, (p) => scoreCached(p, now), { concurrency: COHORT_READ_CONCURRENCY })
      const out = new Map<Cohort, ReadonlyArray<AgentProfile>>()
      for (const cohort of Cohorts) {
        const ranked: Array<{ profile: AgentProfile; rank: bigint }> = []
        for (const s of scored) {
          const rank = cohortRank(cohort, s.inputs, s.assessment)
          if (rank !== undefined) ranked.push({ profile: s.profile, rank })
        }
        ranked.sort((a, b) => (a.rank === b.rank ? (a.profile.id < b.profile.id ? -1 : 1) : a.rank > b.rank ? -1 : 1))
        out.set(cohort, ranked.map((r) => r.profile))
      }
      return out
    })

  let cohortsComputedAtMs = 0
  const cohorts = route({
    method: "GET",
    path: "/api/v1/markets/cohorts/{cohort}",
    operationId: "getAgentCohort",
    summary: "Published agents in a cohort, ranked (60 per minute per client; cached 2 min)",
    description:
      "steady: ≥ 5 closed tokens, win rate ≥ 55%, positive realized P&L, ≥ 3 active days (by score). " +
      "high_conviction: ≥ 3 closed tokens, median hold ≥ 30 min, average entry ≥ $100 (by average entry). " +
      "early_finder: ≥ 3 tokens traded, ≥ 50% of known launches bought within 10 min (by that share). All over the last 30 days.",
    tags: ["agents"],
    auth: "public",
    pathParams: { cohort: enumParam("steady, high_conviction or early_finder", Cohorts, { required: true }) },
    query: { limit: intParam(`Members (1 to ${COHORT_LIMIT_MAX}, default ${COHORT_LIMIT_DEFAULT})`, { min: 1, max: COHORT_LIMIT_MAX, default: COHORT_LIMIT_DEFAULT }) },
    responses: {
      200: { description: "The cohort", schema: CohortResponse, headers: ["Cache-Control"] },
      400: refusal(["VALIDATION_FAILED"], "cohort, limit"),
      429: { ...refusal(["RATE_LIMITED"], "with Retry-After"), headers: ["Retry-After"] },
      503: { ...refusal(["FEED_UNAVAILABLE"], "retryable: trade history could not be read"), headers: ["Retry-After"] }
    },
    guard: (req) => limited(cohortLimiter, cohortLimit, "cohort reads", req.remoteAddress, nowMs()),
    handler: (_req, { cohort, limit }) => {
      const now = nowMs()
      return Effect.map(
        cohortCache.get(
          "all",
          now,
          Effect.tap(computeCohorts(now), () => Effect.sync(() => (cohortsComputedAtMs = now)))
        ),
        (all) => {
          const members = all.get(cohort) ?? []
          return cachedJson(
            JSON.stringify({
              success: true,
              cohort,
              members: members.slice(0, limit).map((p) => ({ profileId: p.id, name: p.name, address: p.wallet })),
              truncated: members.length > limit,
              computedAt: new Date(cohortsComputedAtMs || now).toISOString()
            }),
            COHORT_TTL_MS / 1000
          )
        }
      )
    }
  })

  /** Markets live in the index created by one of `addresses` (Hood compared lower-case). */
  const launchesBy = (addresses: ReadonlyArray<string>): number => {
    if (addresses.length === 0) return 0
    const solana = new Set(addresses)
    const hood = new Set(addresses.map((a) => a.toLowerCase()))
    let n = 0
    for (const core of index.markets()) {
      const creator = core.identity.creator
      if (core.chain === "hood" ? hood.has(creator.toLowerCase()) : solana.has(creator)) {
        if (options.launchVisibility?.restricted(core.chain, core.mint) === undefined) n++
      }
    }
    return n
  }

  const record = (accountId: string, now: number): Effect.Effect<Reply, ApiError> =>
    Effect.gen(function* () {
      const account = yield* tiers.account(accountId).pipe(Effect.mapError((e) => unavailable("The account", e)))
      if (account === undefined) return json(404, { error: "user not found" })
      const tier = yield* tiers.tierOf(account, now)
      const profile = yield* withSql(profileOfAccount(accountId)).pipe(Effect.mapError((e) => unavailable("The agent profile", e)))
      const solanaWallets = yield* wallets.eligibleSolanaWallets(accountId).pipe(Effect.mapError((e) => unavailable("The account's wallets", e)))
      const addresses = profile === undefined || solanaWallets.includes(profile.wallet) ? solanaWallets : [...solanaWallets, profile.wallet]
      return cachedJson(
        JSON.stringify({
          success: true,
          agent: {
            enabled: account.agentEnabled,
            address: solanaWallets[0] ?? profile?.wallet ?? null,
            username: account.handle,
            launches: launchesBy(addresses),
            launchesViaApi: options.agentLaunches?.countOf(accountId, (chain, mint) => index.market(chain, mint) !== undefined) ?? 0,
            tier,
            profileId: profile !== undefined && profile.published ? profile.id : null
          }
        }),
        AGENT_RECORD_TTL_MS / 1000
      )
    })

  const agentRecord = route({
    method: "GET",
    path: "/api/v1/users/{idOrWallet}/agent",
    operationId: "getAgentRecord",
    summary: "A user's agent record: enabled, address, username, launches, launches via the API, tier (cached 30 s)",
    description: "The user is an account id, a handle, or one of the account's wallets (embedded, linked, imported, TEE, or its agent profile's).",
    tags: ["agents"],
    auth: "public",
    pathParams: { idOrWallet: stringParam("Account id, handle, or wallet address", { required: true, emptyIsValue: true }) },
    responses: {
      200: { description: "The agent record", schema: AgentRecordResponse, headers: ["Cache-Control"] },
      404: plainError("Unknown user: a plain {error} body"),
      429: { ...refusal(["RATE_LIMITED"], "with Retry-After"), headers: ["Retry-After"] },
      503: { ...refusal(["FEED_UNAVAILABLE"], "retryable: the account could not be read"), headers: ["Retry-After"] }
    },
    guard: (req) => limited(recordLimiter, recordLimit, "agent-record reads", req.remoteAddress, nowMs()),
    handler: (_req, { idOrWallet: ref }) => {
      const now = nowMs()
      // No user is named by an empty or over-long reference: the plain not-found, not a refusal.
      if (ref.length === 0 || ref.length > 128) return json(404, { error: "user not found" })
      return Effect.gen(function* () {
        const accountId = yield* withSql(resolveUser(ref)).pipe(Effect.mapError((e) => unavailable("The user", e)))
        if (accountId === undefined) return json(404, { error: "user not found" })
        return yield* records.get(accountId, now, record(accountId, now))
      })
    }
  })

  return [agentRecord, copyScore, cohorts]
}

