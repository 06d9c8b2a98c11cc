/**
 * Composition root. Reads configuration, builds the storage and bus layers (embedded defaults
 * under the data directory, servers when their URLs are set), the chain pipeline (Solana
 * localnet or cluster endpoints, the Yellowstone ingester, the market actors, the ClickHouse
 * writer), the keeper and the simulation, accounts and keys, wallets and webhooks (with the
 * delivery worker), mounts the API, starts the market-data service (the signal detectors on the
 * bus, the tape, the signal stream and the strategy lab on `CURVESTREAM_DATA_PORT`) and runs until
 * SIGINT or SIGTERM. In embedded mode it also
 * provisions the local account and writes its credentials to `<dataDir>/local-credentials.json`.
 * That is `--role all` (the default). The cluster roles run parts of it over Kafka, each on its own
 * layers (docs/architecture.md, "Roles"): `ingest` the ingesters, `actors` the market actors, the
 * detectors, the keeper and the writers (publishing the read-model and signal topics), `api` both
 * listeners over a replica of the read model (`MarketReplica`) and the account and launch services.
 * Shutdown is the scopes closing in reverse: both listeners drain first (stop accepting, answer
 * the requests in flight within 10 s, close stream sockets with 1001), then the keeper and
 * simulation, the webhook delivery worker, the pipeline (actor checkpoints and ClickHouse writes
 * flushed), the localnet, the bus (pending appends flushed, offsets written), ClickHouse and
 * PostgreSQL.
 */
import * as LaunchVisibility from "./services/launch/LaunchVisibility.js"
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Logger, LogLevel, Option, Redacted, Schedule } from "effect"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { accountStackApi } from "../api/auth/Adapters.js"
import { ClickHouse } from "../clickhouse/ClickHouse.js"
import { Bus } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { KafkaBus } from "../ingest/bus/KafkaBus.js"
import { RetiredRanges } from "../ingest/bus/RetiredRanges.js"
import { healthRoutes } from "../api/routes/HealthRoutes.js"
import { launchConfigRoutes } from "../api/routes/LaunchConfigRoutes.js"
import { withOpenApi } from "../api/routes/OpenApiRoute.js"
import { planRoutes } from "../api/routes/PlanRoutes.js"
import { serve } from "../api/Server.js"
import { loadWebPage } from "../api/StaticSite.js"
import type { CorsPolicy } from "../api/Router.js"
import { AppConfig, type AppConfigShape } from "./config/AppConfig.js"
import { unsupportedNode } from "./config/Runtime.js"
import * as Database from "./db/Database.js"
import * as RowLease from "./db/RowLease.js"
import { startSharedLimits } from "./db/SharedWindowCounts.js"
import { planById, resolvePlans } from "./domain/Plans.js"
import { STAKED_SVC_MINT, SVC_MINT } from "./domain/QuotePairs.js"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { marketEventHooks } from "./services/webhooks/MarketEvents.js"
import { orderTriggerHooks } from "./services/orders/OrderTriggers.js"
import * as OrderHandoff from "./services/orders/OrderHandoff.js"
import { makeOrderExecutor, orderCallers } from "./services/orders/OrderExecutor.js"
import * as MarketActors from "../actors/MarketActors.js"
import { MarketIndex } from "../actors/MarketIndex.js"
import { AgentLaunchRegistry } from "../actors/AgentLaunches.js"
import { TokenMetadataRegistry } from "../actors/TokenMetadata.js"
import { followMetadata } from "./services/images/HostedMetadata.js"
import { marketRoutes } from "../api/routes/MarketRoutes.js"
import { tradeQuoteRoutes } from "../api/routes/TradeQuoteRoutes.js"
import { tradeRoutes } from "../api/routes/TradeRoutes.js"
import { makeAgentTransactions } from "./services/trade/AgentTransactions.js"
import * as TradeModule from "./services/trade/TradeService.js"
import { MarketSnapshotWriter } from "../clickhouse/writer/MarketSnapshotWriter.js"
import { TradeWriter } from "../clickhouse/writer/TradeWriter.js"
import { Topics } from "../ingest/bus/Bus.js"
import { busKey } from "../ingest/ChainEvent.js"
import { encodeChainEvent } from "../ingest/ChainEventCodec.js"
import { SolanaIngester } from "../ingest/solana/SolanaIngester.js"
import { SVC_CURVE_PROGRAM_ID } from "./chain/solana/program/ProgramIds.js"
import { makeRpcSender } from "./chain/solana/RpcSender.js"
import { SolanaEndpoints } from "./chain/solana/SolanaEndpoints.js"
import { DefaultKeeperPolicy } from "./services/keeper/KeeperPolicy.js"
import { runKeeperAloneOver } from "./services/keeper/MigrationKeeper.js"
import * as SnapshotCandidates from "./services/keeper/SnapshotCandidates.js"
import { solanaMigrationExecutor } from "./services/keeper/SolanaMigrationExecutor.js"
import { DefaultSimulationOptions, runSimulation } from "./sim/MarketSimulation.js"
import { DefaultHoodSimulationOptions, hoodSimulationClients, runHoodSimulation } from "./sim/HoodSimulation.js"
import { runMarketSnapshotSampler } from "./services/snapshots/MarketSnapshotSampler.js"
import * as BalanceReader from "./services/accounts/BalanceReader.js"
import { type LocalCredentials, provisionLocalAccount } from "./services/accounts/LocalAccount.js"
import * as WalletProvider from "./services/wallets/WalletProvider.js"
import { resolveMasterKey } from "./services/webhooks/SecretBox.js"
import * as Stack from "./services/wiring/Stack.js"
import { chainClaimReconciler } from "./services/wiring/ChainReconciler.js"
import { HoodIngester } from "../ingest/hood/HoodIngester.js"
import { markRoutes } from "../api/routes/MarkRoutes.js"
import { agentRoutes } from "../api/routes/AgentRoutes.js"
import { seedAgents } from "./services/agents/Seed.js"
import { AccountWallets } from "./services/accounts/AccountWallets.js"
import { TierService } from "./services/accounts/TierService.js"
import { HoodEndpoints } from "./chain/hood/HoodEndpoints.js"
import { hoodPublicClient, hoodWallet } from "./chain/hood/client/HoodClient.js"
import { hoodMigrationExecutor } from "./services/keeper/HoodMigrationExecutor.js"
import type { MigrationExecutor } from "./services/keeper/MigrationKeeper.js"
import { PriceSource, layerLocalnet as localnetPrices } from "./services/prices/PriceSource.js"
import { runHoldSweeper } from "./services/spend/SpendStore.js"
import * as TrackedWallets from "./services/personal/TrackedWallets.js"
import { followSignalSide, serveDataService, startDataService, startSignalPipeline } from "./DataService.js"
import { ClusterPublisher, type TopicPublisher } from "../actors/replica/TopicPublisher.js"
import * as MarketReplica from "../actors/replica/MarketReplica.js"
import type { ReadinessCheck } from "../api/routes/HealthRoutes.js"
import type { IngestionReport } from "./services/ingestion/IngestionLag.js"
import { readOrCreateKeyFile } from "./platform/KeyFile.js"
import { TREASURY_ADDRESS } from "./chain/solana/localnet/DevKeys.js"
import { STREAMER_SHARE_BPS } from "./chain/hood/localnet/Deploy.js"
import { DEFAULT_CREATOR_SHARE_BPS } from "./chain/solana/program/accounts/Config.js"
import { viemPoolSource } from "./services/trade/HoodPoolQuote.js"
import { launchRoutes } from "../api/routes/LaunchRoutes.js"
import { selfLaunchRoutes } from "../api/routes/SelfLaunchRoutes.js"
import { atomicLaunchRoutes } from "../api/routes/AtomicLaunchRoutes.js"
import { stakingRoutes, stakingWriteWindow } from "../api/routes/StakingRoutes.js"
import { transferRailRoutes } from "../api/routes/TransferRoutes.js"
import { feeClaimWindow, feeRoutes } from "../api/routes/FeeRoutes.js"
import { orderRoutes } from "../api/routes/OrderRoutes.js"
import * as OrderService from "./services/orders/OrderService.js"
import { ImageService } from "./services/images/ImageService.js"
import * as ImageServiceModule from "./services/images/ImageService.js"
import * as LaunchLedgerModule from "./services/launch/LaunchLedger.js"
import * as SolanaLaunchModule from "./services/launch/SolanaLaunch.js"
import * as HoodLaunchModule from "./services/launch/HoodHeadlessLaunch.js"
import { HeadlessLaunch } from "./services/launch/HeadlessLaunch.js"
import * as HeadlessLaunchModule from "./services/launch/HeadlessLaunch.js"
import * as HoodSelfLaunchModule from "./services/launch/HoodSelfLaunch.js"
import { SelfLaunch } from "./services/launch/SelfLaunch.js"
import { AtomicLaunch } from "./services/launch/atomic/AtomicLaunch.js"
import * as AtomicLaunchModule from "./services/launch/atomic/AtomicLaunch.js"
import { selfOrAtomicJob } from "./services/launch/LaunchJobs.js"
import { makeBlockEngineClient } from "./chain/solana/client/BlockEngineClient.js"
import * as SelfLaunchModule from "./services/launch/SelfLaunch.js"
import * as SolanaSelfLaunchModule from "./services/launch/SolanaSelfLaunch.js"
import * as StakingModule from "./services/staking/StakingService.js"
import { hoodRewardChain, runHoodRewardDistributor } from "./services/staking/HoodRewards.js"
import { StakingService } from "./services/staking/StakingService.js"
import * as TransferModule from "./services/transfers/TransferService.js"
import { TransferService } from "./services/transfers/TransferService.js"
import * as CreatorFeesModule from "./services/fees/CreatorFees.js"
import { CreatorFees } from "./services/fees/CreatorFees.js"
import { hostedImagesPrefix } from "./services/images/HostedImageUrl.js"
import { fundLocalAccount, localSolanaWallet, stakeLocalAccount } from "./sim/LocalFunding.js"
import { runStakingRewards } from "./sim/StakingRewards.js"
import { chainIdentityGate } from "./services/chains/ChainIdentity.js"
import { ingestionReport } from "./services/ingestion/IngestionLag.js"

