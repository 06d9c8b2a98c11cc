/**
 * The `Bus` port on Kafka, through kafkajs. Selected by `KAFKA_BROKERS`; the embedded adapter is
 * the default. What it guarantees, beside the port's contract:
 *
 * - Partitioning is the port's `partitionForKey` (murmur2, Kafka's default partitioner): the
 *   partition is computed here and sent explicitly, so both adapters place a key alike whatever
 *   partitioner a client library defaults to (`Bus.test.ts` cross-checks kafkajs's own).
 * - `publish` resolves once the partition leader and its in-sync replicas have the records
 *   (`acks: -1`). The producer is idempotent (`idempotent`, default on) with one request in
 *   flight per broker, so a retried send neither duplicates nor reorders a key's records.
 * - Consumers are kafkajs group members. A batch is delivered again (bounded backoff, heartbeats
 *   between attempts) until `onBatch` succeeds, never skipped; with `autoCommit: false` only the
 *   consumer's `commit` moves the group's offset, so a partition that moves to another member
 *   (a rebalance, or a member that died) is replayed from the last offset its owner committed.
 *   `onAssigned` hears of each partition a join gives this member (kafkajs's GROUP_JOIN, after
 *   which the committed offsets are read) before that partition's first batch; `onRevoked` of
 *   each partition a join took from it (the same event), after the fact.
 * - Every request is retried a bounded number of times with exponential backoff (`retries`,
 *   `retryInitialMs`, `retryMaxMs`); past that the call fails with a retryable `Unavailable`.
 * - Start-up fails clearly: an unreachable broker is `Unavailable` naming the brokers, a topic
 *   that does not exist (auto-creation off) is `UnknownTopic` naming it, and a topic whose
 *   partition count is not `partitions` is `InvalidArgument`: the key → partition mapping is only
 *   the embedded bus's for the same count.
 *
 * `read` (replay, off every hot path) joins a throwaway group and seeks: kafkajs has no
 * group-less fetch, so a read costs a group join. `commit` goes through this process's member of
 * the group (its generation); for a group with no member here it uses the admin API, which Kafka
 * allows only while the group is empty (librdkafka's mock lacks the DescribeGroups that needs).
 */
import { randomUUID } from "node:crypto"
import { Effect, Exit, Fiber, Layer, Runtime, type Scope } from "effect"
import { type Admin, type Consumer, Kafka, type KafkaMessage, logLevel as KafkaLogLevel, type LogEntry, Partitioners, type Producer } from "kafkajs"
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
import { BATCH_HEADER_BYTES, RECORD_FRAMING_BYTES, sendSlices } from "./internal/sendSlices.js"
import { badCommitArguments, badReadArguments, closedError, notifyAssigned, notifyRevoked, invalid, isPositiveInt, MAX_BATCH_LIMIT, redeliverySchedule, subscriptionMaxBatch, validName } from "./internal/rules.js"

export interface KafkaBusOptions {
  /** `host:port` of one or more brokers. */
  readonly brokers: ReadonlyArray<string>
  readonly clientId: string
  /** The partition count every topic must have (the embedded bus's `partitions`). */
  readonly partitions: number
  /** Idempotent producer (default true). librdkafka's mock cluster cannot serve it: see docs/decisions.md. */
  readonly idempotent: boolean
  /** TCP connect timeout per broker (default 3 s). */
  readonly connectionTimeoutMs: number
  /** One request's timeout (default 10 s). */
  readonly requestTimeoutMs: number
  /** Retries of one request before it fails (default 5), backing off from retryInitialMs doubling to retryMaxMs. */
  readonly retries: number
  readonly retryInitialMs: number
  readonly retryMaxMs: number
  /** A member missing heartbeats this long is dropped from its group and its partitions move (default 10 s). */
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
  /** How long the group coordinator waits for members to rejoin in a rebalance (default 30 s); a batch in flight must finish within it. */
  readonly rebalanceTimeoutMs: number
  /**
   * The most one send carries, counted as the broker counts a batch (default 1 MiB, about Kafka's
   * default message.max.bytes, which a broker applies to a partition's whole batch): a larger
   * publish goes out as several sends, in order, and a record whose key + value with a batch's
   * framing exceeds it is refused before sending.
   */
  readonly maxRecordBytes: number
  /**
   * Longest a fetch waits on the broker for new records (default 10 ms). kafkajs heartbeats
   * between fetches, so this also bounds how late a member notices a rebalance. A real broker
   * answers a waiting fetch as soon as records arrive; librdkafka's mock answers an empty one only
   * when the wait ends, so there the wait is paid as latency on every hop (docs/decisions.md,
   * "Kafka path at the embedded path's speed").
   */
  readonly maxWaitMs: number
  /** Bytes fetched per partition per request (default 1 MiB). */
  readonly maxBytesPerPartition: number
}

