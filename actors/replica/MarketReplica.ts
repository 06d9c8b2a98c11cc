/**
 * MarketReplica: the API role's read model (docs/architecture.md, "Roles"). It builds the same
 * `MarketIndexStore` the actors publish into in one process (records, quotes, feed buckets,
 * search keys) from the topics the actors role writes, and follows them live:
 *
 * 1. Snapshot: `market.snapshots` (compacted: each market's latest state) read up to the end
 *    offsets it had at start, into a side map. Nothing is published into the index yet.
 * 2. Tail: `market.feed` (one partition, every actors drain in one order) from its log start, each
 *    record published into the index as one batch, exactly as the actors published it (a drain past
 *    `FEED_RECORD_MAX_BYTES` is several records, each applied as it is read). Once the
 *    feed reached the end offset it had at start, the markets of step 1 that the feed never named
 *    (the feed's head was trimmed by retention) are published too, and the replica is caught up:
 *    `ready` turns true and the index stops warming (`/readyz` and the feed's `warming` follow).
 *
 * Invariants:
 * - Same answers on every replica: replicas that replayed the same feed records from the same
 *   offset hold the same index, down to the feed buckets' sequence numbers (the buckets' input is
 *   the one ordered feed, grouped by record). A replica started after retention trimmed the
 *   feed's head numbers its bucket changes from its own start (docs/decisions.md).
 * - Applied in feed order, never filtered by position: a Hood retraction moves a market's position
 *   back, and its state must still replace the one before. A process that lost a partition may
 *   publish a state of one of its markets after the new owner published a later one; the replica
 *   then shows the older state until the market's next event (docs/decisions.md, "Cluster roles").
 * - The end offsets are read snapshots first, feed second, and the actors publish each drain's
 *   feed record before its snapshots, so every snapshot read in step 1 is also in the feed read in
 *   step 2 unless retention removed it: step 1 only adds what the feed no longer has.
 * - Bounded: the side map of step 1 holds at most one state per market and is dropped when
 *   caught up; the index's bounds are its own.
 */
