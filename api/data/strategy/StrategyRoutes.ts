/**
 * Saved strategies and the research reports of the Max strategy lab on the market-data service
 * (spec 4.5, 3.6, 7, 8), paths exactly as 4.5 names them:
 *
 * - POST `/v1/strategies` `{name, definition}` (201) and POST `/v1/strategies/{id}/versions`
 *   `{definition}` (201): save a draft; each starts the automatic 14-day backtest.
 * - PATCH `/v1/strategies/{id}` `{status: "retired"}`: the owner's one status change
 *   (`paper` / `live` refused, always).
 * - GET `/v1/strategies`, `/v1/strategies/{id}`, `/v1/strategies/{id}/trades`,
 *   `/v1/strategies/{id}/comparison`, `/v1/strategy-runs`, `/v1/trades`.
 * - GET `/v1/strategy-lab/edges`, `/v1/strategy-lab/runners`, `/v1/strategy-lab/first-signals`.
 *
 * Refusals: 401 plain `{"error": "invalid api key"}` (from `authenticate`); 403 plain
 * `{"error": "requires Max"}` below Max; 404 plain `{"error": "not found"}` for another
 * account's or an unknown strategy or run; 400 `VALIDATION_FAILED` naming the field (definition
 * problems as `<path>: <message>`, paper/live as `status`); 409 `VALIDATION_FAILED` (`reason`
 * `retired`) for a change to a retired strategy; 429 `RATE_LIMITED` with `quota` and `used` on
 * the 21st save of a UTC day (`Retry-After` to midnight UTC); 503 `FEED_UNAVAILABLE` when
 * PostgreSQL or ClickHouse fails (retryable).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema, type Scope } from "effect"
import type { ClickHouseShape } from "../../../clickhouse/ClickHouse.js"
import { type ApiError, apiError, validationFailed } from "../../../src/domain/ApiError.js"
import type { PlanId } from "../../../src/domain/Plans.js"
import type { ReplayRequest } from "../../../src/services/strategy/Definition.js"
import type { ReplayResult } from "../../../src/services/strategy/Engine.js"
import type { ReplayError } from "../../../src/services/strategy/Replay.js"
import { make as makeResearch, type ResearchShape } from "../../../src/services/strategy/Research.js"
import {
  comparisonRunsMax,
  listLimitDefault,
  listLimitMax,
  make as makeStrategies,
  offsetMax,
  type StrategiesOptions,
  type StrategiesShape,
  StrategyError,
  tradesLimitDefault,
  tradesLimitMax
} from "../../../src/services/strategy/Strategies.js"
import { REQUIRES_MAX_BODY } from "../../auth/DataBearerAuth.js"
import { json, type Reply, type Request } from "../../Http.js"
import type { ParamDoc, RouteDef } from "../../Router.js"
import { isApiError, opt, parseIntParam as intParam } from "../../QueryParams.js"

export const strategyBodyMaxBytes = 64 * 1024
export const NOT_FOUND_BODY = { error: "not found" } as const

export interface StrategyCaller {
  readonly accountId: string
  readonly plan: PlanId
}

export interface StrategyRoutesDeps {
  readonly strategies: StrategiesShape
  readonly research: ResearchShape
  /** The data bearer: the caller, or a ready refusal (the plain 401) or an `ApiError`. */
  readonly authenticate: (req: Request) => Effect.Effect<StrategyCaller, ApiError | Reply>
  /** Request headers the authenticator reads (default `authorization`). */
  readonly authHeaders?: ReadonlyArray<string>
}

const isStrategyError = (x: unknown): x is StrategyError => x instanceof StrategyError

export const strategyErrorReply = (e: StrategyError): Reply | ApiError => {
  switch (e.reason) {
    case "NotFound":
      return json(404, NOT_FOUND_BODY)
    case "Quota":
      return apiError("RATE_LIMITED", e.message, {
        extra: { quota: e.quota, used: e.used },
        headers: { "Retry-After": String(Math.max(1, Math.ceil(((e.resetAtMs ?? 0) - Date.now()) / 1000))) }
      })
    case "Invalid":
      return validationFailed(e.field ?? "body", e.message)
    case "Retired":
      return apiError("VALIDATION_FAILED", e.message, { field: "status", status: 409, extra: { reason: "retired" } })
    case "Unavailable":
      return apiError("FEED_UNAVAILABLE", e.message, { retryable: true, headers: { "Retry-After": "2" } })
  }
}

