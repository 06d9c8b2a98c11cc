/**
 * An ordered publisher for what the actors hand to other processes (the read-model topics and
 * the signals): `offer` is synchronous (a shard calls it inside a drain), a fiber publishes what
 * was offered in offer order, and `barrier` waits until everything offered before it is
 * acknowledged by the bus, which the actors' offset committer waits on, so no `chain.events`
 * offset is committed before the snapshots and signals derived from the records it covers are
 * published (a `kill -9` between the two would otherwise lose them for good).
 *
 * Invariants:
 * - Order: offers are published in offer order; a round takes every pending offer and publishes
 *   them topic by topic in one call each, so each key's records keep their order.
 * - Never skipped: a failed publish is retried (10 ms doubling to 2 s, forever) with the records
 *   not yet acknowledged (a topic done, or a prefix the bus reports as landed, is not sent again)
 *   before anything newer; the bus's idempotence absorbs a retried duplicate of the failed request,
 *   and where it cannot, a duplicate is harmless: a replica applies the same market states again
 *   and the signal hub skips a signal id it has.
 * - Compacted topics (`compactedTopics`, default `market.snapshots`): a reader wants only each
 *   key's latest record (what Kafka's compaction keeps), so a round publishes only the last record
 *   of each key offered in it; the earlier ones count as published (`superseded`). Under load a
 *   round spans many drains and a busy market's state is sent once, not once per drain. Other
 *   topics (the feed, the signals) publish every record.
 * - Bounded: at most `maxPending` records wait; past it `offer` still accepts (a drain cannot
 *   wait) but counts an overflow, and the actors' committer, waiting on `barrier`, stops the
 *   consumer through its own bound (`commitQueueMax`), so routing stops until the publisher
 *   catches up. `pendingHighWater` says how far it got.
 */
