/**
 * MarketActors: the service that runs the market actors. Its layer loads the `market` checkpoints,
 * starts the sharded runtime (bus consumer on `chain.events`, group `actors`; the shard fibers; the
 * checkpoint flusher) and provides the `MarketIndex` read model the shards publish into, plus
 * `MarketActors` itself (runtime statistics and raw states, for tests and metrics).
 *
 * Invariants: see actors/runtime/ShardedRuntime.ts (ordering, at-most-once, commit after
 * checkpoint, supervision, bounds) and actors/market/MarketActor.ts (the state machine). Closing
 * the layer's scope stops everything without a final flush; the next start replays the bus from
 * the committed offsets, the same path as after a crash.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, type Scope } from "effect"
import { Bus, type BusError, Topics } from "../ingest/bus/Bus.js"
import type { ChainEvent, ChainId } from "../ingest/ChainEvent.js"
import type { FeedOptions } from "./feeds/FeedBuckets.js"
import { decodeChainEvent } from "../ingest/ChainEventCodec.js"
import {
  actorKey,
  defaultConfig,
  historyHeldUntil,
  hoodBlockOf,
  makeStep,
  makeTrimHistory,
  type MarketActorConfig,
  type MarketOutput,
  type MarketState,
  positionOf
} from "./market/MarketActor.js"
import { decodeMarketState, encodeMarketState } from "./market/MarketCodec.js"
import { AgentLaunches, AgentLaunchRegistry } from "./AgentLaunches.js"
import { TokenMetadataDirectory, TokenMetadataRegistry } from "./TokenMetadata.js"
import { MarketIndex, MarketIndexStore } from "./MarketIndex.js"
import { pgCheckpointStore } from "./runtime/Checkpointer.js"
import { encodeDrain, FEED_KEY, type MarketChange } from "./replica/ReadModelCodec.js"
import type { TopicPublisher } from "./replica/TopicPublisher.js"
import { type ActorDefinition, make as makeRuntime, type RuntimeHooks, type RuntimeOptions, type RuntimeStats } from "./runtime/ShardedRuntime.js"

export interface MarketActorsOptions extends Partial<RuntimeOptions> {
  /** Events kept per market for reorg rollback (default solana 0, hood 8). */
  readonly retractHistory?: Partial<Record<ChainId, number>>
  /** The Hood ingester's reorg window (default 64): kept events this many blocks deep are final. */
  readonly retractDepthBlocks?: number
  readonly feeds?: Partial<FeedOptions>
  /** Rows per checkpoint INSERT statement (default 500). */
  readonly checkpointRowsPerStatement?: number
  /**
   * Where the markets' `Announced` transitions go (the webhook outbox, provided by the composition
   * root: `src/services/webhooks/MarketEvents.ts`): `outputs` keeps them as the shards apply
   * them, `beforeCheckpoint` makes them durable before the checkpoint flush that passes them.
   * Absent: announcements are dropped.
   */
  readonly announcements?: (sql: SqlClient.SqlClient) => Pick<RuntimeHooks<MarketState, MarketOutput>, "outputs" | "beforeCheckpoint">
  /**
   * The actors role: every drain's changed markets also go to `market.snapshots` (one record per
   * market) and `market.feed` (one record per drain, several past `FEED_RECORD_MAX_BYTES`), and offsets commit only once they are
   * published (`RuntimeHooks.durable`).
   */
  readonly publisher?: TopicPublisher
  /**
   * The limit orders' books (issue 29; the composition root passes
   * `src/services/orders/OrderTriggers.ts`'s `orderTriggerHooks`): built in the layer's scope before
   * the runtime consumes, given the runtime's market states; `applied` checks each applied trade
   * against its market's book in the drain that moves the price (its own writer writes the
   * triggers at once), `beforeCheckpoint` holds a flush until the triggers decided before it are
   * written, `checkpointWrite` writes expiries and raised watermarks in the transaction of the
   * checkpoint that passes them, `assigned` reloads a partition's books when it is handed
   * over and `revoked` drops them when it is taken away. Absent: no order is checked.
   * `routedDurable` resolves once every batch routed so far is durable on the bus: a trigger is
   * written only for a trade the log keeps.
   */
  readonly orders?: (
    sql: SqlClient.SqlClient,
    marketState: (key: string) => MarketState | undefined,
    hurryCheckpoint: () => void,
    routedDurable: () => Effect.Effect<void, BusError>
  ) => Effect.Effect<Pick<RuntimeHooks<MarketState, MarketOutput, ChainEvent>, "applied" | "checkpointWrite" | "assigned" | "revoked" | "beforeCheckpoint">, SqlError, Scope.Scope>
}

