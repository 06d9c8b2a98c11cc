/**
 * The signal pipeline: the detectors (actors/signals) on the bus, their outputs pushed into the
 * in-memory hub (the tape's freshest rows, the stream) and into the ClickHouse `SignalWriter`.
 *
 * - Per-token detectors: a sharded runtime on `chain.events`, consumer group `signals`,
 *   checkpoints under owner `signals.token`.
 * - Per-chain detectors: their own runtime, group `signals-chain`, ONE shard (one key per chain),
 *   checkpointed every `chainCheckpointIntervalMs` (default 5 s: the state holds up to 100,000
 *   symbols and tokens per chain, too big to write every 100 ms). With several processes on one
 *   bus (the actors role, `chainAlone`), the runtime runs in one of them at a time, the holder of
 *   the `signals-chain` lease (`RowLease.runAlone`): the group's only member, it reads every
 *   partition, so each chain's state sees the whole chain; the others stand by and one takes over
 *   (loading the checkpoints, replaying from the group's offsets) once the holder's lease ended.
 * - kol_mention: `KolMentionDetectors` stepped by the social source's listener, each mention
 *   enriched with what the market read model knows of the token at that moment.
 * - Inputs: USD prices from `PriceSource` (refreshed into a synchronous cache, `usdPriceCache`),
 *   tracked wallets and KOL labels from `Tracking`.
 *
 * Invariants:
 * - The shard loop never waits on ClickHouse: outputs are offered to a bounded queue
 *   (`writerQueueMax`, default 20,000); when it is full the signal is still published to the
 *   hub but not stored, counted in `writerDropped` and logged (a replay of the bus from the
 *   detectors' checkpoints would store it again). A fiber drains the queue into the writer.
 * - Restart: the runtimes reload their checkpoints and the bus redelivers from the committed
 *   offsets; a signal re-emitted then has the same id (ClickHouse collapses it, the hub skips it).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Chunk, Effect, Queue, Schedule, type Scope } from "effect"
import { KolMentionDetectors, type MentionMarket } from "../../../actors/signals/KolMention.js"
import type { Signal, UsdPrice, UsdPriceFn, Venue } from "../../domain/Signal.js"
import { defaultSignalConfig, type SignalConfig, type SignalInputs } from "../../../actors/signals/SignalConfig.js"
import { chainSignalsDefinition, tokenSignalsDefinition } from "../../../actors/signals/SignalDetectors.js"
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import { marketCapRaw, venueOf } from "../../../actors/market/MarketRecord.js"
import type { CheckpointStore } from "../../../actors/runtime/Checkpointer.js"
import { make as makeRuntime, type RuntimeOptions, type RuntimeStats } from "../../../actors/runtime/ShardedRuntime.js"
import type { SignalWriterShape } from "../../../clickhouse/writer/SignalWriter.js"
import { type BusError, type BusShape, Topics } from "../../../ingest/bus/Bus.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { QuotePairs } from "../../domain/QuotePairs.js"
import type { PriceSourceShape } from "../prices/PriceSource.js"
import type { SocialMentionsShape } from "../social/SocialMentions.js"
import type { TrackingShape } from "../tracking/Tracking.js"
import type { SignalHub } from "./SignalHub.js"
import { type RowLeases, runAlone } from "../../db/RowLease.js"

export interface SignalWiringOptions {
  /** Shards of the per-token runtime (default: the runtime's default). */
  readonly tokenShards?: number
  /** Checkpoint interval of the per-chain runtime (default 5,000 ms). */
  readonly chainCheckpointIntervalMs: number
  /** Signals waiting for the writer (default 20,000). */
  readonly writerQueueMax: number
  /** Signals per writer call (default 1,000). */
  readonly writerBatchMax: number
  /** How often USD prices are re-read (default 30 s). */
  readonly priceRefreshMs: number
  /** Overrides of the runtimes' options (tests). */
  readonly runtime?: Partial<RuntimeOptions>
  /**
   * Several processes share the bus (the actors role): the per-chain detectors run in one of them
   * at a time, the holder of `CHAIN_DETECTORS_LEASE` (unset: in this process, always).
   */
  readonly chainAlone?: { readonly leases: RowLeases; readonly standbyMs?: number }
  readonly config?: SignalConfig
}

