/**
 * Composition root: it composes layers and starts programs, and nothing else. Each service's
 * layer, built from the configuration and owning its recovery passes, is in `src/layers/`; the
 * main API's route list and listener in `MainApi.ts`, the market-data service in `DataService.ts`.
 * Reads configuration, builds the storage and bus layers (embedded defaults
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
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Logger, LogLevel } from "effect"
import * as path from "node:path"
import * as MarketActors from "../actors/MarketActors.js"
import * as MarketReplica from "../actors/replica/MarketReplica.js"
import { ClusterPublisher } from "../actors/replica/TopicPublisher.js"
import { HoodEndpoints } from "./chain/hood/HoodEndpoints.js"
import { redactUrlCredentials } from "./chain/internal/JsonRpcHttp.js"
import { SolanaEndpoints } from "./chain/solana/SolanaEndpoints.js"
import type { Bus } from "../ingest/bus/Bus.js"
import { AppConfig, type AppConfigShape } from "./config/AppConfig.js"
import { unsupportedNode } from "./config/Runtime.js"
import { followSignalSide, serveDataService, startDataService, startSignalPipeline } from "./DataService.js"
import * as AccountsLayer from "./layers/Accounts.js"
import { startBackground } from "./layers/Background.js"
import { ResolvedPlans } from "./layers/Common.js"
import * as FeesLayer from "./layers/Fees.js"
import * as LaunchLayer from "./layers/Launch.js"
import { firstLaunchBanner, LOCAL_CREDENTIALS_FILE, startLocal } from "./layers/LocalAccount.js"
import * as PipelineLayer from "./layers/Pipeline.js"
import * as StakingLayer from "./layers/Staking.js"
import * as StorageLayer from "./layers/Storage.js"
import * as ChainArrivals from "./services/chains/ChainArrivals.js"
import * as TradeLayer from "./layers/Trade.js"
import * as TransfersLayer from "./layers/Transfers.js"
import { ingestionOf, serveMainApi, webPageCors } from "./MainApi.js"
import * as OrderHandoff from "./services/orders/OrderHandoff.js"

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

/**
 * `LOCAL_ACCOUNT=true` provisions the local account beside a PostgreSQL server (development, the
 * benches' second database); its funds come from the embedded localnets, so configured chains
 * refuse it.
 */
export const localAccountRefusal = (config: AppConfigShape): string | undefined =>
  config.localAccount === true && (config.solana.rpcUrl !== undefined || config.solana.yellowstoneUrl !== undefined || config.hood.rpcUrl !== undefined)
    ? "LOCAL_ACCOUNT=true provisions a local account funded by the embedded localnets: unset SOLANA_RPC_URL, YELLOWSTONE_URL and HOOD_RPC_URL, or unset LOCAL_ACCOUNT"
    : undefined

/**
 * The `all` role's program, raced against the embedded localnets' threads (`LocalnetThread.ts`): one
 * that crashes after the endpoints were built stops the engine on that error, instead of leaving it
 * waiting on a chain that is gone; one that fails before it is ready fails the endpoints' layer.
 */
const program = Effect.gen(function* () {
  const [solana, hood] = [yield* SolanaEndpoints, yield* HoodEndpoints]
  return yield* Effect.raceFirst(engine, Effect.raceFirst(solana.localnetCrashed, hood.localnetCrashed))
}).pipe(Effect.scoped)

const engine = Effect.gen(function* () {
  const argv = process.argv.slice(2)
  const config = yield* AppConfig
  const { solana: endpoints, hood } = yield* startBackground(config, argv.includes("--quiet"))
  const local = yield* startLocal(config, argv.includes("--quiet"))
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
  const server = yield* serveMainApi(config, { ingestion: yield* ingestionOf(config), dataRoutes: data.routes })
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
      // A node URL's user:password is never logged.
      solanaRpc: redactUrlCredentials(endpoints.rpcUrl),
      yellowstone: redactUrlCredentials(endpoints.grpcUrl),
      ...(endpoints.blockEngineUrl !== undefined ? { blockEngine: redactUrlCredentials(endpoints.blockEngineUrl) } : {}),
      hoodRpc: redactUrlCredentials(hood.rpcUrl),
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
})

const loggerLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json" ? Logger.json : config.logFormat === "pretty" ? Logger.pretty : Logger.logFmt,
      Logger.minimumLogLevel(logLevels[config.logLevel])
    )
  )
).pipe(Layer.provide(AppConfig.layer))

/**
 * The services the main API serves, each with what it owns running for the layer's lifetime (the
 * recovery passes, the order executor, the Hood reward distributor; `src/layers/`), over the
 * account stack (with the spend gate's hold sweeper).
 */
const servicesLayer = (arrivals: Layer.Layer<ChainArrivals.ChainArrivals, never, Bus | AppConfig>) =>
  Layer.mergeAll(LaunchLayer.layerConfig, StakingLayer.layerConfig, TradeLayer.layerConfig, FeesLayer.layerConfig, TransfersLayer.layerConfig).pipe(
    Layer.provideMerge(AccountsLayer.layerConfig),
    // The transactions the ingest stream delivers wake the trades' and launches' confirmation reads.
    Layer.provideMerge(arrivals)
  )

