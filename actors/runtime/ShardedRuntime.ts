/**
 * The sharded actor runtime (DESIGN.md "Actors: logical per mint, physically sharded"): a logical
 * actor per key (`chain:mint`), a fixed number of shard fibers per process, each owning the states
 * of the keys that hash to it and draining a bounded mailbox in batches through the actor's pure
 * `step`. It consumes the bus, checkpoints states to PostgreSQL and publishes snapshots.
 *
 * Invariants:
 * - One owner per key: key → shard by a stable hash (FNV-1a, 32-bit), so a key's events are applied
 *   by one fiber, in bus order. The bus partition (murmur2 of the same key) keeps them in order.
 * - No fiber per message: a drained batch runs `step` in a plain loop; mailbox push, drain and the
 *   state lookup cost about 50 ns per message (Mailbox.test.ts prints it), plus the key hash.
 * - At most once per key and position: the actor's `step` returns the same state for an event at
 *   or below the key's last applied position, so duplicates and replays change nothing and are
 *   counted as `skipped`.
 * - Backpressure, never loss: a bus partition fiber routing into a full mailbox waits for room.
 * - Commit after checkpoint: the consumer subscribes with `autoCommit: false`; `onBatch` only
 *   decodes and routes, and a committer fiber commits a partition's offset only after every event
 *   before it was applied and every state it changed is in PostgreSQL (Checkpointer.ts). So
 *   checkpoint flushes never delay delivery. Restart = load checkpoints, then the bus redelivers
 *   from the committed offset (what was applied but not yet committed is skipped as a replay).
 * - Durable before derived: the consumer also subscribes with `beforeDurable` (the embedded bus
 *   then delivers a record while its fsync runs, so readers see it sooner), and no checkpoint or
 *   offset covers a record before the bus says it is durable (see `routedDurable`). A crash in
 *   between loses only in-memory state; the publisher, whose publish had not resolved, publishes
 *   the record again.
 * - Supervision: a record that fails to decode is logged with its offset and skipped; a `step` that
 *   throws is logged with the event id and key, and that event is skipped for that key (its state
 *   stays as it was, so a deterministic defect is skipped identically on replay); the shard goes on.
 * - Bounded: `mailboxCapacity` per shard, `drainMax` per drain, `maxKeys` live keys (an event that
 *   would create a key beyond it is refused, counted and logged), log lines per drain capped; an
 *   actor's chain-bounded history (`ActorDefinition.history`) is trimmed from idle keys by a sweep.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Schedule, type Scope } from "effect"
import * as os from "node:os"
import type { BusBatch, BusError, BusShape } from "../../ingest/bus/Bus.js"
import { Checkpointer, type CheckpointerStats, type CheckpointRow, type CheckpointStore, type CheckpointWrite } from "./Checkpointer.js"
import { Waiters, Wakeup } from "./internal/Wakeup.js"
import { Mailbox } from "./Mailbox.js"

/** What the runtime needs to know about an actor. `step` must be pure (see the module note). */
export interface ActorDefinition<S, E, O> {
  /** The `owner` column of its checkpoint rows. */
  readonly owner: string
  /** Bus value → event; `Left` (never a throw) for a record that is not one. */
  readonly decode: (bytes: Uint8Array) => Either.Either<E, unknown>
  readonly keyOf: (event: E) => string
  /** The event's id, for logs. */
  readonly eventId: (event: E) => string
  /** Pure. Returns the SAME state object when the event changes nothing. Throwing is a defect. */
  readonly step: (state: S | undefined, event: E) => readonly [S | undefined, ReadonlyArray<O>]
  readonly positionOf: (state: S) => string
  readonly encodeState: (state: S) => string
  /** Throws on a row it did not write. */
  readonly decodeState: (text: string) => S
  /** How to log an output (warning/info), or undefined to not log it (routine outputs such as a reorg undo). */
  readonly describeOutput?: (output: O) => { readonly level: "warning" | "info"; readonly message: string } | undefined
  /**
   * History a state keeps only until the chain makes it final (Hood's retract window), trimmed from
   * idle keys by a sweep: the runtime tracks the newest chain clock routed per bus partition
   * (`clockOf`, e.g. a Hood block) and, every `historySweepMs`, gives each key of a caught-up shard
   * whose kept history ends at or below its partition's clock less `depth` to `trim` (pure; the same
   * object when nothing is final).
   */
  readonly history?: {
    readonly clockOf: (event: E) => number | undefined
    readonly heldUntil: (state: S) => number | undefined
    readonly trim: (state: S, head: number) => S
    readonly depth: number
  }
}

