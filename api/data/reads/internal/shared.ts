/**
 * What the data service's read routes share: their dependencies and caller, the route shape
 * (GET, bearer, tagged `market-data`, built with the router's `route()`: authenticated, then
 * every declared parameter decoded, before the handler runs), the common parameter declarations,
 * and the translations every read makes: a `MarketDataError` (history outage, unknown token, ...)
 * answers through the one error table (`api/ErrorTable.ts`), and timestamps are ISO 8601 or null.
 */
import { Effect } from "effect"
import type { MarketIndexShape } from "../../../../actors/MarketIndex.js"
import type { ChainId } from "../../../../ingest/ChainEvent.js"
import type { ApiError } from "../../../../src/domain/ApiError.js"
import type { PlanId } from "../../../../src/domain/Plans.js"
import { isMarketDataError, type MarketDataError, type MarketDataShape } from "../../../../src/services/marketdata/MarketData.js"
import { answerFailure } from "../../../ErrorTable.js"
import { json, type Reply, type Request } from "../../../Http.js"
import { chainParam, type Decoded, enumParam, intParam, type Param, type Params } from "../../../QueryParams.js"
import { type Input, type ResponseDoc, route, type RouteDef } from "../../../Router.js"
import { plainError, refusal } from "../../../OpenApi.js"

/** The caller's plan (the plan table's ids). */
export type DataPlan = PlanId

export interface DataCaller {
  readonly accountId: string
  readonly plan: DataPlan
}

/** What every read needs: the market-data service (history, lookups, USD prices), the live markets, the clock and the data bearer. */
export interface ReadDeps {
  readonly data: MarketDataShape
  readonly index: MarketIndexShape
  readonly nowMs: () => number
  /** The data bearer: the caller, or a refusal (an `ApiError`, or a ready reply such as the plain 401). */
  readonly authenticate: (req: Request) => Effect.Effect<DataCaller, ApiError | Reply>
}

/** What a read's handler may fail with: a refusal of its own, or the service's failure (answered through the table). */
export type ReadFailure = ApiError | MarketDataError

export const iso = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString())

/** The plain 404 of the directory reads (`{"error": "<what> not found"}`). */
export const notFound = (what: string): Reply => json(404, { error: `${what} not found` })

export const DAY_MS = 86_400_000
const AUTH_HEADERS = ["authorization", "x-api-key"]

// ---------------------------------------------------------------------------------------------
// Parameter declarations (decoded by the router, documented from the same objects)

/** `chain`: solana (default) or hood. */
export const chainQ = chainParam("solana (default) or hood", { default: "solana" })

/** `chain` of a Solana-only read: solana (the default); hood is refused as out of scope. */
export const solanaQ = enumParam("solana only (the default)", ["solana"], {
  default: "solana",
  message: (raw) => (raw === "hood" ? "This read covers solana only" : `Unknown chain '${raw}'; expected solana or hood`)
})

/**
 * An integer parameter in `min..max` (default `dflt`); with `bounds` its refusal also carries
 * `minimum` and `limit` (the wallet, social and directory reads').
 */
export const intQ = (description: string, min: number, max: number, dflt: number, bounds = false): Param<number> =>
  intParam(description, { min, max, default: dflt, boundsInError: bounds })

export const standardResponses: Readonly<Record<number, ResponseDoc>> = {
  400: refusal(["VALIDATION_FAILED"], "naming the field"),
  401: plainError("{\"error\": \"invalid api key\"}"),
  503: refusal(["FEED_UNAVAILABLE"], "retryable")
}

// ---------------------------------------------------------------------------------------------
// The route shape

export interface ReadRouteSpec<P extends Params, Q extends Params> {
  readonly path: string
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  /** Every `{name}` of the path. */
  readonly pathParams?: P
  readonly query?: Q
  /** Responses besides the 200 and the standard refusals. */
  readonly responses?: Readonly<Record<number, ResponseDoc>>
}

/** A GET read on the data service: bearer-authenticated, then its declared parameters decoded, then `f`. */
export const readRoute = <P extends Params = {}, Q extends Params = {}>(
  deps: Pick<ReadDeps, "authenticate">,
  spec: ReadRouteSpec<P, Q>,
  f: (input: Input<P, Q, never>, caller: DataCaller) => Effect.Effect<Reply, ReadFailure>
): RouteDef =>
  route<P, Q, never, DataCaller>({
    method: "GET",
    path: spec.path,
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    tags: ["market-data"],
    auth: "bearer",
    ...(spec.pathParams === undefined ? {} : { pathParams: spec.pathParams }),
    ...(spec.query === undefined ? {} : { query: spec.query }),
    headers: AUTH_HEADERS,
    responses: { 200: { description: spec.summary }, ...standardResponses, ...spec.responses },
    authenticate: deps.authenticate,
    handler: (_req, input, caller) => Effect.catchIf(f(input, caller), isMarketDataError, answerFailure)
  })

/** A read under `{base}/{address}` (`address` in the path, `chain` first in the query). */
export interface AddressReadSpec<Q extends Params> {
  /** After `{base}/{address}`. */
  readonly suffix: string
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  /** Besides `chain`. */
  readonly query?: Q
  readonly responses?: Readonly<Record<number, ResponseDoc>>
}

/** What an address read's handler gets: its own decoded parameters, the raw `address` and the `chain`. */
export type AddressInput<Q extends Params> = Decoded<Q> & { readonly address: string; readonly chain: ChainId }

export const addressRoute = <Q extends Params = {}>(
  deps: Pick<ReadDeps, "authenticate">,
  base: string,
  params: { readonly address: Param<string>; readonly chain: Param<ChainId> },
  spec: AddressReadSpec<Q>,
  f: (input: AddressInput<Q>, caller: DataCaller) => Effect.Effect<Reply, ReadFailure>
): RouteDef =>
  readRoute(
    deps,
    {
      path: `${base}/{address}${spec.suffix}`,
      operationId: spec.operationId,
      summary: spec.summary,
      ...(spec.description === undefined ? {} : { description: spec.description }),
      pathParams: { address: params.address },
      query: { chain: params.chain, ...spec.query },
      ...(spec.responses === undefined ? {} : { responses: spec.responses })
    },
    (input, caller) => f(input as unknown as AddressInput<Q>, caller)
  )
