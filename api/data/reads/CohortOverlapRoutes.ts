/**
 * Spec 4.5 `GET /v1/market/cohort-overlap?mints=`: the wallets shared by the holders (or traders)
 * of `COHORT_MIN` to `COHORT_MAX` tokens, with each pair's overlap (`CohortOverlap`).
 */
import { Effect } from "effect"
import { cohorts } from "../../../clickhouse/queries/TokenReads.js"
import { apiError } from "../../../src/domain/ApiError.js"
import { inAllCohorts, overlapPairs } from "../../../src/services/marketdata/CohortOverlap.js"
import { json } from "../../Http.js"
import { isApiError, parseChainParam, parseEnumParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, intQ, type ReadDeps, readRoute, queryOf } from "./internal/shared.js"
import { parseAddressList, parseIntQ, tokenRead as ch } from "./internal/token.js"

export const COHORT_MIN = 2
export const COHORT_MAX = 5

export const cohortOverlapRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/cohort-overlap",
      operationId: "dataCohortOverlap",
      summary: "Wallets shared by the holders (or traders) of 2 to 5 tokens",
      query: [
        chainQ,
        { name: "mints", required: true, description: "Comma-separated token addresses, 2 to 5", schema: { type: "string" } },
        { name: "basis", description: "holders (default: net position > 0) or traders (any trade)", schema: { type: "string", enum: ["holders", "traders"], default: "holders" } },
        intQ("limit", "Shared wallets listed", 0, 500, 100)
      ]
    },
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChainParam(q)
        if (isApiError(chain)) return yield* chain
        const mints = parseAddressList(q, "mints", chain, COHORT_MIN, COHORT_MAX)
        if (isApiError(mints)) return yield* mints
        const basis = parseEnumParam(q, "basis", ["holders", "traders"] as const, "holders")
        if (isApiError(basis)) return yield* basis
        const limit = parseIntQ(q, "limit", 0, 500, 100)
        if (isApiError(limit)) return yield* limit
        const unknown = mints.find((m) => deps.index.market(chain, m) === undefined)
        if (unknown !== undefined) return yield* apiError("MARKET_NOT_FOUND", `No token ${unknown} on ${chain}`, { field: "mints" })
        const c = yield* ch(cohorts(deps.clickhouse, chain, mints, basis))
        return json(200, {
          chain,
          basis,
          cohorts: c.sizes.map((s) => ({ address: s.mint, wallets: s.wallets })),
          pairs: overlapPairs(mints, c.sizes, c.shared).map((p) => ({ a: p.a, b: p.b, shared: p.shared, overlap_bps: p.overlapBps })),
          in_all: inAllCohorts(c.shared, mints.length),
          in_two_or_more: c.shared.length,
          truncated: c.truncated,
          wallets: c.shared.slice(0, limit).map((w) => ({ wallet: w.wallet, mints: w.mints }))
        })
      })
  )
]
