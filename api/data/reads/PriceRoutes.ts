/**
 * Spec 4.5 `GET /v1/market/prices?addresses=`: the prices of up to `PRICES_MAX` tokens on one
 * chain, in the order asked; addresses the index does not know are listed under `missing`.
 */
import { Effect } from "effect"
import { marketRecord } from "../../../actors/market/MarketRecord.js"
import { json } from "../../Http.js"
import { isApiError } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, type ReadDeps, readRoute } from "./internal/shared.js"
import { addressList, addressListQ, priceUsdOf, tokenMoney } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { PriceRow, Prices } from "./internal/responses.js"

export const PRICES_MAX = 60

export const priceRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/prices",
      operationId: "dataPrices",
      summary: "Prices of up to 60 tokens",
      query: { chain: chainQ, addresses: addressListQ("Comma-separated token addresses, 1 to 60", 1, PRICES_MAX) },
      responses: { 200: answer("Prices of the known tokens and the unknown addresses", Prices) }
    },
    (input) =>
      Effect.gen(function* () {
        const { chain } = input
        const addresses = addressList(input.addresses, "addresses", chain, 1, PRICES_MAX)
        if (isApiError(addresses)) return yield* addresses
        const cores = addresses.map((a) => deps.index.market(chain, a))
        const usd = yield* deps.data.usdOfMarkets(cores)
        const rows: Array<typeof PriceRow.Type> = []
        const missing: Array<string> = []
        addresses.forEach((a, i) => {
          const core = cores[i]
          if (core === undefined) return missing.push(a)
          const t = tokenMoney(core, usd)
          const r = marketRecord(core, deps.index.clockMs(chain), deps.index.metadata())
          rows.push({ address: a, symbol: core.identity.symbol, quote_asset: t.quoteAsset, price: r.price, price_usd: priceUsdOf(t), market_cap: r.marketCap, lifecycle: core.lifecycle, last_trade_at: r.lastTradeAt })
        })
        return json(200, { chain, prices: rows, missing } satisfies typeof Prices.Type)
      })
  )
]
