/**
 * The chain side: the Solana and Hood endpoints, the chain identity gate, the ingesters
 * (Yellowstone and EVM logs into `chain.events`), the market actors with the ClickHouse writers,
 * and the `all` role's pipeline of all of them.
 */
import { Effect, Layer, Option } from "effect"
import * as path from "node:path"
import * as MarketActors from "../../actors/MarketActors.js"
import type { TopicPublisher } from "../../actors/replica/TopicPublisher.js"
import { MarketSnapshotWriter } from "../../clickhouse/writer/MarketSnapshotWriter.js"
import { TradeWriter } from "../../clickhouse/writer/TradeWriter.js"
import { HoodIngester } from "../../ingest/hood/HoodIngester.js"
import { SolanaIngester } from "../../ingest/solana/SolanaIngester.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { SVC_CURVE_PROGRAM_ID } from "../chain/solana/program/ProgramIds.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../config/AppConfig.js"
import { chainIdentityGate } from "../services/chains/ChainIdentity.js"
import * as OrderHandoff from "../services/orders/OrderHandoff.js"
import { orderTriggerHooks } from "../services/orders/OrderTriggers.js"
import * as TrackedWallets from "../services/personal/TrackedWallets.js"
import { marketEventHooks } from "../services/webhooks/MarketEvents.js"
import { layer as localnetPrices } from "./Prices.js"
import { retiredRanges } from "./Storage.js"

/** The USD price source (`Prices.ts`: the oracle or the fixed prices, by `PRICE_SOURCE`). */
export { localnetPrices }

/** The Solana and Hood endpoints: the embedded localnets (under the data directory) or configured nodes. */
export const endpointsLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    // The embedded localnets keep their chains under the data directory; the identity gate runs before anything reads them.
    const localnetDir = (chain: string) => ({ dataDir: path.join(config.dataDir, "chains", chain), fsync: config.bus.fsync })
    return Layer.merge(SolanaEndpoints.layer(config.solana, localnetDir("solana")), HoodEndpoints.layer(config.hood, localnetDir("hood")))
  })
)

/** The identity gate before anything derives state from a chain. */
export const gateLayer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => chainIdentityGate(config.resetChainState, retiredRanges)))

/** The ingesters: Yellowstone and EVM logs into `chain.events`. */
export const ingestersLayer = Layer.unwrapEffect(
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
          tradeRouter: h.addresses.tradeRouter,
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
export const marketActorsLayer = (publisher: TopicPublisher | undefined) =>
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
        // With the cluster publisher each actors process holds only the books of the partitions it owns.
        orders: orderTriggerHooks({
          ...(Option.isSome(handoff) ? { execution: OrderHandoff.handoffExecution(handoff.value) } : {}),
          partitioned: publisher !== undefined
        }),
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
export const layerConfig = Layer.mergeAll(ingestersLayer, marketActorsLayer(undefined), localnetPrices).pipe(
  Layer.provide(gateLayer),
  Layer.provideMerge(endpointsLayer)
)
