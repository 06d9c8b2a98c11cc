/**
 * Checkpoints: actor states persisted to PostgreSQL (`checkpoints(owner, key, position, state)`),
 * in batches, and the barrier the bus consumer waits on before its offset may be committed.
 *
 * Protocol (the reason this module exists):
 * 1. Every state change is `mark`ed dirty with a new, increasing mark number (a key dirtied again
 *    moves to the back with the newer state, so the dirty map stays ordered by mark).
 * 2. The flusher takes up to `maxKeys` of the oldest dirty states and writes them in ONE
 *    transaction (chunked statements). It flushes when someone waits on a barrier (after
 *    `lingerMs`), when `maxKeys` states are dirty, or when a dirty state is `intervalMs` old.
 *    A failed write is retried (capped backoff) with the same states; nothing is dropped.
 * 3. The flushed watermark is every mark below the oldest mark still dirty or in flight.
 *    `barrier` waits until the watermark reaches the newest mark at the time of the call: every
 *    state changed before the call is in PostgreSQL (and asks for a flush now); `flushed` waits
 *    for the same without asking (the regular interval flush). The runtime's offset committer
 *    waits on `flushed` after the batches it commits were applied, so an offset is committed
 *    strictly after the states covering it are durable.
 *
 * Bounds: `maxKeys` states per transaction, `rowsPerStatement` rows per statement; the dirty map
 * holds at most one entry per live key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Schedule } from "effect"
import { Waiters, Wakeup } from "./internal/Wakeup.js"

export interface CheckpointRow {
  readonly key: string
  readonly position: string
  /** The encoded state; null deletes the row (the actor no longer exists). */
  readonly state: string | null
}

/** Where checkpoints live. The PostgreSQL implementation is `pgCheckpointStore`. */
export interface CheckpointStore {
  /** Every row of `owner`, page by page (keyset pagination, `pageSize` rows at a time). */
  readonly load: (owner: string, onPage: (rows: ReadonlyArray<CheckpointRow>) => void) => Effect.Effect<number, SqlError>
  /**
   * Writes the rows in one transaction. With a `fence`, only the rows of partitions whose epoch in
   * `partition_owners` (read in the same transaction, `FOR SHARE`) is still the one this process
   * claimed; returns how many rows the fence left out. `along` runs in the same transaction,
   * after the fence, with the test of which keys were written.
   */
  readonly save: (owner: string, rows: ReadonlyArray<CheckpointRow>, fence?: CheckpointFence, along?: CheckpointWrite["write"]) => Effect.Effect<number, SqlError>
  /**
   * Takes ownership of a bus partition's checkpoints: bumps its epoch (waiting for flushes under
   * way to finish, which hold the row `FOR SHARE`) and returns the new one. A flush of the
   * previous owner after this writes nothing of the partition.
   */
  readonly claim: (owner: string, partition: number) => Effect.Effect<number, SqlError>
}

/** The ownership fence of a flush (the actors role; see migration 0017). */
export interface CheckpointFence {
  readonly partitionOf: (key: string) => number
  /** partition → the epoch this process claimed; rows of other partitions are not written. */
  readonly epochs: ReadonlyMap<number, number>
}

/**
 * What a runtime hook writes with a flush (`RuntimeHooks.checkpointWrite`): state derived from
 * the flushed states that must never be ahead of them (a crash replays from the checkpoints, so a
 * derived value written before its states would meet the replay of the events that made it).
 */
export interface CheckpointWrite {
  /** Runs in the flush's transaction, after the ownership fence, with the test of which taken keys it writes; retried with the flush. */
  readonly write: (kept: (key: string) => boolean) => Effect.Effect<void, SqlError>
  /** Runs once that transaction committed. */
  readonly committed: Effect.Effect<void>
}

export const LOAD_PAGE_ROWS = 5000

