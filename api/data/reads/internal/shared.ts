/**
 * What the data service's read routes share: their dependencies and caller, the route shape
 * (GET, bearer, tagged `market-data`, authenticated before the handler runs), the common
 * parameter documents, and the translations every read makes: a ClickHouse failure is the
 * retryable 503 `FEED_UNAVAILABLE` (logged with its cause; the client sees only the code), and
 * timestamps are ISO 8601 or null.
 */
import { Effect } from "effect"
import type { MarketIndexShape } from "../../../../actors/MarketIndex.js"
import type { ClickHouseShape } from "../../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../../clickhouse/ClickHouseError.js"
import { type ApiError, apiError } from "../../../../src/domain/ApiError.js"
import type { PriceSourceShape } from "../../../../src/services/prices/PriceSource.js"
import { json, type Reply, type Request } from "../../../Http.js"
import { isApiError } from "../../../QueryParams.js"
import type { ParamDoc, ResponseDoc, RouteDef } from "../../../Router.js"

export type DataPlan = "free" | "pro" | "max"

export interface DataCaller {
  readonly accountId: string
  readonly plan: DataPlan
}

/** What every read needs: the live markets, history, USD prices, the clock and the data bearer. */
export interface ReadDeps {
  readonly clickhouse: ClickHouseShape
  readonly index: MarketIndexShape
  readonly prices: PriceSourceShape
  readonly nowMs: () => number
  /** The data bearer: the caller, or a refusal (an `ApiError`, or a ready reply such as the plain 401). */
  readonly authenticate: (req: Request) => Effect.Effect<DataCaller, ApiError | Reply>
}

export const feedUnavailable = (e: ClickHouseError): ApiError =>
  apiError("FEED_UNAVAILABLE", `Market history is unavailable; retry shortly (${e.reason})`, { retryable: true, headers: { "Retry-After": "2" } })

/** A ClickHouse read for `what` (e.g. "token read"); its failure is logged and answered 503. */
export const chRead =
  (what: string) =>
  <A>(effect: Effect.Effect<A, ClickHouseError>): Effect.Effect<A, ApiError> =>
    effect.pipe(
      Effect.tapError((e) => Effect.logWarning(`${what} failed: ${e.message}`)),
      Effect.mapError(feedUnavailable)
    )

export const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString())

/** The plain 404 of the directory reads (`{"error": "<what> not found"}`). */
export const notFound = (what: string): Reply => json(404, { error: `${what} not found` })

export const DAY_MS = 86_400_000

export const queryOf = (req: Request): URLSearchParams => new URLSearchParams(req.query)
const AUTH_HEADERS = ["authorization", "x-api-key"]

// ---------------------------------------------------------------------------------------------
// Parameter documents

export const paramQ = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }, required = false): ParamDoc => ({
  name,
  description,
  schema,
  ...(required ? { required: true } : {})
})
export const intQ = (name: string, description: string, min: number, max: number, dflt: number): ParamDoc =>
  paramQ(name, description, { type: "integer", minimum: min, maximum: max, default: dflt })
export const chainQ = paramQ("chain", "solana (default) or hood", { type: "string", enum: ["solana", "hood"], default: "solana" })
export const solanaQ = paramQ("chain", "solana only (the default)", { type: "string", enum: ["solana"], default: "solana" })

export const standardResponses: Readonly<Record<number, ResponseDoc>> = {
  400: { description: "VALIDATION_FAILED naming the field" },
  401: { description: "{\"error\": \"invalid api key\"}" },
  503: { description: "FEED_UNAVAILABLE (retryable)" }
}

// ---------------------------------------------------------------------------------------------
// The route shape

/** Authenticates, then runs the read; a refusal reply passes through as the answer. */
export const authed =
  (deps: Pick<ReadDeps, "authenticate">, f: (req: Request, caller: DataCaller) => Effect.Effect<Reply, ApiError>) =>
  (req: Request): Effect.Effect<Reply, ApiError> =>
    deps.authenticate(req).pipe(
      Effect.matchEffect({
        onFailure: (e) => (isApiError(e) ? Effect.fail(e) : Effect.succeed(e)),
        onSuccess: (caller) => f(req, caller)
      })
    )

export interface ReadRouteSpec {
  readonly path: string
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  readonly pathParams?: ReadonlyArray<ParamDoc>
  readonly query: ReadonlyArray<ParamDoc>
  /** Responses besides the 200 and the standard refusals. */
  readonly responses?: Readonly<Record<number, ResponseDoc>>
}

/** A GET read on the data service: bearer-authenticated, tagged `market-data`. */
export const readRoute = (
  deps: Pick<ReadDeps, "authenticate">,
  spec: ReadRouteSpec,
  f: (req: Request, caller: DataCaller) => Effect.Effect<Reply, ApiError>
): RouteDef => ({
  method: "GET",
  path: spec.path,
  operationId: spec.operationId,
  summary: spec.summary,
  ...(spec.description === undefined ? {} : { description: spec.description }),
  tags: ["market-data"],
  auth: "bearer",
  ...(spec.pathParams === undefined ? {} : { pathParams: spec.pathParams }),
  query: spec.query,
  headers: AUTH_HEADERS,
  responses: { 200: { description: spec.summary }, ...standardResponses, ...spec.responses },
  handler: authed(deps, f)
})