import { randomUUID } from "node:crypto"
import { Context, Effect, Either, Exit, Layer, Scope as ScopeModule, type Scope } from "effect"
import { Bus, type BusBatch, type BusError, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { AgentLaunches, type AgentLaunchesRead, AgentLaunchRegistry } from "../AgentLaunches.js"
import { TokenMetadataDirectory, type TokenMetadataRead, TokenMetadataRegistry } from "../TokenMetadata.js"
import type { FeedOptions } from "../feeds/FeedBuckets.js"
import type { MarketState } from "../market/MarketActor.js"
import { MarketIndex, MarketIndexStore } from "../MarketIndex.js"
import { decodeFeedRecord, decodeSnapshot, FEED_KEY, type MarketChange } from "./ReadModelCodec.js"

export interface MarketReplicaOptions {
  /** Consumer-group prefix; each replica joins groups of its own (`<prefix>-<uuid>-…`), so it is given every partition. */
  readonly groupPrefix: string
  readonly feeds?: Partial<FeedOptions>
  readonly agentLaunches?: AgentLaunchesRead
  readonly metadata?: TokenMetadataRead
  /** Records per bus batch (default 5,000). */
  readonly maxBatch?: number
}

export interface MarketReplicaStats {
  readonly snapshotRecords: number
  readonly feedRecords: number
  readonly decodeFailures: number
  /** Markets taken from the snapshot topic that the feed no longer had. */
  readonly fromSnapshotOnly: number
  readonly ready: boolean
}

export interface MarketReplica {
  readonly index: MarketIndexStore
  readonly ready: () => boolean
  readonly stats: () => MarketReplicaStats
}

/** Per partition: caught up once `next` reaches the end offset it had at start. */
export class Progress {
  private readonly left = new Map<number, number>()
  constructor(ends: ReadonlyMap<number, number>) {
    for (const [partition, end] of ends) if (end > 0) this.left.set(partition, end)
  }
  advance(partition: number, next: number): void {
    const end = this.left.get(partition)
    if (end !== undefined && next >= end) this.left.delete(partition)
  }
  get done(): boolean {
    return this.left.size === 0
  }
}

/** The offset after a batch (its own, or after its last record). */
export const nextOffsetOf = (batch: BusBatch): number | undefined => {
  const last = batch.records[batch.records.length - 1]
  return batch.nextOffset ?? (last === undefined ? undefined : last.offset + 1)
}

/** Starts following in the current scope; returns at once (`ready` says when it caught up). */
export const make = (bus: BusShape, options: MarketReplicaOptions): Effect.Effect<MarketReplica, BusError, Scope.Scope> =>
  Effect.gen(function* () {
    const index = new MarketIndexStore({
      ...(options.feeds === undefined ? {} : { feeds: options.feeds }),
      ...(options.agentLaunches === undefined ? {} : { agentLaunches: options.agentLaunches }),
      ...(options.metadata === undefined ? {} : { metadata: options.metadata })
    })
    index.setWarming(true)
    const maxBatch = options.maxBatch ?? 5_000
    const instance = `${options.groupPrefix}-${randomUUID()}`
    const seen = new Set<string>()
    const counters = { snapshotRecords: 0, feedRecords: 0, decodeFailures: 0, fromSnapshotOnly: 0 }
    let ready = false

    /** Tracks which markets the feed named (`finish` adds only the others from the snapshot). */
    const named = (changes: ReadonlyArray<MarketChange>): ReadonlyArray<MarketChange> => {
      for (const [key] of changes) seen.add(key)
      return changes
    }

    const decodeFailed = (batch: BusBatch, offset: number, error: unknown) =>
      Effect.sync(() => counters.decodeFailures++).pipe(
        Effect.zipRight(Effect.logWarning(`replica: a ${batch.topic} record is not one the actors write; skipped`, error)),
        Effect.annotateLogs({ partition: batch.partition, offset })
      )

    // 1. The snapshot, up to the end offsets at start (read before the feed's: see the module note).
    const snapshotEnds = yield* bus.endOffsets(Topics.marketSnapshots)
    const feedEnds = yield* bus.endOffsets(Topics.marketFeed)
    const base = new Map<string, MarketState | undefined>()
    const snapshotProgress = new Progress(snapshotEnds)
    const follow = Effect.gen(function* () {
      if (!snapshotProgress.done) {
        const scope = yield* ScopeModule.make()
        const caughtUp = yield* Effect.makeLatch(false)
        yield* bus
          .subscribe({ group: `${instance}-snapshots`, topic: Topics.marketSnapshots, fromBeginning: true, autoCommit: false, maxBatch }, (batch) =>
            Effect.gen(function* () {
              for (const record of batch.records) {
                const end = snapshotEnds.get(batch.partition) ?? 0
                if (record.offset >= end) break
                counters.snapshotRecords++
                const decoded = Either.try(() => decodeSnapshot(record.value))
                if (Either.isLeft(decoded)) yield* decodeFailed(batch, record.offset, decoded.left)
                // Offset order per key: the latest record is the market's state (what compaction keeps).
                else base.set(record.key, decoded.right)
              }
              const next = nextOffsetOf(batch)
              if (next !== undefined) snapshotProgress.advance(batch.partition, next)
              if (snapshotProgress.done) yield* caughtUp.open
            })
          )
          .pipe(ScopeModule.extend(scope))
        yield* caughtUp.await
        yield* ScopeModule.close(scope, Exit.void)
      }

      // 2. The feed from its log start, then live.
      const feedPartition = bus.partitionFor(Topics.marketFeed, FEED_KEY)
      const feedProgress = new Progress(new Map([[feedPartition, feedEnds.get(feedPartition) ?? 0]]))
      const finish = Effect.gen(function* () {
        const onlyInSnapshot: Array<MarketChange> = []
        for (const [key, state] of base) if (state !== undefined && !seen.has(key)) onlyInSnapshot.push([key, state])
        base.clear()
        counters.fromSnapshotOnly += onlyInSnapshot.length
        if (onlyInSnapshot.length > 0) index.publish(named(onlyInSnapshot))
        ready = true
        index.setWarming(false)
        yield* Effect.logInfo(`replica: caught up (${index.size()} markets, ${counters.feedRecords} feed records, ${onlyInSnapshot.length} from the snapshot topic only)`)
      })
      yield* bus.subscribe({ group: `${instance}-feed`, topic: Topics.marketFeed, fromBeginning: true, autoCommit: false, maxBatch }, (batch) =>
        Effect.gen(function* () {
          for (const record of batch.records) {
            counters.feedRecords++
            const decoded = Either.try(() => decodeFeedRecord(record.value))
            if (Either.isLeft(decoded)) {
              yield* decodeFailed(batch, record.offset, decoded.left)
              continue
            }
            if (decoded.right.length > 0) index.publish(named(decoded.right))
          }
          if (ready) return
          const next = nextOffsetOf(batch)
          if (next !== undefined) feedProgress.advance(batch.partition, next)
          if (feedProgress.done) yield* finish
        })
      )
      if (feedProgress.done) yield* finish
    })
    // Followed in the background: the listeners answer (503 from /readyz) while it catches up. A
    // missing topic fails the start above, at the end offsets; a later failure stops the process.
    yield* Effect.forkScoped(follow.pipe(Effect.tapErrorCause((cause) => Effect.logError("replica: following the read-model topics failed", cause)), Effect.orDie))

    return {
      index,
      ready: () => ready,
      stats: () => ({ ...counters, ready })
    } satisfies MarketReplica
  }).pipe(Effect.withSpan("MarketReplica.make"))

/** The API role's replica, for `/readyz`. */
export class MarketReplicaTag extends Context.Tag("curvestream/MarketReplica")<MarketReplicaTag, MarketReplica>() {}

/** Provides `MarketIndex` (the replica's), the `AgentLaunchRegistry` and `TokenMetadataRegistry` its reads use, and the replica itself. */
export const layer = (
  options: Omit<MarketReplicaOptions, "agentLaunches" | "metadata">
): Layer.Layer<MarketIndex | AgentLaunchRegistry | TokenMetadataRegistry | MarketReplicaTag, BusError, Bus> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const agentLaunches = new AgentLaunches()
      const metadata = new TokenMetadataDirectory()
      const replica = yield* make(yield* Bus, { ...options, agentLaunches, metadata })
      return Context.make(MarketIndex, replica.index).pipe(
        Context.add(AgentLaunchRegistry, agentLaunches),
        Context.add(TokenMetadataRegistry, metadata),
        Context.add(MarketReplicaTag, replica)
      )
    })
  )
