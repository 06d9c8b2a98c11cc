/**
 * The ordered publisher on the embedded bus: offers are published in offer order (each key's
 * order holds across topics and rounds), `barrier` resolves once everything offered before it is
 * on the bus, and past `maxPending` an offer is still taken (a drain cannot wait) and counted; on a
 * compacted topic a round publishes only each key's last record.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BusError, type BusShape } from "../../ingest/bus/Bus.js"
import * as EmbeddedBus from "../../ingest/bus/EmbeddedBus.js"
import * as TopicPublisher from "./TopicPublisher.js"

const bytes = (s: string) => new TextEncoder().encode(s)
const text = (b: Uint8Array) => new TextDecoder().decode(b)

describe("TopicPublisher", () => {
  it.scoped("publishes in offer order and its barrier waits for what was offered", () =>
    Effect.gen(function* () {
      const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 2 })
      const publisher = yield* TopicPublisher.make(bus, { maxPending: 3 })
      yield* Effect.sync(() => {
        publisher.offer("a", [{ key: "k", value: bytes("1") }, { key: "k", value: bytes("2") }])
        publisher.offer("b", [{ key: "k", value: bytes("x") }])
        // At the bound: 4 records pending with room for 3. Taken all the same, and counted.
        publisher.offer("a", [{ key: "k", value: bytes("3") }])
      })
      expect(publisher.stats()).toMatchObject({ offered: 4, pending: 4, pendingHighWater: 4, overflows: 1 })
      yield* publisher.barrier
      expect(publisher.stats()).toMatchObject({ offered: 4, published: 4, pending: 0, failures: 0 })
      const partition = bus.partitionFor("a", "k")
      expect((yield* bus.read("a", partition, 0, 10)).map((r) => text(r.value))).toEqual(["1", "2", "3"])
      expect((yield* bus.read("b", bus.partitionFor("b", "k"), 0, 10)).map((r) => text(r.value))).toEqual(["x"])
      // Nothing offered since: the barrier resolves at once.
      yield* publisher.barrier
    })
  )

  it.scoped("publishes only each key's last record of a round on a compacted topic, every record elsewhere", () =>
    Effect.gen(function* () {
      const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 1 })
      const publisher = yield* TopicPublisher.make(bus, { compactedTopics: ["snap"] })
      yield* Effect.sync(() => {
        publisher.offer("feed", [{ key: "f", value: bytes("d1") }])
        publisher.offer("snap", [{ key: "m1", value: bytes("m1-a") }, { key: "m2", value: bytes("m2-a") }])
        publisher.offer("feed", [{ key: "f", value: bytes("d2") }])
        publisher.offer("snap", [{ key: "m1", value: bytes("m1-b") }, { key: "m3", value: new Uint8Array(0) }])
      })
      yield* publisher.barrier
      expect(publisher.stats()).toMatchObject({ offered: 6, published: 6, pending: 0, superseded: 1 })
      expect((yield* bus.read("feed", 0, 0, 10)).map((r) => text(r.value))).toEqual(["d1", "d2"])
      expect((yield* bus.read("snap", 0, 0, 10)).map((r) => [r.key, text(r.value)])).toEqual([
        ["m2", "m2-a"],
        ["m1", "m1-b"],
        ["m3", ""]
      ])
      // A later round publishes a key again: compaction is within a round only.
      yield* Effect.sync(() => publisher.offer("snap", [{ key: "m1", value: bytes("m1-c") }]))
      yield* publisher.barrier
      expect((yield* bus.read("snap", 0, 3, 10)).map((r) => [r.key, text(r.value)])).toEqual([["m1", "m1-c"]])
    })
  )

  it.scoped("refuses a bound that is not a positive integer", () =>
    Effect.gen(function* () {
      const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 1 })
      for (const maxPending of [0, -1, 1.5]) expect((yield* Effect.exit(TopicPublisher.make(bus, { maxPending })))._tag).toBe("Failure")
    })
  )

  // Live clock: the publisher's retry waits 10 ms.
  it.scopedLive("a publish that fails after some of its records landed is resumed after them, and a topic done is not sent again", () =>
    Effect.gen(function* () {
      const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 1 })
      // The real bus, made to fail once as a sliced Kafka publish can: topic "b"'s first call lands
      // its first two records, then fails saying so.
      let failed = false
      const calls: Array<string> = []
      const flaky: BusShape = {
        ...bus,
        publish: (topic, messages) => {
          calls.push(`${topic}:${messages.map((m) => text(m.value)).join(",")}`)
          if (topic !== "b" || failed) return bus.publish(topic, messages)
          failed = true
          return Effect.zipRight(
            bus.publish(topic, messages.slice(0, 2)),
            Effect.fail(new BusError({ reason: "Unavailable", message: "the broker went away mid-publish", retryable: true, landed: 2 }))
          )
        }
      }
      const publisher = yield* TopicPublisher.make(flaky)
      publisher.offer("a", [{ key: "k", value: bytes("a1") }])
      publisher.offer("b", ["b1", "b2", "b3", "b4"].map((v) => ({ key: "k", value: bytes(v) })))
      yield* publisher.barrier.pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(JSON.stringify({ calls, stats: publisher.stats() })) }))
      expect(calls).toEqual(["a:a1", "b:b1,b2,b3,b4", "b:b3,b4"])
      expect(publisher.stats()).toMatchObject({ offered: 5, published: 5, failures: 1 })
      expect((yield* bus.read("a", 0, 0, 10)).map((r) => text(r.value))).toEqual(["a1"])
      expect((yield* bus.read("b", 0, 0, 10)).map((r) => text(r.value))).toEqual(["b1", "b2", "b3", "b4"])
    })
  )
})