const retiredRanges = new RetiredRanges()

const storageLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    mkdirSync(config.dataDir, { recursive: true })
    return Layer.mergeAll(
      Database.layer({
        url: config.databaseUrl === undefined ? undefined : Redacted.value(config.databaseUrl),
        dataDir: config.dataDir
      }),
      ClickHouse.layer({
        url: config.clickhouseUrl,
        dataDir: config.dataDir,
        database: config.clickhouseDatabase,
        ...(config.clickhouseUser !== undefined ? { username: config.clickhouseUser } : {}),
        ...(config.clickhousePassword !== undefined ? { password: config.clickhousePassword } : {})
      }),
      // Consumers skip a replaced chain's events (`RetiredRanges`, filled by the identity gate).
      Layer.effect(Bus, Effect.map(Bus, (bus) => retiredRanges.wrap(bus))).pipe(
        Layer.provide(
          config.kafka.brokers === undefined
            ? EmbeddedBus.layer({ dir: path.join(config.dataDir, "bus"), ...config.bus })
            : KafkaBus.layer({
                brokers: config.kafka.brokers,
                clientId: config.kafka.clientId,
                idempotent: config.kafka.idempotent,
                sessionTimeoutMs: config.kafka.sessionTimeoutMs,
                partitions: config.bus.partitions
              })
        )
      )
    )
  })
)

/** The Solana and Hood endpoints: the embedded localnets (under the data directory) or configured nodes. */
const endpointsLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    // The embedded localnets keep their chains under the data directory; the identity gate runs before anything reads them.
    const localnetDir = (chain: string) => ({ dataDir: path.join(config.dataDir, "chains", chain), fsync: config.bus.fsync })
    return Layer.merge(SolanaEndpoints.layer(config.solana, localnetDir("solana")), HoodEndpoints.layer(config.hood, localnetDir("hood")))
  })
)

/** The ingesters: Yellowstone and EVM logs into `chain.events`. */
const ingestersLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    const ingester = Layer.unwrapEffect(
      Effect.map(SolanaEndpoints, (e) =>
        SolanaIngester.layer({ grpcUrl: e.grpcUrl, xToken: e.grpcToken, programId: SVC_CURVE_PROGRAM_ID, commitment: config.solana.commitment })
      )
    )
    const hoodIngester = Layer.unwrapEffect(
      Effect.map(HoodEndpoints, (h) =>
        HoodIngester.layer({
          rpcUrl: h.rpcUrl,
          factory: h.addresses.factory,
          feeSplitter: h.addresses.feeSplitter,
          fromBlock: config.hood.fromBlock,
          confirmations: config.hood.confirmations,
          reorgWindowBlocks: config.hood.reorgWindowBlocks,
          backfillBlocks: config.hood.backfillBlocks,
          pollIntervalMs: h.embedded ? Math.min(50, config.hood.pollIntervalMs) : config.hood.pollIntervalMs
        })
      )
    )
    return Layer.merge(ingester, hoodIngester)
  })
)

