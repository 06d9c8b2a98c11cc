/**
 * Both services' route tables as the composition roots mount them (`src/MainApi.ts`: every main
 * route, the launch, self-signed, atomic, staking, trade, order, transfer and fee rails included; `src/DataService.ts`:
 * the tape with the lab, the reads, personal routes and strategies), built with dependencies
 * no construction reads: the OpenAPI documents the typed client is generated from
 * (`generate.ts`), and the tables the documents' conformance tests read.
 */
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { dataRoutes, type DataRoutesDeps } from "../../api/data/DataRoutes.js"
import { personalRoutes, type PersonalRoutesDeps } from "../../api/data/personal/PersonalRoutes.js"
import { type TokenReadDeps, tokenReadRoutes } from "../../api/data/reads/TokenReadRoutes.js"
import { type WalletSocialDeps, walletSocialRoutes } from "../../api/data/reads/WalletSocialRoutes.js"
import { strategyRoutes, type StrategyRoutesDeps } from "../../api/data/strategy/StrategyRoutes.js"
import type { RouteDef } from "../../api/Router.js"
import { accountRoutes, type AccountRoutesDeps } from "../../api/routes/AccountRoutes.js"
import { agentRoutes, type AgentRoutesOptions } from "../../api/routes/AgentRoutes.js"
import { atomicLaunchRoutes, type AtomicLaunchRoutesOptions } from "../../api/routes/AtomicLaunchRoutes.js"
import { feeRoutes, type FeeRoutesOptions } from "../../api/routes/FeeRoutes.js"
import { healthRoutes } from "../../api/routes/HealthRoutes.js"
import { keyRoutes, type KeyRoutesDeps } from "../../api/routes/KeyRoutes.js"
import { launchConfigRoutes } from "../../api/routes/LaunchConfigRoutes.js"
import { launchRoutes, type LaunchRoutesOptions } from "../../api/routes/LaunchRoutes.js"
import { markRoutes, type MarkRoutesOptions } from "../../api/routes/MarkRoutes.js"
import { marketRoutes } from "../../api/routes/MarketRoutes.js"
import { withOpenApi } from "../../api/routes/OpenApiRoute.js"
import { planRoutes } from "../../api/routes/PlanRoutes.js"
import { selfLaunchRoutes, type SelfLaunchRoutesOptions } from "../../api/routes/SelfLaunchRoutes.js"
import { stakingRoutes, type StakingRoutesOptions } from "../../api/routes/StakingRoutes.js"
import { tradeQuoteRoutes, type TradeQuoteRoutesOptions } from "../../api/routes/TradeQuoteRoutes.js"
import { tradeRoutes } from "../../api/routes/TradeRoutes.js"
import { orderRoutes, type OrderRoutesOptions } from "../../api/routes/OrderRoutes.js"
import { transferRailRoutes, transferRoutes, type TransferRoutesDeps } from "../../api/routes/TransferRoutes.js"
import { walletRoutes, type WalletRoutesDeps } from "../../api/routes/WalletRoutes.js"
import { webhookRoutes, type WebhookRoutesDeps } from "../../api/routes/WebhookRoutes.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { openApiDocument } from "../../api/OpenApi.js"

