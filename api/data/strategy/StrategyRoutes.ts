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
import { StrategyDefinitionDoc } from "../../StrategyDefinitionDoc.js"
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
import { answerFailure } from "../../ErrorTable.js"
import { json, type Reply, type Request } from "../../Http.js"
import { decodedBody, route, type RouteDef } from "../../Router.js"
import { enumParam, intParam, param, stringParam } from "../../QueryParams.js"
import { answer as answerDoc, plainError, refusal } from "../../OpenApi.js"
import { ComparisonDoc, EdgesDoc, FirstSignalsDoc, RunList, RunnersDoc, RunTrades, StrategyDetailDoc, StrategyList } from "./StrategyResponses.js"

export const strategyBodyMaxBytes = 64 * 1024

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

const researchUnavailable = (e: unknown) =>
  Effect.zipRight(
    Effect.logError("strategy lab: research read failed", e),
    Effect.fail(apiError("FEED_UNAVAILABLE", "The research reports are unavailable; retry shortly", { retryable: true, headers: { "Retry-After": "2" } }))
  )

// ---------------------------------------------------------------------------------------------
// Parameters.

const boolParam = (description: string) =>
  param({
    description,
    schema: { type: "boolean", default: false },
    decode: (raw, name) => {
      if (raw === undefined || raw === "false" || raw === "0") return false
      if (raw === "true" || raw === "1") return true
      return validationFailed(name, `${name} must be true or false`)
    }
  })

const idQuery = (description: string) => stringParam(description, { maxLength: 128, message: (name) => `${name} must be an id of at most 128 characters` })

/** `limit` then `offset`, checked in that order (before the route's other parameters). */
const pageQuery = (max: number, dflt: number) => ({
  limit: intParam(`1 to ${max}, default ${dflt}`, { min: 1, max, default: dflt }),
  offset: intParam(`0 to ${offsetMax}`, { min: 0, max: offsetMax, default: 0 })
})
const versionParam = (description: string) => intParam(description, { min: 1, max: 1_000_000 })
/** Any segment reaches the service, which answers the plain 404 for an id it does not know. */
const idPath = { id: stringParam("A strategy of this account", { required: true, emptyIsValue: true }) }

const CreateBodyDoc = Schema.Struct({ name: Schema.String, definition: StrategyDefinitionDoc })
const VersionBodyDoc = Schema.Struct({ definition: StrategyDefinitionDoc })
const StatusBodyDoc = Schema.Struct({ status: Schema.Literal("retired") })

const common = {
  401: plainError("`{\"error\": \"invalid api key\"}`"),
  403: plainError("`{\"error\": \"requires Max\"}`")
} as const
const owned404 = { 404: plainError("`{\"error\": \"not found\"}`: unknown or another account's id") } as const

/** The body as an object with only the `allowed` top-level fields (an unknown one is refused, first named, like the definition's). */
const bodyWith =
  (allowed: ReadonlyArray<string>) =>
  (body: unknown): Record<string, unknown> | ApiError => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return validationFailed("body", "body: must be an object")
    const extra = Object.keys(body).find((k) => !allowed.includes(k))
    return extra === undefined ? (body as Record<string, unknown>) : validationFailed(extra, `${extra}: is not a known field`)
  }

