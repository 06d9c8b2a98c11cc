/**
 * The bus port: a Kafka-shaped, partitioned, replayable log. Topics are split into a fixed number
 * of partitions; a message's key picks its partition (murmur2, Kafka's default partitioner), so
 * every message of one key is totally ordered by its offset. Consumers join a group, receive
 * batches per partition in offset order from the group's committed offset and commit after a
 * batch is handled: delivery is at-least-once, never skipping (except past retention, logged).
 *
 * Two adapters implement it: `EmbeddedBus` (in-process, optional file segments) and `KafkaBus`
 * (kafkajs). Both map a key to the same partition for the same partition count;
 * `test/integration/busContract.test.ts` runs the same contract against both.
 */
import { Context, type Effect, Schema, type Scope } from "effect"
import { murmur2, murmur2Ascii } from "./internal/murmur2.js"

export interface BusMessage {
  readonly key: string
  readonly value: Uint8Array
}

export interface BusRecord {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly key: string
  readonly value: Uint8Array
  readonly timestampMs: number
}

export interface PublishAck {
  readonly partition: number
  readonly offset: number
}

export interface BusBatch {
  readonly topic: string
  readonly partition: number
  readonly records: ReadonlyArray<BusRecord>
  /**
   * The offset after the batch when records were left out of it (`RetiredRanges`): a consumer
   * that commits by itself commits this. Absent: the last record's offset + 1.
   */
  readonly nextOffset?: number
  /**
   * Present when the batch was delivered before its records were durable (`beforeDurable`):
   * succeeds once they are, fails if they never will be (the write failed). Absent: durable already.
   */
  readonly durable?: Effect.Effect<void, BusError>
}

/**
 * Why a bus operation failed. `InvalidArgument`: a bad name, offset, partition or oversized
 * record (never retryable). `Closed`: the bus is shut down. `Locked`: another live process owns
 * the data directory. `Io`: the file system failed. `Corrupt`: stored bytes fail their checksum
 * outside a recoverable torn tail. `Unavailable`: the broker cannot be reached (Kafka adapter).
 * `UnknownTopic`: the topic does not exist and the broker does not create topics (Kafka adapter).
 */
export const BusErrorReason = Schema.Literal("InvalidArgument", "Closed", "Locked", "Io", "Corrupt", "Unavailable", "UnknownTopic")
export type BusErrorReason = typeof BusErrorReason.Type

export class BusError extends Schema.TaggedError<BusError>()("BusError", {
  reason: BusErrorReason,
  message: Schema.String,
  retryable: Schema.Boolean,
  /**
   * A failed `publish` that sent its records in several requests: how many of the call's records,
   * a prefix, the bus acknowledged before the failure. A retry should send only the rest: on
   * Kafka the failed request's records must be what the idempotent producer sends next, under the
   * sequence it rolled back to, so a broker that had written them drops them as duplicates.
   */
  landed: Schema.optional(Schema.Number)
}) {}