export const pgCheckpointStore = (rowsPerStatement: number): Effect.Effect<CheckpointStore, never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => ({
    load: (owner, onPage) =>
      Effect.gen(function* () {
        let after = ""
        let total = 0
        while (true) {
          const rows = yield* sql<{ key: string; position: string; state: string }>`
            SELECT key, position, state::text AS state FROM checkpoints
            WHERE owner = ${owner} AND key > ${after} ORDER BY key LIMIT ${LOAD_PAGE_ROWS}`
          if (rows.length === 0) return total
          onPage(rows)
          total += rows.length
          after = rows[rows.length - 1]!.key
          if (rows.length < LOAD_PAGE_ROWS) return total
        }
      }).pipe(Effect.withSpan("Checkpoints.load", { attributes: { owner } })),
    save: (owner, rows, fence, along) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            let kept = rows
            let owned: (key: string) => boolean = () => true
            if (fence !== undefined) {
              // The rows' partitions and, for `along`, every partition this process claimed.
              const partitions = [...new Set([...rows.map((r) => fence.partitionOf(r.key)), ...fence.epochs.keys()])]
              const current = partitions.length === 0
                ? []
                : yield* sql<{ partition: number; epoch: string }>`
                    SELECT partition, epoch::text AS epoch FROM partition_owners
                    WHERE owner = ${owner} AND partition IN ${sql.in(partitions)} FOR SHARE`
              const ownedPartitions = new Set(current.filter((c) => fence.epochs.get(c.partition) === Number(c.epoch)).map((c) => c.partition))
              owned = (key) => ownedPartitions.has(fence.partitionOf(key))
              kept = rows.filter((r) => owned(r.key))
            }
            if (along !== undefined) yield* along(owned)
            const upserts = kept.filter((r) => r.state !== null)
            const deletes = kept.filter((r) => r.state === null).map((r) => r.key)
            for (let i = 0; i < upserts.length; i += rowsPerStatement) {
              const chunk = upserts.slice(i, i + rowsPerStatement).map((r) => ({ owner, key: r.key, position: r.position, state: r.state }))
              yield* sql`INSERT INTO checkpoints ${sql.insert(chunk)}
                ON CONFLICT (owner, key) DO UPDATE SET position = excluded.position, state = excluded.state, updated_at = now()`
            }
            for (let i = 0; i < deletes.length; i += rowsPerStatement) {
              yield* sql`DELETE FROM checkpoints WHERE owner = ${owner} AND key IN ${sql.in(deletes.slice(i, i + rowsPerStatement))}`
            }
            return rows.length - kept.length
          })
        )
        .pipe(Effect.withSpan("Checkpoints.save", { attributes: { owner, rows: rows.length } })),
    claim: (owner, partition) =>
      Effect.map(
        sql<{ epoch: string }>`
          INSERT INTO partition_owners (owner, partition, epoch) VALUES (${owner}, ${partition}, 1)
          ON CONFLICT (owner, partition) DO UPDATE SET epoch = partition_owners.epoch + 1, claimed_at = now()
          RETURNING epoch::text AS epoch`,
        (rows) => Number(rows[0]!.epoch)
      ).pipe(Effect.withSpan("Checkpoints.claim", { attributes: { owner, partition } }))
  }))

export interface CheckpointerOptions {
  readonly owner: string
  /** Most states per flush (one transaction); also flushes early when this many are dirty. */
  readonly maxKeys: number
  /** A dirty state waits at most this long for a flush to start (absent any barrier). */
  readonly intervalMs: number
  /** After the first barrier request, wait this long to gather more before flushing (group commit). */
  readonly lingerMs: number
  /**
   * Called when a flush takes its states (synchronously, so it sees exactly what was applied
   * before); the flush saves only after the returned effect succeeds (retried like a failed save).
   * The runtime waits there for the bus records those states came from to be durable.
   */
  readonly beforeSave?: () => Effect.Effect<void, unknown>
  /**
   * Called synchronously when a flush takes its states, with the test of which keys' latest
   * states this flush makes durable (taken now, or durable already: not dirty), valid only during
   * the call: what it answers is written in the flush's transaction (`CheckpointStore.save`'s
   * `along`) and told when it committed.
   */
  readonly alongSave?: (covered: (key: string) => boolean) => CheckpointWrite | undefined
  /** The ownership fence of every flush (`CheckpointStore.save`); absent: rows are written as they are. */
  readonly fence?: CheckpointFence
}

