/**
 * The main API as the composition root starts it (`all` and api roles): its route list (health
 * and readiness, launch configuration and plans, markets and marks, trade quotes, agents, the
 * launch, self-signed, atomic, staking, trade, fee, order and transfer rails, and the account
 * stack's accounts, keys, wallets and webhooks), the OpenAPI document over them, the web page,
 * and the listener (`CURVESTREAM_PORT`). Everything lives in the caller's scope. Part of the
 * composition root (`main.ts` calls it), like `DataService.ts` for the market-data listener: it
 * wires services, actors, ClickHouse and the bus together, so it sits above `api/`.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import type { TemplatedApp } from "uws-pack"
import { AgentLaunchRegistry } from "../actors/AgentLaunches.js"
import * as MarketActors from "../actors/MarketActors.js"
import { MarketIndex } from "../actors/MarketIndex.js"
import { TokenMetadataRegistry } from "../actors/TokenMetadata.js"
import { accountStackApi } from "../api/auth/Adapters.js"
import type { FailedAuthThrottle } from "../api/auth/FailedAuthThrottle.js"
import { mainRouteTable } from "../api/MainRoutes.js"
import { feeClaimWindow } from "../api/routes/FeeRoutes.js"
import type { ReadinessCheck } from "../api/routes/HealthRoutes.js"
import { stakingWriteWindow } from "../api/routes/StakingRoutes.js"
import type { CorsPolicy, RequestsInFlight, RouteDef } from "../api/Router.js"
import { serve } from "../api/Server.js"
import { loadWebPage } from "../api/StaticSite.js"
import { ClickHouse } from "../clickhouse/ClickHouse.js"
import { Bus } from "../ingest/bus/Bus.js"
import { HoodIngester } from "../ingest/hood/HoodIngester.js"
import { SolanaIngester } from "../ingest/solana/SolanaIngester.js"
import { hoodPublicClient } from "./chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "./chain/hood/HoodEndpoints.js"
import { STREAMER_SHARE_BPS } from "./chain/hood/localnet/Deploy.js"
import { DEFAULT_CREATOR_SHARE_BPS } from "./chain/solana/program/accounts/Config.js"
import { SVC_CURVE_PROGRAM_ID } from "./chain/solana/program/ProgramIds.js"
import { SolanaEndpoints } from "./chain/solana/SolanaEndpoints.js"
import { mountMcp } from "./McpEndpoint.js"
import type { AppConfigShape } from "./config/AppConfig.js"
import * as Database from "./db/Database.js"
import * as RowLease from "./db/RowLease.js"
import { startSharedLimits } from "./db/SharedWindowCounts.js"
import { planById } from "./domain/Plans.js"
import { publicUrlOf, ResolvedPlans } from "./layers/Common.js"
import { AccountWallets } from "./services/accounts/AccountWallets.js"
import { TierService } from "./services/accounts/TierService.js"
import { CreatorFees } from "./services/fees/CreatorFees.js"
import { followMetadata } from "./services/images/HostedMetadata.js"
import { hostedImagesPrefix } from "./services/images/HostedImageUrl.js"
import { ImageService } from "./services/images/ImageService.js"
import { ingestionReport, type IngestionReport } from "./services/ingestion/IngestionLag.js"
import { AtomicLaunch } from "./services/launch/atomic/AtomicLaunch.js"
import { HeadlessLaunch } from "./services/launch/HeadlessLaunch.js"
import { ledgerLaunchJob } from "./services/launch/LaunchJobs.js"
import { LaunchLedger } from "./services/launch/LaunchLedger.js"
import * as LaunchVisibility from "./services/launch/LaunchVisibility.js"
import { SelfLaunch } from "./services/launch/SelfLaunch.js"
import * as OrderService from "./services/orders/OrderService.js"
import { PriceSource } from "./services/prices/PriceSource.js"
import { StakingService } from "./services/staking/StakingService.js"
import { makeAgentTransactions } from "./services/trade/AgentTransactions.js"
import { viemPoolSource } from "./services/trade/HoodPoolQuote.js"
import { TradeService } from "./services/trade/TradeService.js"
import { TransferService } from "./services/transfers/TransferService.js"

/** What `/readyz` reports beside PostgreSQL, ClickHouse and the bus, and what the MCP endpoint offers beside the main routes. */
export interface MainApiOptions {
  /** What `/readyz` reports of ingestion (absent in the api role, which runs no ingester). */
  readonly ingestion?: Effect.Effect<IngestionReport>
  /** Readiness checks beside PostgreSQL, ClickHouse and the bus. */
  readonly checks?: ReadonlyArray<ReadinessCheck>
  /** The market-data listener's routes in this process: the MCP endpoint offers their tools (signals, replays) too. */
  readonly dataRoutes?: ReadonlyArray<RouteDef>
}