/**
 * The market actors and the ClickHouse writers. With the cluster publisher (actors role), the
 * actors also publish the read-model topics and reload a partition's checkpoints when a rebalance
 * hands it over.
 */
const marketActorsLayer = (publisher: TopicPublisher | undefined) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* AppConfig
      const cluster = publisher !== undefined ? { publisher, reloadOnAssign: true } : {}
      // Limit orders: a trigger is handed to this process's order executor (`--role all`); the actors
      // role has no hand-off and its triggers are executed by the API processes' pass (docs/decisions.md).
      const handoff = yield* Effect.serviceOption(OrderHandoff.OrderHandoff)
      const actors = MarketActors.layer({
        shards: config.actorShards,
        retractDepthBlocks: config.hood.reorgWindowBlocks,
        announcements: marketEventHooks,
        orders: orderTriggerHooks(Option.isSome(handoff) ? { execution: OrderHandoff.handoffExecution(handoff.value) } : {}),
        ...cluster
      })
      return Layer.mergeAll(
        actors,
        TradeWriter.layer(),
        MarketSnapshotWriter.layer(),
        // The watchlist's webhook events, from the same stream (its own consumer group).
        TrackedWallets.layer().pipe(Layer.provide(Layer.merge(actors, localnetPrices)))
      )
    })
  )

/** The `all` role's chain side: endpoints, ingesters, market actors and the ClickHouse writers. */
const pipelineLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.mergeAll(ingestersLayer, marketActorsLayer(undefined), localnetPrices).pipe(
      Layer.provide(chainIdentityGate(config.resetChainState, retiredRanges)),
      Layer.provideMerge(endpointsLayer)
    )
  )
)

/** Where clients reach the engine: `CURVESTREAM_PUBLIC_URL`, else the listen address. */
const publicUrlOf = (config: AppConfigShape): string =>
  config.publicUrl ?? `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${config.port}`

/** A secret that must be configured when the engine uses a PostgreSQL server (replicas share it). */
const requireServerSecret = (config: AppConfigShape, name: string, value: unknown) =>
  config.databaseUrl !== undefined && value === undefined
    ? Effect.fail(new Error(`${name} must be set when the engine uses a PostgreSQL server (DATABASE_URL)`))
    : Effect.void

/**
 * Accounts and keys, wallets and webhooks over PostgreSQL: the wallet master key and the local
 * wallet provider, the wallet service (its key directory over the keys table), the accounts
 * layer (its wallet port over the wallet side, its events into the webhook outbox, Solana
 * balances for Pro by holding), the webhook service and the delivery worker (a fiber for the
 * layer's lifetime).
 */
const accountsLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const embeddedDataDir = config.databaseUrl === undefined ? config.dataDir : undefined
    yield* requireServerSecret(config, "WALLET_MASTER_KEY", config.wallets.masterKey)
    const webhookKey = yield* resolveMasterKey({
      configured: config.webhooks.secretKey === undefined ? undefined : Redacted.value(config.webhooks.secretKey),
      dataDir: embeddedDataDir
    })
    const publicUrl = publicUrlOf(config)
    return Stack.layer({
      nowMs: Date.now,
      plans: resolvePlans(config.planOverrides, config.promoMaxDays),
      thresholds: config.accounts.tierThresholds,
      publicUrl,
      renewalUrl: config.accounts.renewalUrl ?? `${publicUrl}/pricing`,
      holdingsTtlMs: config.accounts.holdingsTtlMs,
      verificationUri: config.accounts.deviceVerificationUri ?? `${publicUrl}/device`,
      balances: BalanceReader.solanaLayer({
        rpcUrl: endpoints.rpcUrl,
        stakedMint: stakedMintOf(config, endpoints.embedded),
        ttlMs: config.accounts.holdingsTtlMs
      }),
      wallets: {
        masterKey: config.wallets.masterKey,
        dataDir: embeddedDataDir,
        ceilingLamports: config.wallets.ceilingLamports,
        ceilingWei: config.wallets.ceilingWei,
        reconciler: chainClaimReconciler({ solanaRpcUrl: endpoints.rpcUrl, hood: hoodPublicClient(hood.chain, hood.rpcUrl) })
      },
      webhooks: { masterKey: webhookKey, allowLoopbackForTests: config.webhooks.allowLoopbackForTests }
    })
  })
)

/** The localnet deploys the staked receipt; against a real cluster only a configured mint counts. */
const stakedMintOf = (config: AppConfigShape, embedded: boolean): string | undefined => config.accounts.stakedMint ?? (embedded ? STAKED_SVC_MINT : undefined)

/**
 * Staking (svc-stake on the Solana localnet): its positions read the staked figure with the same
 * reader the tier snapshot uses, uncached so a position is current.
 */
const stakingLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const accountWallets = yield* AccountWallets
    const hood = yield* HoodEndpoints
    const stakedMint = stakedMintOf(config, endpoints.embedded) ?? STAKED_SVC_MINT
    return StakingModule.layer(
      // The service's Solana key (the keeper's) pays reward claims' fees and rent.
      { rpcUrl: endpoints.rpcUrl, platformMint: SVC_MINT, receiptMint: stakedMint, distributor: endpoints.keeper },
      {
        balances: BalanceReader.solanaBalanceReader({ rpcUrl: endpoints.rpcUrl, stakedMint }),
        accountWallets,
        // Hood rewards: each graduated Hood token's staker allocation, split over the accounts' staked receipt.
        hoodChain: hoodRewardChain(hoodPublicClient(hood.chain, hood.rpcUrl), hood.addresses.factory)
      }
    )
  })
)

/**
 * The trade rail's write side (the embedded wallet's one-shot trades: Solana on svc-curve's curves
 * and pools, the platform fee to the treasury launches pay; Hood on the curves and their Uniswap v3
 * pools, through the localnet's SwapRouter).
 */
const tradeLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const treasury = config.launch.solanaTreasury ?? (endpoints.embedded ? TREASURY_ADDRESS : undefined)
    if (treasury === undefined) yield* Effect.logWarning("SOLANA_TREASURY_ADDRESS is not set: agent trades pay the localnet treasury's address")
    const router = hood.addresses.swapRouter
    if (router === undefined) yield* Effect.logWarning("Hood trades refused: HOOD_SWAP_ROUTER_ADDRESS is not set for this Hood node")
    return TradeModule.layer({
      solanaRpcUrl: endpoints.rpcUrl,
      treasury: treasury ?? TREASURY_ADDRESS,
      ...(router === undefined ? {} : { hood: { chain: hood.chain, rpcUrl: hood.rpcUrl, factory: hood.addresses.factory, swapRouter: router, weth9: hood.addresses.weth9 } })
    })
  })
)
/** The agent transfer rail (Solana, embedded payer), on the one attempt runner. */
const transfersLayer = TransferModule.endpointsLayer