export interface RuntimeHooks<S, O, E = unknown> {
  /** Called synchronously by a shard after each drained batch with the keys it changed (undefined: removed). */
  readonly publish: (changes: ReadonlyArray<readonly [key: string, state: S | undefined]>) => void
  /**
   * Called synchronously for every event that changed its key's state, with the new state, inside
   * the drain that applies it (so before `publish`; the limit orders' books check trades here). Must
   * not throw; a throw is logged as a defect and the drain goes on. Answering true asks for the
   * next checkpoint flush now (`Checkpointer.hurry`): the hook decided something that is written
   * with the key's checkpoint (`checkpointWrite`) and should not wait for the interval.
   */
  readonly applied?: (key: string, event: E, state: S | undefined) => boolean | void
  /**
   * With `reloadOnAssign`: run when the bus hands this member a partition, after it is claimed and
   * before any of its records is applied here, with the test of which keys it holds (the limit
   * orders' books take over the previous owner's durable trailing watermarks here) and the claim
   * (`claim.epoch`: what a hook's own fenced writes of the partition's keys check, as the
   * checkpoint flush does).
   */
  readonly assigned?: (holds: (key: string) => boolean, claim: PartitionClaim) => Effect.Effect<void, SqlError>
  /**
   * With `reloadOnAssign`: run when the bus takes a partition from this member (`onRevoked`),
   * with the test of which keys it holds; the partition's claim is forgotten first (the
   * checkpoint flush writes nothing of it from then). The limit orders' books of its markets are
   * dropped here. The market states stay (a batch routed before may still be in a mailbox, and
   * the next assignment replaces them from the checkpoints anyway).
   */
  readonly revoked?: (holds: (key: string) => boolean, partition: number) => Effect.Effect<void>
  /** Called synchronously for every output of a step (after `publish` of the same drain). */
  readonly outputs?: (key: string, outputs: ReadonlyArray<O>) => void
  readonly setWarming: (warming: boolean) => void
  /**
   * Resolves once what `publish` and `outputs` were given before the call is durable elsewhere
   * (the cluster's read-model and signal topics). The offset committer waits on it after the
   * checkpoint flush, so a committed offset never passes what other processes were told.
   */
  readonly durable?: Effect.Effect<void>
  /**
   * Called synchronously when a checkpoint flush takes its states (so after `outputs` of every
   * drain whose states it may take); the flush saves only after the returned effect succeeds, and
   * retries it with the save. Outputs that must never be lost (the market's webhook notices) are
   * made durable here: no checkpoint, hence no committed offset, ever covers an output not yet
   * written, so a crash replays it. The write must be idempotent.
   */
  readonly beforeCheckpoint?: () => Effect.Effect<void, unknown>
  /**
   * Called synchronously when a checkpoint flush takes its states, with the test of which keys'
   * latest states that flush makes durable (valid during the call only); what it answers is
   * written in the flush's own transaction, for the keys the ownership fence keeps
   * (`CheckpointWrite`). State derived from the keys' states (the limit orders' trailing
   * watermarks and triggers) goes here, so it is never durable ahead of the states it came from
   * nor written for a partition this process no longer owns.
   */
  readonly checkpointWrite?: (covered: (key: string) => boolean) => CheckpointWrite | undefined
}

/** A bus partition this process claimed (`CheckpointStore.claim`): what fences writes of its keys. */
export interface PartitionClaim {
  /** The checkpoints' owner (`partition_owners.owner`). */
  readonly owner: string
  readonly partition: number
  readonly epoch: number
  /** The bus partition of any key. */
  readonly partitionOf: (key: string) => number
  /** The bus's partition count (what `partitionOf` maps into). */
  readonly partitions: number
}

