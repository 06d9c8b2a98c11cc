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
import { isPattern, isQualityFilter, matchesQuality, type Pattern, QUALITIES, VENUES } from "../../src/domain/Signal.js"
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
import { isApiError as isError } from "../QueryParams.js"
import type { ParamDoc, RouteDef } from "../Router.js"
import { strategyLabRoutes } from "../routes/StrategyLabRoutes.js"


export interface DataRoutesDeps {
  readonly auth: DataBearerAuth
  readonly clickhouse: ClickHouseShape
  readonly hub: SignalHub
  readonly tracking: TrackingShape
  /** The strategy lab's job runner; the lab's routes are mounted only when given. */
  readonly jobs?: ReplayJobsShape
}

const AGE_BUCKETS: ReadonlyArray<AgeBucket> = ["<1h", "1-24h", ">24h"]

const timeParam = (name: string, v: string): number | ApiError => {
  const ms = /^\d{1,15}$/.test(v) ? Number(v) : /^\d{4}-\d{2}-\d{2}T/.test(v) ? Date.parse(v) : Number.NaN
  return Number.isFinite(ms) ? ms : validationFailed(name, `${name} must be an ISO 8601 time or epoch milliseconds`)
}

const intParam = (name: string, v: string, min: number, max: number): number | ApiError =>
  /^\d{1,9}$/.test(v) && Number(v) >= min && Number(v) <= max ? Number(v) : validationFailed(name, `${name} must be an integer from ${min} to ${max}`)

const listParam = <T extends string>(name: string, v: string, allowed: ReadonlyArray<T>): ReadonlyArray<T> | ApiError => {
  const out: Array<T> = []
  for (const item of v.split(",")) {
    if (!(allowed as ReadonlyArray<string>).includes(item)) return validationFailed(name, `Unknown ${name} '${item}'; expected ${allowed.join(", ")}`)
    out.push(item as T)
  }
  return out
}


export interface ParsedTape {
  readonly query: TapeQuery
  readonly afterId: string | undefined
  readonly groupBy: "token" | undefined
}

/** `/v1/signals` parameters → the tape query, or the first problem as a `VALIDATION_FAILED`. */
export const parseTapeQuery = (raw: string, principal: DataPrincipal, tracking: TrackingShape): ParsedTape | ApiError => {
  const p = new URLSearchParams(raw)
  const get = (name: string): string | undefined => {
    const v = p.get(name)
    return v === null || v === "" ? undefined : v
  }
  const chain = get("chain") ?? "solana"
  if (chain !== "solana" && chain !== "hood") return validationFailed("chain", `Unknown chain '${chain}'; expected solana or hood`)
  let patterns: ReadonlyArray<Pattern> | undefined
  const pattern = get("pattern")
  if (pattern !== undefined) {
    const list = pattern.split(",")
    const bad = list.find((x) => !isPattern(x))
    if (bad !== undefined) return validationFailed("pattern", `Unknown pattern '${bad}'`)
    patterns = list as Array<Pattern>
  }
  const asset = get("asset")
  if (asset !== undefined && asset.length > 512) return validationFailed("asset", "asset must be at most 512 characters")
  const since = get("since") === undefined ? undefined : timeParam("since", get("since")!)
  if (isError(since)) return since
  const until = get("until") === undefined ? undefined : timeParam("until", get("until")!)
  if (isError(until)) return until
  const order = get("order") ?? "desc"
  if (order !== "asc" && order !== "desc") return validationFailed("order", "order must be asc or desc")
  const limit = get("limit") === undefined ? TAPE_LIMIT_DEFAULT : intParam("limit", get("limit")!, 1, TAPE_LIMIT_MAX)
  if (isError(limit)) return limit
  const offset = get("offset") === undefined ? 0 : intParam("offset", get("offset")!, 0, TAPE_OFFSET_MAX)
  if (isError(offset)) return offset
  const groupByRaw = get("group_by")
  if (groupByRaw !== undefined && groupByRaw !== "token") return validationFailed("group_by", "group_by must be token")
  const group = get("group")
  if (group !== undefined && tracking.group(principal.tier, group) === undefined) return validationFailed("group", `Unknown group '${group}'`)
  const usd = (name: string): bigint | undefined | ApiError => {
    const v = get(name)
    if (v === undefined) return undefined
    return parseUsdMicros(v) ?? validationFailed(name, `${name} must be a non-negative decimal with at most 6 fractional digits`)
  }
  const minMcap = usd("min_mcap_usd")
  if (isError(minMcap)) return minMcap
  const maxMcap = usd("max_mcap_usd")
  if (isError(maxMcap)) return maxMcap
  const minutes = (name: string) => (get(name) === undefined ? undefined : intParam(name, get(name)!, 0, 100_000_000))
  const minAge = minutes("min_age_minutes")
  if (isError(minAge)) return minAge
  const maxAge = minutes("max_age_minutes")
  if (isError(maxAge)) return maxAge
  const age = get("age")
  if (age !== undefined && !(AGE_BUCKETS as ReadonlyArray<string>).includes(age)) return validationFailed("age", "age must be <1h, 1-24h or >24h")
  const venues = get("venues") === undefined ? undefined : listParam("venues", get("venues")!, VENUES)
  if (isError(venues)) return venues
  const excludeVenues = get("exclude_venues") === undefined ? undefined : listParam("exclude_venues", get("exclude_venues")!, VENUES)
  if (isError(excludeVenues)) return excludeVenues
  const quality = get("quality") ?? "curated"
  if (!isQualityFilter(quality)) return validationFailed("quality", `Unknown quality '${quality}'; expected curated, all, high, medium or low`)
  const after = get("after")
  if (after !== undefined && after.length > 128) return validationFailed("after", "after must be a signal id")
  return {
    afterId: after,
    groupBy: groupByRaw === "token" ? "token" : undefined,
    query: {
      chain,
      patterns,
      asset,
      sinceMs: since,
      untilMs: until,
      qualities: QUALITIES.filter((q) => matchesQuality(quality, q)),
      minMcapMicros: minMcap,
      maxMcapMicros: maxMcap,
      minAgeMinutes: minAge,
      maxAgeMinutes: maxAge,
      age: age as AgeBucket | undefined,
      venues: venues?.map(String),
      excludeVenues: excludeVenues?.map(String),
      group,
      order,
      limit,
      offset
    }
  }
}

