/**
 * The market-data service's HTTP routes (spec 4.5) that this module owns: the signal tape
 * `GET /v1/signals`, and the strategy-lab replay routes (api/routes/StrategyLabRoutes.ts)
 * mounted behind the data bearer. The stream is a WebSocket (SignalStream.ts).
 *
 * Auth and plan refusals use the data service's plain shapes (spec 7): 401
 * `{"error": "invalid api key"}` for a missing, bad, revoked, expired or TEST key; 403
 * `{"error": "requires Max"}` for the strategy lab below Max. Parameter problems are the
 * shared 400 `VALIDATION_FAILED` envelope naming the field; a ClickHouse failure is 503
 * `FEED_UNAVAILABLE` (retryable).
 */
import { Effect, Schema } from "effect"
import { matchesQuality, PATTERNS, QUALITIES, VENUES } from "../../src/domain/Signal.js"
import type { ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { type ApiError, apiError, validationFailed } from "../../src/domain/ApiError.js"
import type { SignalHub } from "../../src/services/signals/SignalHub.js"
import {
  type AgeBucket,
  parseUsdMicros,
  projectForPlan,
  readTape,
  readTapeByToken,
  resolveCursor,
  TAPE_LIMIT_DEFAULT,
  TAPE_LIMIT_MAX,
  TAPE_OFFSET_MAX,
  type TapeQuery
} from "../../src/services/signals/SignalTape.js"
import type { ReplayJobsShape } from "../../src/services/strategy/ReplayJobs.js"
import type { TrackingShape } from "../../src/services/tracking/Tracking.js"
import { DATA_AUTH_HEADERS, type DataBearerAuth, type DataPrincipal, invalidApiKeyReply, requiresMaxReply } from "../auth/DataBearerAuth.js"
import { json, type Reply, type Request } from "../Http.js"
import { chainParam, enumParam, intParam, param, stringParam } from "../QueryParams.js"
import { route, type RouteDef } from "../Router.js"
import { strategyLabRoutes } from "../routes/StrategyLabRoutes.js"
import { plainError, refusal } from "../OpenApi.js"
import { TapeByToken, TapePage } from "./reads/internal/responses.js"


export interface DataRoutesDeps {
  readonly auth: DataBearerAuth
  readonly clickhouse: ClickHouseShape
  readonly hub: SignalHub
  readonly tracking: TrackingShape
  /** The strategy lab's job runner; the lab's routes are mounted only when given. */
  readonly jobs?: ReplayJobsShape
}

const AGE_BUCKETS: ReadonlyArray<AgeBucket> = ["<1h", "1-24h", ">24h"]

/** ISO 8601 or epoch milliseconds (any instant `Date.parse` reads, before 1970 too). */
const tapeTime = (description: string) =>
  param({
    description,
    schema: { type: "string", description: "ISO 8601 time or epoch milliseconds" },
    decode: (raw, name) => {
      if (raw === undefined) return undefined
      const ms = /^\d{1,15}$/.test(raw) ? Number(raw) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : Number.NaN
      return Number.isFinite(ms) ? ms : validationFailed(name, `${name} must be an ISO 8601 time or epoch milliseconds`)
    }
  })

/** A comma-separated list of `allowed` members. */
const listParam = <T extends string>(description: string, allowed: ReadonlyArray<T>, refusal: (name: string, item: string) => string) =>
  param<ReadonlyArray<T> | undefined>({
    description,
    schema: { type: "string", pattern: `^(${allowed.map(escapeRegExp).join("|")})(,(${allowed.map(escapeRegExp).join("|")}))*$` },
    decode: (raw, name) => {
      if (raw === undefined) return undefined
      const out: Array<T> = []
      for (const item of raw.split(",")) {
        if (!(allowed as ReadonlyArray<string>).includes(item)) return validationFailed(name, refusal(name, item))
        out.push(item as T)
      }
      return out
    }
  })
/** Escapes what is special outside a character class (not `-`: `\-` there is invalid in the Unicode mode JSON Schema validators compile patterns in). */
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const usdParam = (description: string) =>
  param({
    description,
    schema: { type: "string", pattern: "^\\d+(\\.\\d{1,6})?$" },
    decode: (raw, name) =>
      raw === undefined ? undefined : (parseUsdMicros(raw) ?? validationFailed(name, `${name} must be a non-negative decimal with at most 6 fractional digits`))
  })

/** `/v1/signals` parameters, checked in this order; `group` is checked against the caller's plan by the handler, after them. */
const tapeQuery = {
  chain: chainParam("solana (default) or hood", { default: "solana" }),
  pattern: listParam(
    "One or more of confluence, deployer, large_move, dormancy, intra_book, new_ticker, distribution, kol_mention (comma-separated)",
    PATTERNS,
    (_name, item) => `Unknown pattern '${item}'`
  ),
  asset: stringParam("Only this token (mint or contract)", { maxLength: 512, message: () => "asset must be at most 512 characters" }),
  since: tapeTime("From this time (inclusive): ISO 8601 or epoch ms"),
  until: tapeTime("Before this time (exclusive): ISO 8601 or epoch ms"),
  order: enumParam("desc (newest first, default) or asc", ["asc", "desc"], { default: "desc", message: () => "order must be asc or desc" }),
  limit: intParam(`1 to ${TAPE_LIMIT_MAX}, default ${TAPE_LIMIT_DEFAULT}`, { min: 1, max: TAPE_LIMIT_MAX, default: TAPE_LIMIT_DEFAULT }),
  offset: intParam(`0 to ${TAPE_OFFSET_MAX}`, { min: 0, max: TAPE_OFFSET_MAX, default: 0 }),
  group_by: enumParam("token: one entry per token with its signal count, patterns and newest signal", ["token"], { message: () => "group_by must be token" }),
  group: stringParam("Only signals involving this tracked group (one your plan can see)"),
  min_mcap_usd: usdParam("Market cap at the signal at least (decimal USD)"),
  max_mcap_usd: usdParam("Market cap at the signal at most (decimal USD)"),
  min_age_minutes: intParam("Token age at the signal at least", { min: 0, max: 100_000_000 }),
  max_age_minutes: intParam("Token age at the signal at most", { min: 0, max: 100_000_000 }),
  age: enumParam("<1h, 1-24h or >24h", AGE_BUCKETS, { message: () => "age must be <1h, 1-24h or >24h" }),
  venues: listParam("Only these venues (svc-curve, dex, hood-dex; comma-separated)", VENUES, (name, item) => `Unknown ${name} '${item}'; expected ${VENUES.join(", ")}`),
  exclude_venues: listParam("Not these venues (comma-separated)", VENUES, (name, item) => `Unknown ${name} '${item}'; expected ${VENUES.join(", ")}`),
  quality: enumParam("curated (high and medium, default), all, high, medium or low", ["curated", "all", "high", "medium", "low"], {
    default: "curated",
    message: (raw) => `Unknown quality '${raw}'; expected curated, all, high, medium or low`
  }),
  after: stringParam("A signal id: only signals after it in `order` (the previous page's `next_after`)", { maxLength: 128, message: () => "after must be a signal id" })
}

const TapeDoc = Schema.Union(TapePage, TapeByToken)

export const dataRoutes = (deps: DataRoutesDeps): ReadonlyArray<RouteDef> => {
  const unavailable = (e: unknown) =>
    Effect.zipRight(
      Effect.logError("signals: ClickHouse read failed", e),
      Effect.fail(apiError("FEED_UNAVAILABLE", "The signal tape is unavailable; retry shortly", { retryable: true, headers: { "Retry-After": "2" } }))
    )

  const tape: RouteDef = route({
    method: "GET",
    path: "/v1/signals",
    operationId: "listSignals",
    summary: "The signal tape (every plan)",
    description:
      "Detected signals (docs/signals.md), filtered and paged. The same filters' live version is the WebSocket `GET /v1/signals/stream` (params `event_kind`, `chain`, `quality`; a snapshot of the newest 100, then each new signal; ping every 20 s; 8 sockets per account).",
    tags: ["market-data"],
    auth: "bearer",
    headers: DATA_AUTH_HEADERS,
    query: tapeQuery,
    responses: {
      200: { description: "`{signals, next_after}`, or with group_by=token `{tokens}`", schema: TapeDoc },
      400: refusal(["VALIDATION_FAILED"], "naming the parameter"),
      401: plainError("`{\"error\": \"invalid api key\"}`"),
      503: refusal(["FEED_UNAVAILABLE"], "retryable")
    },
    authenticate: (req): Effect.Effect<DataPrincipal, Reply> =>
      Effect.flatMap(deps.auth.authenticate(req.headers), (p) => (p === undefined ? Effect.fail(invalidApiKeyReply()) : Effect.succeed(p))),
    handler: (_req, q, principal) =>
      Effect.gen(function* () {
        if (q.group !== undefined && deps.tracking.group(principal.tier, q.group) === undefined) return yield* validationFailed("group", `Unknown group '${q.group}'`)
        let query: TapeQuery = {
          chain: q.chain,
          patterns: q.pattern,
          asset: q.asset,
          sinceMs: q.since,
          untilMs: q.until,
          qualities: QUALITIES.filter((x) => matchesQuality(q.quality, x)),
          minMcapMicros: q.min_mcap_usd,
          maxMcapMicros: q.max_mcap_usd,
          minAgeMinutes: q.min_age_minutes,
          maxAgeMinutes: q.max_age_minutes,
          age: q.age,
          venues: q.venues?.map(String),
          excludeVenues: q.exclude_venues?.map(String),
          group: q.group,
          order: q.order,
          limit: q.limit,
          offset: q.offset
        }
        if (q.after !== undefined) {
          const cursor = yield* resolveCursor(deps.clickhouse, deps.hub, q.after).pipe(Effect.catchAll(unavailable))
          if (cursor === undefined) return yield* validationFailed("after", `Unknown signal id '${q.after}'`)
          query = { ...query, after: cursor }
        }
        const project = (s: Parameters<typeof projectForPlan>[2]) => projectForPlan(deps.tracking, principal.tier, s)
        if (q.group_by === "token") {
          const tokens = yield* readTapeByToken(deps.clickhouse, query).pipe(Effect.catchAll(unavailable))
          return json(200, { tokens: tokens.map((t) => ({ ...t, latest: project(t.latest) })) } satisfies typeof TapeByToken.Type)
        }
        const page = yield* readTape(deps.clickhouse, deps.hub, query).pipe(Effect.catchAll(unavailable))
        return json(200, { signals: page.signals.map(project), next_after: page.next_after } satisfies typeof TapePage.Type)
      })
  })

  if (deps.jobs === undefined) return [tape]
  // The lab's own module authenticates through `authenticate`; here the data bearer runs first
  // (plain 401 / 403 shapes) and hands the principal over per request.
  const principals = new WeakMap<Request, DataPrincipal>()
  const lab = strategyLabRoutes({
    jobs: deps.jobs,
    authHeaders: DATA_AUTH_HEADERS,
    authenticate: (req) => {
      const p = principals.get(req)
      return p === undefined ? Effect.fail(apiError("UNAUTHORIZED", "invalid api key")) : Effect.succeed({ accountId: p.accountId, plan: p.tier })
    }
  }).map(
    (route): RouteDef => ({
      ...route,
      responses: { ...route.responses, 401: plainError("`{\"error\": \"invalid api key\"}`"), 403: plainError("`{\"error\": \"requires Max\"}`") },
      handler: (req) =>
        Effect.flatMap(deps.auth.authenticate(req.headers), (p): Effect.Effect<Reply, ApiError> => {
          if (p === undefined) return Effect.succeed(invalidApiKeyReply())
          if (p.tier !== "max") return Effect.succeed(requiresMaxReply())
          principals.set(req, p)
          const out = route.handler(req)
          return Effect.isEffect(out) ? out : Effect.succeed(out)
        })
    })
  )
  return [tape, ...lab]
}