/** Retries of a failed flush: 10 ms doubling, capped at 2 s, forever (the bus waits meanwhile). */
export const flushRetrySchedule = Schedule.union(Schedule.exponential("10 millis"), Schedule.spaced("2 seconds"))

interface Dirty<S> {
  readonly state: S | undefined
  readonly mark: number
  readonly sinceMs: number
}

export interface CheckpointerStats {
  readonly flushes: number
  readonly rowsFlushed: number
  readonly flushFailures: number
  readonly dirty: number
  /** States taken by the flush under way (0 when none). */
  readonly inFlight: number
  readonly lastFlushMs: number
  /** Callers parked on `flushed` (the offset committer waiting for a regular flush). */
  readonly flushWaiters: number
  /** Rows the ownership fence left out (their partition had moved to another process). */
  readonly fencedRows: number
}

export class Checkpointer<S> {
  private readonly dirty = new Map<string, Dirty<S>>()
  private marks = 0
  private inFlightMin = Number.POSITIVE_INFINITY
  private readonly barriers = new Waiters()
  private readonly passive = new Waiters()
  private readonly wake = new Wakeup()
  private flushes = 0
  private rowsFlushed = 0
  private flushFailures = 0
  private lastFlushMs = 0
  private inFlight = 0
  private fencedRows = 0
  private hurried = false

  constructor(
    private readonly options: CheckpointerOptions,
    private readonly store: CheckpointStore,
    private readonly encode: (key: string, state: S | undefined) => CheckpointRow,
    private readonly nowMs: () => number
  ) {}

  /** A state changed (undefined: the actor is gone). Synchronous; called by the shards. */
  mark(key: string, state: S | undefined): void {
    const mark = ++this.marks
    const previous = this.dirty.get(key)
    if (previous !== undefined) this.dirty.delete(key)
    this.dirty.set(key, { state, mark, sinceMs: previous?.sinceMs ?? this.nowMs() })
    if (this.dirty.size === 1 || this.dirty.size >= this.options.maxKeys) this.wake.notify()
  }

  /**
   * Asks for a flush now (after `lingerMs`) without waiting for it, even when no state is dirty
   * (then it writes no state, only what `alongSave` hands it): the runtime calls it when an
   * applied event decided something written with its checkpoint (a limit order's trigger), so
   * that does not wait for `intervalMs`, and a hook calls it when it decided something with no
   * state changing (an order caught up on a market that has not moved since).
   */
  hurry(): void {
    this.hurried = true
    this.wake.notify()
  }

  /** Every mark at or below this is durable. */
  watermark(): number {
    let lowest = this.inFlightMin
    for (const first of this.dirty.values()) {
      if (first.mark < lowest) lowest = first.mark
      break
    }
    return lowest === Number.POSITIVE_INFINITY ? this.marks : lowest - 1
  }