const researchUnavailable = (e: unknown) =>
  Effect.zipRight(
    Effect.logError("strategy lab: research read failed", e),
    Effect.fail(apiError("FEED_UNAVAILABLE", "The research reports are unavailable; retry shortly", { retryable: true, headers: { "Retry-After": "2" } }))
  )

// ---------------------------------------------------------------------------------------------
// Parameters.

const boolParam = (q: URLSearchParams, name: string): boolean | ApiError => {
  const v = opt(q, name)
  if (v === undefined || v === "false" || v === "0") return false
  if (v === "true" || v === "1") return true
  return validationFailed(name, `${name} must be true or false`)
}
const idParam = (q: URLSearchParams, name: string): string | undefined | ApiError => {
  const v = opt(q, name)
  return v === undefined || v.length <= 128 ? v : validationFailed(name, `${name} must be an id of at most 128 characters`)
}

const page = (q: URLSearchParams, max: number, dflt: number) => {
  const limit = intParam(q, "limit", 1, max, dflt)
  if (isApiError(limit)) return limit
  const offset = intParam(q, "offset", 0, offsetMax, 0)
  if (isApiError(offset)) return offset
  return { limit, offset }
}

const p = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }): ParamDoc => ({ name, description, schema })
const pageParams = (max: number, dflt: number): ReadonlyArray<ParamDoc> => [
  p("limit", `1 to ${max}, default ${dflt}`, { type: "integer", minimum: 1, maximum: max, default: dflt }),
  p("offset", `0 to ${offsetMax}`, { type: "integer", minimum: 0, maximum: offsetMax, default: 0 })
]
const idPath: ParamDoc = { name: "id", description: "A strategy of this account", required: true, schema: { type: "string" } }