/** Creator fees of the account's launched tokens (Solana: svc-curve's fee vaults). */
const feesLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    return CreatorFeesModule.layer({
      solanaRpcUrl: endpoints.rpcUrl,
      hood: {
        chain: hood.chain,
        rpcUrl: hood.rpcUrl,
        factory: hood.addresses.factory,
        feeSplitter: hood.addresses.feeSplitter,
        weth9: hood.addresses.weth9,
        usdg: hood.addresses.usdg,
        positionManager: hood.addresses.positionManager
      }
    })
  })
)

const LAUNCH_MINT_SECRET_FILE = "launch-mint-secret"

/**
 * The secret launch mints derive from: `LAUNCH_MINT_SECRET`, else (embedded mode) a random one kept
 * in the data directory (mode 0600) so restarts and crash recovery derive the same mints.
 */
const launchMintSecret = (config: AppConfigShape): Effect.Effect<Uint8Array, Error> =>
  Effect.gen(function* () {
    if (config.launch.mintSecret !== undefined) return Uint8Array.from(Buffer.from(Redacted.value(config.launch.mintSecret).trim(), "hex"))
    if (config.databaseUrl !== undefined) return yield* Effect.fail(new Error("LAUNCH_MINT_SECRET must be set when the engine uses a PostgreSQL server (DATABASE_URL)"))
    const file = path.join(config.dataDir, LAUNCH_MINT_SECRET_FILE)
    const text = yield* Effect.try({
      try: () => readOrCreateKeyFile(config.dataDir, LAUNCH_MINT_SECRET_FILE, 32),
      catch: (e) => new Error(`cannot read or create ${file}: ${String(e)}`)
    })
    const secret = Uint8Array.from(Buffer.from(text.trim(), "base64"))
    if (secret.byteLength < 32) return yield* Effect.fail(new Error(`${file} is not base64 of at least 32 bytes; restore it (launch mints derive from it)`))
    return secret
  })

/**
 * Launches: the ledger, hosted images, the Solana and Hood chain sides and the headless launch
 * service over them (its background runs live as long as the layer).
 */
const launchLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const publicUrl = publicUrlOf(config)
    const mintSecret = yield* launchMintSecret(config)
    const treasury = config.launch.solanaTreasury ?? (endpoints.embedded ? TREASURY_ADDRESS : undefined)
    if (treasury === undefined && config.launch.enabled) {
      return yield* Effect.fail(new Error("SOLANA_TREASURY_ADDRESS must be set to launch against a configured Solana cluster"))
    }
    const chains = Layer.mergeAll(
      ImageServiceModule.layer({ publicBaseUrl: publicUrl, allowLoopbackForTests: config.launch.imageAllowLoopbackForTests }),
      SolanaLaunchModule.layer({ rpcUrl: endpoints.rpcUrl, mintSecret: Redacted.make(mintSecret), treasury: treasury ?? TREASURY_ADDRESS }),
      HoodLaunchModule.layer({
        chain: hood.chain,
        rpcUrl: hood.rpcUrl,
        factory: hood.addresses.factory,
        bondingCurveBytecode: hood.bondingCurveBytecode,
        ...(hood.addresses.usdg !== undefined ? { usdg: hood.addresses.usdg } : {}),
        ...(config.launch.hoodExplorerUrl !== undefined ? { explorerUrl: config.launch.hoodExplorerUrl } : {}),
        baseUrl: publicUrl,
        plans: resolvePlans(config.planOverrides, config.promoMaxDays)
      })
    )
    const exclusiveHolderPassRaw = BigInt(config.launch.exclusiveHolderPassSvc) * 10n ** 6n
    const headless = HeadlessLaunchModule.layer({
      baseUrl: publicUrl,
      solanaExplorerUrl: config.launch.solanaExplorerUrl,
      ...(config.launch.hoodExplorerUrl !== undefined ? { hoodExplorerUrl: config.launch.hoodExplorerUrl } : {}),
      exclusiveHolderPassRaw
    })
    const selfSigned = SelfLaunchModule.layer.pipe(
      Layer.provideMerge(
        Layer.merge(
          SolanaSelfLaunchModule.layer({
            baseUrl: publicUrl,
            solanaExplorerUrl: config.launch.solanaExplorerUrl,
            exclusiveHolderPassRaw,
            teeLaunchBuysEnabled: config.launch.teeLaunchBuys,
            ...(endpoints.embedded ? { slotMs: config.solana.localnetSlotMs } : {})
          }),
          HoodSelfLaunchModule.layer({
            chain: hood.chain,
            rpcUrl: hood.rpcUrl,
            factory: hood.addresses.factory,
            bondingCurveBytecode: hood.bondingCurveBytecode,
            ...(hood.addresses.usdg !== undefined ? { usdg: hood.addresses.usdg } : {}),
            ...(config.launch.hoodExplorerUrl !== undefined ? { explorerUrl: config.launch.hoodExplorerUrl } : {}),
            baseUrl: publicUrl,
            exclusiveHolderPassRaw,
            teeLaunchBuysEnabled: config.launch.teeLaunchBuys
          })
        )
      )
    )
    const atomic = AtomicLaunchModule.layer({
      baseUrl: publicUrl,
      solanaExplorerUrl: config.launch.solanaExplorerUrl,
      exclusiveHolderPassRaw,
      teeLaunchBuysEnabled: config.launch.teeLaunchBuys,
      rpcUrl: endpoints.rpcUrl,
      engine: endpoints.blockEngineUrl === undefined ? undefined : makeBlockEngineClient({ url: endpoints.blockEngineUrl }),
      tipLamports: config.solana.bundleTipLamports,
      ...(endpoints.embedded ? { slotMs: config.solana.localnetSlotMs } : {})
    })
    return Layer.mergeAll(headless, selfSigned, atomic).pipe(Layer.provideMerge(chains), Layer.provideMerge(LaunchLedgerModule.layer))
  })
)

const LOCAL_CREDENTIALS_FILE = "local-credentials.json"

