/**
 * What the `all` and actors roles run beside their layers: the market snapshot sampler, the
 * migration keeper (one active keeper among the processes that have its keys, under a lease), the
 * localnets' address file, and (unless --quiet, and only on the localnet) the market simulation.
 */
import { SqlClient } from "@effect/sql"
import { address } from "@solana/kit"
import { privateKeyToAccount } from "viem/accounts"
import { Effect } from "effect"
import * as path from "node:path"
import { MarketIndex } from "../../actors/MarketIndex.js"
import { MarketSnapshotWriter } from "../../clickhouse/writer/MarketSnapshotWriter.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import { ETH_USD_FEED_POLL_MS } from "../../ingest/hood/EthUsdFeed.js"
import { busKey } from "../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { hoodPublicClient, hoodWallet } from "../chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { GENESIS_ETH_USD_ANSWER } from "../chain/hood/localnet/Deploy.js"
import { ETH_USD_REPORTER_KEY } from "../chain/hood/localnet/DevAccounts.js"
import { GENESIS_SOL_USD } from "../chain/solana/localnet/Ledger.js"
import { makeRpcSender } from "../chain/solana/RpcSender.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import type { AppConfigShape } from "../config/AppConfig.js"
import * as RowLease from "../db/RowLease.js"
import { writeJsonAtomic } from "../platform/Files.js"
import { hoodMigrationExecutor } from "../services/keeper/HoodMigrationExecutor.js"
import { DefaultKeeperPolicy } from "../services/keeper/KeeperPolicy.js"
import { type MigrationExecutor, runKeeperAloneOver } from "../services/keeper/MigrationKeeper.js"
import * as SnapshotCandidates from "../services/keeper/SnapshotCandidates.js"
import { solanaMigrationExecutor } from "../services/keeper/SolanaMigrationExecutor.js"
import { runMarketSnapshotSampler } from "../services/snapshots/MarketSnapshotSampler.js"
import { DefaultHoodSimulationOptions, hoodSimulationClients, runHoodSimulation } from "../sim/HoodSimulation.js"
import { DefaultSimulationOptions, runSimulation } from "../sim/MarketSimulation.js"
import { runEthUsdPublisher } from "../sim/EthUsdPublisher.js"
import { priceHeartbeatMs, runPythPublisher } from "../sim/PythPublisher.js"

/** How often the localnets' publishers look at SOL/USD and ETH/USD (a moved price is posted at once). */
const PYTH_PUBLISH_INTERVAL_MS = 2_000

/** Slots behind the tip a `finalized` read lags on Solana (a `confirmed` read: about one slot). */
const FINALIZED_LAG_SLOTS = 32

/**
 * How long a post to the embedded localnets takes to reach the engine's price reader: on Solana
 * the Yellowstone stream at `SOLANA_COMMITMENT` (finalized 32 slots, confirmed one, processed
 * none); on Hood the ETH/USD feed's poll plus `HOOD_CONFIRMATIONS` blocks. The heartbeat is
 * `priceHeartbeatMs` of it (docs/decisions.md "The engine at rest").
 */
const commitmentLagMs = (config: AppConfigShape) => ({
  solana: (config.solana.commitment === "finalized" ? FINALIZED_LAG_SLOTS : config.solana.commitment === "confirmed" ? 1 : 0) * config.solana.localnetSlotMs,
  hood: ETH_USD_FEED_POLL_MS + config.hood.confirmations * config.hood.localnetBlockMs
})

/** The cluster keeper's consumer groups start with this (one group per turn as the active keeper). */
const KEEPER_GROUP_PREFIX = "keeper-candidates"

/** Where clients of the embedded localnets find them (`<dataDir>/localnet.json`). */
const LOCALNET_FILE = "localnet.json"

/**
 * The migration keeper and (unless `quiet`, and only on the localnet) the market simulation.
 * `keeperReads`: where the active keeper finds completed curves: this process's index (`all`, which
 * holds every market) or `market.snapshots` (`actors`, whose index holds only its partitions').
 */
export const startBackground = (config: AppConfigShape, quiet: boolean, keeperReads: "index" | "snapshots" = "index") =>
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
      yield* writeJsonAtomic(path.join(config.dataDir, LOCALNET_FILE), {
        ...(endpoints.embedded ? { solana: { rpcUrl: endpoints.rpcUrl, grpcUrl: endpoints.grpcUrl, blockEngineUrl: endpoints.blockEngineUrl } } : {}),
        ...(hood.embedded ? { hood: { rpcUrl: hood.rpcUrl, chainId: hood.chain.id, addresses: hood.addresses } } : {})
      })
    }
    if (endpoints.embedded && !quiet) yield* Effect.forkScoped(runSimulation(sender, { ...DefaultSimulationOptions, seed: config.simulationSeed }))
    // The localnets' oracle publishers keep SOL/USD and ETH/USD fresh; with the simulation they also move them.
    if (endpoints.embedded && config.prices.source === "oracle") {
      yield* Effect.forkScoped(
        runPythPublisher(sender, {
          seed: config.simulationSeed,
          priceAccount: address(config.prices.pythSolUsdAccount),
          intervalMs: PYTH_PUBLISH_INTERVAL_MS,
          heartbeatMs: priceHeartbeatMs(config.prices.maxAgeMs, commitmentLagMs(config).solana, PYTH_PUBLISH_INTERVAL_MS),
          move: !quiet,
          start: GENESIS_SOL_USD
        })
      )
    }
    const ethUsdFeed = hood.addresses.ethUsdFeed
    if (hood.embedded && config.prices.source === "oracle" && ethUsdFeed !== undefined) {
      const account = privateKeyToAccount(ETH_USD_REPORTER_KEY)
      yield* Effect.forkScoped(
        runEthUsdPublisher(
          { publicClient: hoodPublicClient(hood.chain, hood.rpcUrl), wallet: hoodWallet(hood.chain, account, hood.rpcUrl), chain: hood.chain, account },
          { seed: config.simulationSeed, feed: ethUsdFeed, intervalMs: PYTH_PUBLISH_INTERVAL_MS, heartbeatMs: priceHeartbeatMs(config.prices.maxAgeMs, commitmentLagMs(config).hood, PYTH_PUBLISH_INTERVAL_MS),
            move: !quiet,
            startAnswer: GENESIS_ETH_USD_ANSWER }
        )
      )
    }
    if (hood.embedded && !quiet) {
      yield* Effect.forkScoped(runHoodSimulation(hoodSimulationClients(hood), { ...DefaultHoodSimulationOptions, seed: config.simulationSeed }))
    }
    return { solana: endpoints, hood }
  })