export interface MarketActorsShape {
  readonly stats: () => RuntimeStats
  /** The runtime's current state of a market (including its retract window), or undefined. */
  readonly state: (chain: ChainId, mint: string) => MarketState | undefined
  /** Trims idle markets' final retract history now (the runtime also does every second); returns how many. */
  readonly sweepHistory: () => number
}

export class MarketActors extends Context.Tag("curvestream/MarketActors")<MarketActors, MarketActorsShape>() {}

/** The checkpoint owner of market states. */
export const MARKET_OWNER = "market"
/** The bus consumer group of the market actors on `chain.events`. */
export const MARKET_ACTORS_GROUP = "actors"

const describeOutput = (o: MarketOutput): { readonly level: "warning" | "info"; readonly message: string } | undefined => {
  switch (o._tag) {
    case "Anomaly":
      return { level: "warning", message: `event ${o.eventId} does not fit the market's state (${o.reason}); position advanced, nothing else changed` }
    case "RetractionUnresolved":
      return { level: "warning", message: `retraction ${o.eventId} names events not in the retract window (${o.ids.join(", ")}); they cannot be undone` }
    case "Undone":
    case "Announced":
    case "LifecycleChanged":
    case "MigrationChanged":
    case "Ignored":
      return undefined
  }
}

/** The market actor as the runtime sees it. */
export const marketActorDefinition = (config: MarketActorConfig = defaultConfig): ActorDefinition<MarketState, ChainEvent, MarketOutput> => ({
  owner: MARKET_OWNER,
  decode: decodeChainEvent,
  keyOf: (e) => actorKey(e.chain, e.mint),
  eventId: (e) => e.id,
  step: makeStep(config),
  positionOf,
  encodeState: encodeMarketState,
  decodeState: decodeMarketState,
  describeOutput,
  history: {
    clockOf: (e) => (e.chain === "hood" ? hoodBlockOf(e.position) : undefined),
    heldUntil: historyHeldUntil,
    trim: makeTrimHistory(config),
    depth: config.retractDepthBlocks ?? defaultConfig.retractDepthBlocks!
  }
})

/** One drain's changes to the read-model topics: each market's snapshot, and the drain as one feed record (several past `FEED_RECORD_MAX_BYTES`). */
export const publishReadModel = (publisher: TopicPublisher, changes: ReadonlyArray<MarketChange>): void => {
  if (changes.length === 0) return
  // The feed first: a snapshot is then never published before the feed record carrying it (a
  // replica reads the snapshots' end offsets before the feed's; see MarketReplica).
  const { feeds, snapshots } = encodeDrain(changes)
  publisher.offer(Topics.marketFeed, feeds.map((value) => ({ key: FEED_KEY, value })))
  publisher.offer(Topics.marketSnapshots, snapshots)
}

/** Starts the runtime in the current scope; returns the index and the runtime handle. */
export const make = (
  options: MarketActorsOptions = {}
): Effect.Effect<
  { readonly index: MarketIndexStore; readonly actors: MarketActorsShape; readonly agentLaunches: AgentLaunches; readonly metadata: TokenMetadataDirectory },
  SqlError | BusError,
  Bus | SqlClient.SqlClient | Scope.Scope
