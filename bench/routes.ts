/**
 * The route table both bench servers serve: the routes `src/MainApi.ts` mounts (launch
 * configuration, plans, probes, OpenAPI, and the market reads over an index of 1,000 synthetic
 * markets), built the same way but with no storage, so `/readyz` has no checks. One table, two servers: any difference measured is the server's.
 */
import { healthRoutes } from "../api/routes/HealthRoutes.js"
import { launchConfigRoutes } from "../api/routes/LaunchConfigRoutes.js"
import { withOpenApi } from "../api/routes/OpenApiRoute.js"
import { planRoutes } from "../api/routes/PlanRoutes.js"
import { marketRoutes } from "../api/routes/MarketRoutes.js"
import { marketActorDefinition } from "../actors/MarketActors.js"
import { MarketIndexStore } from "../actors/MarketIndex.js"
import type { MarketState } from "../actors/market/MarketActor.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import { SVC_CURVE_PROGRAM_ID } from "../src/chain/solana/program/ProgramIds.js"
import type { RouteDef } from "../api/Router.js"
import { DefaultDevBuyCeilings } from "../src/domain/Economics.js"
import { resolvePlans } from "../src/domain/Plans.js"

/** Markets in the bench's index, each with a few trades, so the record and quote routes read real snapshots. */
const BENCH_MARKETS = 1_000
export const BENCH_MINT = `Bench${"1".repeat(38)}`

const benchIndex = (): MarketIndexStore => {
  const index = new MarketIndexStore()
  const definition = marketActorDefinition()
  const clock = new ChainClock("solana")
  const states: Array<readonly [string, MarketState | undefined]> = []
  for (let i = 0; i < BENCH_MARKETS; i++) {
    const mint = i === 0 ? BENCH_MINT : `Bench${String(i).replace(/0/g, "z").padStart(38, "A")}`
    const m = new SimMarket(clock, { mint })
    let state: MarketState | undefined
    for (const e of [m.created(), ...m.buy("trader", 2n * 10n ** 9n), m.sell("trader", 10n ** 12n)]) state = definition.step(state, e)[0]
    states.push([`solana:${mint}`, state])
  }
  index.publish(states)
  index.setWarming(false)
  return index
}

/** PROMO_MAX_DAYS's default in AppConfig. */
const PROMO_MAX_DAYS = 30

export const benchRoutes = (): ReadonlyArray<RouteDef> =>
  withOpenApi(
    [
      ...healthRoutes([]),
      ...launchConfigRoutes(DefaultDevBuyCeilings),
      ...planRoutes(resolvePlans({}, PROMO_MAX_DAYS), PROMO_MAX_DAYS),
      ...marketRoutes({ index: benchIndex(), nowMs: () => Date.now(), curveProgram: SVC_CURVE_PROGRAM_ID, quoteLimitPerMin: 1e9 })
    ],
    { title: "curvestream (bench)", description: "The static route table, served for benchmarks" }
  )

/** HTTP_MAX_BODY_BYTES's default in AppConfig (no route in this table takes a body). */
export const BENCH_MAX_BODY_BYTES = 256 * 1024
