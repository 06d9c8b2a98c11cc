/**
 * The cluster keeper's candidates (docs/decisions.md, "Cluster roles"): every completed market of
 * every partition, read from `market.snapshots` (each market's latest state, published by
 * whichever actors process owns its partition). In `--role actors` no process's own index holds
 * every market, so the active keeper builds this when it takes the keeper's lease and drops it
 * when it stops (`runKeeperAloneOver`); `--role all` keeps sweeping its one index.
 *
 * - Follows the topic from its log start in a consumer group of its own (`<prefix>-<uuid>`), so
 *   it is given every partition and commits nothing.
 * - `follow` resolves once it read every partition up to the end offsets it had at start: a
 *   keeper sweeping before that could take an old `completed` state of a curve already migrated
 *   and send a migration the chain refuses. After that it follows live.
 * - Bounded by the completed markets: a state that is not `completed` (or a tombstone) removes
 *   its market; nothing else is held.
 * - Applied in offset order per market, never filtered by position (as the API replicas do): a
 *   Hood retraction moves a market's position back. The replicas' window applies: a process that
 *   lost a partition may publish an older state after the new owner's; the keeper then holds the
 *   older one until the market's next state (at worst a migration the chain refuses, counted as
 *   an attempt).
 */
import { randomUUID } from "node:crypto"
import { Effect, Either, type Scope } from "effect"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { nextOffsetOf, Progress } from "../../../actors/replica/MarketReplica.js"
import { decodeSnapshot } from "../../../actors/replica/ReadModelCodec.js"
import { type BusError, type BusShape, Topics } from "../../../ingest/bus/Bus.js"

export interface SnapshotCandidatesOptions {
  /** Consumer-group prefix; each follower joins a group of its own. */
  readonly groupPrefix: string
  /** Records per bus batch (default 5,000). */
  readonly maxBatch?: number
}

export interface SnapshotCandidates {
  /** The completed markets as last published (the keeper's `candidates`). */
  readonly candidates: () => Iterable<MarketCore>
  readonly stats: () => { readonly records: number; readonly decodeFailures: number; readonly completed: number }
}

/** Follows `market.snapshots` in the current scope; resolves once caught up with the end offsets at start. */
export const follow = (bus: BusShape, options: SnapshotCandidatesOptions): Effect.Effect<SnapshotCandidates, BusError, Scope.Scope> =>
  Effect.gen(function* () {
    const completed = new Map<string, MarketCore>()
    const counters = { records: 0, decodeFailures: 0 }
    const progress = new Progress(yield* bus.endOffsets(Topics.marketSnapshots))
    const caughtUp = yield* Effect.makeLatch(progress.done)
    yield* bus.subscribe(
      { group: `${options.groupPrefix}-${randomUUID()}`, topic: Topics.marketSnapshots, fromBeginning: true, autoCommit: false, maxBatch: options.maxBatch ?? 5_000 },
      (batch) =>
        Effect.gen(function* () {
          for (const record of batch.records) {
            counters.records++
            const decoded = Either.try(() => decodeSnapshot(record.value))
            if (Either.isLeft(decoded)) {
              counters.decodeFailures++
              yield* Effect.logWarning("keeper: a market.snapshots record is not one the actors write; skipped", decoded.left).pipe(
                Effect.annotateLogs({ partition: batch.partition, offset: record.offset })
              )
              continue
            }
            const core = decoded.right?.core
            if (core !== undefined && core.lifecycle === "completed") completed.set(record.key, core)
            else completed.delete(record.key)
          }
          const next = nextOffsetOf(batch)
          if (next !== undefined) progress.advance(batch.partition, next)
          if (progress.done) yield* caughtUp.open
        })
    )
    yield* caughtUp.await
    yield* Effect.logInfo(`keeper: caught up on market.snapshots (${completed.size} completed markets)`)
    return {
      candidates: () => completed.values(),
      stats: () => ({ ...counters, completed: completed.size })
    } satisfies SnapshotCandidates
  }).pipe(Effect.withSpan("SnapshotCandidates.follow"))