const readLocalCredentials = (file: string): Effect.Effect<LocalCredentials | undefined> =>
  Effect.sync(() => {
    if (!existsSync(file)) return undefined
    const v: unknown = JSON.parse(readFileSync(file, "utf8"))
    if (typeof v !== "object" || v === null) return undefined
    const { accountId, sessionToken, agentKey } = v as Record<string, unknown>
    return typeof accountId === "string" && typeof sessionToken === "string" && typeof agentKey === "string"
      ? { accountId, sessionToken, agentKey }
      : undefined
  }).pipe(
    Effect.catchAllDefect((e) => Effect.as(Effect.logWarning(`${file} is unreadable; issuing fresh local credentials`, e), undefined))
  )

/** How often each API process takes over in-flight launches and staking operations whose owner died (their lease ended). */
const IN_FLIGHT_SWEEP_MS = 10_000

/**
 * Resumes the launches and settles the staking operations and transfers a previous run left in flight (the `all`
 * and `api` roles), then keeps doing so every `IN_FLIGHT_SWEEP_MS` for rows whose owning process
 * died since (a row a live process drives holds a lease and is skipped; `RowLease.ts`).
 */
const resumeInFlight = Effect.gen(function* () {
  const launches = yield* HeadlessLaunch
  const staking = yield* StakingService
  const resumed = yield* launches.resumeInFlight.pipe(Effect.orDie)
  if (resumed > 0) yield* Effect.logInfo(`resuming ${resumed} launches a previous run left in flight`)
  const stakingResumed = yield* staking.resumeInFlight.pipe(Effect.orDie)
  if (stakingResumed > 0) yield* Effect.logInfo(`settling ${stakingResumed} staking operations a previous run left in flight`)
  const trades = yield* TradeModule.TradeService
  const tradesResumed = yield* trades.resumeInFlight.pipe(Effect.orDie)
  if (tradesResumed > 0) yield* Effect.logInfo(`settling ${tradesResumed} agent trades a previous run left in flight`)
  const transfers = yield* TransferService
  const transfersResumed = yield* transfers.recover.pipe(Effect.orDie)
  if (transfersResumed > 0) yield* Effect.logInfo(`settling ${transfersResumed} transfers a previous run left in flight`)
  const bundles = yield* (yield* AtomicLaunch).recoverPass
  if (bundles.bundles > 0) yield* Effect.logInfo(`resumed ${bundles.bundles} atomic bundles a previous run left unsettled (${bundles.failed} left for the next pass)`)
  const sweep = Effect.gen(function* () {
    const taken = yield* launches.resumeInFlight
    if (taken > 0) yield* Effect.logInfo(`taking over ${taken} launches whose owner's lease ended`)
    const settling = yield* staking.resumeInFlight
    if (settling > 0) yield* Effect.logInfo(`settling ${settling} staking operations and reward claims whose owner's lease ended`)
    const tradesTaken = yield* trades.resumeInFlight
    if (tradesTaken > 0) yield* Effect.logInfo(`settling ${tradesTaken} agent trades whose owner's lease ended`)
    const transfersTaken = yield* transfers.recover
    if (transfersTaken > 0) yield* Effect.logInfo(`settling ${transfersTaken} transfers whose owner's lease ended`)
  }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("the in-flight sweep failed; it runs again", cause)))
  yield* Effect.forkScoped(Effect.repeat(Effect.delay(sweep, Duration.millis(IN_FLIGHT_SWEEP_MS)), Schedule.forever))
  // The spend gate's holds whose builds were never used or whose outcome never came: released once expired.
  yield* Effect.forkScoped(runHoldSweeper())
})

/**
 * The limit orders' executor (the `all` and `api` roles, where the trade rail runs): takes the
 * triggers this process's actors hand off, and every second the `triggered` orders no live process
 * drives (an actors process's, or a dead process's); `OrderExecutor.ts`.
 */
const startOrderExecution = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const executor = makeOrderExecutor({ sql, trades: yield* TradeModule.TradeService, callers: orderCallers(sql, yield* TierService) })
  yield* executor.run(yield* Effect.serviceOption(OrderHandoff.OrderHandoff))
})

/**
 * The Hood staking reward distributor (a sweep every 5 s over graduated Hood tokens): in every
 * process that serves staking (`all`, `api`); several replicas record each distribution once.
 */
const startHoodRewardDistributor = Effect.gen(function* () {
  yield* Effect.forkScoped(runHoodRewardDistributor((yield* StakingService).hoodRewards))
})

/** Written to a temporary file and renamed, so a crash never leaves half a file; mode 0600. */
const writeLocalCredentials = (file: string, creds: LocalCredentials): Effect.Effect<void> =>
  Effect.sync(() => {
    const tmp = `${file}.tmp`
    writeFileSync(tmp, JSON.stringify(creds, null, 2) + "\n", { mode: 0o600 })
    chmodSync(tmp, 0o600)
    renameSync(tmp, file)
  })

/**
 * Embedded mode's local account (Max, a session token and a Write-level agent key), reusing the
 * credentials of the last start while they still verify. Its embedded wallets exist and are
 * delegated on both chains (delegation set once; a later revoke is kept), so the key launches.
 */
const provisionLocal = (config: AppConfigShape) =>
  Effect.gen(function* () {
    const provider = yield* WalletProvider.WalletProvider
    const file = path.join(config.dataDir, LOCAL_CREDENTIALS_FILE)
    const previous = yield* readLocalCredentials(file)
    const creds = yield* provisionLocalAccount(previous, Date.now(), (accountId) =>
      Effect.forEach(["solana", "evm"] as const, (chain) =>
        Effect.flatMap(provider.ensureEmbeddedWallet(accountId, chain), (w) =>
          w.delegation === "none" ? provider.setDelegation(accountId, chain, "active") : Effect.void
        )
      )
    )
    if (creds !== previous) yield* writeLocalCredentials(file, creds)
    return creds
  })

/** What `/readyz` reports of ingestion (the `all` role: the ingesters run in this process). */
const ingestionOf = (config: AppConfigShape) =>
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

/**
 * The main listener. `ingestion`: what `/readyz` reports of ingestion (absent in the api role,
 * which runs no ingester); `checks`: readiness checks beside PostgreSQL, ClickHouse and the bus.
 */
