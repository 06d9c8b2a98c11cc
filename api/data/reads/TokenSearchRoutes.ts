/**
 * Spec 4.5 `GET /v1/market/token-search?q=`: name, ticker or address to token, ranked by
 * `TokenSearch` (the query is 1 to `SEARCH_QUERY_MAX` characters after trimming).
 */
import { Effect } from "effect"
import { marketRecord } from "../../../actors/market/MarketRecord.js"
import { validationFailed } from "../../../src/domain/ApiError.js"
import { SEARCH_QUERY_MAX, searchTokens } from "../../../src/services/marketdata/TokenSearch.js"
import { json } from "../../Http.js"
import { param } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, intQ, type ReadDeps, readRoute } from "./internal/shared.js"
import { priceUsdOf, tokenMoney } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { TokenSearch } from "./internal/responses.js"

/** `q`: the query, trimmed, 1 to `SEARCH_QUERY_MAX` characters. */
const searchQ = param({
  description: `1 to ${SEARCH_QUERY_MAX} characters`,
  required: true,
  schema: { type: "string", maxLength: SEARCH_QUERY_MAX },
  decode: (raw, name) => {
    const text = (raw ?? "").trim()
    return text === "" || text.length > SEARCH_QUERY_MAX ? validationFailed(name, `q must be 1 to ${SEARCH_QUERY_MAX} characters`) : text
  }
})

export const tokenSearchRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/token-search",
      operationId: "dataTokenSearch",
      summary: "Find tokens by name, ticker or address",
      query: { chain: chainQ, q: searchQ, limit: intQ("Rows", 1, 50, 20) },
      responses: { 200: answer("Tokens matching by address, ticker or name", TokenSearch) }
    },
    ({ chain, q: text, limit }) =>
      Effect.gen(function* () {
        const found = searchTokens(deps.index, chain, text, limit)
        const usd = yield* deps.data.usdOfMarkets(found.hits.map((h) => h.core)
        )
        return json(200, {
          chain,
          q: text,
          matched: found.matched,
          results: found.hits.map(({ core, match }) => {
            const r = marketRecord(core, deps.index.clockMs(chain), deps.index.metadata())
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
        } satisfies typeof TokenSearch.Type)
      })
  )
]
