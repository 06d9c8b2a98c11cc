/**
 * The `Bus` port's contract, run against both adapters: the embedded bus (members are consumers
 * of one in-process bus) and `KafkaBus` on librdkafka's mock cluster (each member its own client,
 * as separate processes would be). Per-key order and the port's partition for each key, commit
 * semantics in both modes, redelivery of what a stopped member left uncommitted, redelivery of a
 * failing batch, and a rebalance that hands a leaving member's partitions to the survivor from
 * their committed offsets.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, ExecutionStrategy, Exit, Queue, Ref, Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { type BusBatch, type BusError, type BusRecord, type BusShape, partitionForKey } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { KafkaBus } from "../../ingest/bus/KafkaBus.js"
import { eventuallyEffect } from "../support/eventually.js"
import { type KafkaBroker, noKafkaReason, skipKafka, startKafkaBroker } from "../support/kafkaBroker.js"

const PARTITIONS = 4
const enc = new TextEncoder()
const dec = new TextDecoder()
const bytes = (s: string): Uint8Array => enc.encode(s)
const text = (r: BusRecord): string => dec.decode(r.value)

/** Each test publishes to its own topic (the mock broker has them created up front). */
const TOPICS = ["order", "manual", "failing", "rebalance"] as const

interface Adapter {
  readonly name: string
  readonly skip: boolean
  readonly setup: () => Promise<void>
  readonly teardown: () => Promise<void>
  /** A bus client: the embedded adapter's one in-process bus, or a fresh Kafka client (another "process"). */
  readonly open: Effect.Effect<BusShape, BusError, Scope.Scope>
  /** How long a group takes to settle after a member joins or leaves. */
  readonly settleMs: number
}

const embedded = (): Adapter => {
  let shared: { bus: BusShape; scope: Scope.CloseableScope } | undefined
  return {
    name: "EmbeddedBus",
    skip: false,
    setup: async () => {
      const scope = Effect.runSync(Scope.make())
      const bus = await Effect.runPromise(EmbeddedBus.make({ partitions: PARTITIONS }).pipe(Scope.extend(scope)))
      shared = { bus, scope }
    },
    teardown: async () => {
      if (shared !== undefined) await Effect.runPromise(Scope.close(shared.scope, Exit.void))
    },
    open: Effect.suspend(() => Effect.succeed(shared!.bus)),
    settleMs: 5_000
  }
}

const kafka = (): Adapter => {
  let broker: KafkaBroker | undefined
  const skip = skipKafka()
  return {
    name: `KafkaBus on librdkafka's mock cluster${skip ? ` (${noKafkaReason})` : ""}`,
    skip,
    setup: async () => {
      broker = await startKafkaBroker({ topics: TOPICS.map((name) => ({ name, partitions: PARTITIONS })) })
    },
    teardown: async () => {
      await broker?.stop()
    },
    // The mock cannot serve an idempotent producer (docs/decisions.md, "Kafka in development and CI").
    open: Effect.suspend(() =>
      KafkaBus.make({ brokers: broker!.brokers, clientId: "contract", partitions: PARTITIONS, idempotent: false, sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 6_000 })
    ),
    settleMs: 30_000
  }
}

/** Takes from `queue` until `count` items arrived; fails after `timeoutMs`. */
const takeAtLeast = <A>(queue: Queue.Queue<A>, count: number, timeoutMs = 30_000) =>
  Effect.gen(function* () {
    const out: Array<A> = []
    while (out.length < count) out.push(...Chunk.toArray(yield* Queue.takeBetween(queue, 1, count - out.length)))
    return out
  }).pipe(Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => new Error(`timed out waiting for ${count} items`) }))