/** The web page's build (`npm start` builds it first: `scripts/build-web.mjs`). */
const WEB_DIST = fileURLToPath(new URL("../web/dist", import.meta.url))

/**
 * The market-data listener admits calls from the web page on the main listener: its origin by
 * the public URL, or by whatever host name the page was opened with on the main port.
 */
export const webPageCors = (config: AppConfigShape): CorsPolicy => ({ pagePort: config.port, origins: [new URL(publicUrlOf(config)).origin] })

/** What `/readyz` reports of ingestion (the `all` role: the ingesters run in this process). */
export const ingestionOf = (config: AppConfigShape) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    return ingestionReport({
      solanaPublished: Effect.map((yield* SolanaIngester).status, (s) => s.publishedSlot),
      solanaRpcUrl: (yield* SolanaEndpoints).rpcUrl,
      solanaCommitment: config.solana.commitment,
      hoodPublished: Effect.map((yield* HoodIngester).status, (s) => s.cursorBlock),
      hoodRpcUrl: (yield* HoodEndpoints).rpcUrl,
      bus,
      actorsGroup: MarketActors.MARKET_ACTORS_GROUP
    })
  })

/** The launch job read the route serves: the ledger row read once, then the service of the row's path. */
export const launchJobRead = Effect.map(Effect.all([LaunchLedger, HeadlessLaunch, SelfLaunch, AtomicLaunch]), ([ledger, headless, self, atomic]) =>
  ledgerLaunchJob(ledger, { headless: headless.job, self: self.job, atomic: atomic.job })
)