import { Context, Effect, Layer, Schedule, type Scope } from "effect"
import { Bus, type BusError, type BusMessage, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { Waiters, Wakeup } from "../runtime/internal/Wakeup.js"

export interface TopicPublisherOptions {
  /** Records waiting to be published before `offer` counts an overflow (default 100,000). */
  readonly maxPending: number
  /** Topics where a round publishes only each key's last record (default `market.snapshots`). */
  readonly compactedTopics: ReadonlyArray<string>
}

export const topicPublisherDefaults: TopicPublisherOptions = { maxPending: 100_000, compactedTopics: [Topics.marketSnapshots] }

export interface TopicPublisherStats {
  readonly offered: number
  readonly published: number
  readonly pending: number
  readonly pendingHighWater: number
  readonly overflows: number
  readonly failures: number
  /** Records of a compacted topic left out because a later record of the same key was in the same round. */
  readonly superseded: number
}

export interface TopicPublisher {
  readonly offer: (topic: string, messages: ReadonlyArray<BusMessage>) => void
  /** Resolves once every record offered before the call is published. */
  readonly barrier: Effect.Effect<void>
  readonly stats: () => TopicPublisherStats
}

/** Retries of a failed publish: 10 ms doubling, capped at 2 s, forever (the committer waits meanwhile). */
const publishRetrySchedule = Schedule.union(Schedule.exponential("10 millis"), Schedule.spaced("2 seconds"))

/** Starts the publishing fiber in the current scope. */
export const make = (bus: BusShape, input: Partial<TopicPublisherOptions> = {}): Effect.Effect<TopicPublisher, never, Scope.Scope> =>
  Effect.gen(function* () {
    const options = { ...topicPublisherDefaults, ...input }
    if (!Number.isSafeInteger(options.maxPending) || options.maxPending < 1) return yield* Effect.dieMessage("TopicPublisher: maxPending must be a positive integer")
    let pending: Array<readonly [string, ReadonlyArray<BusMessage>]> = []
    let pendingRecords = 0
    let offered = 0
    let published = 0
    let pendingHighWater = 0
    let overflows = 0
    let failures = 0
    let superseded = 0
    const compacted = new Set(options.compactedTopics)
    const wake = new Wakeup()
    const done = new Waiters()

    const offer = (topic: string, messages: ReadonlyArray<BusMessage>): void => {
      if (messages.length === 0) return
      if (pendingRecords + messages.length > options.maxPending) overflows++
      pending.push([topic, messages])
      pendingRecords += messages.length
      offered += messages.length
      if (pendingRecords > pendingHighWater) pendingHighWater = pendingRecords
      wake.notify()
    }

    /** A round's records per topic in first-offer order; within a topic, offer order (so each key's order holds). */
    const group = (round: ReadonlyArray<readonly [string, ReadonlyArray<BusMessage>]>): ReadonlyArray<readonly [string, ReadonlyArray<BusMessage>]> => {
      const byTopic = new Map<string, Array<BusMessage>>()
      for (const [topic, messages] of round) {
        let list = byTopic.get(topic)
        if (list === undefined) byTopic.set(topic, (list = []))
        for (const m of messages) list.push(m)
      }
      return [...byTopic].map(([topic, messages]) => [topic, compacted.has(topic) ? latestPerKey(messages) : messages] as const)
    }

    /** Each key's last record, in the order of those last records (each key's order holds trivially). */
    const latestPerKey = (messages: ReadonlyArray<BusMessage>): ReadonlyArray<BusMessage> => {
      const last = new Map<string, number>()
      for (let i = 0; i < messages.length; i++) last.set(messages[i]!.key, i)
      if (last.size === messages.length) return messages
      superseded += messages.length - last.size
      return messages.filter((m, i) => last.get(m.key) === i)
    }

    /**
     * A round's topics in order. Each attempt (the retry runs it again) starts where the last one's
     * acknowledged records end: a topic done is not sent again, and a publish that failed after
     * some of its records landed (`BusError.landed`) resumes after them, so the next request is the
     * one that failed (what Kafka's idempotent producer needs to drop a resent batch the broker had
     * written).
     */
    const publishAll = (byTopic: ReadonlyArray<readonly [string, ReadonlyArray<BusMessage>]>): Effect.Effect<void, BusError> => {
      let topicAt = 0
      let recordAt = 0
      return Effect.suspend(() =>
        Effect.whileLoop({
          while: () => topicAt < byTopic.length,
          body: () => {
            const [topic, messages] = byTopic[topicAt]!
            return bus.publish(topic, recordAt === 0 ? messages : messages.slice(recordAt)).pipe(
              Effect.tapError((error) => Effect.sync(() => (recordAt += error.landed ?? 0)))
            )
          },
          step: () => {
            topicAt++
            recordAt = 0
          }
        })
      )
    }

    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          if (pending.length === 0) return yield* wake.wait
          const round = pending
          const count = pendingRecords
          pending = []
          pendingRecords = 0
          const byTopic = group(round)
          yield* publishAll(byTopic).pipe(
            Effect.tapError((error) =>
              Effect.zipRight(Effect.sync(() => failures++), Effect.logWarning(`actors: publishing ${count} read-model records failed; retrying`, error))
            ),
            Effect.retry(publishRetrySchedule),
            Effect.orDie
          )
          published += count
          done.release(published)
        })
      )
    )

    return {
      offer,
      barrier: Effect.suspend(() => done.await(offered, () => published)),
      stats: () => ({ offered, published, pending: pendingRecords, pendingHighWater, overflows, failures, superseded })
    } satisfies TopicPublisher
  })

/** The actors role's one publisher (market snapshots, the feed, signals), shared by its runtimes. */
export class ClusterPublisher extends Context.Tag("curvestream/ClusterPublisher")<ClusterPublisher, TopicPublisher>() {
  static readonly layer = (options: Partial<TopicPublisherOptions> = {}): Layer.Layer<ClusterPublisher, never, Bus> =>
    Layer.scoped(ClusterPublisher, Effect.flatMap(Bus, (bus) => make(bus, options)))
}