const q = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }): ParamDoc => ({ name, description, schema })

const tapeParams: ReadonlyArray<ParamDoc> = [
  q("pattern", "One or more of confluence, deployer, large_move, dormancy, intra_book, new_ticker, distribution, kol_mention (comma-separated)"),
  q("chain", "solana (default) or hood", { type: "string", enum: ["solana", "hood"], default: "solana" }),
  q("asset", "Only this token (mint or contract)"),
  q("since", "From this time (inclusive): ISO 8601 or epoch ms"),
  q("until", "Before this time (exclusive): ISO 8601 or epoch ms"),
  q("after", "A signal id: only signals after it in `order` (the previous page's `next_after`)"),
  q("order", "desc (newest first, default) or asc", { type: "string", enum: ["asc", "desc"], default: "desc" }),
  q("limit", "1 to 200, default 50", { type: "integer", minimum: 1, maximum: TAPE_LIMIT_MAX, default: TAPE_LIMIT_DEFAULT }),
  q("offset", `0 to ${TAPE_OFFSET_MAX}`, { type: "integer", minimum: 0, maximum: TAPE_OFFSET_MAX, default: 0 }),
  q("group_by", "token: one entry per token with its signal count, patterns and newest signal", { type: "string", enum: ["token"] }),
  q("group", "Only signals involving this tracked group (one your plan can see)"),
  q("min_mcap_usd", "Market cap at the signal at least (decimal USD)"),
  q("max_mcap_usd", "Market cap at the signal at most (decimal USD)"),
  q("min_age_minutes", "Token age at the signal at least", { type: "integer", minimum: 0 }),
  q("max_age_minutes", "Token age at the signal at most", { type: "integer", minimum: 0 }),
  q("age", "<1h, 1-24h or >24h", { type: "string", enum: AGE_BUCKETS }),
  q("venues", "Only these venues (svc-curve, dex, hood-dex; comma-separated)"),
  q("exclude_venues", "Not these venues (comma-separated)"),
  q("quality", "curated (high and medium, default), all, high, medium or low", { type: "string", enum: ["curated", "all", "high", "medium", "low"], default: "curated" })
]

const TapeDoc = Schema.Struct({ signals: Schema.Array(Schema.Unknown), next_after: Schema.NullOr(Schema.String) })

export const dataRoutes = (deps: DataRoutesDeps): ReadonlyArray<RouteDef> => {
  const unavailable = (e: unknown) =>
    Effect.zipRight(
      Effect.logError("signals: ClickHouse read failed", e),
      Effect.fail(apiError("FEED_UNAVAILABLE", "The signal tape is unavailable; retry shortly", { retryable: true, headers: { "Retry-After": "2" } }))
    )

  const tape: RouteDef = {
    method: "GET",
    path: "/v1/signals",
    operationId: "listSignals",
    summary: "The signal tape (every plan)",
    description:
      "Detected signals (docs/signals.md), filtered and paged. The same filters' live version is the WebSocket `GET /v1/signals/stream` (params `event_kind`, `chain`, `quality`; a snapshot of the newest 100, then each new signal; ping every 20 s; 8 sockets per account).",
    tags: ["market-data"],
    auth: "bearer",
    headers: DATA_AUTH_HEADERS,
    query: tapeParams,
    responses: {
      200: { description: "`{signals, next_after}`, or with group_by=token `{tokens}`", schema: TapeDoc },
      400: { description: "VALIDATION_FAILED naming the parameter" },
      401: { description: "`{\"error\": \"invalid api key\"}`" },
      503: { description: "FEED_UNAVAILABLE (retryable)" }
    },
    handler: (req: Request) =>
      deps.auth.withBearer((principal) =>
        Effect.gen(function* () {
          const parsed = parseTapeQuery(req.query, principal, deps.tracking)
          if (isError(parsed)) return yield* parsed
          let query = parsed.query
          if (parsed.afterId !== undefined) {
            const cursor = yield* resolveCursor(deps.clickhouse, deps.hub, parsed.afterId).pipe(Effect.catchAll(unavailable))
            if (cursor === undefined) return yield* validationFailed("after", `Unknown signal id '${parsed.afterId}'`)
            query = { ...query, after: cursor }
          }
          const project = (s: Parameters<typeof projectForPlan>[2]) => projectForPlan(deps.tracking, principal.tier, s)
          if (parsed.groupBy === "token") {
            const tokens = yield* readTapeByToken(deps.clickhouse, query).pipe(Effect.catchAll(unavailable))
            return json(200, { tokens: tokens.map((t) => ({ ...t, latest: project(t.latest) })) })
          }
          const page = yield* readTape(deps.clickhouse, deps.hub, query).pipe(Effect.catchAll(unavailable))
          return json(200, { signals: page.signals.map(project), next_after: page.next_after })
        })
      )(req.headers)
  }

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
      responses: { ...route.responses, 401: { description: "`{\"error\": \"invalid api key\"}`" }, 403: { description: "`{\"error\": \"requires Max\"}`" } },
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