const api = (config: AppConfigShape, readiness: { readonly ingestion?: Effect.Effect<IngestionReport>; readonly checks?: ReadonlyArray<ReadinessCheck> } = {}) =>
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
    const plans = resolvePlans(config.planOverrides, config.promoMaxDays)
    const nowMs = () => Date.now()
    // Replicas on one PostgreSQL server share their rate-limit counts; the embedded database has one process.
    const sharedLimits = config.databaseUrl === undefined ? undefined : yield* startSharedLimits(RowLease.processOwner())
    const accounts = yield* accountStackApi({ nowMs, sharedLimits })
    const hood = yield* HoodEndpoints
    const prices = yield* PriceSource
    const selfLaunches = yield* SelfLaunch
    const atomicLaunches = yield* AtomicLaunch
    const launchSettings = {
      expCustomCurves: config.launch.expCustomCurves,
      devBuyCeilings: config.devBuyCeilings,
      hostedImageUrlPrefix: `${publicUrlOf(config)}${hostedImagesPrefix}`
    }
    const routes = withOpenApi(
      [
        ...healthRoutes(
          [
            { name: "postgres", check: Database.ping.pipe(Effect.provideService(SqlClient.SqlClient, sql)) },
            { name: "clickhouse", check: clickhouse.ping },
            { name: "bus", check: bus.ping },
            ...(readiness.checks ?? [])
          ],
          undefined,
          readiness.ingestion
        ),
        ...launchConfigRoutes(config.devBuyCeilings),
        ...planRoutes(plans, config.promoMaxDays),
        ...marketRoutes({ index, nowMs, curveProgram: SVC_CURVE_PROGRAM_ID, hoodFactory: hood.addresses.factory, agentLaunches, launchVisibility, sharedLimits }),
        ...markRoutes({ publicClient: hoodPublicClient(hood.chain, hood.rpcUrl), addresses: hood.addresses, prices, index, nowMs, sharedLimits }),
        ...tradeQuoteRoutes({
          index,
          nowMs,
          agentAuth: accounts.agentAuth,
          freePlan: planById(plans, "free"),
          hoodPools: viemPoolSource(hoodPublicClient(hood.chain, hood.rpcUrl)),
          creatorShares: { solana: BigInt(DEFAULT_CREATOR_SHARE_BPS), hood: BigInt(STREAMER_SHARE_BPS) },
          sharedLimits
        }),
        ...agentRoutes({ sql, clickhouse, index, agentLaunches, launchVisibility, prices, tiers: yield* TierService, wallets: yield* AccountWallets, nowMs, sharedLimits }),
        ...launchRoutes({
          enabled: config.launch.enabled,
          agentAuth: accounts.agentAuth,
          launches: yield* HeadlessLaunch,
          images: yield* ImageService,
          settings: launchSettings,
          selfJob: selfOrAtomicJob(selfLaunches, atomicLaunches)
        }),
        ...atomicLaunchRoutes({ enabled: config.launch.enabled, agentAuth: accounts.agentAuth, launches: atomicLaunches, settings: launchSettings }),
        ...selfLaunchRoutes({ enabled: config.launch.enabled, agentAuth: accounts.agentAuth, launches: selfLaunches, settings: launchSettings }),
        ...stakingRoutes({
          enabled: config.accounts.stakingEnabled,
          agentAuth: accounts.agentAuth,
          staking: yield* StakingService,
          writeWindow: stakingWriteWindow(sql),
          nowMs
        }),
        ...tradeRoutes({ agentAuth: accounts.agentAuth, trades: yield* TradeModule.TradeService, transactions: makeAgentTransactions(sql) }),
        ...feeRoutes({ agentAuth: accounts.agentAuth, fees: yield* CreatorFees, claimWindow: feeClaimWindow(sql), nowMs }),
        ...orderRoutes({ agentAuth: accounts.agentAuth, orders: yield* OrderService.make(index).pipe(Effect.provideService(SqlClient.SqlClient, sql)) }),
        ...transferRailRoutes({ agentAuth: accounts.agentAuth, transfers: yield* TransferService }),
        ...accounts.routes
      ],
      {
        title: "curvestream",
        description: "Launch and market-data engine for bonding-curve tokens on Solana and Hood"
      }
    )
    const site = yield* loadWebPage(WEB_DIST, config.dataPort)
    return yield* serve({ name: "api", host: config.host, port: config.port, maxBodyBytes: config.maxBodyBytes, routes, trustedProxies: config.trustedProxies, sharedLimits, ...(site !== undefined ? { site } : {}) })
  })

/**
 * The market-data listener admits calls from the web page on the main listener: its origin by
 * the public URL, or by whatever host name the page was opened with on the main port.
 */
const webPageCors = (config: AppConfigShape): CorsPolicy => ({ pagePort: config.port, origins: [new URL(publicUrlOf(config)).origin] })

/** The web page's build (`npm start` builds it first: `scripts/build-web.mjs`). */
const WEB_DIST = fileURLToPath(new URL("../web/dist", import.meta.url))

/** The cluster keeper's consumer groups start with this (one group per turn as the active keeper). */
const KEEPER_GROUP_PREFIX = "keeper-candidates"

/**
 * The migration keeper and (unless --quiet, and only on the localnet) the market simulation.
 * `keeperReads`: where the active keeper finds completed curves: this process's index (`all`, which
 * holds every market) or `market.snapshots` (`actors`, whose index holds only its partitions').
 */
const background = (config: AppConfigShape, quiet: boolean, keeperReads: "index" | "snapshots" = "index") =>
  Effect.gen(function* () {
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const index = yield* MarketIndex
    const bus = yield* Bus
    const sender = makeRpcSender(endpoints.rpcUrl)
    yield* Effect.forkScoped(runMarketSnapshotSampler(index, yield* MarketSnapshotWriter, config.marketSnapshotIntervalMs))
    // One keeper, one executor per chain whose keeper key is known.
    const executors: Array<MigrationExecutor> = []
    if (endpoints.keeper === undefined) yield* Effect.logWarning("Solana migrations not kept: KEEPER_SECRET_KEY is not set")
    else executors.push(solanaMigrationExecutor(sender, endpoints.keeper))
    if (hood.keeper === undefined) yield* Effect.logWarning("Hood migrations not kept: HOOD_KEEPER_PRIVATE_KEY is not set")
    else {
      executors.push(
        hoodMigrationExecutor({ clients: { publicClient: hoodPublicClient(hood.chain, hood.rpcUrl), wallet: hoodWallet(hood.chain, hood.keeper, hood.rpcUrl) } })
      )
    }
    if (executors.length > 0) {
      // One active keeper among the processes that have its keys (a lease in PostgreSQL); the others stand by.
      yield* Effect.forkScoped(
        runKeeperAloneOver(
          RowLease.makeRowLeases(yield* SqlClient.SqlClient),
          keeperReads === "index"
            ? Effect.succeed(() => index.markets())
            : Effect.map(SnapshotCandidates.follow(bus, { groupPrefix: KEEPER_GROUP_PREFIX }), (source) => source.candidates),
          {
            executors,
            publish: (events) => bus.publish(Topics.chainEvents, events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))),
            policy: { ...DefaultKeeperPolicy, sweepIntervalMs: config.keeper.sweepIntervalMs, maxAttempts: config.keeper.maxAttempts }
          }
        )
      )
    }
    if (endpoints.embedded || hood.embedded) {
      yield* Effect.sync(() =>
        writeFileSync(
          path.join(config.dataDir, "localnet.json"),
          JSON.stringify(
            {
              ...(endpoints.embedded ? { solana: { rpcUrl: endpoints.rpcUrl, grpcUrl: endpoints.grpcUrl, blockEngineUrl: endpoints.blockEngineUrl } } : {}),
              ...(hood.embedded ? { hood: { rpcUrl: hood.rpcUrl, chainId: hood.chain.id, addresses: hood.addresses } } : {})
            },
            null,
            2
          )
        )
      )
    }
    if (endpoints.embedded && !quiet) yield* Effect.forkScoped(runSimulation(sender, { ...DefaultSimulationOptions, seed: config.simulationSeed }))
    if (hood.embedded && !quiet) {
      yield* Effect.forkScoped(runHoodSimulation(hoodSimulationClients(hood), { ...DefaultHoodSimulationOptions, seed: config.simulationSeed }))
    }
    return { solana: endpoints, hood }
  })