/** A member of `group`, in its own scope so a test can stop it. */
const member = <E>(
  adapter: Adapter,
  options: { group: string; topic: string; autoCommit?: boolean; onAssigned?: (partition: number) => Effect.Effect<void> },
  onBatch: (bus: BusShape, batch: BusBatch) => Effect.Effect<void, E>
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const bus = yield* adapter.open.pipe(Scope.extend(scope))
    yield* bus.subscribe({ ...options, fromBeginning: true }, (batch) => onBatch(bus, batch)).pipe(Scope.extend(scope))
    return { bus, stop: Scope.close(scope, Exit.void) }
  })

for (const adapter of [embedded(), kafka()]) {
  describe.skipIf(adapter.skip)(`Bus contract: ${adapter.name}`, () => {
    beforeAll(adapter.setup, 60_000)
    afterAll(adapter.teardown, 30_000)

    it.scopedLive("publishes in order per key to the port's partition for the key; a group sees each key's records in order and commits to the end", () =>
      Effect.gen(function* () {
        const bus = yield* adapter.open
        const topic = "order"
        const keys = Array.from({ length: 6 }, (_, i) => `solana:mint-${i}`)
        const acks = []
        for (let round = 0; round < 3; round++) {
          acks.push(...(yield* bus.publish(topic, Array.from({ length: 20 }, (_, i) => ({ key: keys[i % keys.length]!, value: bytes(`${keys[i % keys.length]}:${round * 20 + i}`) })))))
        }
        expect(acks.map((a) => a.partition)).toEqual(Array.from({ length: 60 }, (_, i) => partitionForKey(keys[i % 20 % keys.length]!, PARTITIONS)))
        for (let p = 0; p < PARTITIONS; p++) {
          const offsets = acks.filter((a) => a.partition === p).map((a) => a.offset)
          expect(offsets).toEqual(offsets.map((_, i) => i))
        }
        const ends = yield* bus.endOffsets(topic)
        for (let p = 0; p < PARTITIONS; p++) expect(ends.get(p)).toBe(acks.filter((a) => a.partition === p).length)

        const seen = yield* Queue.unbounded<BusRecord>()
        yield* member(adapter, { group: "readers", topic }, (_, batch) => Queue.offerAll(seen, batch.records))
        const got = yield* takeAtLeast(seen, 60)
        for (const key of keys) {
          const values = got.filter((r) => r.key === key).map(text)
          expect(values, key).toEqual(Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 20 % keys.length === keys.indexOf(key)).map((i) => `${key}:${i}`))
        }
        expect(got.every((r) => r.partition === partitionForKey(r.key, PARTITIONS) && r.topic === topic)).toBe(true)
        yield* eventuallyEffect(
          Effect.map(bus.committed("readers", topic), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) === end)),
          { what: "the group's commits to reach the end offsets", deadlineMs: adapter.settleMs, intervalMs: 20 }
        )
        const p0 = acks[0]!.partition
        expect(yield* bus.read(topic, p0, 0, 2)).toMatchObject([{ offset: 0 }, { offset: 1 }])
        const middle = yield* bus.read(topic, p0, 3, 100)
        expect(middle.map((r) => r.offset)).toEqual(Array.from({ length: ends.get(p0)! - 3 }, (_, i) => 3 + i))
        expect(middle.map(text)).toEqual(got.filter((r) => r.partition === p0 && r.offset >= 3).map(text))
        expect(yield* bus.read(topic, p0, ends.get(p0)!, 10)).toEqual([])
      })
    )

    it.scopedLive("autoCommit false: only the consumer's commit moves the offset; a member that stops before committing leaves the rest to be redelivered", () =>
      Effect.gen(function* () {
        const bus = yield* adapter.open
        const topic = "manual"
        const acks = yield* bus.publish(topic, Array.from({ length: 10 }, (_, i) => ({ key: "k", value: bytes(String(i)) })))
        const p = acks[0]!.partition
        const first = yield* Queue.unbounded<BusRecord>()
        const a = yield* member(adapter, { group: "manual", topic, autoCommit: false }, (_, batch) => Queue.offerAll(first, batch.records))
        expect((yield* takeAtLeast(first, 10)).map(text)).toEqual(Array.from({ length: 10 }, (_, i) => String(i)))
        expect((yield* bus.committed("manual", topic)).get(p) ?? 0).toBe(0)
        yield* a.bus.commit("manual", topic, p, 4)
        expect((yield* bus.committed("manual", topic)).get(p)).toBe(4)
        expect(yield* Effect.flip(a.bus.commit("manual", topic, p, 11))).toMatchObject({ reason: "InvalidArgument" })
        yield* a.stop

        const second = yield* Queue.unbounded<BusRecord>()
        yield* member(adapter, { group: "manual", topic, autoCommit: false }, (_, batch) => Queue.offerAll(second, batch.records))
        expect((yield* takeAtLeast(second, 6, adapter.settleMs)).map((r) => r.offset)).toEqual([4, 5, 6, 7, 8, 9])
      })
    )

    it.scopedLive("a failing onAssigned is retried before the partition is delivered; a failing onBatch gets the same records again and nothing is committed until it succeeds", () =>
      Effect.gen(function* () {
        const bus = yield* adapter.open
        const topic = "failing"
        const acks = yield* bus.publish(topic, [0, 1, 2].map((i) => ({ key: "k", value: bytes(String(i)) })))
        const p = acks[0]!.partition
        const attempts = yield* Ref.make<Array<ReadonlyArray<number>>>([])
        const committedWhileFailing = yield* Ref.make<Array<number>>([])
        const done = yield* Queue.unbounded<BusBatch>()
        const told: Array<string> = []
        const onAssigned = (partition: number) =>
          Effect.suspend(() => {
            if (partition !== p) return Effect.void
            told.push(told.length === 0 ? "failed" : "told")
            return told.length === 1 ? Effect.die(new Error("checkpoints not reachable yet")) : Effect.void
          })
        yield* member(adapter, { group: "failing", topic, onAssigned }, (own, batch) =>
          Effect.gen(function* () {
            told.push("batch")
            const n = (yield* Ref.getAndUpdate(attempts, (xs) => [...xs, batch.records.map((r) => r.offset)])).length
            if (n < 2) {
              const c = yield* Effect.orDie(own.committed("failing", topic))
              yield* Ref.update(committedWhileFailing, (xs) => [...xs, c.get(p) ?? 0])
              return yield* Effect.fail("handler not ready" as const)
            }
            yield* Queue.offer(done, batch)
          })
        )
        yield* takeAtLeast(done, 1, adapter.settleMs)
        expect(yield* Ref.get(attempts)).toEqual([
          [0, 1, 2],
          [0, 1, 2],
          [0, 1, 2]
        ])
        expect(yield* Ref.get(committedWhileFailing)).toEqual([0, 0])
        expect(told).toEqual(["failed", "told", "batch", "batch", "batch"])
        yield* eventuallyEffect(Effect.map(bus.committed("failing", topic), (c) => c.get(p) === 3), { what: "the commit after success", deadlineMs: 10_000, intervalMs: 20 })
      })
    )

    it.scopedLive("members split the partitions; a leaving member's partitions go to the other from their committed offsets, each owner told before its first batch, nothing lost", () =>
      Effect.gen(function* () {
        const bus = yield* adapter.open
        const topic = "rebalance"
        const seen = yield* Queue.unbounded<readonly [string, BusRecord]>()
        // What each member was told and handed, in order: ["assigned" | "batch", member, partition].
        const events: Array<readonly ["assigned" | "batch", string, number]> = []
        const join = (name: string) =>
          member(adapter, { group: "owners", topic, onAssigned: (p) => Effect.sync(() => void events.push(["assigned", name, p])) }, (_, batch) =>
            Effect.zipRight(
              Effect.sync(() => void events.push(["batch", name, batch.partition])),
              Queue.offerAll(seen, batch.records.map((r) => [name, r] as const))
            )
          )
        /** Every batch from `from` on (of `only`'s partitions, if given) came after its member was told of its partition at or after `since`. */
        const toldFirst = (from: number, since: number, only?: ReadonlyArray<number>) =>
          events
            .slice(from)
            .every(
              ([kind, name, p], i) =>
                kind !== "batch" || (only !== undefined && !only.includes(p)) || events.slice(since, from + i).some(([k, n, q]) => k === "assigned" && n === name && q === p)
            )
        let sent = 0
        const publishRound = (count: number) =>
          Effect.gen(function* () {
            const from = sent
            sent += count
            yield* bus.publish(topic, Array.from({ length: count }, (_, i) => ({ key: `mint-${(from + i) % 40}`, value: bytes(String(from + i)) })))
          })
        const allCommitted = Effect.gen(function* () {
          const ends = yield* bus.endOffsets(topic)
          const c = yield* bus.committed("owners", topic)
          return [...ends].every(([p, end]) => (c.get(p) ?? 0) === end)
        })
        const received: Array<readonly [string, BusRecord]> = []

        yield* join("a")
        const b = yield* join("b")
        // Until both members own partitions, a round can land on either (and a rebalance may redeliver).
        yield* eventuallyEffect(
          Effect.gen(function* () {
            const before = received.length
            yield* publishRound(40)
            yield* eventuallyEffect(
              Effect.gen(function* () {
                received.push(...Chunk.toArray(yield* Queue.takeAll(seen)))
                const distinct = new Set(received.map(([, r]) => `${r.partition}:${r.offset}`))
                return distinct.size >= sent
              }),
              { what: "a round to be delivered", deadlineMs: adapter.settleMs, intervalMs: 20 }
            )
            const latest = received.slice(before)
            return new Set(latest.map(([name]) => name)).size === 2
          }),
          { what: "both members to own partitions", deadlineMs: adapter.settleMs * 2, intervalMs: 0 }
        )
        yield* eventuallyEffect(allCommitted, { what: "commits of the rounds so far", deadlineMs: adapter.settleMs, intervalMs: 20 })

        // Settled: one round, each partition handled by exactly one member, both members busy.
        yield* publishRound(40)
        const settled = yield* takeAtLeast(seen, 40, adapter.settleMs)
        const owners = new Map<number, Set<string>>()
        for (const [name, r] of settled) owners.set(r.partition, (owners.get(r.partition) ?? new Set()).add(name))
        for (const names of owners.values()) expect(names.size).toBe(1)
        expect(new Set(settled.map(([name]) => name))).toEqual(new Set(["a", "b"]))
        yield* eventuallyEffect(allCommitted, { what: "commits of the settled round", deadlineMs: adapter.settleMs, intervalMs: 20 })
        expect(toldFirst(0, 0)).toBe(true)
        const bsPartitions = [...owners].filter(([, names]) => names.has("b")).map(([p]) => p)

        // b leaves: a takes its partitions and starts each at its committed offset (the end), so it
        // sees no earlier record; every new one arrives (a commit refused mid-rebalance may repeat
        // some: delivery is at-least-once).
        yield* b.stop
        const leftAt = events.length
        const start = yield* bus.endOffsets(topic)
        yield* publishRound(40)
        const after: Array<BusRecord> = []
        const distinct = new Set<string>()
        while (distinct.size < 40) {
          for (const [name, r] of yield* takeAtLeast(seen, 1, adapter.settleMs)) {
            expect(name).toBe("a")
            expect(r.offset).toBeGreaterThanOrEqual(start.get(r.partition)!)
            after.push(r)
            distinct.add(`${r.partition}:${r.offset}`)
          }
        }
        expect(distinct.size).toBe(40)
        // a was told of each partition b had before a's first batch of it.
        for (const p of bsPartitions) expect(events.slice(leftAt).some(([k, n, q]) => k === "assigned" && n === "a" && q === p), `partition ${p}`).toBe(true)
        expect(toldFirst(leftAt, leftAt, bsPartitions)).toBe(true)
      })
    )
  })
}