/**
 * The `all` role's arrivals: its own ingester delivers at `SOLANA_COMMITMENT`, so at `confirmed` or
 * `finalized` a landed Solana transaction is decided from the stream (docs/decisions.md).
 */
const ownArrivals = Layer.unwrapEffect(Effect.map(AppConfig, (config) => ChainArrivals.layer({ ownIngesterCommitment: config.solana.commitment })))

/** The configuration and what every role derives from it once. */
const configLayer = ResolvedPlans.layer.pipe(Layer.provideMerge(AppConfig.layer))

const MainLayer = servicesLayer(ownArrivals).pipe(
  Layer.provideMerge(PipelineLayer.layerConfig),
  // One process runs the actors and the trade rail: triggers are handed straight to the executor.
  Layer.provideMerge(OrderHandoff.layer()),
  Layer.provideMerge(StorageLayer.layerConfig),
  Layer.provideMerge(configLayer)
)

// -------------------------------------------------------------------------------------------------
// The cluster roles (docs/architecture.md, "Roles"): the same layers, split by process.

/** `--role ingest`: the ingesters publishing to `chain.events`. */
const IngestLayer = PipelineLayer.ingestersLayer.pipe(
  Layer.provide(PipelineLayer.gateLayer),
  Layer.provideMerge(PipelineLayer.endpointsLayer),
  Layer.provideMerge(StorageLayer.layerConfig),
  Layer.provideMerge(AppConfig.layer)
)

const ingestProgram = Effect.gen(function* () {
  const solana = yield* SolanaEndpoints
  const hood = yield* HoodEndpoints
  yield* Effect.logInfo("curvestream ingest role running").pipe(Effect.annotateLogs({ role: "ingest", yellowstone: redactUrlCredentials(solana.grpcUrl), hoodRpc: redactUrlCredentials(hood.rpcUrl) }))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** `--role actors`: market actors, the ClickHouse writers and the cluster publisher. */
const ActorsLayer = Layer.mergeAll(Layer.unwrapEffect(Effect.map(ClusterPublisher, PipelineLayer.marketActorsLayer)), PipelineLayer.localnetPrices).pipe(
  Layer.provide(PipelineLayer.gateLayer),
  Layer.provideMerge(PipelineLayer.endpointsLayer),
  Layer.provideMerge(ClusterPublisher.layer()),
  Layer.provideMerge(StorageLayer.layerConfig),
  Layer.provideMerge(AppConfig.layer)
)

const actorsProgram = Effect.gen(function* () {
  const config = yield* AppConfig
  // The keeper (over every partition's markets) and the snapshot sampler (no simulation: the chains are configured nodes).
  yield* startBackground(config, true, "snapshots")
  yield* startSignalPipeline({ simulateSocial: false, tokenShards: config.actorShards, publisher: yield* ClusterPublisher })
  yield* Effect.logInfo("curvestream actors role running").pipe(Effect.annotateLogs({ role: "actors", group: MarketActors.MARKET_ACTORS_GROUP }))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** The API replicas' own consumer groups start with this (one group per replica and topic). */
const REPLICA_GROUP_PREFIX = "api-replica"

/** `--role api`: both listeners over the replica read model, and the account, launch, staking and fee services. */
// A replica follows another process's ingest: its stream wakes the reads, which decide.
const ApiLayer = servicesLayer(ChainArrivals.layer()).pipe(
  Layer.provideMerge(Layer.mergeAll(MarketReplica.layer({ groupPrefix: REPLICA_GROUP_PREFIX }), PipelineLayer.localnetPrices.pipe(Layer.provideMerge(PipelineLayer.endpointsLayer)))),
  Layer.provideMerge(StorageLayer.layerConfig),
  Layer.provideMerge(configLayer)
)

const apiProgram = Effect.gen(function* () {
  const config = yield* AppConfig
  const replica = yield* MarketReplica.MarketReplicaTag
  const side = yield* followSignalSide({ groupPrefix: REPLICA_GROUP_PREFIX })
  const data = yield* serveDataService(
    { host: config.host, port: config.dataPort, maxBodyBytes: config.maxBodyBytes, streamThreads: config.dataStreamThreads, trustedProxies: config.trustedProxies, nowMs: Date.now, simulateSocial: false, cors: webPageCors(config) },
    side
  )
  const caughtUp = Effect.suspend(() => (replica.ready() ? Effect.void : Effect.fail("catching up on market.snapshots and market.feed")))
  const server = yield* serveMainApi(config, { checks: [{ name: "readModel", check: caughtUp }], dataRoutes: data.routes })
  yield* Effect.addFinalizer(() => Effect.all([server.drain, data.server.drain], { concurrency: "unbounded", discard: true }))
  yield* Effect.logInfo("curvestream api role running").pipe(Effect.annotateLogs({ role: "api", api: server.url, web: `${server.url}/`, data: data.server.url }))
  return yield* Effect.never
}).pipe(Effect.scoped)

/** Parses the role, refuses a cluster role that lacks what it needs, then runs the role's program on its layers. */
const main = Effect.gen(function* () {
  const role = yield* parseRole(process.argv.slice(2))
  if (role === "all") {
    const refusal = localAccountRefusal(yield* AppConfig.pipe(Effect.provide(AppConfig.layer)))
    if (refusal !== undefined) return yield* Effect.fail(refusal)
    return yield* program.pipe(Effect.provide(MainLayer))
  }
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