export interface RuntimeOptions {
  /** Shard fibers (default 2 × available parallelism). */
  readonly shards: number
  /** Messages per shard mailbox (default 4096). */
  readonly mailboxCapacity: number
  /** Most messages one drain applies before yielding (default 1024). */
  readonly drainMax: number
  /** Consumer group (default `actors`) and topic (default `chain.events`). */
  readonly group: string
  readonly topic: string
  /** Records per bus batch (default 10,000, the bus's limit; the embedded bus also stops a batch at 4 MiB). */
  readonly busMaxBatch: number
  /** Most live keys (default 500,000). */
  readonly maxKeys: number
  /** Checkpoints: states per flush transaction, statement size, interval and linger (see Checkpointer). */
  readonly checkpointMaxKeys: number
  readonly checkpointIntervalMs: number
  readonly checkpointLingerMs: number
  /** Bus batches routed but not yet committed before the consumer waits (default 256). */
  readonly commitQueueMax: number
  /** How often idle keys' final history is trimmed (`ActorDefinition.history`; default 1,000 ms). */
  readonly historySweepMs: number
  /** Take records from the bus before they are durable (`SubscribeOptions.beforeDurable`; default true). */
  readonly beforeDurable: boolean
  /**
   * Reload a partition's checkpoints when the bus hands it to this member (`onAssigned`; default
   * false). Needed wherever more than one process consumes the group (the actors role); one
   * process alone loads every checkpoint at start and is never handed a partition it had lost.
   */
  readonly reloadOnAssign: boolean
}

export const defaultShards = (): number => 2 * Math.max(1, os.availableParallelism())

export const defaultRuntimeOptions = (): RuntimeOptions => ({
  shards: defaultShards(),
  mailboxCapacity: 4096,
  drainMax: 1024,
  group: "actors",
  topic: "chain.events",
  busMaxBatch: 10_000,
  maxKeys: 500_000,
  checkpointMaxKeys: 5000,
  checkpointIntervalMs: 100,
  checkpointLingerMs: 1,
  commitQueueMax: 256,
  historySweepMs: 1000,
  beforeDurable: true,
  reloadOnAssign: false
})

/** Retries of a failed offset commit: 10 ms doubling, capped at 2 s, 20 attempts; the next round commits a newer offset anyway. */
export const commitRetrySchedule = Schedule.intersect(Schedule.union(Schedule.exponential("10 millis"), Schedule.spaced("2 seconds")), Schedule.recurs(20))

interface PendingCommit<Sh> {
  readonly partition: number
  readonly nextOffset: number
  /** The batch's durability, when the bus delivered it before its records were durable. */
  readonly durable: Effect.Effect<void, BusError> | undefined
  /** shard → its mailbox `pushed` count after this batch was routed. */
  readonly marks: ReadonlyMap<Sh, number>
}

/** Routed batches awaiting their commit: bounded (the consumer waits at `max`), taken whole by the committer. */
class CommitQueue<Sh> {
  private entries: Array<PendingCommit<Sh>> = []
  private pushedCount = 0
  private takenCount = 0
  private readonly room = new Waiters()
  private readonly ready = new Wakeup()
  constructor(private readonly max: number) {}

  push(entry: PendingCommit<Sh>): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.entries.push(entry)
      this.pushedCount++
      this.ready.notify()
      return this.entries.length < this.max ? Effect.void : this.room.await(this.pushedCount - this.max + 1, () => this.takenCount)
    })
  }

  readonly takeAll: Effect.Effect<ReadonlyArray<PendingCommit<Sh>>> = Effect.suspend(() => {
    if (this.entries.length === 0) return Effect.zipRight(this.ready.wait, this.takeAll)
    const taken = this.entries
    this.entries = []
    this.takenCount += taken.length
    this.room.release(this.takenCount)
    return Effect.succeed(taken)
  })
}

/** Most log lines one drain or batch writes; the rest are counted in one summary line. */
export const LOG_LINES_PER_DRAIN_MAX = 20

/** FNV-1a 32-bit of the key's UTF-16 code units, mod `shards`: stable across processes and runs. */
export const shardOf = (key: string, shards: number): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % shards
}

export interface RuntimeStats {
  /** Records received from the bus. */
  readonly received: number
  readonly decodeFailures: number
  /** Events that changed a state. */
  readonly applied: number
  /** Events that changed nothing (duplicates, replays, events for unknown keys). */
  readonly skipped: number
  /** Steps that threw (the event was skipped for its key). */
  readonly defects: number
  /** Events refused because they would create a key beyond `maxKeys`. */
  readonly refused: number
  readonly keys: number
  readonly batches: number
  readonly drains: number
  /** Offset commits (one per partition per committer round). */
  readonly commits: number
  /** Times a bus fiber found a mailbox full and waited. */
  readonly mailboxFullWaits: number
  readonly mailboxHighWater: number
  /** States whose final history the sweep trimmed (`ActorDefinition.history`). */
  readonly historyTrims: number
  /** Partitions whose checkpoints were reloaded because a rebalance handed them to this member. */
  readonly reloads: number
  /** Partitions a rebalance took from this member (`onRevoked`). */
  readonly revocations: number
  readonly checkpoint: CheckpointerStats
  readonly warming: boolean
}