export const defaults: Omit<KafkaBusOptions, "brokers"> = {
  clientId: "curvestream",
  partitions: 16,
  idempotent: true,
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 10_000,
  retries: 5,
  retryInitialMs: 100,
  retryMaxMs: 2_000,
  sessionTimeoutMs: 10_000,
  heartbeatIntervalMs: 1_000,
  rebalanceTimeoutMs: 30_000,
  maxRecordBytes: 1024 * 1024,
  maxWaitMs: 10,
  maxBytesPerPartition: 1024 * 1024
}

/** A `read` gives up after this long. */
const READ_DEADLINE_MS = 30_000

/** A crashed consumer is started again at most this many times in a row without a delivered batch in between. */
export const CONSUMER_RESTARTS_MAX = 10

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))
const kafkaType = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "type" in error && typeof error.type === "string" ? error.type : undefined

const decoder = new TextDecoder()

/** One Kafka message as the port's record. */
const toRecord = (topic: string, partition: number, message: KafkaMessage): BusRecord => ({
  topic,
  partition,
  offset: Number(message.offset),
  key: message.key === null ? "" : decoder.decode(message.key),
  value: message.value === null ? new Uint8Array(0) : new Uint8Array(message.value.buffer, message.value.byteOffset, message.value.byteLength),
  timestampMs: Number(message.timestamp)
})