  /** Resolves once every state changed before this call is in the store. */
  get barrier(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const target = this.marks
      if (this.watermark() >= target) return Effect.void
      this.wake.notify()
      return this.barriers.await(target, () => this.watermark())
    })
  }

  /**
   * Like `barrier`, but does not hurry the flusher: resolves when the regular flushes (every
   * `intervalMs`, or at `maxKeys` dirty) have written every state changed before this call. The
   * offset committer uses it, so a trickle of events does not cost a transaction each.
   */
  get flushed(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const target = this.marks
      if (this.watermark() >= target) return Effect.void
      return this.passive.await(target, () => this.watermark())
    })
  }

  stats(): CheckpointerStats {
    return {
      flushes: this.flushes,
      rowsFlushed: this.rowsFlushed,
      flushFailures: this.flushFailures,
      dirty: this.dirty.size,
      inFlight: this.inFlight,
      lastFlushMs: this.lastFlushMs,
      flushWaiters: this.passive.size,
      fencedRows: this.fencedRows
    }
  }

  private oldestDirtyAgeMs(): number {
    for (const first of this.dirty.values()) return this.nowMs() - first.sinceMs
    return 0
  }

  private due(): boolean {
    return (
      this.hurried ||
      (this.dirty.size > 0 && (this.barriers.size > 0 || this.dirty.size >= this.options.maxKeys || this.oldestDirtyAgeMs() >= this.options.intervalMs))
    )
  }

  /** Takes the oldest dirty states and writes them in one transaction, retrying until it succeeds. */
  private flushOnce: Effect.Effect<void> = Effect.suspend(() => {
    const taken: Array<CheckpointRow> = []
    const takenKeys: Array<string> = []
    const unencodable: Array<readonly [string, unknown]> = []
    let min = Number.POSITIVE_INFINITY
    for (const [key, d] of this.dirty) {
      if (takenKeys.length >= this.options.maxKeys) break
      if (d.mark < min) min = d.mark
      takenKeys.push(key)
      try {
        taken.push(this.encode(key, d.state))
      } catch (defect) {
        // A state the actor cannot encode is a bug; it cannot become encodable by retrying.
        unencodable.push([key, defect])
      }
    }
    for (const key of takenKeys) this.dirty.delete(key)
    this.hurried = false
    this.inFlightMin = min
    this.inFlight = takenKeys.length
    const started = this.nowMs()
    const logUnencodable = Effect.forEach(unencodable, ([key, defect]) => Effect.logError(`actors: cannot encode the state of ${key}; not checkpointed`, defect), {
      discard: true
    })
    const ready = this.options.beforeSave?.() ?? Effect.void
    const along = this.options.alongSave?.((key) => !this.dirty.has(key))
    return Effect.zipRight(logUnencodable, Effect.zipRight(ready, this.store.save(this.options.owner, taken, this.options.fence, along?.write))).pipe(
      Effect.tapError((error) =>
        Effect.sync(() => this.flushFailures++).pipe(
          Effect.zipRight(Effect.logWarning(`actors: checkpoint flush of ${taken.length} states failed; retrying`, error))
        )
      ),
      Effect.retry(flushRetrySchedule),
      Effect.orDie,
      Effect.tap((fencedOut) =>
        Effect.sync(() => {
          this.fencedRows += fencedOut
          this.inFlightMin = Number.POSITIVE_INFINITY
          this.inFlight = 0
          this.flushes++
          this.rowsFlushed += taken.length
          this.lastFlushMs = this.nowMs() - started
          this.barriers.release(this.watermark())
          this.passive.release(this.watermark())
        })
      ),
      Effect.tap(() => along?.committed ?? Effect.void)
    )
  })

  /** The flusher fiber's body: runs until interrupted. */
  get run(): Effect.Effect<never> {
    const self = this
    return Effect.gen(function* () {
      while (true) {
        if (!self.due()) {
          // Nothing due: sleep until a mark or barrier wakes us, or the interval passes for what is dirty.
          if (self.dirty.size === 0) yield* self.wake.wait
          else yield* Effect.raceFirst(self.wake.wait, Effect.sleep(Duration.millis(Math.max(1, self.options.intervalMs - self.oldestDirtyAgeMs()))))
          continue
        }
        if (self.options.lingerMs > 0 && self.dirty.size < self.options.maxKeys) yield* Effect.sleep(Duration.millis(self.options.lingerMs))
        yield* self.flushOnce
      }
    })
  }
}
