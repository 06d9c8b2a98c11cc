/**
 * The embedded `Bus`: an in-process partitioned log, file-backed under `dir/<topic>/<partition>/`
 * (or memory only), with consumer groups whose committed offsets live in
 * `dir/<topic>/_offsets/<group>.json`. It owns the Effect surface (publish with backpressure,
 * consumers, groups and their rebalancing, shutdown); the byte-level work lives in `internal/`.
 *
 * Invariants:
 * - `publish` resolves only once every record it appended is durable (written, and fdatasynced
 *   when `fsync`); acknowledged records survive a crash. Offsets per partition follow call order.
 * - Appended-but-not-durable bytes never exceed `maxPendingBytes`: publishers wait, FIFO, and
 *   nothing is dropped. Every other buffer is bounded too (see `EmbeddedBusOptions`).
 * - In a group each partition has at most one worker fiber (members split partitions round-robin
 *   and rebalance on join/leave); it delivers batches in offset order, commits after `onBatch`
 *   succeeds and redelivers a failed batch with capped backoff, forever. The only skip is past
 *   retention (the log start moved beyond the position), and it is logged.
 * - Closing the layer's scope stops consumers, flushes every appended record, writes pending
 *   offsets, closes files and releases the directory lock.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Cause, Clock, Deferred, Effect, Fiber, FiberId, Layer, type Scope } from "effect"
import {
  Bus,
  type BusBatch,
  BusError,
  type BusMessage,
  type BusRecord,
  type BusShape,
  partitionForKey,
  type PublishAck,
  type SubscribeOptions
} from "./Bus.js"
import { ByteBudget } from "./internal/byteBudget.js"
import { FRAME_OVERHEAD_BYTES, frameBytes } from "./internal/frame.js"
import { isErrno, lockDir, mkdirDurable, writeFileAtomic, fsyncDir } from "./internal/fsx.js"
import { OffsetStore } from "./internal/offsetStore.js"
import { badCommitArguments, badReadArguments, closedError, notifyAssigned, notifyRevoked, invalid, isNonNegativeInt, isPositiveInt, MAX_BATCH_LIMIT, redeliverySchedule, subscriptionMaxBatch, validName } from "./internal/rules.js"
import { ioError, MAX_FRAME_BYTES_ON_DISK, PartitionLog, type Recovery } from "./internal/partitionLog.js"

export interface EmbeddedBusOptions {
  /** undefined = memory only (tests, --ephemeral). */
  readonly dir: string | undefined
  /** Partitions per topic (default 16). Fixed per topic once written: a mismatch refuses to start. */
  readonly partitions: number
  /** Roll a new segment file past this (default 64 MiB). */
  readonly segmentBytes: number
  /** Delete oldest whole segments past this (default 1 GiB); memory mode drops oldest records. */
  readonly retentionBytesPerPartition: number
  /** Bound on appended-but-unflushed bytes; publish waits (backpressure) at the bound (default 16 MiB). */
  readonly maxPendingBytes: number
  /**
   * Group-commit linger in ms (default 0: a partition with no write in flight writes at once, and
   * whatever is appended while that write and its fdatasync run goes together in the next one —
   * batching that costs no added latency; a positive value waits that long to gather more).
   */
  readonly flushIntervalMs: number
  /** fsync each group commit (default true). */
  readonly fsync: boolean
  /** Largest key + value of one record (default 1 MiB; also at most maxPendingBytes less the frame overhead). */
  readonly maxRecordBytes: number
  /** Newest durable records kept in memory per partition for live consumers (default 4 MiB). */
  readonly tailCacheBytesPerPartition: number
  /** Bytes between sparse index entries of a segment (default 64 KiB). */
  readonly indexIntervalBytes: number
}

export const defaults: EmbeddedBusOptions = {
  dir: undefined,
  partitions: 16,
  segmentBytes: 64 * 1024 * 1024,
  retentionBytesPerPartition: 1024 * 1024 * 1024,
  maxPendingBytes: 16 * 1024 * 1024,
  flushIntervalMs: 0,
  fsync: true,
  maxRecordBytes: 1024 * 1024,
  tailCacheBytesPerPartition: 4 * 1024 * 1024,
  indexIntervalBytes: 64 * 1024
}

export { DEFAULT_MAX_BATCH, MAX_BATCH_LIMIT, redeliverySchedule } from "./internal/rules.js"
/** A read or batch stops adding records past this many bytes (always at least one record). */
export const MAX_FETCH_BYTES = 4 * 1024 * 1024