export const signalWiringDefaults: SignalWiringOptions = {
  chainCheckpointIntervalMs: 5_000,
  writerQueueMax: 20_000,
  writerBatchMax: 1_000,
  priceRefreshMs: 30_000
}

/** The per-chain detectors' lease when several processes share the bus. */
export const CHAIN_DETECTORS_LEASE = { kind: "singleton", key: "signals-chain" } as const

export interface SignalPipelineStats {
  readonly token: RuntimeStats
  /** Undefined while another process runs the per-chain detectors (`chainAlone`). */
  readonly chain: RuntimeStats | undefined
  readonly emitted: number
  readonly writerDropped: number
  readonly writerFailed: number
}

export interface SignalPipeline {
  readonly stats: () => SignalPipelineStats
  /** Hands signals to the hub and the writer queue (the detectors' outputs go through here). */
  readonly sink: (signals: ReadonlyArray<Signal>) => void
}

const normalize = (chain: ChainId, address: string) => `${chain}:${chain === "hood" ? address.toLowerCase() : address}`

/**
 * A synchronous `usdPrice` for the detectors over `PriceSource`: every quote pair's price is read
 * now and every `refreshMs` in the scope; an asset the source cannot price is unknown (null).
 */
export const usdPriceCache = (prices: PriceSourceShape, refreshMs: number): Effect.Effect<UsdPriceFn, never, Scope.Scope> =>
  Effect.gen(function* () {
    const cache = new Map<string, UsdPrice>()
    const refresh = Effect.forEach(
      QuotePairs,
      (pair) =>
        Effect.match(prices.usd(pair.id), {
          onFailure: () => void cache.delete(normalize(pair.chain, pair.address)),
          onSuccess: (p) => void cache.set(normalize(pair.chain, pair.address), { num: p.usdRaw, scale: p.scale })
        }),
      { discard: true }
    )
    yield* refresh
    yield* Effect.forkScoped(Effect.repeat(refresh, Schedule.spaced(refreshMs)).pipe(Effect.delay(refreshMs)))
    return (chain, quoteMint) => cache.get(normalize(chain, quoteMint)) ?? null
  })

/** What the kol_mention detector needs of a token, from the market read model. */
export const mentionMarketOf = (index: MarketIndexShape, chain: ChainId, asset: string): MentionMarket | null => {
  const core = index.market(chain, asset)
  if (core === undefined) return null
  return {
    symbol: core.identity.symbol,
    createdAtMs: core.identity.createdAtMs,
    venue: venueOf(core.chain, core.lifecycle) as Venue | null,
    quoteMint: core.identity.quoteMint,
    quoteDecimals: core.identity.quoteDecimals,
    marketCapQuoteRaw: marketCapRaw(core)
  }
}

export interface SignalWiringDeps {
  readonly bus: BusShape
  readonly store: CheckpointStore
  readonly hub: SignalHub
  readonly writer: SignalWriterShape
  readonly prices: PriceSourceShape
  readonly tracking: TrackingShape
  readonly index: MarketIndexShape
  readonly social: SocialMentionsShape
  /** The actors role: the signals are published to the `signals` topic; offsets commit once they are (`RuntimeHooks.durable`). */
  readonly durable?: Effect.Effect<void>
}

