/**
 * Spec 4.5 `GET /v1/assets`, `/v1/assets/{id}`: the quote assets tokens trade against (sol, usdc,
 * svc, eth, usdg), each with its USD price (null while unpriced).
 */
import { Effect } from "effect"
import { formatUnits } from "../../../src/domain/CurveMath.js"
import { type QuotePair, QuotePairs } from "../../../src/domain/QuotePairs.js"
import type { UsdPrice } from "../../../src/services/prices/PriceSource.js"
import { json } from "../../Http.js"
import { stringParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { iso, type ReadDeps, readRoute } from "./internal/shared.js"
import { answer, plainError } from "../../OpenApi.js"
import { AssetRow, Assets } from "./internal/responses.js"

const assetRow = (pair: QuotePair, price: UsdPrice | null) => ({
  id: pair.id,
  chain: pair.chain,
  symbol: pair.symbol,
  address: pair.address,
  decimals: pair.decimals,
  native: pair.isNative,
  price_usd: price === null ? null : formatUnits(price.usdRaw, price.scale),
  price_as_of: price === null ? null : iso(price.asOfMs),
  price_source: price?.source ?? null
})

export const assetRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(deps, { path: "/v1/assets", operationId: "dataAssets", summary: "The quote assets tokens trade against, with their USD prices", responses: { 200: answer("The quote assets with their USD prices", Assets) } }, () =>
    Effect.map(deps.data.usdOfPairs(QuotePairs), (usd) => json(200, { assets: QuotePairs.map((p) => assetRow(p, usd.get(p.id) ?? null)) } satisfies typeof Assets.Type))
  ),
  readRoute(
    deps,
    {
      path: "/v1/assets/{id}",
      operationId: "dataAsset",
      summary: "One quote asset (sol, usdc, svc, eth, usdg) with its USD price",
      pathParams: { id: stringParam("The asset's id", { required: true, emptyIsValue: true }) },
      responses: { 200: answer("One quote asset with its USD price", AssetRow), 404: plainError("{\"error\": \"asset not found\"}") }
    },
    ({ id }) => Effect.map(deps.data.asset(id), ({ pair, price }) => json(200, assetRow(pair, price) satisfies typeof AssetRow.Type))
  )
]
