/**
 * What both bus adapters enforce alike: names, integer arguments, the subscription batch bounds,
 * the redelivery backoff, and the errors for a bad argument or a closed bus.
 */
import { Cause, Effect, Schedule } from "effect"
import { BusError } from "../Bus.js"

/** Default and largest `maxBatch` of a subscription. */
export const DEFAULT_MAX_BATCH = 500
export const MAX_BATCH_LIMIT = 10_000
/** Redelivery and read/commit retries: 10 ms doubling, capped at 5 s between attempts, never giving up. */
export const redeliverySchedule = Schedule.union(Schedule.exponential("10 millis"), Schedule.spaced("5 seconds"))

/** A topic or group name: 1-249 of [A-Za-z0-9._-], not `.` or `..` (Kafka's rule). */
const NAME = /^[A-Za-z0-9._-]{1,249}$/
export const validName = (name: string): boolean => NAME.test(name) && name !== "." && name !== ".."

export const isNonNegativeInt = (n: number): boolean => Number.isSafeInteger(n) && n >= 0
export const isPositiveInt = (n: number): boolean => Number.isSafeInteger(n) && n > 0

export const invalid = (message: string): BusError => new BusError({ reason: "InvalidArgument", message, retryable: false })
export const closedError = (): BusError => new BusError({ reason: "Closed", message: "the bus is closed", retryable: false })

/** A partition outside 0..partitions-1, else undefined. */
const badPartition = (partition: number, partitions: number): BusError | undefined =>
  Number.isSafeInteger(partition) && partition >= 0 && partition < partitions ? undefined : invalid(`partition must be 0..${partitions - 1}, got ${partition}`)

/** The first bad argument of `read`, else undefined. */
export const badReadArguments = (partition: number, offset: number, maxRecords: number, partitions: number): BusError | undefined =>
  badPartition(partition, partitions) ??
  (isNonNegativeInt(offset) ? undefined : invalid(`offset must be a non-negative integer, got ${offset}`)) ??
  (isPositiveInt(maxRecords) ? undefined : invalid(`maxRecords must be a positive integer, got ${maxRecords}`))

/** The first bad argument of `commit` (before the end-offset check), else undefined. */
export const badCommitArguments = (partition: number, nextOffset: number, partitions: number): BusError | undefined =>
  badPartition(partition, partitions) ?? (isNonNegativeInt(nextOffset) ? undefined : invalid(`nextOffset must be a non-negative integer, got ${nextOffset}`))

/** A subscription's `maxBatch` (default DEFAULT_MAX_BATCH), or the refusal of one outside 1..MAX_BATCH_LIMIT. */
export const subscriptionMaxBatch = (maxBatch: number | undefined): number | BusError => {
  const n = maxBatch ?? DEFAULT_MAX_BATCH
  return isPositiveInt(n) && n <= MAX_BATCH_LIMIT ? n : invalid(`maxBatch must be 1..${MAX_BATCH_LIMIT}, got ${n}`)
}

/** Runs a subscription's `onRevoked` for a partition once, logging a failure. */
export const notifyRevoked = (onRevoked: (partition: number) => Effect.Effect<void, unknown>, partition: number): Effect.Effect<void> =>
  Effect.suspend(() => onRevoked(partition)).pipe(
    Effect.sandbox,
    Effect.catchAll((cause) => Effect.logWarning("bus: onRevoked failed", Cause.squash(cause)))
  )

/** Runs a subscription's `onAssigned` for a partition until it succeeds (redelivery backoff), logging each failure. */
export const notifyAssigned = (onAssigned: (partition: number) => Effect.Effect<void, unknown>, partition: number): Effect.Effect<void> =>
  Effect.suspend(() => onAssigned(partition)).pipe(
    Effect.sandbox,
    Effect.tapError((cause) => Effect.logWarning("bus: onAssigned failed; retrying before the partition is delivered", Cause.squash(cause))),
    Effect.retry(redeliverySchedule),
    Effect.orDie
  )