export interface SubscribeOptions {
  readonly group: string
  readonly topic: string
  /** Where a partition without a committed offset starts: the log start (true) or the end (false, default). */
  readonly fromBeginning?: boolean
  /** Most records in one batch (default 500, at most 10,000). */
  readonly maxBatch?: number
  /**
   * true (default): the bus commits a batch's offsets once `onBatch` succeeds, and delivers the
   * partition's next batch after that. false: the consumer commits with `commit` when it decides
   * (Kafka's `autoCommit: false`); the next batch is delivered as soon as `onBatch` returns, so a
   * consumer can keep applying while it makes earlier batches durable. Its commits must be
   * monotonic per partition and must not pass what it has made durable.
   */
  readonly autoCommit?: boolean
  /**
   * Told which partitions this member was just given (its first assignment, and each rebalance
   * that hands it a partition it did not own), one call per partition, after the partition's start
   * offset is fixed and before any of its batches is delivered; delivery of that partition waits
   * until it succeeds (a failure is retried with the redelivery backoff). A consumer that keeps
   * state per key reloads the partition's here: the previous owner may have moved it on, and what
   * it made durable covers at least up to the offset delivery starts from.
   */
  readonly onAssigned?: (partition: number) => Effect.Effect<void, unknown>
  /**
   * Told which partitions a rebalance took from this member (one call per partition) while it
   * stays subscribed: a member leaving (its scope closing) is not told. Best effort and after
   * the fact: a batch delivered before may still be in the consumer's hands, and another member
   * may already be reading the partition; a consumer drops what it held for the partition here
   * (what it writes of it must stay fenced by its own means). A failure is logged, not retried.
   */
  readonly onRevoked?: (partition: number) => Effect.Effect<void, unknown>
  /**
   * true: records may be delivered as soon as they are appended, before they are durable, with
   * `batch.durable` to wait on (an in-process adapter can overlap a consumer's work with the
   * publish's fsync; an adapter whose records are durable when readable ignores it). The consumer
   * must make nothing it derives from such a batch durable (checkpoints, commits, writes elsewhere)
   * before `durable` succeeds: after a crash those records may be gone and published again. With
   * `autoCommit` the bus waits for it before committing. Default false.
   */
  readonly beforeDurable?: boolean
  /**
   * true: the group is this consumer's alone and its offsets are never stored (the embedded bus
   * keeps them in memory; it writes no offsets file). It starts where `fromBeginning` says on
   * every start. For a consumer of its own per process that derives nothing durable (e.g.
   * `ChainArrivals`), with `autoCommit: false`. Kafka ignores it: a group that commits nothing
   * stores no offsets there either. Default false.
   */
  readonly ephemeral?: boolean
}

export interface BusShape {
  /** Appends in order per key; resolves once durable (flushed per the fsync policy). Same key → same partition. */
  readonly publish: (topic: string, messages: ReadonlyArray<BusMessage>) => Effect.Effect<ReadonlyArray<PublishAck>, BusError>
  /** Starts a consumer in `group`: delivers batches per partition in offset order from the group's committed offset
   *  (or earliest/latest when none), commits after `onBatch` succeeds. Runs in the scope; interrupted with it. A failing
   *  onBatch is retried with bounded backoff (the batch is redelivered, never skipped). */
  readonly subscribe: <E, R>(
    options: SubscribeOptions,
    onBatch: (batch: BusBatch) => Effect.Effect<void, E, R>
  ) => Effect.Effect<void, BusError, R | Scope.Scope>
  /** Replay: reads up to maxRecords starting at offset (inclusive). */
  readonly read: (topic: string, partition: number, offset: number, maxRecords: number) => Effect.Effect<ReadonlyArray<BusRecord>, BusError>
  /** partition → next offset to consume, for the partitions the group has committed. */
  readonly committed: (group: string, topic: string) => Effect.Effect<ReadonlyMap<number, number>, BusError>
  readonly commit: (group: string, topic: string, partition: number, nextOffset: number) => Effect.Effect<void, BusError>
  /** partition → the offset the next published record will get (every partition is listed). */
  readonly endOffsets: (topic: string) => Effect.Effect<ReadonlyMap<number, number>, BusError>
  readonly partitionFor: (topic: string, key: string) => number
  readonly partitions: number
  /** Health for /readyz. */
  readonly ping: Effect.Effect<void, BusError>
}

export class Bus extends Context.Tag("curvestream/Bus")<Bus, BusShape>() {}

/**
 * The bus topics (docs/architecture.md, "Roles"). `chain.events`: the ingesters' events, key
 * `chain:mint`. The cluster roles' read-model topics, written by the actors and followed by the
 * API replicas: `market.snapshots` (key `chain:mint`, each market's latest state, compacted),
 * `market.feed` (every record keyed `feed`, so one partition holds them all in one order: each
 * record is one actors drain's changed markets, or part of them in order past 256 KiB) and
 * `signals` (key `chain:asset`).
 */
export const Topics = {
  chainEvents: "chain.events",
  marketSnapshots: "market.snapshots",
  marketFeed: "market.feed",
  signals: "signals"
} as const

const utf8 = new TextEncoder()

/**
 * Kafka's default partitioner for a keyed message (Java client and kafkajs alike):
 * `toPositive(murmur2(utf8(key))) % partitions`, where toPositive masks the sign bit.
 */
export const partitionForKey = (key: string, partitions: number): number =>
  ((murmur2Ascii(key) ?? murmur2(utf8.encode(key))) & 0x7fffffff) % partitions