export const strategyRoutes = (deps: StrategyRoutesDeps): ReadonlyArray<RouteDef> => {
  const headers = deps.authHeaders ?? ["authorization"]

  /** Max only: another plan is the plain 403. */
  const maxOnly = (req: Request): Effect.Effect<StrategyCaller, ApiError | Reply> =>
    Effect.flatMap(deps.authenticate(req), (caller) => (caller.plan !== "max" ? Effect.fail(json(403, REQUIRES_MAX_BODY)) : Effect.succeed(caller)))
  /** Strategy failures as the error table answers them (the plain 404, or the refusal). */
  const answer = (e: Effect.Effect<Reply, ApiError | StrategyError>): Effect.Effect<Reply, ApiError> =>
    Effect.catchIf(e, isStrategyError, answerFailure) as Effect.Effect<Reply, ApiError>
  const lab = { tags: ["strategy-lab"], auth: "bearer" as const, headers, authenticate: maxOnly }

  return [
    route({
      ...lab,
      method: "POST",
      path: "/v1/strategies",
      operationId: "createStrategy",
      summary: "Save a strategy draft (Max); its 14-day backtest starts at once",
      description: "Body `{name, definition}` (definition as for a replay). 20 saves (new strategies and versions) per account per UTC day.",
      body: decodedBody({ schema: CreateBodyDoc, maxBytes: strategyBodyMaxBytes, decode: bodyWith(["name", "definition"]) }),
      responses: {
        201: answerDoc("The strategy (status draft) with its running backtest", StrategyDetailDoc),
        400: refusal(["VALIDATION_FAILED"], "the first problem as `<path>: <message>`"),
        429: refusal(["RATE_LIMITED"], "with quota and used"),
        ...common
      },
      handler: (_req, { body }, caller) =>
        answer(Effect.map(deps.strategies.create(caller.accountId, { name: body.name, definition: body.definition }), (s) => json(201, s)))
    }),
    route({
      ...lab,
      method: "POST",
      path: "/v1/strategies/{id}/versions",
      operationId: "addStrategyVersion",
      summary: "Save a new version of a strategy (back to draft); its 14-day backtest starts at once",
      body: decodedBody({ schema: VersionBodyDoc, maxBytes: strategyBodyMaxBytes, decode: bodyWith(["definition"]) }),
      pathParams: idPath,
      responses: {
        201: answerDoc("The strategy at its new version", StrategyDetailDoc),
        400: refusal(["VALIDATION_FAILED"]),
        409: refusal(["VALIDATION_FAILED"], "(reason retired): the strategy is retired"),
        429: refusal(["RATE_LIMITED"], "with quota and used"),
        ...owned404,
        ...common
      },
      handler: (_req, { body, id }, caller) =>
        answer(Effect.map(deps.strategies.addVersion(caller.accountId, id, { definition: body.definition }), (s) => json(201, s)))
    }),
    route({
      ...lab,
      method: "PATCH",
      path: "/v1/strategies/{id}",
      operationId: "setStrategyStatus",
      summary: "Retire a strategy (the only status an owner sets; never paper or live)",
      body: decodedBody({ schema: StatusBodyDoc, maxBytes: 1024, decode: bodyWith(["status"]) }),
      pathParams: idPath,
      responses: {
        200: answerDoc("The strategy, retired", StrategyDetailDoc),
        400: refusal(["VALIDATION_FAILED"], "(field status): paper, live or an automatic status"),
        409: refusal(["VALIDATION_FAILED"], "(reason retired): already retired"),
        ...owned404,
        ...common
      },
      handler: (_req, { body, id }, caller) => answer(Effect.map(deps.strategies.setStatus(caller.accountId, id, body.status), (s) => json(200, s)))
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategies",
      operationId: "listStrategies",
      summary: "The account's strategies, newest first",
      query: {
        ...pageQuery(listLimitMax, listLimitDefault),
        status: enumParam("draft, backtested or retired", ["draft", "backtested", "retired"], { message: () => "status must be draft, backtested or retired" })
      },
      responses: { 200: answerDoc("`{strategies}`", StrategyList), 400: refusal(["VALIDATION_FAILED"]), ...common },
      handler: (_req, { limit, offset, status }, caller) =>
        answer(Effect.map(deps.strategies.list(caller.accountId, { limit, offset }, status), (strategies) => json(200, { strategies } satisfies typeof StrategyList.Type)))
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategies/{id}",
      operationId: "getStrategy",
      summary: "A strategy: status, versions and the newest backtest of the current (or `version`) version",
      pathParams: idPath,
      query: { version: versionParam("Show this version's backtest") },
      responses: { 200: answerDoc("The strategy", StrategyDetailDoc), ...owned404, ...common },
      handler: (_req, { id, version }, caller) => answer(Effect.map(deps.strategies.get(caller.accountId, id, version), (s) => json(200, s)))
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategies/{id}/trades",
      operationId: "strategyTrades",
      summary: "The trades of a strategy's newest finished backtest (or of `version`'s)",
      pathParams: idPath,
      query: { ...pageQuery(tradesLimitMax, tradesLimitDefault), version: versionParam("This version's newest finished backtest") },
      responses: { 200: answerDoc("`{run_id, trades}`", RunTrades), ...owned404, ...common },
      handler: (_req, { id, limit, offset, version }, caller) =>
        answer(
          Effect.map(deps.strategies.trades(caller.accountId, { limit, offset }, version === undefined ? { strategyId: id } : { strategyId: id, version }), (t) =>
            json(200, t)
          )
        )
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategies/{id}/comparison",
      operationId: "strategyComparison",
      summary: "Backtests side by side: the newest finished run of each version, or the named runs",
      pathParams: idPath,
      query: {
        runs: param({
          description: `Up to ${comparisonRunsMax} run ids of this strategy (comma-separated)`,
          schema: { type: "string" },
          decode: (raw, name) => {
            if (raw === undefined) return undefined
            const runs = raw.split(",")
            return runs.length > comparisonRunsMax || runs.some((r) => r.length === 0 || r.length > 128)
              ? validationFailed(name, `runs must name 1 to ${comparisonRunsMax} run ids`)
              : runs
          }
        })
      },
      responses: { 200: answerDoc("`{strategy_id, runs, best_pnl_run_id, best_passing_run_id}`", ComparisonDoc), ...owned404, ...common },
      handler: (_req, { id, runs }, caller) => answer(Effect.map(deps.strategies.comparison(caller.accountId, id, runs), (c) => json(200, c)))
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategy-runs",
      operationId: "listStrategyRuns",
      summary: "The account's backtest runs, newest first",
      query: { ...pageQuery(listLimitMax, listLimitDefault), strategy_id: idQuery("Only this strategy's runs") },
      responses: { 200: answerDoc("`{runs}`", RunList), ...owned404, ...common },
      handler: (_req, { limit, offset, strategy_id }, caller) =>
        answer(Effect.map(deps.strategies.runs(caller.accountId, { limit, offset }, strategy_id), (runs) => json(200, { runs } satisfies typeof RunList.Type)))
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/trades",
      operationId: "listStrategyTrades",
      summary: "Backtest trades: of one run (`run_id`), of a strategy's newest finished run (`strategy_id`), or of every run",
      query: { ...pageQuery(tradesLimitMax, tradesLimitDefault), run_id: idQuery("One run of this account"), strategy_id: idQuery("A strategy of this account") },
      responses: { 200: answerDoc("`{run_id, trades}`", RunTrades), ...owned404, ...common },
      handler: (_req, { limit, offset, run_id: runId, strategy_id: strategyId }, caller) =>
        answer(
          Effect.map(
            deps.strategies.trades(caller.accountId, { limit, offset }, {
              ...(runId !== undefined ? { runId } : {}),
              ...(strategyId !== undefined ? { strategyId } : {})
            }),
            (t) => json(200, t)
          )
        )
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategy-lab/edges",
      operationId: "researchEdges",
      summary: "Per pattern: forward returns after signals at 1 h, 4 h and 24 h, net of a 2.5% cost (Solana; hourly snapshot)",
      query: {
        days: intParam("Signals of the last 1 to 30 days, default 7", { min: 1, max: 30, default: 7 }),
        min_n: intParam("Leave out patterns with fewer priceable signals (1 to 10000, default 10)", { min: 1, max: 10_000, default: 10 }),
        include_peak: boolParam("Also the peak return within 24 h"),
        snapshot: enumParam("hourly (default: as of the start of the hour, cached) or live", ["hourly", "live"], {
          default: "hourly",
          message: () => "snapshot must be hourly or live"
        })
      },
      responses: { 200: answerDoc("The edges report", EdgesDoc), 400: refusal(["VALIDATION_FAILED"]), 503: refusal(["FEED_UNAVAILABLE"]), ...common },
      handler: (_req, { days, include_peak: includePeak, min_n: minN, snapshot }) =>
        Effect.map(deps.research.edges({ days, minN, includePeak, live: snapshot === "live" }).pipe(Effect.catchAll(researchUnavailable)), (report) =>
          json(200, report)
        )
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategy-lab/runners",
      operationId: "researchRunners",
      summary: "Tokens that ran after signals (Solana)",
      query: {
        hours: intParam("Signals of the last 1 to 168 hours, default 24", { min: 1, max: 168, default: 24 }),
        min_wallets: intParam("Distinct wallets in the token's signals, 1 to 50, default 2", { min: 1, max: 50, default: 2 }),
        min_multiple: intParam("Peak over entry at least this (1 to 1000, default 2)", { min: 1, max: 1000, default: 2 })
      },
      responses: { 200: answerDoc("`{tokens}` (at most 500)", RunnersDoc), 400: refusal(["VALIDATION_FAILED"]), 503: refusal(["FEED_UNAVAILABLE"]), ...common },
      handler: (_req, { hours, min_multiple: minMultiple, min_wallets: minWallets }) =>
        Effect.map(deps.research.runners({ hours, minWallets, minMultiple }).pipe(Effect.catchAll(researchUnavailable)), (r) => json(200, r))
    }),
    route({
      ...lab,
      method: "GET",
      path: "/v1/strategy-lab/first-signals",
      operationId: "researchFirstSignals",
      summary: "Tokens whose first signal fired in the last `minutes` (up to 180), and what followed (Solana; up to 500 tokens)",
      query: { minutes: intParam("1 to 180, default 60", { min: 1, max: 180, default: 60 }) },
      responses: { 200: answerDoc("`{tokens, truncated}`", FirstSignalsDoc), 400: refusal(["VALIDATION_FAILED"]), 503: refusal(["FEED_UNAVAILABLE"]), ...common },
      handler: (_req, { minutes }) => Effect.map(deps.research.firstSignals({ minutes }).pipe(Effect.catchAll(researchUnavailable)), (r) => json(200, r))
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
  readonly strategies?: Omit<StrategiesOptions, "runBacktest">
}): Effect.Effect<{ readonly routes: ReadonlyArray<RouteDef>; readonly strategies: StrategiesShape }, SqlError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const strategies = yield* makeStrategies({ ...deps.strategies, runBacktest: deps.runBacktest })
    const research = makeResearch({ clickhouse: deps.clickhouse })
    const routes = strategyRoutes({
      strategies,
      research,
      authenticate: deps.authenticate,
      ...(deps.authHeaders !== undefined ? { authHeaders: deps.authHeaders } : {})
    })
    return { routes, strategies }
  })