const CreateBodyDoc = Schema.Struct({ name: Schema.String, definition: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
const VersionBodyDoc = Schema.Struct({ definition: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
const StatusBodyDoc = Schema.Struct({ status: Schema.Literal("retired") })

const common = {
  401: { description: "`{\"error\": \"invalid api key\"}`" },
  403: { description: "`{\"error\": \"requires Max\"}`" }
} as const
const owned404 = { 404: { description: "`{\"error\": \"not found\"}`: unknown or another account's id" } } as const

/** The body as an object with only the `allowed` top-level fields (an unknown one is refused, first named, like the definition's). */
const bodyWith = (body: unknown, allowed: ReadonlyArray<string>): Effect.Effect<Record<string, unknown>, ApiError> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return Effect.fail(validationFailed("body", "body: must be an object"))
  const extra = Object.keys(body).find((k) => !allowed.includes(k))
  return extra === undefined ? Effect.succeed(body as Record<string, unknown>) : Effect.fail(validationFailed(extra, `${extra}: is not a known field`))
}

export const strategyRoutes = (deps: StrategyRoutesDeps): ReadonlyArray<RouteDef> => {
  const headers = deps.authHeaders ?? ["authorization"]

  const maxOnly =
    (f: (caller: StrategyCaller, req: Request, q: URLSearchParams) => Effect.Effect<Reply, ApiError | StrategyError>) =>
    (req: Request): Effect.Effect<Reply, ApiError> =>
      deps.authenticate(req).pipe(
        Effect.matchEffect({
          onFailure: (e): Effect.Effect<Reply, ApiError> => (isApiError(e) ? Effect.fail(e) : Effect.succeed(e)),
          onSuccess: (caller): Effect.Effect<Reply, ApiError> => {
            if (caller.plan !== "max") return Effect.succeed(json(403, REQUIRES_MAX_BODY))
            return f(caller, req, new URLSearchParams(req.query)).pipe(
              Effect.catchIf(isStrategyError, (e) => {
                const out = strategyErrorReply(e)
                return isApiError(out) ? Effect.fail(out) : Effect.succeed(out)
              })
            ) as Effect.Effect<Reply, ApiError>
          }
        })
      )

  const route = (def: Omit<RouteDef, "tags" | "auth" | "headers">): RouteDef => ({ ...def, tags: ["strategy-lab"], auth: "bearer", headers })

  return [
    route({
      method: "POST",
      path: "/v1/strategies",
      operationId: "createStrategy",
      summary: "Save a strategy draft (Max); its 14-day backtest starts at once",
      description: "Body `{name, definition}` (definition as for a replay). 20 saves (new strategies and versions) per account per UTC day.",
      body: { schema: CreateBodyDoc, maxBytes: strategyBodyMaxBytes },
      responses: {
        201: { description: "The strategy (status draft) with its running backtest" },
        400: { description: "VALIDATION_FAILED: the first problem as `<path>: <message>`" },
        429: { description: "RATE_LIMITED with quota and used" },
        ...common
      },
      handler: maxOnly((caller, req) =>
        Effect.gen(function* () {
          const body = yield* bodyWith(req.body, ["name", "definition"])
          const s = yield* deps.strategies.create(caller.accountId, { name: body.name, definition: body.definition })
          return json(201, s)
        })
      )
    }),
    route({
      method: "POST",
      path: "/v1/strategies/{id}/versions",
      operationId: "addStrategyVersion",
      summary: "Save a new version of a strategy (back to draft); its 14-day backtest starts at once",
      body: { schema: VersionBodyDoc, maxBytes: strategyBodyMaxBytes },
      pathParams: [idPath],
      responses: {
        201: { description: "The strategy at its new version" },
        400: { description: "VALIDATION_FAILED" },
        409: { description: "VALIDATION_FAILED (reason retired): the strategy is retired" },
        429: { description: "RATE_LIMITED with quota and used" },
        ...owned404,
        ...common
      },
      handler: maxOnly((caller, req) =>
        Effect.gen(function* () {
          const body = yield* bodyWith(req.body, ["definition"])
          return json(201, yield* deps.strategies.addVersion(caller.accountId, req.params[0] ?? "", { definition: body.definition }))
        })
      )
    }),
    route({
      method: "PATCH",
      path: "/v1/strategies/{id}",
      operationId: "setStrategyStatus",
      summary: "Retire a strategy (the only status an owner sets; never paper or live)",
      body: { schema: StatusBodyDoc, maxBytes: 1024 },
      pathParams: [idPath],
      responses: {
        200: { description: "The strategy, retired" },
        400: { description: "VALIDATION_FAILED (field status): paper, live or an automatic status" },
        409: { description: "VALIDATION_FAILED (reason retired): already retired" },
        ...owned404,
        ...common
      },
      handler: maxOnly((caller, req) =>
        Effect.gen(function* () {
          const body = yield* bodyWith(req.body, ["status"])
          return json(200, yield* deps.strategies.setStatus(caller.accountId, req.params[0] ?? "", body.status))
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategies",
      operationId: "listStrategies",
      summary: "The account's strategies, newest first",
      query: [p("status", "draft, backtested or retired", { type: "string", enum: ["draft", "backtested", "retired"] }), ...pageParams(listLimitMax, listLimitDefault)],
      responses: { 200: { description: "`{strategies}`" }, 400: { description: "VALIDATION_FAILED" }, ...common },
      handler: maxOnly((caller, _req, q) =>
        Effect.gen(function* () {
          const pg = page(q, listLimitMax, listLimitDefault)
          if (isApiError(pg)) return yield* pg
          const status = opt(q, "status")
          if (status !== undefined && status !== "draft" && status !== "backtested" && status !== "retired") {
            return yield* validationFailed("status", "status must be draft, backtested or retired")
          }
          return json(200, { strategies: yield* deps.strategies.list(caller.accountId, pg, status) })
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategies/{id}",
      operationId: "getStrategy",
      summary: "A strategy: status, versions and the newest backtest of the current (or `version`) version",
      pathParams: [idPath],
      query: [p("version", "Show this version's backtest", { type: "integer", minimum: 1 })],
      responses: { 200: { description: "The strategy" }, ...owned404, ...common },
      handler: maxOnly((caller, req, q) =>
        Effect.gen(function* () {
          const version = opt(q, "version") === undefined ? undefined : intParam(q, "version", 1, 1_000_000, 1)
          if (isApiError(version)) return yield* version
          return json(200, yield* deps.strategies.get(caller.accountId, req.params[0] ?? "", version))
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategies/{id}/trades",
      operationId: "strategyTrades",
      summary: "The trades of a strategy's newest finished backtest (or of `version`'s)",
      pathParams: [idPath],
      query: [p("version", "This version's newest finished backtest", { type: "integer", minimum: 1 }), ...pageParams(tradesLimitMax, tradesLimitDefault)],
      responses: { 200: { description: "`{run_id, trades}`" }, ...owned404, ...common },
      handler: maxOnly((caller, req, q) =>
        Effect.gen(function* () {
          const pg = page(q, tradesLimitMax, tradesLimitDefault)
          if (isApiError(pg)) return yield* pg
          const version = opt(q, "version") === undefined ? undefined : intParam(q, "version", 1, 1_000_000, 1)
          if (isApiError(version)) return yield* version
          const id = req.params[0] ?? ""
          return json(200, yield* deps.strategies.trades(caller.accountId, pg, version === undefined ? { strategyId: id } : { strategyId: id, version }))
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategies/{id}/comparison",
      operationId: "strategyComparison",
      summary: "Backtests side by side: the newest finished run of each version, or the named runs",
      pathParams: [idPath],
      query: [p("runs", `Up to ${comparisonRunsMax} run ids of this strategy (comma-separated)`)],
      responses: { 200: { description: "`{strategy_id, runs, best_pnl_run_id, best_passing_run_id}`" }, ...owned404, ...common },
      handler: maxOnly((caller, req, q) =>
        Effect.gen(function* () {
          const raw = opt(q, "runs")
          const runs = raw === undefined ? undefined : raw.split(",")
          if (runs !== undefined && (runs.length > comparisonRunsMax || runs.some((r) => r.length === 0 || r.length > 128))) {
            return yield* validationFailed("runs", `runs must name 1 to ${comparisonRunsMax} run ids`)
          }
          return json(200, yield* deps.strategies.comparison(caller.accountId, req.params[0] ?? "", runs))
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategy-runs",
      operationId: "listStrategyRuns",
      summary: "The account's backtest runs, newest first",
      query: [p("strategy_id", "Only this strategy's runs"), ...pageParams(listLimitMax, listLimitDefault)],
      responses: { 200: { description: "`{runs}`" }, ...owned404, ...common },
      handler: maxOnly((caller, _req, q) =>
        Effect.gen(function* () {
          const pg = page(q, listLimitMax, listLimitDefault)
          if (isApiError(pg)) return yield* pg
          const strategyId = idParam(q, "strategy_id")
          if (isApiError(strategyId)) return yield* strategyId
          return json(200, { runs: yield* deps.strategies.runs(caller.accountId, pg, strategyId) })
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/trades",
      operationId: "listStrategyTrades",
      summary: "Backtest trades: of one run (`run_id`), of a strategy's newest finished run (`strategy_id`), or of every run",
      query: [p("run_id", "One run of this account"), p("strategy_id", "A strategy of this account"), ...pageParams(tradesLimitMax, tradesLimitDefault)],
      responses: { 200: { description: "`{run_id, trades}`" }, ...owned404, ...common },
      handler: maxOnly((caller, _req, q) =>
        Effect.gen(function* () {
          const pg = page(q, tradesLimitMax, tradesLimitDefault)
          if (isApiError(pg)) return yield* pg
          const runId = idParam(q, "run_id")
          if (isApiError(runId)) return yield* runId
          const strategyId = idParam(q, "strategy_id")
          if (isApiError(strategyId)) return yield* strategyId
          return json(
            200,
            yield* deps.strategies.trades(caller.accountId, pg, {
              ...(runId !== undefined ? { runId } : {}),
              ...(strategyId !== undefined ? { strategyId } : {})
            })
          )
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategy-lab/edges",
      operationId: "researchEdges",
      summary: "Per pattern: forward returns after signals at 1 h, 4 h and 24 h, net of a 2.5% cost (Solana; hourly snapshot)",
      query: [
        p("days", "Signals of the last 1 to 30 days, default 7", { type: "integer", minimum: 1, maximum: 30, default: 7 }),
        p("min_n", "Leave out patterns with fewer priceable signals (1 to 10000, default 10)", { type: "integer", minimum: 1, maximum: 10_000, default: 10 }),
        p("include_peak", "Also the peak return within 24 h", { type: "boolean", default: false }),
        p("snapshot", "hourly (default: as of the start of the hour, cached) or live", { type: "string", enum: ["hourly", "live"], default: "hourly" })
      ],
      responses: { 200: { description: "The edges report" }, 400: { description: "VALIDATION_FAILED" }, 503: { description: "FEED_UNAVAILABLE" }, ...common },
      handler: maxOnly((_caller, _req, q) =>
        Effect.gen(function* () {
          const days = intParam(q, "days", 1, 30, 7)
          if (isApiError(days)) return yield* days
          const minN = intParam(q, "min_n", 1, 10_000, 10)
          if (isApiError(minN)) return yield* minN
          const includePeak = boolParam(q, "include_peak")
          if (isApiError(includePeak)) return yield* includePeak
          const snapshot = opt(q, "snapshot") ?? "hourly"
          if (snapshot !== "hourly" && snapshot !== "live") return yield* validationFailed("snapshot", "snapshot must be hourly or live")
          const report = yield* deps.research.edges({ days, minN, includePeak, live: snapshot === "live" }).pipe(Effect.catchAll(researchUnavailable))
          return json(200, report)
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategy-lab/runners",
      operationId: "researchRunners",
      summary: "Tokens that ran after signals (Solana)",
      query: [
        p("hours", "Signals of the last 1 to 168 hours, default 24", { type: "integer", minimum: 1, maximum: 168, default: 24 }),
        p("min_wallets", "Distinct wallets in the token's signals, 1 to 50, default 2", { type: "integer", minimum: 1, maximum: 50, default: 2 }),
        p("min_multiple", "Peak over entry at least this (1 to 1000, default 2)", { type: "integer", minimum: 1, maximum: 1000, default: 2 })
      ],
      responses: { 200: { description: "`{tokens}` (at most 500)" }, 400: { description: "VALIDATION_FAILED" }, 503: { description: "FEED_UNAVAILABLE" }, ...common },
      handler: maxOnly((_caller, _req, q) =>
        Effect.gen(function* () {
          const hours = intParam(q, "hours", 1, 168, 24)
          if (isApiError(hours)) return yield* hours
          const minWallets = intParam(q, "min_wallets", 1, 50, 2)
          if (isApiError(minWallets)) return yield* minWallets
          const minMultiple = intParam(q, "min_multiple", 1, 1000, 2)
          if (isApiError(minMultiple)) return yield* minMultiple
          return json(200, yield* deps.research.runners({ hours, minWallets, minMultiple }).pipe(Effect.catchAll(researchUnavailable)))
        })
      )
    }),
    route({
      method: "GET",
      path: "/v1/strategy-lab/first-signals",
      operationId: "researchFirstSignals",
      summary: "Tokens whose first signal fired in the last `minutes` (up to 180), and what followed (Solana; up to 500 tokens)",
      query: [p("minutes", "1 to 180, default 60", { type: "integer", minimum: 1, maximum: 180, default: 60 })],
      responses: { 200: { description: "`{tokens, truncated}`" }, 400: { description: "VALIDATION_FAILED" }, 503: { description: "FEED_UNAVAILABLE" }, ...common },
      handler: maxOnly((_caller, _req, q) =>
        Effect.gen(function* () {
          const minutes = intParam(q, "minutes", 1, 180, 60)
          if (isApiError(minutes)) return yield* minutes
          return json(200, yield* deps.research.firstSignals({ minutes }).pipe(Effect.catchAll(researchUnavailable)))
        })
      )
    })
  ]
}

/**
 * Builds the strategies service (in the caller's scope, over the `SqlClient` in context) and the
 * research reports, and returns the routes. `runBacktest` is the replay engine (`src/DataService.ts`
 * `replayRunner(clickhouse, prices)`).
 */
export const makeStrategyRoutes = (deps: {
  readonly clickhouse: ClickHouseShape
  readonly runBacktest: (request: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError>
  readonly authenticate: StrategyRoutesDeps["authenticate"]
  readonly authHeaders?: ReadonlyArray<string>
  readonly nowMs?: () => number
  readonly strategies?: Omit<StrategiesOptions, "runBacktest">
}): Effect.Effect<{ readonly routes: ReadonlyArray<RouteDef>; readonly strategies: StrategiesShape }, SqlError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const strategies = yield* makeStrategies({ ...deps.strategies, runBacktest: deps.runBacktest })
    const research = makeResearch({ clickhouse: deps.clickhouse, nowMs: deps.nowMs ?? Date.now })
    const routes = strategyRoutes({
      strategies,
      research,
      authenticate: deps.authenticate,
      ...(deps.authHeaders !== undefined ? { authHeaders: deps.authHeaders } : {})
    })
    return { routes, strategies }
  })