const logLevels: Record<AppConfigShape["logLevel"], LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

type Role = "all" | "ingest" | "actors" | "api"

/** `--role <name>` (default `all`). `--quiet`: no simulation. */
const parseRole = (argv: ReadonlyArray<string>): Effect.Effect<Role, string> => {
  const i = argv.indexOf("--role")
  const role = i === -1 ? "all" : argv[i + 1]
  if (role === "all" || role === "ingest" || role === "actors" || role === "api") return Effect.succeed(role)
  return Effect.fail(`unknown role '${role ?? ""}'; expected all, ingest, actors or api`)
}

/**
 * What a cluster role needs before any layer is built: Kafka (the roles talk through its topics),
 * a PostgreSQL server (they share checkpoints, cursors, accounts and the launch ledger) and
 * configured chain nodes (an embedded localnet per process would be a chain per process).
 */
const clusterRoleRefusal = (role: Exclude<Role, "all">, config: AppConfigShape): string | undefined => {
  const missing: Array<string> = []
  if (config.kafka.brokers === undefined) missing.push("KAFKA_BROKERS")
  if (config.databaseUrl === undefined) missing.push("DATABASE_URL")
  if (config.solana.rpcUrl === undefined) missing.push("SOLANA_RPC_URL")
  if (config.hood.rpcUrl === undefined) missing.push("HOOD_RPC_URL")
  if (missing.length === 0) return undefined
  return `role '${role}' runs beside the other roles on Kafka, a PostgreSQL server and configured chain nodes: set ${missing.join(", ")} (or run --role all, the single process)`
}

const program = Effect.gen(function* () {
  const argv = process.argv.slice(2)
  const config = yield* AppConfig
  // Embedded PGlite admits one process: every lease in it (keeper, launches, staking) was left by a run that is gone.
  if (config.databaseUrl === undefined) yield* RowLease.clearAll.pipe(Effect.orDie)
  const { solana: endpoints, hood } = yield* background(config, argv.includes("--quiet"))
  const local = config.databaseUrl === undefined ? yield* provisionLocal(config) : undefined
  if (local !== undefined) yield* fundLocalAccount(local.accountId)
  // Rewards now and then for the local account's embedded wallet, so a newcomer sees some to claim.
  const rewardOwner = local === undefined ? undefined : yield* localSolanaWallet(local.accountId).pipe(Effect.orElseSucceed(() => undefined))
  if (endpoints.localLedger !== undefined && rewardOwner !== undefined && !argv.includes("--quiet")) {
    yield* Effect.forkScoped(runStakingRewards(endpoints.localLedger, [rewardOwner]))
    // A stake of its own, so the simulated Hood graduations give it Hood staking rewards too.
    if (local !== undefined) yield* Effect.forkScoped(stakeLocalAccount(local.accountId))
  }
  yield* resumeInFlight
  yield* startOrderExecution
  yield* startHoodRewardDistributor
  if (endpoints.embedded && !argv.includes("--quiet")) {
    const agents = yield* seedAgents(Date.now()).pipe(Effect.orDie)
    yield* Effect.logInfo(`published ${agents.length} simulated agents: ${agents.map((a) => a.id).join(", ")}`)
  }
  // The market-data service (signal detectors on the bus, the tape and stream, the strategy lab; port 8081),
  // started before the main API so that `/readyz` answering means both listeners are up.
  const data = yield* startDataService({
    host: config.host,
    port: config.dataPort,
    maxBodyBytes: config.maxBodyBytes,
    streamThreads: config.dataStreamThreads,
    trustedProxies: config.trustedProxies,
    nowMs: Date.now,
    simulateSocial: endpoints.embedded && !argv.includes("--quiet"),
    tokenShards: config.actorShards,
    cors: webPageCors(config)
  })
  const server = yield* api(config, { ingestion: yield* ingestionOf(config) })
  // Shutdown begins here (finalizers run in reverse): both listeners stop accepting and answer
  // what is in flight together, within one drain bound, before anything they use is closed.
  yield* Effect.addFinalizer(() => Effect.all([server.drain, data.server.drain], { concurrency: "unbounded", discard: true }))
  yield* Effect.logInfo("curvestream ready").pipe(
    Effect.annotateLogs({
      api: server.url,
      web: `${server.url}/`,
      data: data.server.url,
      dataDir: config.dataDir,
      openapi: `${server.url}/api/v1/openapi.json`,
      solanaRpc: endpoints.rpcUrl,
      yellowstone: endpoints.grpcUrl,
      ...(endpoints.blockEngineUrl !== undefined ? { blockEngine: endpoints.blockEngineUrl } : {}),
      hoodRpc: hood.rpcUrl,
      ...(endpoints.embedded ? { localnet: "embedded", simulation: argv.includes("--quiet") ? "off" : "on" } : {}),
      ...(local !== undefined
        ? {
            localAccount: local.accountId,
            sessionToken: local.sessionToken,
            agentKey: local.agentKey,
            localCredentials: path.join(config.dataDir, LOCAL_CREDENTIALS_FILE)
          }
        : {})
    })
  )
  yield* Effect.logInfo(`web page: ${server.url}/ (markets, tokens, signals, strategy lab)`)
  if (local !== undefined) yield* Effect.logInfo(firstLaunchBanner(server.url, config.launch.enabled))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** The start banner's upload-then-launch pair (README "A first launch"). */
const firstLaunchBanner = (url: string, enabled: boolean): string =>
  enabled
    ? [
        "first launch (agent key in local-credentials.json):",
        `  IMG=$(curl -s -H "x-api-key: $KEY" -H 'content-type: image/png' --data-binary @logo.png ${url}/api/v1/uploads/agent-image | node -p 'JSON.parse(require("fs").readFileSync(0)).imageUrl')`,
        `  curl -s -H "x-api-key: $KEY" -H 'content-type: application/json' ${url}/api/v1/launch/headless -d "{\\"clientLaunchId\\":\\"my-first\\",\\"name\\":\\"First\\",\\"symbol\\":\\"FST\\",\\"imageUrl\\":\\"$IMG\\"}"`
      ].join("\n")
    : "launches are off (the spec's default): restart with HEADLESS_LAUNCH_ENABLED=true to launch; README \"A first launch\" has the curl pair"

const loggerLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json" ? Logger.json : config.logFormat === "pretty" ? Logger.pretty : Logger.logFmt,
      Logger.minimumLogLevel(logLevels[config.logLevel])
    )
  )
).pipe(Layer.provide(AppConfig.layer))

