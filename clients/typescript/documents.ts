/**
 * Both services' route tables as the composition roots mount them (the main listener's is
 * `api/MainRoutes.ts`'s `mainRouteTable`, which `src/MainApi.ts` serves; `src/DataService.ts`:
 * the tape with the lab, the reads, personal routes and strategies), built with dependencies
 * no construction reads: the OpenAPI documents the typed client is generated from
 * (`generate.ts`), and the tables the documents' conformance tests read.
 */
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { dataDocumentInfo, dataServiceRouteTable } from "../../api/data/DataServiceRoutes.js"
import { strategyRoutes, type StrategyRoutesDeps } from "../../api/data/strategy/StrategyRoutes.js"
import type { RouteDef } from "../../api/Router.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { mainDocumentInfo, mainRouteTable } from "../../api/MainRoutes.js"
import { openApiDocument } from "../../api/OpenApi.js"

export const documentInfo = mainDocumentInfo
const index = new MarketIndexStore()
const nowMs = () => 0
// Construction reads no dependency but the addresses; nothing here calls a route.
const unused = undefined as never
/** A dependency whose presence adds routes (the lab's jobs), never called at construction. */
const present = {} as never
const settings = { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://x/images/" }

export const mainRoutes: ReadonlyArray<RouteDef> = mainRouteTable({
  health: [[]],
  launchConfig: DefaultDevBuyCeilings,
  plans: [resolvePlans({}, 30), 30],
  market: { index, nowMs, curveProgram: "SVCcurve11111111111111111111111111111111111" },
  mark: {
    index, nowMs, publicClient: unused, prices: unused,
    addresses: { uniswapV3Factory: `0x${"11".repeat(20)}`, weth9: `0x${"22".repeat(20)}` }
  },
  tradeQuote: {
    index, nowMs, agentAuth: unused, freePlan: planById(resolvePlans({}, 30), "free"), hoodPools: null, creatorShares: { solana: 3_000n, hood: 3_000n }
  },
  agent: { index, nowMs, sql: unused, clickhouse: unused, prices: unused, tiers: unused, wallets: unused },
  launch: { enabled: true, agentAuth: unused, launches: unused, images: unused, settings, job: unused },
  atomic: { enabled: true, agentAuth: unused, launches: unused, settings },
  self: { enabled: true, agentAuth: unused, launches: unused, settings },
  staking: { enabled: true, agentAuth: unused, staking: unused, writeWindow: unused, nowMs },
  trade: { agentAuth: unused, trades: unused, transactions: unused },
  fee: { agentAuth: unused, fees: unused, claimWindow: unused, nowMs },
  order: { agentAuth: unused, orders: unused },
  transferRail: { agentAuth: unused, transfers: unused },
  accountStack: {
    keys: { keys: unused, tiers: unused, agentAuth: unused, ownerAuth: unused, nowMs },
    accounts: { devices: unused, ownerAuth: unused, wallets: unused, sql: unused, nowMs },
    wallets: { wallets: unused, authenticate: unused },
    transfers: { addresses: unused, trust: unused, authenticate: unused },
    webhooks: { service: unused, authenticate: unused }
  }
})

export const dataServiceRoutes: ReadonlyArray<RouteDef> = dataServiceRouteTable({
  tape: { auth: unused, clickhouse: unused, hub: unused, tracking: unused, jobs: present },
  tokenReads: { clickhouse: unused, index, prices: unused, nowMs, authenticate: unused },
  walletSocial: { clickhouse: unused, index, prices: unused, nowMs, authenticate: unused, tracking: unused, social: unused },
  personal: { sql: unused, authenticate: unused },
  strategies: strategyRoutes({ strategies: unused, research: unused, authenticate: unused } satisfies StrategyRoutesDeps)
})

/** The main listener's OpenAPI document. */
export const mainDocument = (): Record<string, unknown> => openApiDocument(mainRoutes, documentInfo)
/** The market-data listener's OpenAPI document. */
export const dataDocument = (): Record<string, unknown> => openApiDocument(dataServiceRoutes, dataDocumentInfo)