/** The main listener over the services in context, serving until the caller's scope closes. */
export const serveMainApi = (config: AppConfigShape, options: MainApiOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clickhouse = yield* ClickHouse
    const bus = yield* Bus
    const index = yield* MarketIndex
    const agentLaunches = yield* AgentLaunchRegistry
    // Followed for the listener's lifetime (its scope): the recorded visibility the public reads apply.
    const launchVisibility = Context.get(yield* Layer.build(LaunchVisibility.layer()), LaunchVisibility.LaunchVisibilityRegistry)
    // Followed for the listener's lifetime: the launches' metadata documents the reads serve (other processes host them too).
    yield* followMetadata(yield* TokenMetadataRegistry)
    const plans = yield* ResolvedPlans
    const nowMs = () => Date.now()
    // Replicas on one PostgreSQL server share their rate-limit counts; the embedded database has one process.
    const sharedLimits = config.databaseUrl === undefined ? undefined : yield* startSharedLimits(RowLease.processOwner())
    const accounts = yield* accountStackApi({ nowMs, sharedLimits })
    const hood = yield* HoodEndpoints
    const prices = yield* PriceSource
    const selfLaunches = yield* SelfLaunch
    const atomicLaunches = yield* AtomicLaunch
    const headlessLaunches = yield* HeadlessLaunch
    const launchSettings = {
      expCustomCurves: config.launch.expCustomCurves,
      devBuyCeilings: config.devBuyCeilings,
      hostedImageUrlPrefix: `${publicUrlOf(config)}${hostedImagesPrefix}`
    }
    const routes = mainRouteTable({
      health: [
        [
          { name: "postgres", check: Database.ping.pipe(Effect.provideService(SqlClient.SqlClient, sql)) },
          { name: "clickhouse", check: clickhouse.ping },
          { name: "bus", check: bus.ping },
          ...(options.checks ?? [])
        ],
        undefined,
        options.ingestion
      ],
      launchConfig: config.devBuyCeilings,
      plans: [plans, config.promoMaxDays],
      market: { index, nowMs, curveProgram: SVC_CURVE_PROGRAM_ID, hoodFactory: hood.addresses.factory, agentLaunches, launchVisibility, sharedLimits },
      mark: { publicClient: hoodPublicClient(hood.chain, hood.rpcUrl), addresses: hood.addresses, prices, index, nowMs, sharedLimits },
      tradeQuote: {
        index,
        nowMs,
        agentAuth: accounts.agentAuth,
        freePlan: planById(plans, "free"),
        hoodPools: viemPoolSource(hoodPublicClient(hood.chain, hood.rpcUrl)),
        creatorShares: { solana: BigInt(DEFAULT_CREATOR_SHARE_BPS), hood: BigInt(STREAMER_SHARE_BPS) },
        sharedLimits
      },
      agent: { sql, clickhouse, index, agentLaunches, launchVisibility, prices, tiers: yield* TierService, wallets: yield* AccountWallets, nowMs, sharedLimits },
      launch: {
        enabled: config.launch.enabled,
        agentAuth: accounts.agentAuth,
        launches: headlessLaunches,
        images: yield* ImageService,
        settings: launchSettings,
        job: yield* launchJobRead
      },
      atomic: { enabled: config.launch.enabled, agentAuth: accounts.agentAuth, launches: atomicLaunches, settings: launchSettings },
      self: { enabled: config.launch.enabled, agentAuth: accounts.agentAuth, launches: selfLaunches, settings: launchSettings },
      staking: {
        enabled: config.accounts.stakingEnabled,
        agentAuth: accounts.agentAuth,
        staking: yield* StakingService,
        writeWindow: stakingWriteWindow(sql),
        nowMs
      },
      trade: { agentAuth: accounts.agentAuth, trades: yield* TradeService, transactions: makeAgentTransactions(sql) },
      fee: { agentAuth: accounts.agentAuth, fees: yield* CreatorFees, claimWindow: feeClaimWindow(sql), nowMs },
      order: { agentAuth: accounts.agentAuth, orders: yield* OrderService.make(index, { busPartitions: config.bus.partitions }).pipe(Effect.provideService(SqlClient.SqlClient, sql)) },
      transferRail: { agentAuth: accounts.agentAuth, transfers: yield* TransferService },
      accountStack: accounts.routeDeps
    })
    const site = yield* loadWebPage(WEB_DIST, config.dataPort)
    // The agent tool server over streamable HTTP (`McpEndpoint.ts`): its tools call these routes in process.
    const mcp = (app: TemplatedApp, authFailures: FailedAuthThrottle, requests: RequestsInFlight) =>
      mountMcp(
        app,
        { agentAuth: accounts.agentAuth, routes, maxBodyBytes: config.maxBodyBytes, ...(options.dataRoutes !== undefined ? { dataRoutes: options.dataRoutes } : {}) },
        authFailures,
        requests
      )
    return yield* serve({
      name: "api",
      host: config.host,
      port: config.port,
      maxBodyBytes: config.maxBodyBytes,
      routes,
      trustedProxies: config.trustedProxies,
      sharedLimits,
      mount: mcp,
      ...(site !== undefined ? { site } : {})
    })
  }).pipe(Effect.withSpan("MainApi.serve"))