/** Starts the detectors, the kol_mention listener and the writer fiber in the current scope. */
export const runSignalPipeline = (
  deps: SignalWiringDeps,
  input: Partial<SignalWiringOptions> = {}
): Effect.Effect<SignalPipeline, SqlError | BusError, Scope.Scope> =>
  Effect.gen(function* () {
    const options: SignalWiringOptions = { ...signalWiringDefaults, ...input }
    const config = options.config ?? defaultSignalConfig
    const usdPrice = yield* usdPriceCache(deps.prices, options.priceRefreshMs)
    const inputs: SignalInputs = { usdPrice, trackedWallet: deps.tracking.trackedWalletInfo, kolByHandle: deps.tracking.kolInfo }
    const queue = yield* Effect.acquireRelease(Queue.dropping<Signal>(options.writerQueueMax), Queue.shutdown)
    let emitted = 0
    let writerDropped = 0
    let writerFailed = 0
    let dropLogged = 0
    const sink = (signals: ReadonlyArray<Signal>): void => {
      if (signals.length === 0) return
      emitted += signals.length
      deps.hub.publish(signals)
      for (const s of signals) {
        if (!queue.unsafeOffer(s)) {
          writerDropped++
          if (writerDropped >= dropLogged * 2 || dropLogged === 0) {
            dropLogged = Math.max(1, writerDropped)
            Effect.runFork(Effect.logWarning(`signals: writer queue full (${options.writerQueueMax}); ${writerDropped} signals not stored so far`))
          }
        }
      }
    }
    // The writer fiber: waits for room in the writer (never the shards).
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.takeBetween(queue, 1, options.writerBatchMax), (chunk) =>
          deps.writer.record(Chunk.toReadonlyArray(chunk)).pipe(
            Effect.catchAll((e) =>
              Effect.zipRight(
                Effect.sync(() => (writerFailed += chunk.length)),
                Effect.logError(`signals: ${chunk.length} signals could not be stored`, e)
              )
            )
          )
        )
      )
    )
    const hooks = {
      publish: () => undefined,
      outputs: (_key: string, out: ReadonlyArray<Signal>) => sink(out),
      setWarming: () => undefined,
      ...(deps.durable !== undefined ? { durable: deps.durable } : {})
    }
    const token = yield* makeRuntime(tokenSignalsDefinition(inputs, config), hooks, deps.store, deps.bus, {
      ...options.runtime,
      ...(options.tokenShards !== undefined ? { shards: options.tokenShards } : {}),
      topic: Topics.chainEvents,
      group: "signals"
    })
    const chain = yield* chainDetectors(
      makeRuntime(chainSignalsDefinition(inputs, config), hooks, deps.store, deps.bus, {
        ...options.runtime,
        shards: 1,
        topic: Topics.chainEvents,
        group: "signals-chain",
        checkpointIntervalMs: options.chainCheckpointIntervalMs
      }),
      options.chainAlone
    )
    const kol = new KolMentionDetectors(config, inputs)
    const unsubscribe = deps.social.subscribe((mention) => {
      try {
        sink(kol.apply({ mention, market: mentionMarketOf(deps.index, mention.chain, mention.asset) }))
      } catch (e) {
        Effect.runFork(Effect.logError(`signals: mention ${mention.id} failed`, e))
      }
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    return {
      sink,
      stats: () => ({ token: token.stats(), chain: chain.stats(), emitted, writerDropped, writerFailed })
    }
  }).pipe(Effect.withSpan("SignalPipeline.run"))

/**
 * The per-chain detectors' runtime: started here, or (`alone`) in the scope of this process's
 * turn as the lease holder, closed (the group left; the next holder replays from its committed offsets) when the turn ends.
 * `stats` and `current` (the runtime) are undefined while this process stands by.
 */
export const chainDetectors = <Rt extends { readonly stats: () => RuntimeStats }>(
  start: Effect.Effect<Rt, SqlError | BusError, Scope.Scope>,
  alone: SignalWiringOptions["chainAlone"]
): Effect.Effect<{ readonly stats: () => RuntimeStats | undefined; readonly current: () => Rt | undefined }, SqlError | BusError, Scope.Scope> =>
  Effect.gen(function* () {
    if (alone === undefined) {
      const runtime = yield* start
      return { stats: () => runtime.stats(), current: () => runtime }
    }
    let running: Rt | undefined
    const turn = Effect.scoped(
      Effect.gen(function* () {
        yield* Effect.addFinalizer(() => Effect.sync(() => (running = undefined)))
        running = yield* start
        return yield* Effect.never
      })
    )
    yield* Effect.forkScoped(runAlone(alone.leases, CHAIN_DETECTORS_LEASE.kind, CHAIN_DETECTORS_LEASE.key, turn, alone.standbyMs === undefined ? {} : { standbyMs: alone.standbyMs }))
    return { stats: () => running?.stats(), current: () => running }
  })

/**
 * Fills an empty hub with the newest stored signals (at start, so the stream's snapshot and the
 * tape's fresh reads are not empty after a restart). Failures are logged, not fatal.
 */
export const warmHub = (
  hub: SignalHub,
  read: (limit: number) => Effect.Effect<ReadonlyArray<Signal>, unknown>
): Effect.Effect<void> =>
  read(hub.options.capacity).pipe(
    Effect.map((newestFirst) => hub.publish([...newestFirst].reverse())),
    Effect.catchAll((e) => Effect.logWarning("signals: could not warm the hub from ClickHouse", e))
  )