export interface PartitionStats {
  readonly topic: string
  readonly partition: number
  readonly logStartOffset: number
  readonly endOffset: number
  readonly segments: number
  readonly storedBytes: number
  readonly cachedRecords: number
}

export interface EmbeddedBusStats {
  readonly pendingBytes: number
  /** Highest pending bytes seen; never above maxPendingBytes. */
  readonly pendingBytesHighWater: number
  /** Publishes that had to wait at the bound. */
  readonly publishWaits: number
  readonly waitingPublishers: number
  readonly partitions: ReadonlyArray<PartitionStats>
}

/** The embedded adapter's own surface: the port plus what tests and metrics read. */
export interface EmbeddedBusShape extends BusShape {
  readonly stats: Effect.Effect<EmbeddedBusStats>
  /** partition → oldest stored offset. */
  readonly startOffsets: (topic: string) => Effect.Effect<ReadonlyMap<number, number>, BusError>
}


const validateOptions = (o: EmbeddedBusOptions): BusError | undefined => {
  if (!isPositiveInt(o.partitions) || o.partitions > 4096) return invalid(`partitions must be 1..4096, got ${o.partitions}`)
  for (const key of ["segmentBytes", "retentionBytesPerPartition", "maxPendingBytes", "maxRecordBytes", "tailCacheBytesPerPartition", "indexIntervalBytes"] as const) {
    if (!isPositiveInt(o[key])) return invalid(`${key} must be a positive integer, got ${o[key]}`)
  }
  if (!isNonNegativeInt(o.flushIntervalMs)) return invalid(`flushIntervalMs must be a non-negative integer, got ${o.flushIntervalMs}`)
  if (o.maxPendingBytes <= FRAME_OVERHEAD_BYTES) return invalid(`maxPendingBytes must exceed ${FRAME_OVERHEAD_BYTES}`)
  return undefined
}

interface TopicState {
  readonly name: string
  readonly dir: string | undefined
  readonly logs: ReadonlyArray<PartitionLog>
}

interface Member {
  readonly spawn: (partition: number) => Effect.Effect<Fiber.RuntimeFiber<void, never>>
  /** A rebalance took the partition from this member (after its worker stopped). */
  readonly revoked: (partition: number) => Effect.Effect<void>
  /** Set when its subscription ends: a leaving member is told of no revocation. */
  leaving: boolean
}

interface Group {
  readonly name: string
  readonly topic: TopicState
  readonly store: OffsetStore
  readonly members: Array<Member>
  readonly owners: Array<{ readonly member: Member; readonly fiber: Fiber.RuntimeFiber<void, never> } | undefined>
  readonly lock: Effect.Semaphore
}

/** Counts a publish's outstanding durability waits (one per partition per admitted chunk); `wait` resolves when none is left. */
class DurableCount {
  private outstanding = 0
  private failure: BusError | undefined = undefined
  private resume: ((effect: Effect.Effect<void, BusError>) => void) | undefined = undefined

  expect(): void {
    this.outstanding++
  }

  readonly done = (error: BusError | undefined): void => {
    this.outstanding--
    if (error !== undefined && this.failure === undefined) this.failure = error
    const resume = this.resume
    if (resume !== undefined && (this.outstanding === 0 || this.failure !== undefined)) {
      this.resume = undefined
      resume(this.result())
    }
  }

  readonly wait: Effect.Effect<void, BusError> = Effect.suspend(() =>
    this.outstanding === 0 || this.failure !== undefined
      ? this.result()
      : Effect.async<void, BusError>((resume) => {
          this.resume = resume
        })
  )

  private result(): Effect.Effect<void, BusError> {
    return this.failure === undefined ? Effect.void : Effect.fail(this.failure)
  }
}

/** Memoizes an async open per key: concurrent callers share it; a failure is forgotten so a later call retries. */
const memo = <A>(cache: Map<string, Deferred.Deferred<A, BusError>>, key: string, open: Effect.Effect<A, BusError>): Effect.Effect<A, BusError> =>
  Effect.suspend(() => {
    const existing = cache.get(key)
    if (existing !== undefined) return Deferred.await(existing)
    const deferred = Deferred.unsafeMake<A, BusError>(FiberId.none)
    cache.set(key, deferred)
    return open.pipe(
      Effect.tapError(() => Effect.sync(() => cache.delete(key))),
      Effect.exit,
      Effect.flatMap((exit) => Deferred.done(deferred, exit)),
      Effect.zipRight(Deferred.await(deferred)),
      Effect.uninterruptible
    )
  })