interface LogLine {
  readonly level: "error" | "warning" | "info"
  readonly message: string
  readonly annotations: Record<string, unknown>
  readonly cause?: unknown
}

const writeLines = (lines: ReadonlyArray<LogLine>, dropped: number): Effect.Effect<void> =>
  Effect.forEach(
    lines,
    (l) => {
      const log = l.level === "error" ? Effect.logError : l.level === "warning" ? Effect.logWarning : Effect.logInfo
      return (l.cause === undefined ? log(l.message) : log(l.message, l.cause)).pipe(Effect.annotateLogs(l.annotations))
    },
    { discard: true }
  ).pipe(Effect.zipRight(dropped > 0 ? Effect.logWarning(`actors: ${dropped} more log lines of this batch not shown`) : Effect.void))

class LineBuffer {
  lines: Array<LogLine> | undefined = undefined
  dropped = 0
  push(line: LogLine): void {
    this.lines ??= []
    if (this.lines.length < LOG_LINES_PER_DRAIN_MAX) this.lines.push(line)
    else this.dropped++
  }
  flush(): Effect.Effect<void> {
    if (this.lines === undefined) return Effect.void
    const out = writeLines(this.lines, this.dropped)
    this.lines = undefined
    this.dropped = 0
    return out
  }
}

class Shard<S, E> {
  readonly states = new Map<string, S>()
  /** Keys whose state keeps history (`ActorDefinition.history`) → the clock it ends at. */
  readonly held = new Map<string, number>()
  readonly applied = new Waiters()
  constructor(
    readonly index: number,
    readonly mailbox: Mailbox<E>
  ) {}
}

export interface ShardedRuntime<S> {
  readonly stats: () => RuntimeStats
  /** The current state of a key (for tests and tools; readers use the published snapshots). */
  readonly state: (key: string) => S | undefined
  /** Runs the history sweep now (it also runs every `historySweepMs`); returns how many states it trimmed. */
  readonly sweepHistory: () => number
  /** Asks for a checkpoint flush now, even with no state dirty (`Checkpointer.hurry`): a hook has something to write with it. */
  readonly hurryCheckpoint: () => void
  /**
   * Resolves once every batch routed so far is durable on the bus (the wait a checkpoint flush
   * makes; at once when the bus delivers only durable records): a hook that makes something
   * derived from an event durable outside the checkpoint waits for it first.
   */
  readonly routedDurable: () => Effect.Effect<void, BusError>
}

/**
 * Loads the checkpoints, starts the shards, the flusher and the bus consumer in the current scope
 * (closing it stops them; nothing is flushed on the way out: a restart replays from the committed
 * offsets, exactly as after a crash).
 */
