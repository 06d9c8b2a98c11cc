/**
 * The main listener's route table, once: `src/MainApi.ts` fills it with the services in context,
 * `clients/typescript/documents.ts` with dependencies no construction reads (the OpenAPI document
 * the typed client is generated from). A route group added here is served and documented alike.
 */
import { type AccountStackRouteDeps, accountStackRoutes } from "./auth/Adapters.js"
import { agentRoutes, type AgentRoutesOptions } from "./routes/AgentRoutes.js"
import { atomicLaunchRoutes, type AtomicLaunchRoutesOptions } from "./routes/AtomicLaunchRoutes.js"
import { feeRoutes, type FeeRoutesOptions } from "./routes/FeeRoutes.js"
import { healthRoutes } from "./routes/HealthRoutes.js"
import { launchConfigRoutes } from "./routes/LaunchConfigRoutes.js"
import { launchRoutes, type LaunchRoutesOptions } from "./routes/LaunchRoutes.js"
import { markRoutes, type MarkRoutesOptions } from "./routes/MarkRoutes.js"
import { marketRoutes } from "./routes/MarketRoutes.js"
import { withOpenApi } from "./routes/OpenApiRoute.js"
import { orderRoutes, type OrderRoutesOptions } from "./routes/OrderRoutes.js"
import { planRoutes } from "./routes/PlanRoutes.js"
import { selfLaunchRoutes, type SelfLaunchRoutesOptions } from "./routes/SelfLaunchRoutes.js"
import { stakingRoutes, type StakingRoutesOptions } from "./routes/StakingRoutes.js"
import { tradeQuoteRoutes, type TradeQuoteRoutesOptions } from "./routes/TradeQuoteRoutes.js"
import { tradeRoutes } from "./routes/TradeRoutes.js"
import { transferRailRoutes } from "./routes/TransferRoutes.js"
import type { RouteDef } from "./Router.js"

export const mainDocumentInfo = { title: "curvestream", description: "Launch and market-data engine for bonding-curve tokens on Solana and Hood" }

/** What each route group of the main listener is built over. */
export interface MainRouteDeps {
  readonly health: Parameters<typeof healthRoutes>
  readonly launchConfig: Parameters<typeof launchConfigRoutes>[0]
  readonly plans: Parameters<typeof planRoutes>
  readonly market: Parameters<typeof marketRoutes>[0]
  readonly mark: MarkRoutesOptions
  readonly tradeQuote: TradeQuoteRoutesOptions
  readonly agent: AgentRoutesOptions
  readonly launch: LaunchRoutesOptions
  readonly atomic: AtomicLaunchRoutesOptions
  readonly self: SelfLaunchRoutesOptions
  readonly staking: StakingRoutesOptions
  readonly trade: Parameters<typeof tradeRoutes>[0]
  readonly fee: FeeRoutesOptions
  readonly order: OrderRoutesOptions
  readonly transferRail: Parameters<typeof transferRailRoutes>[0]
  /** Accounts and keys, wallets, withdrawal addresses and trust, webhooks (`accountStackRoutes`). */
  readonly accountStack: AccountStackRouteDeps
}

/** Every route of the main listener, in the order it matches, with its OpenAPI document route. */
export const mainRouteTable = (d: MainRouteDeps): ReadonlyArray<RouteDef> =>
  withOpenApi(
    [
      ...healthRoutes(...d.health),
      ...launchConfigRoutes(d.launchConfig),
      ...planRoutes(...d.plans),
      ...marketRoutes(d.market),
      ...markRoutes(d.mark),
      ...tradeQuoteRoutes(d.tradeQuote),
      ...agentRoutes(d.agent),
      ...launchRoutes(d.launch),
      ...atomicLaunchRoutes(d.atomic),
      ...selfLaunchRoutes(d.self),
      ...stakingRoutes(d.staking),
      ...tradeRoutes(d.trade),
      ...feeRoutes(d.fee),
      ...orderRoutes(d.order),
      ...transferRailRoutes(d.transferRail),
      ...accountStackRoutes(d.accountStack)
    ],
    mainDocumentInfo
  )