/** Builds the embedded bus in the current scope; closing the scope shuts it down cleanly. */
export const make = (input: Partial<EmbeddedBusOptions> = {}): Effect.Effect<EmbeddedBusShape, BusError, Scope.Scope> =>
  Effect.gen(function* () {
    const options: EmbeddedBusOptions = { ...defaults, ...input }
    const bad = validateOptions(options)
    if (bad !== undefined) return yield* bad
    const { partitions, fsync } = options
    const dir = options.dir === undefined ? undefined : path.resolve(options.dir)
    const maxRecordBytes = Math.min(options.maxRecordBytes, options.maxPendingBytes - FRAME_OVERHEAD_BYTES, MAX_FRAME_BYTES_ON_DISK - FRAME_OVERHEAD_BYTES)
    const flushBatchBytes = Math.max(1, Math.min(1024 * 1024, Math.floor(options.maxPendingBytes / 2)))
    const budget = new ByteBudget(options.maxPendingBytes)

    let closed = false
    const topics = new Map<string, TopicState>()
    const topicOpenings = new Map<string, Deferred.Deferred<TopicState, BusError>>()
    const groups = new Map<string, Group>()
    const groupOpenings = new Map<string, Deferred.Deferred<Group, BusError>>()

    // -------------------------------------------------------------------------------------------
    // Opening: directory lock, topics (recovering their partitions), groups

    // The lock is released last: after the shutdown finalizer (added below, so run earlier) has closed the files.
    if (dir !== undefined) {
      yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            await fs.mkdir(dir, { recursive: true })
            return lockDir(dir)
          },
          catch: (error) => ioError(`opening ${dir}`, error)
        }).pipe(
          Effect.flatMap((lock) =>
            lock._tag === "Acquired"
              ? Effect.succeed(lock.release)
              : Effect.fail(new BusError({ reason: "Locked", message: `${dir} is in use by process ${lock.byPid}`, retryable: true }))
          )
        ),
        (release) => Effect.promise(release)
      )
    }

    const logRecovery = (topic: string, partition: number, recovery: Recovery) =>
      recovery.truncatedBytes > 0
        ? Effect.logWarning(`bus: truncated a torn tail of ${recovery.truncatedBytes} bytes (${recovery.truncatedWhy})`).pipe(
            Effect.annotateLogs({ topic, partition })
          )
        : Effect.void

    const openTopicFiles = (name: string) =>
      Effect.gen(function* () {
        const topicDir = dir === undefined ? undefined : path.join(dir, name)
        if (topicDir !== undefined) {
          yield* Effect.tryPromise({
            try: async () => {
              await mkdirDurable(topicDir, fsync)
              const metaFile = path.join(topicDir, "_topic.json")
              const meta = await fs.readFile(metaFile, "utf8").then(
                (text) => JSON.parse(text) as { partitions?: unknown },
                (error: unknown) => {
                  if (isErrno(error, "ENOENT")) return undefined
                  throw error
                }
              )
              if (meta === undefined) await writeFileAtomic(metaFile, JSON.stringify({ version: 1, partitions }), fsync)
              else if (meta.partitions !== partitions) {
                throw invalid(`topic ${name} has ${String(meta.partitions)} partitions on disk; this bus is configured for ${partitions}`)
              }
            },
            catch: (error) => ioError(`opening topic ${name}`, error)
          })
        }
        const opened = yield* Effect.tryPromise({
          try: () =>
            Promise.allSettled(
              Array.from({ length: partitions }, (_, partition) =>
                PartitionLog.open({
                  topic: name,
                  partition,
                  dir: topicDir === undefined ? undefined : path.join(topicDir, String(partition)),
                  segmentBytes: options.segmentBytes,
                  retentionBytes: options.retentionBytesPerPartition,
                  flushIntervalMs: options.flushIntervalMs,
                  flushBatchBytes,
                  fsync,
                  tailCacheBytes: options.tailCacheBytesPerPartition,
                  indexIntervalBytes: options.indexIntervalBytes,
                  releaseBytes: (bytes) => budget.release(bytes)
                })
              )
            ).then(async (settled) => {
              const failed = settled.find((r) => r.status === "rejected")
              if (failed !== undefined) {
                // Close the partitions that did open before reporting the failure.
                await Promise.all(settled.map((r) => (r.status === "fulfilled" ? r.value.log.close().catch(() => {}) : undefined)))
                throw failed.reason
              }
              if (topicDir !== undefined && fsync) await fsyncDir(topicDir)
              return settled.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof PartitionLog.open>>>).value)
            }),
          catch: (error) => ioError(`recovering topic ${name}`, error)
        })
        yield* Effect.forEach(opened, ({ recovery }, partition) => logRecovery(name, partition, recovery), { discard: true })
        const state: TopicState = { name, dir: topicDir, logs: opened.map(({ log }) => log) }
        topics.set(name, state)
        return state
      })

    const getTopic = (name: string): Effect.Effect<TopicState, BusError> => {
      const open = topics.get(name)
      if (open !== undefined) return Effect.succeed(open)
      if (!validName(name)) return Effect.fail(invalid(`invalid topic name ${JSON.stringify(name)}: use 1-249 of [A-Za-z0-9._-]`))
      if (closed) return Effect.fail(closedError())
      return memo(topicOpenings, name, openTopicFiles(name))
    }

    /** An existing topic, without creating one. */
    const findTopic = (name: string): Effect.Effect<TopicState | undefined, BusError> =>
      validName(name) ? Effect.succeed(topics.get(name)) : Effect.fail(invalid(`invalid topic name ${JSON.stringify(name)}`))

    /** `ephemeral`: the group's offsets live in memory only (`SubscribeOptions.ephemeral`). */
    const getGroup = (name: string, topic: TopicState, ephemeral = false): Effect.Effect<Group, BusError> => {
      const key = `${topic.name}\u0000${name}`
      const open = groups.get(key)
      if (open !== undefined) return Effect.succeed(open)
      if (!validName(name)) return Effect.fail(invalid(`invalid group name ${JSON.stringify(name)}: use 1-249 of [A-Za-z0-9._-]`))
      return memo(
        groupOpenings,
        key,
        Effect.tryPromise({
          try: async () => {
            let file: string | undefined = undefined
            if (topic.dir !== undefined && !ephemeral) {
              const offsetsDir = path.join(topic.dir, "_offsets")
              await mkdirDurable(offsetsDir, fsync)
              file = path.join(offsetsDir, `${name}.json`)
            }
            return OffsetStore.load(name, topic.name, file, fsync)
          },
          catch: (error) =>
            error instanceof Error && /not a valid offsets file/.test(error.message)
              ? new BusError({ reason: "Corrupt", message: error.message, retryable: false })
              : ioError(`loading offsets of ${name} on ${topic.name}`, error)
        }).pipe(
          Effect.map((store) => {
            const group: Group = {
              name,
              topic,
              store,
              members: [],
              owners: Array.from({ length: partitions }, () => undefined),
              lock: Effect.unsafeMakeSemaphore(1)
            }
            groups.set(key, group)
            return group
          })
        )
      )
    }

    // -------------------------------------------------------------------------------------------
    // Publish

    /** Takes `bytes` from the budget and, in the same tick, runs `append` (so granted bytes are never stranded). */
    const admit = (bytes: number, append: () => BusError | undefined): Effect.Effect<void, BusError> => {
      if (budget.tryAcquire(bytes)) {
        const failure = append()
        return failure === undefined ? Effect.void : Effect.fail(failure)
      }
      return Effect.async<void, BusError>((resume) => {
        const cancel = budget.acquire(bytes, (error) => {
          if (error !== undefined) return resume(Effect.fail(error as BusError))
          const failure = append()
          resume(failure === undefined ? Effect.void : Effect.fail(failure))
        })
        return Effect.sync(cancel)
      })
    }

    const publishTo = (topic: TopicState, messages: ReadonlyArray<BusMessage>, nowMs: number): Effect.Effect<ReadonlyArray<PublishAck>, BusError> => {
      const count = messages.length
      const keyBytes = new Array<number>(count)
      const sizes = new Array<number>(count)
      const targets = new Array<number>(count)
      for (let i = 0; i < count; i++) {
        const message = messages[i]!
        const kb = Buffer.byteLength(message.key, "utf8")
        if (kb + message.value.length > maxRecordBytes) {
          return Effect.fail(invalid(`record ${i} has ${kb + message.value.length} key+value bytes; the bound is ${maxRecordBytes}`))
        }
        keyBytes[i] = kb
        sizes[i] = frameBytes(kb, message.value.length)
        targets[i] = partitionForKey(message.key, partitions)
      }
      const acks = new Array<PublishAck>(count)
      const durable = new DurableCount()
      /** Appends messages[from, to) and registers, in offset order, the wait for their durability. */
      const appendRange = (from: number, to: number, releaseOnFailure: number): BusError | undefined => {
        for (let i = from; i < to; i++) {
          const failure = topic.logs[targets[i]!]!.failure
          if (failure !== undefined) {
            if (releaseOnFailure > 0) budget.release(releaseOnFailure)
            return failure
          }
        }
        const touched: Array<PartitionLog> = []
        for (let i = from; i < to; i++) {
          const message = messages[i]!
          const partition = targets[i]!
          const log = topic.logs[partition]!
          acks[i] = { partition, offset: log.append(message.key, keyBytes[i]!, message.value, nowMs) }
          if (!touched.includes(log)) touched.push(log)
        }
        for (const log of touched) {
          durable.expect()
          log.whenDurable(log.nextOffset - 1, durable.done)
          log.appended()
        }
        return undefined
      }
      if (dir === undefined) {
        const failure = appendRange(0, count, 0)
        return failure === undefined ? Effect.succeed(acks) : Effect.fail(failure)
      }
      // Split into chunks that each fit the budget; admit them in order (offsets follow call order).
      let start = 0
      let bytes = 0
      const chunks: Array<readonly [number, number, number]> = []
      for (let i = 0; i < count; i++) {
        if (bytes + sizes[i]! > options.maxPendingBytes) {
          chunks.push([start, i, bytes])
          start = i
          bytes = 0
        }
        bytes += sizes[i]!
      }
      const admitted =
        chunks.length === 0
          ? admit(bytes, () => appendRange(0, count, bytes))
          : Effect.forEach([...chunks, [start, count, bytes] as const], ([from, to, chunkBytes]) => admit(chunkBytes, () => appendRange(from, to, chunkBytes)), {
              discard: true
            })
      return admitted.pipe(Effect.zipRight(durable.wait), Effect.as(acks))
    }

    const publish = (topicName: string, messages: ReadonlyArray<BusMessage>): Effect.Effect<ReadonlyArray<PublishAck>, BusError> =>
      Effect.suspend(() => {
        if (closed) return Effect.fail(closedError())
        if (messages.length === 0) return Effect.succeed([])
        return Effect.flatMap(getTopic(topicName), (topic) => Effect.flatMap(Clock.currentTimeMillis, (nowMs) => publishTo(topic, messages, nowMs)))
      })

    // -------------------------------------------------------------------------------------------
    // Read


    const readLog = (log: PartitionLog, offset: number, max: number): Effect.Effect<ReadonlyArray<BusRecord>, BusError> => {
      const cached = log.readCached(offset, max)
      if (cached !== undefined) return Effect.succeed(cached)
      return Effect.tryPromise({
        try: () => log.read(offset, max, MAX_FETCH_BYTES),
        catch: (error) => ioError(`reading ${log.config.topic}/${log.config.partition}`, error)
      })
    }

    const read = (topicName: string, partition: number, offset: number, maxRecords: number): Effect.Effect<ReadonlyArray<BusRecord>, BusError> =>
      Effect.gen(function* () {
        const bad = badReadArguments(partition, offset, maxRecords, partitions)
        if (bad !== undefined) return yield* bad
        if (closed) return yield* closedError()
        const topic = yield* findTopic(topicName)
        if (topic === undefined) return []
        const log = topic.logs[partition]!
        if (offset < log.logStart) {
          yield* Effect.logWarning(`bus: read below the log start; reading from ${log.logStart}`).pipe(
            Effect.annotateLogs({ topic: topicName, partition, requestedOffset: offset })
          )
        }
        return yield* readLog(log, offset, Math.min(maxRecords, MAX_BATCH_LIMIT))
      })

    // -------------------------------------------------------------------------------------------
    // Offsets

    const persistCommit = (group: Group, partition: number, nextOffset: number): Effect.Effect<void, BusError> =>
      Effect.tryPromise({
        try: () => group.store.commit(partition, nextOffset),
        catch: (error) => ioError(`committing ${group.name} on ${group.topic.name}`, error)
      })

    const committed = (groupName: string, topicName: string): Effect.Effect<ReadonlyMap<number, number>, BusError> =>
      Effect.gen(function* () {
        const topic = yield* findTopic(topicName)
        if (topic === undefined) {
          if (!validName(groupName)) return yield* invalid(`invalid group name ${JSON.stringify(groupName)}`)
          return new Map<number, number>()
        }
        const group = yield* getGroup(groupName, topic)
        return new Map(group.store.committed)
      })

    const commit = (groupName: string, topicName: string, partition: number, nextOffset: number): Effect.Effect<void, BusError> =>
      Effect.gen(function* () {
        const bad = badCommitArguments(partition, nextOffset, partitions)
        if (bad !== undefined) return yield* bad
        if (closed) return yield* closedError()
        const topic = yield* getTopic(topicName)
        const end = topic.logs[partition]!.hwm
        if (nextOffset > end) return yield* invalid(`nextOffset ${nextOffset} is past the end offset ${end} of ${topicName}/${partition}`)
        const group = yield* getGroup(groupName, topic)
        yield* persistCommit(group, partition, nextOffset)
      })

    const offsetsOf = (topicName: string, pick: (log: PartitionLog) => number): Effect.Effect<ReadonlyMap<number, number>, BusError> =>
      Effect.map(findTopic(topicName), (topic) => {
        const out = new Map<number, number>()
        for (let p = 0; p < partitions; p++) out.set(p, topic === undefined ? 0 : pick(topic.logs[p]!))
        return out
      })

    // -------------------------------------------------------------------------------------------
    // Consumers

    const retryForever = <A>(what: string, effect: Effect.Effect<A, BusError>): Effect.Effect<A> =>
      effect.pipe(
        Effect.tapError((error) => Effect.logWarning(`bus: ${what} failed; retrying`, error)),
        Effect.retry(redeliverySchedule),
        Effect.orDie
      )

    const waitForData = (log: PartitionLog, offset: number): Effect.Effect<void> =>
      Effect.async<void>((resume) => {
        const cancel = log.onData(offset, () => resume(Effect.void))
        return Effect.sync(cancel)
      })

    const waitForAppend = (log: PartitionLog, offset: number): Effect.Effect<void> =>
      Effect.async<void>((resume) => {
        const cancel = log.onAppend(offset, () => resume(Effect.void))
        return Effect.sync(cancel)
      })

    /** Succeeds once `offset` of `log` is durable; fails with the write's error if it never will be. */
    const durableAt = (log: PartitionLog, offset: number): Effect.Effect<void, BusError> =>
      Effect.async<void, BusError>((resume) => {
        log.whenDurable(offset, (error) => resume(error === undefined ? Effect.void : Effect.fail(error)))
      })

    /**
     * Where a newly assigned partition starts: the committed offset, or (first assignment ever)
     * the log start or end, committed at once so a restart or rebalance continues from it rather
     * than from a later end. Runs before `subscribe` returns, so "latest" means latest at subscribe.
     */
    const startPosition = (group: Group, partition: number, fromBeginning: boolean): Effect.Effect<number> =>
      Effect.suspend(() => {
        const log = group.topic.logs[partition]!
        const stored = group.store.committed.get(partition)
        if (stored === undefined) {
          const position = fromBeginning ? log.logStart : log.hwm
          return Effect.as(retryForever("committing the start position", persistCommit(group, partition, position)), position)
        }
        if (stored > log.hwm) {
          return Effect.as(Effect.logWarning(`bus: committed offset ${stored} is past the end ${log.hwm}; resuming at the end`), log.hwm)
        }
        return Effect.succeed(stored)
      })

    const partitionWorker = <E>(
      group: Group,
      partition: number,
      start: number,
      maxBatch: number,
      autoCommit: boolean,
      beforeDurable: boolean,
      onBatch: (batch: BusBatch) => Effect.Effect<void, E>
    ): Effect.Effect<void> =>
      Effect.gen(function* () {
        const log = group.topic.logs[partition]!
        const topicName = group.topic.name
        let position = start

        const deliver = (batch: BusBatch): Effect.Effect<void> =>
          Effect.suspend(() => onBatch(batch)).pipe(
            Effect.sandbox,
            Effect.tapError((cause) =>
              Effect.logWarning(`bus: onBatch failed; redelivering offsets ${batch.records[0]!.offset}..`, Cause.squash(cause))
            ),
            Effect.retry(redeliverySchedule),
            Effect.orDie
          )

        while (true) {
          const logStart = log.logStart
          if (position < logStart) {
            yield* Effect.logWarning(`bus: offsets ${position}..${logStart - 1} were deleted by retention; resuming at the log start ${logStart}`).pipe(
              Effect.annotateLogs({ skippedRecords: logStart - position })
            )
            position = logStart
          }
          if (position >= log.hwm) {
            if (!beforeDurable || log.memoryOnly) {
              yield* waitForData(log, position)
              continue
            }
            // Early delivery: appended records still on their way to the disk.
            const unflushed = log.readUnflushed(position, maxBatch)
            if (unflushed.length === 0) {
              // A poisoned partition takes no append: its readers wait for a restart, as on the durable path.
              // (One wait only: racing this against `waitForData` left the worker asleep in a long run.)
              yield* waitForAppend(log, position)
              continue
            }
            const last = unflushed[unflushed.length - 1]!.offset
            yield* deliver({ topic: topicName, partition, records: unflushed, durable: durableAt(log, last) })
            position = last + 1
            if (autoCommit) yield* retryForever("committing", Effect.zipRight(durableAt(log, last), persistCommit(group, partition, position)))
            continue
          }
          const records = yield* retryForever("reading", readLog(log, position, maxBatch))
          if (records.length === 0) {
            yield* Effect.yieldNow()
            continue
          }
          const first = records[0]!.offset
          if (first > position) {
            yield* Effect.logWarning(`bus: offsets ${position}..${first - 1} were deleted by retention; resuming at ${first}`).pipe(
              Effect.annotateLogs({ skippedRecords: first - position })
            )
          }
          yield* deliver({ topic: topicName, partition, records })
          position = records[records.length - 1]!.offset + 1
          if (autoCommit) yield* retryForever("committing", persistCommit(group, partition, position))
        }
      }).pipe(Effect.annotateLogs({ topic: group.topic.name, partition, group: group.name }))

    /** Gives each partition to members[p % members.length]; stops a moved worker before starting its successor. */
    const rebalance = (group: Group): Effect.Effect<void> =>
      Effect.gen(function* () {
        for (let p = 0; p < partitions; p++) {
          const owner = closed || group.members.length === 0 ? undefined : group.members[p % group.members.length]
          const current = group.owners[p]
          if (current !== undefined && current.member === owner) continue
          if (current !== undefined) {
            group.owners[p] = undefined
            yield* Fiber.interrupt(current.fiber)
            if (!current.member.leaving) yield* current.member.revoked(p)
          }
          if (owner !== undefined) group.owners[p] = { member: owner, fiber: yield* owner.spawn(p) }
        }
      })

    const subscribe = <E, R>(
      subscription: SubscribeOptions,
      onBatch: (batch: BusBatch) => Effect.Effect<void, E, R>
    ): Effect.Effect<void, BusError, R | Scope.Scope> =>
      Effect.gen(function* () {
        const maxBatch = subscriptionMaxBatch(subscription.maxBatch)
        if (typeof maxBatch !== "number") return yield* maxBatch
        if (closed) return yield* closedError()
        const topic = yield* getTopic(subscription.topic)
        const group = yield* getGroup(subscription.group, topic, subscription.ephemeral === true)
        const context = yield* Effect.context<R>()
        const fiberRefs = yield* Effect.getFiberRefs
        const scope = yield* Effect.scope
        const handler = (batch: BusBatch) => Effect.provide(onBatch(batch), context)
        const fromBeginning = subscription.fromBeginning ?? false
        const autoCommit = subscription.autoCommit ?? true
        const onAssigned = subscription.onAssigned
        const assigned = (partition: number): Effect.Effect<void> =>
          onAssigned === undefined ? Effect.void : notifyAssigned(onAssigned, partition).pipe(Effect.annotateLogs({ topic: topic.name, partition, group: group.name }))
        const beforeDurable = subscription.beforeDurable ?? false
        const onRevoked = subscription.onRevoked
        const member: Member = {
          leaving: false,
          // On a fiber of its own, with this member's fiber refs: the rebalance runs on the fiber of
          // whichever member joined or left, whose refs (context, log annotations, ...) must come out
          // of it unchanged. Awaited, not joined: a join would merge the child's refs back.
          revoked: (partition) =>
            onRevoked === undefined
              ? Effect.void
              : Effect.flatMap(
                  Effect.fork(
                    Effect.setFiberRefs(fiberRefs).pipe(
                      Effect.zipRight(notifyRevoked(onRevoked, partition)),
                      Effect.annotateLogs({ topic: topic.name, partition, group: group.name })
                    )
                  ),
                  (fiber) => Effect.asVoid(Fiber.await(fiber))
                ),
          spawn: (partition) =>
            Effect.flatMap(startPosition(group, partition, fromBeginning), (start) =>
              // Explicitly interruptible: a rebalance may fork it from a finalizer (uninterruptible), whose flags a child inherits.
              Effect.forkIn(
                Effect.interruptible(
                  Effect.setFiberRefs(fiberRefs).pipe(
                    Effect.zipRight(assigned(partition)),
                    Effect.zipRight(partitionWorker(group, partition, start, maxBatch, autoCommit, beforeDurable, handler))
                  )
                ),
                scope
              )
            )
        }
        yield* Effect.addFinalizer(() =>
          group.lock.withPermits(1)(
            Effect.suspend(() => {
              const i = group.members.indexOf(member)
              if (i >= 0) group.members.splice(i, 1)
              member.leaving = true
              return rebalance(group)
            })
          )
        )
        yield* group.lock.withPermits(1)(
          Effect.suspend(() => {
            group.members.push(member)
            return rebalance(group)
          })
        )
      })

    // -------------------------------------------------------------------------------------------
    // Health, stats, shutdown

    const allLogs = (): Array<PartitionLog> => [...topics.values()].flatMap((t) => [...t.logs])

    const ping: Effect.Effect<void, BusError> = Effect.suspend(() => {
      if (closed) return Effect.fail(closedError())
      const failed = allLogs().find((log) => log.failure !== undefined)
      if (failed !== undefined) return Effect.fail(failed.failure!)
      if (dir === undefined) return Effect.void
      return Effect.tryPromise({ try: () => fs.access(dir), catch: (error) => ioError(`checking ${dir}`, error) })
    })

    const stats: Effect.Effect<EmbeddedBusStats> = Effect.sync(() => ({
      pendingBytes: budget.used,
      pendingBytesHighWater: budget.highWaterBytes,
      publishWaits: budget.waits,
      waitingPublishers: budget.waiting,
      partitions: allLogs().map((log) => ({
        topic: log.config.topic,
        partition: log.config.partition,
        logStartOffset: log.logStart,
        endOffset: log.hwm,
        segments: log.segmentCount,
        storedBytes: log.storedBytes,
        cachedRecords: log.cachedRecords
      }))
    }))

    const shutdown = Effect.gen(function* () {
      closed = true
      budget.fail(closedError())
      // Stop consumers first so no commit races the final offset writes.
      yield* Effect.forEach(
        [...groups.values()],
        (group) =>
          group.lock.withPermits(1)(
            Effect.forEach(
              group.owners,
              (owner, p) =>
                owner === undefined
                  ? Effect.void
                  : Effect.suspend(() => {
                      group.owners[p] = undefined
                      return Fiber.interrupt(owner.fiber)
                    }),
              { discard: true }
            )
          ),
        { discard: true }
      )
      const closeAll = async () => {
        const failures: Array<unknown> = []
        await Promise.all(allLogs().map((log) => log.close().catch((error: unknown) => failures.push(error))))
        await Promise.all([...groups.values()].map((group) => group.store.drain()))
        return failures
      }
      const failures = yield* Effect.promise(closeAll)
      for (const failure of failures) yield* Effect.logError("bus: closing a partition failed", failure)
    })

    // Registered before recovery, so a failed start still closes whatever it opened.
    yield* Effect.addFinalizer(() => shutdown)

    // Recover every topic already on disk before anyone publishes or reads.
    if (dir !== undefined) {
      const existing = yield* Effect.tryPromise({
        try: () => fs.readdir(dir, { withFileTypes: true }),
        catch: (error) => ioError(`listing ${dir}`, error)
      })
      yield* Effect.forEach(
        existing.filter((entry) => entry.isDirectory() && validName(entry.name)),
        (entry) => getTopic(entry.name),
        { discard: true }
      )
    }

    // Spans on the control-plane methods; publish and the consumer loop are hot paths and stay untraced.
    const shape: EmbeddedBusShape = {
      publish,
      subscribe: (subscription, onBatch) =>
        Effect.withSpan(subscribe(subscription, onBatch), "EmbeddedBus.subscribe", { attributes: { group: subscription.group, topic: subscription.topic } }),
      read: (topic, partition, offset, maxRecords) => Effect.withSpan(read(topic, partition, offset, maxRecords), "EmbeddedBus.read"),
      committed: (group, topic) => Effect.withSpan(committed(group, topic), "EmbeddedBus.committed"),
      commit: (group, topic, partition, nextOffset) => Effect.withSpan(commit(group, topic, partition, nextOffset), "EmbeddedBus.commit"),
      endOffsets: (topic) => offsetsOf(topic, (log) => log.hwm),
      startOffsets: (topic) => offsetsOf(topic, (log) => log.logStart),
      partitionFor: (_topic, key) => partitionForKey(key, partitions),
      partitions,
      ping,
      stats
    }
    return shape
  })

/** `Bus` from the embedded adapter; the layer's scope owns the files and the consumers. */
export const layer = (options: Partial<EmbeddedBusOptions> = {}): Layer.Layer<Bus, BusError> => Layer.scoped(Bus, make(options))

export const EmbeddedBus = { make, layer, defaults } as const