export const make = <S, E, O>(
  definition: ActorDefinition<S, E, O>,
  hooks: RuntimeHooks<S, O, E>,
  store: CheckpointStore,
  bus: BusShape,
  input: Partial<RuntimeOptions> = {}
): Effect.Effect<ShardedRuntime<S>, SqlError | BusError, Scope.Scope> =>
  Effect.gen(function* () {
    const options: RuntimeOptions = { ...defaultRuntimeOptions(), ...input }
    for (const name of ["shards", "mailboxCapacity", "drainMax", "busMaxBatch", "maxKeys", "checkpointMaxKeys", "commitQueueMax"] as const) {
      if (!Number.isSafeInteger(options[name]) || options[name] < 1) return yield* Effect.dieMessage(`actors: ${name} must be a positive integer, got ${options[name]}`)
    }
    const clock = yield* Effect.clock
    const nowMs = () => clock.unsafeCurrentTimeMillis()
    const shards = Array.from({ length: options.shards }, (_, i) => new Shard<S, E>(i, new Mailbox<E>(options.mailboxCapacity)))
    const shardFor = (key: string): Shard<S, E> => shards[shardOf(key, options.shards)]!

    const counters = {
      received: 0,
      decodeFailures: 0,
      applied: 0,
      skipped: 0,
      defects: 0,
      refused: 0,
      keys: 0,
      batches: 0,
      drains: 0,
      commits: 0,
      mailboxHighWater: 0,
      historyTrims: 0,
      reloads: 0,
      revocations: 0
    }

    const encodeRow = (key: string, state: S | undefined): CheckpointRow =>
      state === undefined ? { key, position: "", state: null } : { key, position: definition.positionOf(state), state: definition.encodeState(state) }
    // The bus delivers records before they are durable (`beforeDurable`), so what readers see does
    // not wait for the publish's fsync. Nothing derived from them is made durable first: a
    // checkpoint flush waits, after taking its states, for every partition's newest routed batch
    // to be durable (a partition's records become durable in offset order), and the committer
    // waits for the batches it commits.
    const routedDurable = new Map<number, Effect.Effect<void, BusError>>()
    /** The wait for every partition's newest routed batch as of this call (undefined: nothing to wait for). */
    const routedDurableNow = (): Effect.Effect<void, BusError> | undefined =>
      routedDurable.size === 0 ? undefined : Effect.forEach([...routedDurable.values()], (d) => d, { discard: true })
    // The partitions this process claimed (`reloadOnAssign`): partition → epoch (CheckpointStore.claim).
    const epochs = new Map<number, number>()
    const checkpointer = new Checkpointer<S>(
      {
        owner: definition.owner,
        maxKeys: options.checkpointMaxKeys,
        intervalMs: options.checkpointIntervalMs,
        lingerMs: options.checkpointLingerMs,
        ...(options.reloadOnAssign ? { fence: { partitionOf: (key: string) => bus.partitionFor(options.topic, key), epochs } } : {}),
        ...(hooks.checkpointWrite === undefined ? {} : { alongSave: hooks.checkpointWrite }),
        beforeSave: () => {
          const outputs = hooks.beforeCheckpoint?.()
          const routed = routedDurableNow()
          if (routed === undefined) return outputs ?? Effect.void
          return outputs === undefined ? routed : Effect.zipRight(routed, outputs)
        }
      },
      store,
      encodeRow,
      nowMs
    )

    // -------------------------------------------------------------------------------------------
    // Start: load checkpoints into the shards and publish them.

    /** A checkpoint row's state; an unreadable one stops the start (or the reload) naming it. */
    const decodeRow = (key: string, text: string): S => {
      try {
        return definition.decodeState(text)
      } catch (error) {
        throw new Error(`actors: the checkpoint of ${definition.owner}/${key} is unreadable: ${String(error)}`)
      }
    }

    const loaded = yield* store.load(definition.owner, (rows) => {
      const changes: Array<readonly [string, S]> = []
      for (const row of rows) {
        if (row.state === null) continue
        const state = decodeRow(row.key, row.state)
        shardFor(row.key).states.set(row.key, state)
        counters.keys++
        changes.push([row.key, state])
      }
      hooks.publish(changes)
    })
    yield* Effect.logInfo(`actors: loaded ${loaded} ${definition.owner} checkpoints`)

    // -------------------------------------------------------------------------------------------
    // Shards: drain, step, publish.

    const drain = (shard: Shard<S, E>, lines: LineBuffer): void => {
      const changes = new Map<string, S | undefined>()
      const outputs: Array<readonly [string, ReadonlyArray<O>]> = []
      const n = shard.mailbox.drain(options.drainMax, (key, event) => {
        const state = shard.states.get(key)
        let result: readonly [S | undefined, ReadonlyArray<O>]
        try {
          result = definition.step(state, event)
        } catch (defect) {
          counters.defects++
          lines.push({
            level: "error",
            message: "actors: step failed; the event is skipped for this key",
            annotations: { key, eventId: definition.eventId(event), shard: shard.index },
            cause: defect
          })
          return
        }
        const [next, out] = result
        if (out.length > 0) outputs.push([key, out])
        if (next === state) {
          counters.skipped++
          return
        }
        if (state === undefined) {
          if (counters.keys >= options.maxKeys) {
            counters.refused++
            lines.push({
              level: "error",
              message: `actors: ${options.maxKeys} live keys reached; refusing a new key`,
              annotations: { key, eventId: definition.eventId(event) }
            })
            return
          }
          counters.keys++
        }
        if (next === undefined) {
          shard.states.delete(key)
          counters.keys--
        } else shard.states.set(key, next)
        changes.set(key, next)
        counters.applied++
        if (hooks.applied !== undefined) {
          try {
            if (hooks.applied(key, event, next) === true) checkpointer.hurry()
          } catch (defect) {
            counters.defects++
            lines.push({
              level: "error",
              message: "actors: the applied hook failed; the event stays applied",
              annotations: { key, eventId: definition.eventId(event), shard: shard.index },
              cause: defect
            })
          }
        }
      })
      counters.drains++
      if (changes.size > 0) {
        // Once per key per drain (not per event): the checkpoint and the readers need the latest state only.
        for (const [key, state] of changes) {
          checkpointer.mark(key, state)
          if (history !== undefined) track(shard, key, state)
        }
        hooks.publish([...changes])
      }
      if (outputs.length > 0) {
        for (const [key, out] of outputs) {
          hooks.outputs?.(key, out)
          if (definition.describeOutput === undefined) continue
          for (const o of out) {
            const d = definition.describeOutput(o)
            if (d !== undefined) lines.push({ level: d.level, message: `actors: ${d.message}`, annotations: { key } })
          }
        }
      }
      if (n > 0) shard.applied.release(shard.mailbox.taken)
    }

    const shardLoop = (shard: Shard<S, E>): Effect.Effect<never> => {
      const lines = new LineBuffer()
      const once: Effect.Effect<void> = Effect.suspend(() => {
        if (shard.mailbox.size === 0) return shard.mailbox.awaitItems
        drain(shard, lines)
        return Effect.zipRight(lines.flush(), Effect.yieldNow())
      })
      return Effect.forever(once)
    }

    // -------------------------------------------------------------------------------------------
    // History: the newest chain clock routed, and the sweep that trims idle keys' final history.

    // Per bus partition (a key's events all come through its partition, in order): the newest clock
    // routed. A key is swept only when its shard has applied everything routed to it, so its state
    // has every event of its partition up to that head: the trim then depends only on the key's own
    // partition stream, never on another partition running ahead.
    const history = definition.history
    const historyHeads = new Map<number, number>()
    const track = (shard: Shard<S, E>, key: string, state: S | undefined): void => {
      const until = state === undefined ? undefined : history!.heldUntil(state)
      if (until === undefined) shard.held.delete(key)
      else shard.held.set(key, until)
    }
    /** Synchronous, like a drain: trims every key whose history the head made final; returns how many. */
    const sweepHistory = (): number => {
      if (history === undefined) return 0
      let trimmed = 0
      for (const shard of shards) {
        if (shard.mailbox.size > 0) continue
        for (const [key, until] of shard.held) {
          const head = historyHeads.get(bus.partitionFor(options.topic, key))
          if (head === undefined || until + history.depth > head) continue
          const state = shard.states.get(key)
          if (state === undefined) {
            shard.held.delete(key)
            continue
          }
          const next = history.trim(state, head)
          if (next !== state) {
            shard.states.set(key, next)
            checkpointer.mark(key, next)
            trimmed++
          }
          track(shard, key, next)
        }
      }
      counters.historyTrims += trimmed
      return trimmed
    }
    if (history !== undefined) {
      for (const shard of shards) for (const [key, state] of shard.states) track(shard, key, state)
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(options.historySweepMs), Effect.sync(sweepHistory))))
    }

    for (const shard of shards) yield* Effect.forkScoped(shardLoop(shard))
    yield* Effect.forkScoped(checkpointer.run)

    // -------------------------------------------------------------------------------------------
    // Warming: caught up once every partition reached the end offset it had at start.

    const committed = yield* bus.committed(options.group, options.topic)
    const ends = yield* bus.endOffsets(options.topic)
    const progress = new Map<number, number>()
    const targets = new Map<number, number>()
    for (const [partition, end] of ends) {
      const from = committed.get(partition) ?? 0
      if (end > from) {
        targets.set(partition, end)
        progress.set(partition, from)
      }
    }
    let warming = targets.size > 0
    hooks.setWarming(warming)
    const advance = (partition: number, nextOffset: number): void => {
      if (!warming) return
      const target = targets.get(partition)
      if (target === undefined) return
      if (nextOffset >= target) targets.delete(partition)
      else progress.set(partition, nextOffset)
      if (targets.size === 0) {
        warming = false
        hooks.setWarming(false)
      }
    }

    // -------------------------------------------------------------------------------------------
    // The bus consumer: decode, route with backpressure, wait until applied, then checkpointed.

    // The bus consumer only decodes and routes (with backpressure): the partition's next batch is
    // delivered while this one is still being applied and checkpointed, so a slow checkpoint
    // flush never delays what readers see. Offsets are committed by the committer below.
    const commits = new CommitQueue<Shard<S, E>>(options.commitQueueMax)
    const onBatch = (batch: BusBatch): Effect.Effect<void> =>
      Effect.suspend(() => {
        counters.batches++
        counters.received += batch.records.length
        const lines = new LineBuffer()
        const keys: Array<string> = []
        const events: Array<E> = []
        let clockMax = Number.NEGATIVE_INFINITY
        for (const record of batch.records) {
          const decoded = definition.decode(record.value)
          if (Either.isRight(decoded)) {
            events.push(decoded.right)
            keys.push(definition.keyOf(decoded.right))
            if (history !== undefined) {
              const clock = history.clockOf(decoded.right)
              if (clock !== undefined && clock > clockMax) clockMax = clock
            }
          } else {
            counters.decodeFailures++
            lines.push({
              level: "warning",
              message: "actors: a record is not a valid event; skipped",
              annotations: { partition: batch.partition, offset: record.offset, key: record.key },
              cause: decoded.left
            })
          }
        }
        const marks = new Map<Shard<S, E>, number>()
        const route = (from: number): Effect.Effect<void> => {
          for (let i = from; i < events.length; i++) {
            const shard = shardFor(keys[i]!)
            if (!shard.mailbox.tryPush(keys[i]!, events[i]!)) return Effect.flatMap(shard.mailbox.awaitSpace, () => route(i))
            if (shard.mailbox.size > counters.mailboxHighWater) counters.mailboxHighWater = shard.mailbox.size
            marks.set(shard, shard.mailbox.pushed)
          }
          return Effect.void
        }
        const last = batch.records[batch.records.length - 1]
        const nextOffset = batch.nextOffset ?? (last === undefined ? undefined : last.offset + 1)
        if (nextOffset === undefined) return lines.flush()
        const entry = { partition: batch.partition, nextOffset, marks, durable: batch.durable }
        // Set before routing: a flush that takes a state this batch changed waits for it.
        if (batch.durable !== undefined) routedDurable.set(batch.partition, batch.durable)
        // The partition's head moves once the whole batch is in the mailboxes (see the sweep).
        const headMoved = Effect.sync(() => {
          if (clockMax > (historyHeads.get(batch.partition) ?? Number.NEGATIVE_INFINITY)) historyHeads.set(batch.partition, clockMax)
        })
        return lines.flush().pipe(
          Effect.zipRight(route(0)),
          Effect.zipRight(headMoved),
          Effect.zipRight(warming ? warmingQueue.push(entry) : Effect.void),
          Effect.zipRight(commits.push(entry))
        )
      })

    // The committer: takes every routed batch so far, waits until the shards applied them, then
    // until the regular checkpoint flush wrote every state they changed, then commits the
    // newest offset per partition. Restart = checkpoints + redelivery from the committed offsets.
    const commitOnce: Effect.Effect<void> = Effect.gen(function* () {
      const taken = yield* commits.takeAll
      const newest = new Map<number, PendingCommit<Shard<S, E>>>()
      for (const entry of taken) {
        for (const [shard, mark] of entry.marks) yield* shard.applied.await(mark, () => shard.mailbox.taken)
        newest.set(entry.partition, entry)
      }
      yield* checkpointer.flushed
      if (hooks.durable !== undefined) yield* hooks.durable
      // An offset never passes what the bus has made durable (a batch that changed no state has no flush to wait for).
      const waits: Array<Effect.Effect<void, BusError>> = []
      for (const entry of newest.values()) if (entry.durable !== undefined) waits.push(entry.durable)
      if (waits.length > 0) {
        yield* Effect.forEach(waits, (d) => d, { discard: true }).pipe(
          Effect.retry(commitRetrySchedule),
          Effect.orDie
        )
      }
      for (const [partition, { nextOffset }] of newest) {
        yield* bus.commit(options.group, options.topic, partition, nextOffset).pipe(
          Effect.tapError((error) => Effect.logWarning(`actors: committing ${options.topic}/${partition} at ${nextOffset} failed; retrying`, error)),
          Effect.retry(commitRetrySchedule),
          Effect.catchAll(() => Effect.void)
        )
      }
      counters.commits += newest.size
    })
    yield* Effect.forkScoped(Effect.forever(commitOnce))

    // While warming, a second follower marks progress as soon as batches are applied (the
    // committer would only see them after a checkpoint flush), then stops.
    const warmingQueue = new CommitQueue<Shard<S, E>>(options.commitQueueMax)
    const followWarming: Effect.Effect<void> = Effect.gen(function* () {
      while (warming) {
        for (const entry of yield* warmingQueue.takeAll) {
          for (const [shard, mark] of entry.marks) yield* shard.applied.await(mark, () => shard.mailbox.taken)
          advance(entry.partition, entry.nextOffset)
        }
      }
    })
    if (warming) yield* Effect.forkScoped(followWarming)

    // A partition this member was just given: its previous owner may have moved its keys on (or
    // this member held them long ago and they went stale here), and its checkpoints cover at least
    // up to the offset delivery starts from (commit after checkpoint). So: let what was routed
    // before be applied, claim the partition (the ownership fence: the previous owner's later
    // flushes write nothing of it), then replace the partition's states with its checkpoints (keys
    // without a row are dropped: the replay from the committed offset creates them again) and
    // republish them, since the previous owner may have checkpointed a state it had not published.
    const reloadPartition = (partition: number): Effect.Effect<void, SqlError> =>
      Effect.gen(function* () {
        for (const shard of shards) {
          const mark = shard.mailbox.pushed
          yield* shard.applied.await(mark, () => shard.mailbox.taken)
        }
        const ofPartition = (key: string) => bus.partitionFor(options.topic, key) === partition
        // Claimed before loading: from here the previous owner's flushes leave this partition alone.
        const epoch = yield* store.claim(definition.owner, partition)
        epochs.set(partition, epoch)
        if (hooks.assigned !== undefined) {
          yield* hooks.assigned(ofPartition, { owner: definition.owner, partition, epoch, partitionOf: (key) => bus.partitionFor(options.topic, key), partitions: bus.partitions })
        }
        const decoded: Array<readonly [string, S]> = []
        yield* store.load(definition.owner, (page) => {
          for (const row of page) if (row.state !== null && ofPartition(row.key)) decoded.push([row.key, decodeRow(row.key, row.state)])
        })
        // Synchronous from here: no drain runs between the drop and the reload.
        let dropped = 0
        for (const shard of shards) {
          for (const key of [...shard.states.keys()]) {
            if (!ofPartition(key)) continue
            shard.states.delete(key)
            shard.held.delete(key)
            counters.keys--
            dropped++
          }
        }
        for (const [key, state] of decoded) {
          const shard = shardFor(key)
          shard.states.set(key, state)
          counters.keys++
          if (history !== undefined) track(shard, key, state)
        }
        counters.reloads++
        if (decoded.length > 0) hooks.publish(decoded)
        yield* Effect.logInfo(`actors: partition ${partition} assigned; ${decoded.length} ${definition.owner} checkpoints reloaded, ${dropped} held states replaced`)
      }).pipe(Effect.annotateLogs({ topic: options.topic, group: options.group, partition }))

    // A partition taken from this member: its claim is forgotten (the flushes leave it alone even
    // before the next owner claims it) and the hooks drop what they held for it.
    const revokePartition = (partition: number): Effect.Effect<void> =>
      Effect.gen(function* () {
        epochs.delete(partition)
        counters.revocations++
        if (hooks.revoked !== undefined) yield* hooks.revoked((key) => bus.partitionFor(options.topic, key) === partition, partition)
        yield* Effect.logInfo(`actors: partition ${partition} revoked`)
      }).pipe(Effect.annotateLogs({ topic: options.topic, group: options.group, partition }))

    yield* bus.subscribe(
      {
        group: options.group,
        topic: options.topic,
        fromBeginning: true,
        maxBatch: options.busMaxBatch,
        autoCommit: false,
        beforeDurable: options.beforeDurable,
        ...(options.reloadOnAssign ? { onAssigned: reloadPartition, onRevoked: revokePartition } : {})
      },
      onBatch
    )

    return {
      stats: (): RuntimeStats => ({
        ...counters,
        mailboxFullWaits: shards.reduce((n, s) => n + s.mailbox.fullWaits, 0),
        checkpoint: checkpointer.stats(),
        warming
      }),
      state: (key) => shardFor(key).states.get(key),
      sweepHistory,
      hurryCheckpoint: () => checkpointer.hurry(),
      routedDurable: () => routedDurableNow() ?? Effect.void
    }
  })