/** Builds the Kafka bus in the current scope: connects, and disconnects everything when the scope closes. */
export const make = (input: Partial<KafkaBusOptions> & Pick<KafkaBusOptions, "brokers">): Effect.Effect<BusShape, BusError, Scope.Scope> =>
  Effect.gen(function* () {
    const options: KafkaBusOptions = { ...defaults, ...input }
    if (options.brokers.length === 0) return yield* invalid("KAFKA_BROKERS names no broker")
    if (!isPositiveInt(options.partitions) || options.partitions > 4096) return yield* invalid(`partitions must be 1..4096, got ${options.partitions}`)
    const { partitions } = options
    const brokerList = options.brokers.join(",")
    const runtime = yield* Effect.runtime<never>()
    const runSync = Runtime.runSync(runtime)

    // kafkajs's own warnings and errors go to the engine's log. Its connection layer logs every
    // error answer (a rebalance under way included) at ERROR; those are routine: warnings here.
    const logCreator = () => (entry: LogEntry) => {
      const text = `kafka: ${entry.log.message}`
      const annotations = { namespace: entry.namespace, ...(entry.log.error === undefined ? {} : { error: String(entry.log.error) }) }
      const error = entry.level === KafkaLogLevel.ERROR && entry.namespace !== "Connection"
      runSync((error ? Effect.logError(text) : Effect.logWarning(text)).pipe(Effect.annotateLogs(annotations)))
    }
    const kafka = new Kafka({
      brokers: [...options.brokers],
      clientId: options.clientId,
      connectionTimeout: options.connectionTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      retry: { retries: options.retries, initialRetryTime: options.retryInitialMs, maxRetryTime: options.retryMaxMs },
      logLevel: KafkaLogLevel.WARN,
      logCreator
    })

    let closed = false
    const unavailable = (what: string, error: unknown): BusError =>
      new BusError({ reason: "Unavailable", message: `kafka (${brokerList}): ${what}: ${describe(error)}`, retryable: true })
    const call = <A>(what: string, run: () => Promise<A>): Effect.Effect<A, BusError> =>
      Effect.suspend(() =>
        closed
          ? Effect.fail(closedError())
          : Effect.tryPromise({
              try: run,
              catch: (error) =>
                kafkaType(error) === "UNKNOWN_TOPIC_OR_PARTITION"
                  ? new BusError({ reason: "UnknownTopic", message: `kafka (${brokerList}): ${what}: the topic does not exist`, retryable: false })
                  : unavailable(what, error)
            })
      )

    const admin: Admin = kafka.admin()
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => admin.connect(), catch: (error) => unavailable("cannot reach the brokers", error) }),
      () => Effect.promise(() => admin.disconnect().catch(() => undefined))
    )
    const producer: Producer = kafka.producer({
      idempotent: options.idempotent,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // The partition is always given (partitionForKey); this only silences kafkajs's v2 notice.
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: options.retries, initialRetryTime: options.retryInitialMs, maxRetryTime: options.retryMaxMs }
    })
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => producer.connect(), catch: (error) => unavailable("connecting the producer", error) }),
      () => Effect.promise(() => producer.disconnect().catch(() => undefined))
    )
    // Closing: refuse new calls first; consumers (added later, so released earlier) are already stopped.
    yield* Effect.addFinalizer(() => Effect.sync(() => (closed = true)))

    // -------------------------------------------------------------------------------------------
    // Topics: checked once each (exists, partition count), concurrent callers sharing the check.

    const checked = new Map<string, Promise<void>>()
    const checkTopic = (topic: string): Effect.Effect<void, BusError> => {
      if (!validName(topic)) return Effect.fail(invalid(`invalid topic name ${JSON.stringify(topic)}: use 1-249 of [A-Za-z0-9._-]`))
      let pending = checked.get(topic)
      if (pending === undefined) {
        pending = admin.fetchTopicMetadata({ topics: [topic] }).then((metadata) => {
          const count = metadata.topics.find((t) => t.name === topic)?.partitions.length ?? 0
          if (count !== partitions) {
            throw invalid(`topic ${topic} has ${count} partitions on ${brokerList}; this bus is configured for ${partitions} (BUS_PARTITIONS)`)
          }
        })
        pending.catch(() => checked.delete(topic))
        checked.set(topic, pending)
      }
      const shared = pending
      return Effect.tryPromise({
        try: () => shared,
        catch: (error) =>
          error instanceof BusError
            ? error
            : kafkaType(error) === "UNKNOWN_TOPIC_OR_PARTITION"
              ? new BusError({
                  reason: "UnknownTopic",
                  message: `topic ${topic} does not exist on ${brokerList} and the broker does not create topics; create it with ${partitions} partitions`,
                  retryable: false
                })
              : unavailable(`reading the metadata of ${topic}`, error)
      })
    }


    // -------------------------------------------------------------------------------------------
    // Publish

    const publish = (topic: string, messages: ReadonlyArray<BusMessage>): Effect.Effect<ReadonlyArray<PublishAck>, BusError> =>
      Effect.gen(function* () {
        if (messages.length === 0) return []
        const sizes = new Array<number>(messages.length)
        for (let i = 0; i < messages.length; i++) {
          const m = messages[i]!
          const bytes = (sizes[i] = Buffer.byteLength(m.key) + m.value.byteLength)
          // Alone in its batch, with the batch's header and its own framing (what the broker weighs).
          if (bytes + BATCH_HEADER_BYTES + RECORD_FRAMING_BYTES > options.maxRecordBytes) {
            return yield* invalid(`a record of ${bytes} bytes (${bytes + BATCH_HEADER_BYTES + RECORD_FRAMING_BYTES} as a batch) exceeds maxRecordBytes ${options.maxRecordBytes}`)
          }
        }
        yield* checkTopic(topic)
        const placed = messages.map((m) => partitionForKey(m.key, partitions))
        const acks = new Array<PublishAck>(messages.length)
        // One send per slice under the broker's batch bound, in order (internal/sendSlices.ts).
        for (const [from, to] of sendSlices(sizes, options.maxRecordBytes)) {
          const results = yield* call(`publishing to ${topic}`, () =>
            producer.send({
              topic,
              acks: -1,
              messages: messages.slice(from, to).map((m, k) => ({
                key: m.key,
                value: Buffer.from(m.value.buffer, m.value.byteOffset, m.value.byteLength),
                partition: placed[from + k]!
              }))
            })
          ).pipe(Effect.mapError((error) => (from === 0 ? error : new BusError({ ...error, landed: from }))))
          // kafkajs sends each partition's messages in call order as one batch: offsets are its base + index.
          const next = new Map<number, number>()
          for (const r of results) next.set(r.partition, Number(r.baseOffset ?? "-1"))
          for (let i = from; i < to; i++) {
            const partition = placed[i]!
            const offset = next.get(partition)!
            next.set(partition, offset + 1)
            acks[i] = { partition, offset }
          }
        }
        return acks
      })

    // -------------------------------------------------------------------------------------------
    // Offsets

    const endOffsets = (topic: string): Effect.Effect<ReadonlyMap<number, number>, BusError> =>
      Effect.zipRight(
        checkTopic(topic),
        Effect.map(
          call(`reading the end offsets of ${topic}`, () => admin.fetchTopicOffsets(topic)),
          (offsets) => new Map(offsets.map((o) => [o.partition, Number(o.high)] as const))
        )
      )

    const committed = (group: string, topic: string): Effect.Effect<ReadonlyMap<number, number>, BusError> =>
      Effect.gen(function* () {
        if (!validName(group)) return yield* invalid(`invalid group name ${JSON.stringify(group)}`)
        yield* checkTopic(topic)
        const answer = yield* call(`reading ${group}'s offsets on ${topic}`, () => admin.fetchOffsets({ groupId: group, topics: [topic] }))
        const out = new Map<number, number>()
        for (const p of answer.find((t) => t.topic === topic)?.partitions ?? []) {
          const offset = Number(p.offset)
          if (offset >= 0) out.set(p.partition, offset)
        }
        return out
      })

    /** This process's live members, by group and topic: a commit goes through one (its generation), else the admin API. */
    const members = new Map<string, Set<Consumer>>()
    const memberKey = (group: string, topic: string) => `${group}\u0000${topic}`

    /**
     * Per topic and partition, the highest end offset a fetch of this process was told (its high
     * watermark; the log's end only moves on). A commit at or below it needs no ListOffsets round
     * trip to check that it does not pass the end: the actors commit every partition behind each
     * checkpoint, and that check doubled the requests of every commit.
     */
    const knownEnds = new Map<string, Map<number, number>>()
    const noteEnd = (topic: string, partition: number, end: number): void => {
      if (!Number.isSafeInteger(end)) return
      let ends = knownEnds.get(topic)
      if (ends === undefined) knownEnds.set(topic, (ends = new Map()))
      if (end > (ends.get(partition) ?? -1)) ends.set(partition, end)
    }

    const commit = (group: string, topic: string, partition: number, nextOffset: number): Effect.Effect<void, BusError> =>
      Effect.gen(function* () {
        const bad = badCommitArguments(partition, nextOffset, partitions)
        if (bad !== undefined) return yield* bad
        if (!validName(group)) return yield* invalid(`invalid group name ${JSON.stringify(group)}`)
        const known = knownEnds.get(topic)?.get(partition)
        const end = known !== undefined && nextOffset <= known ? known : ((yield* endOffsets(topic)).get(partition) ?? 0)
        if (nextOffset > end) return yield* invalid(`nextOffset ${nextOffset} is past the end offset ${end} of ${topic}/${partition}`)
        const member = members.get(memberKey(group, topic))?.values().next().value
        const offsets = [{ topic, partition, offset: String(nextOffset) }]
        yield* member === undefined
          ? call(`committing ${group} on ${topic}/${partition}`, () => admin.setOffsets({ groupId: group, topic, partitions: [{ partition, offset: String(nextOffset) }] }))
          : call(`committing ${group} on ${topic}/${partition}`, () => member.commitOffsets(offsets))
      })

    // -------------------------------------------------------------------------------------------
    // Consumers

    const subscribe = <E, R>(
      subscription: SubscribeOptions,
      onBatch: (batch: BusBatch) => Effect.Effect<void, E, R>
    ): Effect.Effect<void, BusError, R | Scope.Scope> =>
      Effect.gen(function* () {
        const maxBatch = subscriptionMaxBatch(subscription.maxBatch)
        if (typeof maxBatch !== "number") return yield* maxBatch
        if (!validName(subscription.group)) return yield* invalid(`invalid group name ${JSON.stringify(subscription.group)}`)
        if (closed) return yield* closedError()
        yield* checkTopic(subscription.topic)
        const { group, topic } = subscription
        const autoCommit = subscription.autoCommit ?? true
        const handlerRuntime = yield* Effect.runtime<R>()
        const consumer = kafka.consumer({
          groupId: group,
          allowAutoTopicCreation: false,
          sessionTimeout: options.sessionTimeoutMs,
          heartbeatInterval: options.heartbeatIntervalMs,
          rebalanceTimeout: options.rebalanceTimeoutMs,
          maxBytesPerPartition: options.maxBytesPerPartition,
          maxWaitTimeInMs: options.maxWaitMs,
          retry: { retries: options.retries, initialRetryTime: options.retryInitialMs, maxRetryTime: options.retryMaxMs }
        })
        const inFlight = new Set<Fiber.RuntimeFiber<boolean>>()
        let stopping = false

        /** Delivers one chunk until it succeeds (true) or the partition left this member or the consumer stops (false). */
        const deliver = (batch: BusBatch, heartbeat: () => Promise<void>, stale: () => boolean): Promise<boolean> => {
          const attempt = Effect.suspend(() => (stale() ? Effect.succeed(false) : Effect.as(onBatch(batch), true))).pipe(
            Effect.sandbox,
            Effect.tapError((cause) =>
              Effect.zipRight(
                Effect.logWarning(`bus: onBatch failed; redelivering offsets ${batch.records[0]!.offset}..`, cause),
                Effect.promise(() => heartbeat().catch(() => undefined))
              )
            ),
            Effect.retry(redeliverySchedule),
            Effect.orDie,
            Effect.annotateLogs({ topic, partition: batch.partition, group })
          )
          return runTracked(attempt)
        }

        /** Runs an effect as a fiber the consumer's release interrupts; false when it was interrupted by a stop. */
        const runTracked = (effect: Effect.Effect<boolean, never, R>): Promise<boolean> => {
          const fiber = Runtime.runFork(handlerRuntime)(effect)
          inFlight.add(fiber)
          return Effect.runPromise(Fiber.await(fiber)).then((exit) => {
            inFlight.delete(fiber)
            if (Exit.isSuccess(exit)) return exit.value
            if (stopping) return false
            throw new Error(`bus: the batch handler died: ${String(exit.cause)}`)
          })
        }

        // Partitions given to this member by the latest join that `onAssigned` has not been told of yet.
        const { onAssigned } = subscription
        const owned = new Set<number>()
        const toNotify = new Set<number>()
        const { onRevoked } = subscription
        consumer.on(consumer.events.GROUP_JOIN, (event) => {
          const now = new Set(event.payload.memberAssignment[topic] ?? [])
          for (const p of now) if (!owned.has(p)) toNotify.add(p)
          for (const p of toNotify) if (!now.has(p)) toNotify.delete(p)
          // Partitions this join took away (told after the fact: the join already happened).
          const lost = [...owned].filter((p) => !now.has(p))
          owned.clear()
          for (const p of now) owned.add(p)
          if (onRevoked !== undefined && !stopping) {
            for (const p of lost) Runtime.runFork(handlerRuntime)(notifyRevoked(onRevoked, p).pipe(Effect.annotateLogs({ topic, partition: p, group })))
          }
        })
        const notify = (partition: number): Promise<boolean> =>
          onAssigned === undefined || !toNotify.has(partition)
            ? Promise.resolve(true)
            : runTracked(Effect.as(notifyAssigned(onAssigned, partition).pipe(Effect.annotateLogs({ topic, partition, group })), true)).then((done) => {
                if (done) toNotify.delete(partition)
                return done
              })

        // kafkajs restarts a consumer after a retriable error itself; after a non-retriable one
        // (e.g. a protocol error answered mid-rebalance) it disconnects for good. This member then
        // starts again, backing off, at most CONSUMER_RESTARTS_MAX times in a row without a
        // delivered batch in between; past that it stays down and says so.
        let restarts = 0
        consumer.on(consumer.events.CRASH, (event) => {
          if (event.payload.restart || stopping) return
          if (restarts >= CONSUMER_RESTARTS_MAX) {
            runSync(
              Effect.logError(`bus: the consumer crashed ${restarts + 1} times in a row without delivering; it stays down`, describe(event.payload.error)).pipe(
                Effect.annotateLogs({ topic, group })
              )
            )
            return
          }
          restarts++
          const delayMs = Math.min(options.retryMaxMs, options.retryInitialMs * 2 ** restarts)
          runSync(Effect.logWarning(`bus: the consumer crashed; starting it again in ${delayMs} ms`, describe(event.payload.error)).pipe(Effect.annotateLogs({ topic, group })))
          setTimeout(() => {
            if (!stopping) runConsumer().catch((error) => runSync(Effect.logWarning("bus: restarting the consumer failed", describe(error)).pipe(Effect.annotateLogs({ topic, group }))))
          }, delayMs)
        })

        const runConsumer = async () => {
            await consumer.connect()
            await consumer.subscribe({ topic, fromBeginning: subscription.fromBeginning ?? false })
            await consumer.run({
              autoCommit: false,
              eachBatchAutoResolve: false,
              partitionsConsumedConcurrently: partitions,
              eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
                const stale = () => stopping || !isRunning() || isStale()
                noteEnd(topic, batch.partition, Number(batch.highWatermark))
                if (!(await notify(batch.partition))) return
                for (let from = 0; from < batch.messages.length; from += maxBatch) {
                  const chunk = batch.messages.slice(from, from + maxBatch)
                  const records = chunk.map((m) => toRecord(topic, batch.partition, m))
                  if (!(await deliver({ topic, partition: batch.partition, records }, heartbeat, stale))) return
                  restarts = 0
                  const last = records[records.length - 1]!.offset
                  resolveOffset(String(last))
                  try {
                    if (autoCommit) await consumer.commitOffsets([{ topic, partition: batch.partition, offset: String(last + 1) }])
                    await heartbeat()
                  } catch (error) {
                    // Mostly a rebalance under way: this member may no longer own the partition. Whoever
                    // owns it next starts at the last commit that succeeded (at-least-once); a thrown
                    // error here would stop the consumer for good (kafkajs treats it as non-retriable).
                    runSync(
                      Effect.logWarning(`bus: committing or heartbeating after offset ${last} failed; the partition's next owner resumes at its last commit`, describe(error)).pipe(
                        Effect.annotateLogs({ topic, partition: batch.partition, group })
                      )
                    )
                    return
                  }
                }
              }
            })
        }

        const start = Effect.tryPromise({
          try: runConsumer,
          catch: (error) => unavailable(`starting a consumer in ${group} on ${topic}`, error)
        })
        const key = memberKey(group, topic)
        // Registered before it starts: its first batches may be handled (and committed) before `run` returns.
        yield* Effect.acquireRelease(
          Effect.zipRight(
            Effect.sync(() => members.set(key, (members.get(key) ?? new Set()).add(consumer))),
            start
          ),
          () =>
            Effect.gen(function* () {
              stopping = true
              members.get(key)?.delete(consumer)
              for (const fiber of inFlight) yield* Fiber.interrupt(fiber)
              yield* Effect.promise(() => consumer.disconnect().catch(() => undefined))
            })
        ).pipe(
          Effect.onError(() =>
            Effect.sync(() => members.get(key)?.delete(consumer)).pipe(Effect.zipRight(Effect.promise(() => consumer.disconnect().catch(() => undefined))))
          )
        )
      })

    // -------------------------------------------------------------------------------------------
    // Replay read: a throwaway group member, sought to the offset.

    const read = (topic: string, partition: number, offset: number, maxRecords: number): Effect.Effect<ReadonlyArray<BusRecord>, BusError> =>
      Effect.gen(function* () {
        const bad = badReadArguments(partition, offset, maxRecords, partitions)
        if (bad !== undefined) return yield* bad
        const end = (yield* endOffsets(topic)).get(partition) ?? 0
        const want = Math.min(maxRecords, MAX_BATCH_LIMIT, end - offset)
        if (want <= 0) return []
        return yield* call(`reading ${topic}/${partition} from ${offset}`, async () => {
          const reader = kafka.consumer({ groupId: `${options.clientId}-read-${randomUUID()}`, allowAutoTopicCreation: false, maxBytesPerPartition: options.maxBytesPerPartition, maxWaitTimeInMs: options.maxWaitMs })
          const out: Array<BusRecord> = []
          try {
            await reader.connect()
            await reader.subscribe({ topic, fromBeginning: true })
            await new Promise<void>((resolve, reject) => {
              const timer = setTimeout(() => reject(new Error(`no records within ${READ_DEADLINE_MS} ms`)), READ_DEADLINE_MS)
              reader
                .run({
                  autoCommit: false,
                  eachBatch: async ({ batch }) => {
                    if (batch.partition !== partition || out.length >= want) return
                    // Contiguous from `offset`: a fetch from before the seek may overlap the one after it.
                    for (const m of batch.messages) {
                      if (Number(m.offset) === offset + out.length && out.length < want) out.push(toRecord(topic, partition, m))
                    }
                    if (out.length >= want) {
                      clearTimeout(timer)
                      resolve()
                    }
                  }
                })
                .then(() => reader.seek({ topic, partition, offset: String(offset) }), reject)
            })
            return out
          } finally {
            await reader.disconnect().catch(() => undefined)
          }
        })
      })

    // -------------------------------------------------------------------------------------------

    const ping: Effect.Effect<void, BusError> = Effect.asVoid(call("describing the cluster", () => admin.describeCluster()))

    return {
      publish,
      subscribe: (subscription, onBatch) =>
        Effect.withSpan(subscribe(subscription, onBatch), "KafkaBus.subscribe", { attributes: { group: subscription.group, topic: subscription.topic } }),
      read: (topic, partition, offset, maxRecords) => Effect.withSpan(read(topic, partition, offset, maxRecords), "KafkaBus.read"),
      committed: (group, topic) => Effect.withSpan(committed(group, topic), "KafkaBus.committed"),
      commit: (group, topic, partition, nextOffset) => Effect.withSpan(commit(group, topic, partition, nextOffset), "KafkaBus.commit"),
      endOffsets,
      partitionFor: (_topic, key) => partitionForKey(key, partitions),
      partitions,
      ping
    } satisfies BusShape
  })

/** `Bus` on Kafka; the layer's scope owns the connections and the consumers. */
export const layer = (options: Partial<KafkaBusOptions> & Pick<KafkaBusOptions, "brokers">): Layer.Layer<Bus, BusError> => Layer.scoped(Bus, make(options))

export const KafkaBus = { make, layer, defaults } as const