const MainLayer = Layer.mergeAll(launchLayer, stakingLayer, tradeLayer, feesLayer, transfersLayer).pipe(
  Layer.provideMerge(accountsLayer),
  Layer.provideMerge(pipelineLayer),
  // One process runs the actors and the trade rail: triggers are handed straight to the executor.
  Layer.provideMerge(OrderHandoff.layer()),
  Layer.provideMerge(storageLayer),
  Layer.provideMerge(AppConfig.layer)
)

// -------------------------------------------------------------------------------------------------
// The cluster roles (docs/architecture.md, "Roles"): the same layers, split by process.

/** The identity gate before anything derives state from a chain (ingest and actors roles). */
const gateLayer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => chainIdentityGate(config.resetChainState, retiredRanges)))

/** `--role ingest`: the ingesters publishing to `chain.events`. */
const IngestLayer = ingestersLayer.pipe(
  Layer.provide(gateLayer),
  Layer.provideMerge(endpointsLayer),
  Layer.provideMerge(storageLayer),
  Layer.provideMerge(AppConfig.layer)
)

const ingestProgram = Effect.gen(function* () {
  const solana = yield* SolanaEndpoints
  const hood = yield* HoodEndpoints
  yield* Effect.logInfo("curvestream ingest role running").pipe(Effect.annotateLogs({ role: "ingest", yellowstone: solana.grpcUrl, hoodRpc: hood.rpcUrl }))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** `--role actors`: market actors, the ClickHouse writers and the cluster publisher. */
const ActorsLayer = Layer.mergeAll(Layer.unwrapEffect(Effect.map(ClusterPublisher, marketActorsLayer)), localnetPrices).pipe(
  Layer.provide(gateLayer),
  Layer.provideMerge(endpointsLayer),
  Layer.provideMerge(ClusterPublisher.layer()),
  Layer.provideMerge(storageLayer),
  Layer.provideMerge(AppConfig.layer)
)

const actorsProgram = Effect.gen(function* () {
  const config = yield* AppConfig
  // The keeper (over every partition's markets) and the snapshot sampler (no simulation: the chains are configured nodes).
  yield* background(config, true, "snapshots")
  yield* startSignalPipeline({ simulateSocial: false, tokenShards: config.actorShards, publisher: yield* ClusterPublisher })
  yield* Effect.logInfo("curvestream actors role running").pipe(Effect.annotateLogs({ role: "actors", group: MarketActors.MARKET_ACTORS_GROUP }))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** The API replicas' own consumer groups start with this (one group per replica and topic). */
const REPLICA_GROUP_PREFIX = "api-replica"

/** `--role api`: both listeners over the replica read model, and the account, launch, staking and fee services. */
const ApiLayer = Layer.mergeAll(launchLayer, stakingLayer, tradeLayer, feesLayer, transfersLayer).pipe(
  Layer.provideMerge(accountsLayer),
  Layer.provideMerge(Layer.mergeAll(MarketReplica.layer({ groupPrefix: REPLICA_GROUP_PREFIX }), localnetPrices, endpointsLayer)),
  Layer.provideMerge(storageLayer),
  Layer.provideMerge(AppConfig.layer)
)

const apiProgram = Effect.gen(function* () {
  const config = yield* AppConfig
  const replica = yield* MarketReplica.MarketReplicaTag
  yield* resumeInFlight
  yield* startOrderExecution
  yield* startHoodRewardDistributor
  const side = yield* followSignalSide({ groupPrefix: REPLICA_GROUP_PREFIX })
  const data = yield* serveDataService(
    { host: config.host, port: config.dataPort, maxBodyBytes: config.maxBodyBytes, streamThreads: config.dataStreamThreads, trustedProxies: config.trustedProxies, nowMs: Date.now, simulateSocial: false, cors: webPageCors(config) },
    side
  )
  const caughtUp = Effect.suspend(() => (replica.ready() ? Effect.void : Effect.fail("catching up on market.snapshots and market.feed")))
  const server = yield* api(config, { checks: [{ name: "readModel", check: caughtUp }] })
  yield* Effect.addFinalizer(() => Effect.all([server.drain, data.server.drain], { concurrency: "unbounded", discard: true }))
  yield* Effect.logInfo("curvestream api role running").pipe(Effect.annotateLogs({ role: "api", api: server.url, web: `${server.url}/`, data: data.server.url }))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** Parses the role, refuses a cluster role that lacks what it needs, then runs the role's program on its layers. */
const main = Effect.gen(function* () {
  const role = yield* parseRole(process.argv.slice(2))
  if (role === "all") return yield* program.pipe(Effect.provide(MainLayer))
  const refusal = clusterRoleRefusal(role, yield* AppConfig.pipe(Effect.provide(AppConfig.layer)))
  if (refusal !== undefined) return yield* Effect.fail(refusal)
  switch (role) {
    case "ingest":
      return yield* ingestProgram.pipe(Effect.provide(IngestLayer))
    case "actors":
      return yield* actorsProgram.pipe(Effect.provide(ActorsLayer))
    case "api":
      return yield* apiProgram.pipe(Effect.provide(ApiLayer))
  }
})

// Checked before any layer is built, so another Node line opens no database and binds no port.
const unsupported = unsupportedNode(process.version)
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`)
  process.exitCode = 1
} else {
  main.pipe(
    Effect.provide(loggerLayer),
    Effect.tapErrorCause((cause) => Effect.logError("curvestream stopped on an error", cause)),
    NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
  )
}
