/**
 * Spec 4.5 `GET /v1/launches/final-stretch`: the Solana curve tokens closest to graduating, plus
 * those graduated in the last `FINAL_STRETCH_GRADUATED_MS` (`MarketRankings`).
 */
import { Effect } from "effect"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { marketRecord } from "../../../actors/market/MarketRecord.js"
import { closestToGraduation, graduatedMarkets, remainingToGraduationRaw } from "../../../src/services/marketdata/MarketRankings.js"
import { json } from "../../Http.js"
import type { RouteDef } from "../../Router.js"
import { intQ, iso, type ReadDeps, readRoute, solanaQ } from "./internal/shared.js"
import { priceUsdOf, tokenMoney } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { FinalStretch } from "./internal/responses.js"

export const FINAL_STRETCH_GRADUATED_MS = 10 * 60_000

export const finalStretchRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/launches/final-stretch",
      operationId: "dataFinalStretch",
      summary: "Solana curve tokens closest to graduating, plus those graduated in the last 10 minutes",
      query: { chain: solanaQ, limit: intQ("Curve tokens", 1, 100, 20) },
      responses: { 200: answer("Curves closest to graduating and the last 10 minutes' graduations", FinalStretch) }
    },
    ({ chain, limit }) =>
      Effect.gen(function* () {
        const now = deps.nowMs()
        const closest = closestToGraduation(deps.index.markets(), chain, limit)
        const graduations = yield* deps.data.recentGraduations(chain, now - FINAL_STRETCH_GRADUATED_MS)
        const graduated = graduatedMarkets(graduations, (mint) => deps.index.market(chain, mint))
        const usd = yield* deps.data.usdOfMarkets([...closest, ...graduated.map((g) => g.core)])
        const row = (core: MarketCore) => {
          const t = tokenMoney(core, usd)
          const r = marketRecord(core, deps.index.clockMs(chain), deps.index.metadata())
          const remainingRaw = remainingToGraduationRaw(core)
          return {
            address: core.mint,
            name: core.identity.name,
            symbol: core.identity.symbol,
            lifecycle: core.lifecycle,
            progress_bps: r.progressBps,
            raised: t.quote(core.curveState.realQuoteRaw),
            threshold: t.quote(core.params.thresholdRaw),
            remaining: t.quote(remainingRaw),
            remaining_usd: t.usd(remainingRaw),
            price: r.price,
            price_usd: priceUsdOf(t),
            market_cap: r.marketCap,
            volume_1h: r.volume1h
          }
        }
        return json(200, {
          chain,
          as_of: iso(now),
          curve: closest.map(row),
          graduated: graduated.map(({ graduation, core }) => ({ ...row(core), graduated_at: iso(graduation.graduatedAtMs) }))
        } satisfies typeof FinalStretch.Type)
      })
  )
]
