/**
 * Spec 4.5 `GET /v1/market/token-search?q=`: name, ticker or address to token, ranked by
 * `TokenSearch` (the query is 1 to `SEARCH_QUERY_MAX` characters after trimming).
 */
import { Effect } from "effect"
import { marketRecord } from "../../../actors/market/MarketRecord.js"
import { validationFailed } from "../../../src/domain/ApiError.js"
import { SEARCH_QUERY_MAX, searchTokens } from "../../../src/services/marketdata/TokenSearch.js"
import { json } from "../../Http.js"
import { isApiError, parseChainParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, intQ, type ReadDeps, readRoute, queryOf } from "./internal/shared.js"
import { parseIntQ, pricesOf, priceUsdOf, tokenMoney } from "./internal/token.js"

export const tokenSearchRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/token-search",
      operationId: "dataTokenSearch",
      summary: "Find tokens by name, ticker or address",
      query: [chainQ, { name: "q", required: true, description: `1 to ${SEARCH_QUERY_MAX} characters`, schema: { type: "string" } }, intQ("limit", "Rows", 1, 50, 20)]
    },
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChainParam(q)
        if (isApiError(chain)) return yield* chain
        const text = (q.get("q") ?? "").trim()
        if (text === "" || text.length > SEARCH_QUERY_MAX) return yield* validationFailed("q", `q must be 1 to ${SEARCH_QUERY_MAX} characters`)
        const limit = parseIntQ(q, "limit", 1, 50, 20)
        if (isApiError(limit)) return yield* limit
        const found = searchTokens(deps.index, chain, text, limit)
        const usd = yield* pricesOf(
          deps,
          found.hits.map((h) => h.core)
        )
        return json(200, {
          chain,
          q: text,
          matched: found.matched,
          results: found.hits.map(({ core, match }) => {
            const r = marketRecord(core, deps.index.clockMs(chain))
            return {
              address: core.mint,
              name: core.identity.name,
              symbol: core.identity.symbol,
              image: r.metadata.image,
              match,
              lifecycle: core.lifecycle,
              price: r.price,
              price_usd: priceUsdOf(tokenMoney(core, usd)),
              market_cap: r.marketCap,
              volume_24h: r.volume24h,
              created_at: r.createdAt
            }
          })
        })
      })
  )
]