export const documentInfo = { title: "curvestream", description: "Launch and market-data engine for bonding-curve tokens on Solana and Hood" }
const index = new MarketIndexStore()
const nowMs = () => 0
// Construction reads no dependency but the addresses; nothing here calls a route.
const unused = undefined as never
/** A dependency whose presence adds routes (the lab's jobs), never called at construction. */
const present = {} as never
const settings = { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://x/images/" }

export const mainRoutes: ReadonlyArray<RouteDef> = withOpenApi(
  [
    ...healthRoutes([]),
    ...launchConfigRoutes(DefaultDevBuyCeilings),
    ...planRoutes(resolvePlans({}, 30), 30),
    ...marketRoutes({ index, nowMs, curveProgram: "SVCcurve11111111111111111111111111111111111" }),
    ...markRoutes({
      index, nowMs, publicClient: unused, prices: unused,
      addresses: { uniswapV3Factory: `0x${"11".repeat(20)}`, weth9: `0x${"22".repeat(20)}` }
    } satisfies MarkRoutesOptions),
    ...tradeQuoteRoutes({
      index, nowMs, agentAuth: unused, freePlan: planById(resolvePlans({}, 30), "free"), hoodPools: null, creatorShares: { solana: 3_000n, hood: 3_000n }
    } satisfies TradeQuoteRoutesOptions),
    ...agentRoutes({ index, nowMs, sql: unused, clickhouse: unused, prices: unused, tiers: unused, wallets: unused } satisfies AgentRoutesOptions),
    ...launchRoutes({ enabled: true, agentAuth: unused, launches: unused, images: unused, settings, selfJob: unused } satisfies LaunchRoutesOptions),
    ...atomicLaunchRoutes({ enabled: true, agentAuth: unused, launches: unused, settings } satisfies AtomicLaunchRoutesOptions),
    ...selfLaunchRoutes({ enabled: true, agentAuth: unused, launches: unused, settings } satisfies SelfLaunchRoutesOptions),
    ...stakingRoutes({ enabled: true, agentAuth: unused, staking: unused, writeWindow: unused, nowMs } satisfies StakingRoutesOptions),
    ...tradeRoutes({ agentAuth: unused, trades: unused, transactions: unused }),
    ...feeRoutes({ agentAuth: unused, fees: unused, claimWindow: unused, nowMs } satisfies FeeRoutesOptions),
    ...orderRoutes({ agentAuth: unused, orders: unused } satisfies OrderRoutesOptions),
    ...transferRailRoutes({ agentAuth: unused, transfers: unused }),
    // `accountStackApi` (api/auth/Adapters.ts): accounts and keys, wallets, webhooks.
    ...keyRoutes({ keys: unused, tiers: unused, agentAuth: unused, ownerAuth: unused, nowMs } satisfies KeyRoutesDeps),
    ...accountRoutes({ devices: unused, ownerAuth: unused, wallets: unused, sql: unused, nowMs } satisfies AccountRoutesDeps),
    ...walletRoutes({ wallets: unused, authenticate: unused } satisfies WalletRoutesDeps),
    ...transferRoutes({ addresses: unused, trust: unused, authenticate: unused } satisfies TransferRoutesDeps),
    ...webhookRoutes({ service: unused, authenticate: unused } satisfies WebhookRoutesDeps)
  ],
  documentInfo
)

export const dataServiceRoutes: ReadonlyArray<RouteDef> = withOpenApi(
  [
    ...dataRoutes({ auth: unused, clickhouse: unused, hub: unused, tracking: unused, jobs: present } satisfies DataRoutesDeps),
    ...tokenReadRoutes({ clickhouse: unused, index, prices: unused, nowMs, authenticate: unused } satisfies TokenReadDeps),
    ...walletSocialRoutes({ clickhouse: unused, index, prices: unused, nowMs, authenticate: unused, tracking: unused, social: unused } satisfies WalletSocialDeps),
    ...personalRoutes({ sql: unused, authenticate: unused } satisfies PersonalRoutesDeps),
    ...strategyRoutes({ strategies: unused, research: unused, authenticate: unused } satisfies StrategyRoutesDeps)
  ],
  documentInfo,
  "/v1/openapi.json"
)

/** The main listener's OpenAPI document. */
export const mainDocument = (): Record<string, unknown> => openApiDocument(mainRoutes, documentInfo)
/** The market-data listener's OpenAPI document. */
export const dataDocument = (): Record<string, unknown> => openApiDocument(dataServiceRoutes, { title: "curvestream market data", description: "The signal tape, token and wallet intelligence, personal signals and the strategy lab" })