> =>
  Effect.gen(function* () {
    const { retractHistory, retractDepthBlocks, feeds, checkpointRowsPerStatement, publisher, announcements, orders, ...runtimeOptions } = options
    const bus = yield* Bus
    const store = yield* pgCheckpointStore(checkpointRowsPerStatement ?? 500)
    const agentLaunches = new AgentLaunches()
    const metadata = new TokenMetadataDirectory()
    const index = new MarketIndexStore({ ...(feeds === undefined ? {} : { feeds }), agentLaunches, metadata })
    const config: MarketActorConfig = {
      retractHistory: { ...defaultConfig.retractHistory, ...retractHistory },
      retractDepthBlocks: retractDepthBlocks ?? defaultConfig.retractDepthBlocks!
    }
    // The market transitions' webhook events, made durable before the checkpoints that pass them.
    const announced = announcements === undefined ? {} : announcements(yield* SqlClient.SqlClient)
    // The order books read the runtime's states once it exists (it does before any event is applied).
    let runtimeState: ((key: string) => MarketState | undefined) | undefined
    let hurryCheckpoint: (() => void) | undefined
    let routedDurable: (() => Effect.Effect<void, BusError>) | undefined
    const ordered =
      orders === undefined
        ? undefined
        : yield* orders(yield* SqlClient.SqlClient, (key) => runtimeState?.(key), () => hurryCheckpoint?.(), () => routedDurable?.() ?? Effect.void)
    // Both wait before a checkpoint flush: the market's webhook notices written, the triggers decided before it written.
    const before = [announced.beforeCheckpoint, ordered?.beforeCheckpoint].filter((f) => f !== undefined)
    const announce = {
      ...announced,
      // Each hook is called when the flush takes its states (the webhook outbox empties its notices
      // into the write then, and a retried flush retries that write); only the waits are run later.
      ...(before.length === 0
        ? {}
        : {
            beforeCheckpoint: () => {
              const waits = before.map((f) => f())
              return Effect.forEach(waits, (w) => w, { discard: true })
            }
          }),
      ...(ordered?.applied === undefined ? {} : { applied: ordered.applied }),
      ...(ordered?.assigned === undefined ? {} : { assigned: ordered.assigned }),
      ...(ordered?.revoked === undefined ? {} : { revoked: ordered.revoked }),
      ...(ordered?.checkpointWrite === undefined ? {} : { checkpointWrite: ordered.checkpointWrite })
    }
    const runtime = yield* makeRuntime(
      marketActorDefinition(config),
      publisher === undefined
        ? { publish: (changes) => index.publish(changes), setWarming: (warming) => index.setWarming(warming), ...announce }
        : {
            publish: (changes) => {
              index.publish(changes)
              publishReadModel(publisher, changes)
            },
            setWarming: (warming) => index.setWarming(warming),
            durable: publisher.barrier,
            ...announce
          },
      store,
      bus,
      { topic: Topics.chainEvents, group: MARKET_ACTORS_GROUP, ...runtimeOptions }
    )
    runtimeState = runtime.state
    hurryCheckpoint = runtime.hurryCheckpoint
    routedDurable = runtime.routedDurable
    const actors: MarketActorsShape = {
      stats: runtime.stats,
      state: (chain, mint) => runtime.state(actorKey(chain, mint)),
      sweepHistory: runtime.sweepHistory
    }
    return { index, actors, agentLaunches, metadata }
  }).pipe(Effect.withSpan("MarketActors.make"))

/** Provides `MarketIndex`, `MarketActors` and the `AgentLaunchRegistry` and `TokenMetadataRegistry` the index reads; the layer's scope owns the runtime. */
export const layer = (
  options: MarketActorsOptions = {}
): Layer.Layer<MarketIndex | MarketActors | AgentLaunchRegistry | TokenMetadataRegistry, SqlError | BusError, Bus | SqlClient.SqlClient> =>
  Layer.scopedContext(
    Effect.map(make(options), ({ index, actors, agentLaunches, metadata }) =>
      Context.make(MarketIndex, index).pipe(
        Context.add(MarketActors, actors),
        Context.add(AgentLaunchRegistry, agentLaunches),
        Context.add(TokenMetadataRegistry, metadata)
      )
    )
  )
