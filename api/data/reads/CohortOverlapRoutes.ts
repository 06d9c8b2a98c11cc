/**
 * Spec 4.5 `GET /v1/market/cohort-overlap?mints=`: the wallets shared by the holders (or traders)
 * of `COHORT_MIN` to `COHORT_MAX` tokens, with each pair's overlap (`CohortOverlap`).
 */
import { Effect } from "effect"
import { inAllCohorts, overlapPairs } from "../../../src/services/marketdata/CohortOverlap.js"
import { json } from "../../Http.js"
import { enumParam, isApiError } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, intQ, type ReadDeps, readRoute } from "./internal/shared.js"
import { addressList, addressListQ } from "./internal/token.js"
import { answer, refusal } from "../../OpenApi.js"
import { CohortOverlap } from "./internal/responses.js"

export const COHORT_MIN = 2
export const COHORT_MAX = 5

export const cohortOverlapRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/cohort-overlap",
      operationId: "dataCohortOverlap",
      summary: "Wallets shared by the holders (or traders) of 2 to 5 tokens",
      query: {
        chain: chainQ,
        mints: addressListQ("Comma-separated token addresses, 2 to 5", COHORT_MIN, COHORT_MAX),
        basis: enumParam("holders (default: net position > 0) or traders (any trade)", ["holders", "traders"], { default: "holders" }),
        limit: intQ("Shared wallets listed", 0, 500, 100)
      },
      responses: { 200: answer("Cohort sizes, pairwise overlaps and the shared wallets", CohortOverlap), 404: refusal(["MARKET_NOT_FOUND"], "a token in mints is unknown") }
    },
    ({ chain, basis, limit, ...input }) =>
      Effect.gen(function* () {
        const mints = addressList(input.mints, "mints", chain, COHORT_MIN, COHORT_MAX)
        if (isApiError(mints)) return yield* mints
        for (const m of mints) yield* deps.data.tokenIn(chain, m, "mints")
        const c = yield* deps.data.cohorts(chain, mints, basis)
        return json(200, {
          chain,
          basis,
          cohorts: c.sizes.map((s) => ({ address: s.mint, wallets: s.wallets })),
          pairs: overlapPairs(mints, c.sizes, c.shared).map((p) => ({ a: p.a, b: p.b, shared: p.shared, overlap_bps: p.overlapBps })),
          in_all: inAllCohorts(c.shared, mints.length),
          in_two_or_more: c.shared.length,
          truncated: c.truncated,
          wallets: c.shared.slice(0, limit).map((w) => ({ wallet: w.wallet, mints: w.mints }))
        } satisfies typeof CohortOverlap.Type)
      })
  )
]
