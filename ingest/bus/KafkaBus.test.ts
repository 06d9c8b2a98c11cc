/**
 * What only the Kafka adapter does (the shared contract is `test/integration/busContract.test.ts`):
 * clear start-up failures, `ping`, refusals before anything is sent, and a member killed with
 * SIGKILL whose uncommitted records go to the next member once its session expires.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Queue } from "effect"
import { afterAll, beforeAll } from "vitest"
import { type BusRecord, partitionForKey } from "./Bus.js"
import { sendSlices } from "./internal/sendSlices.js"
import { KafkaBus, type KafkaBusOptions } from "./KafkaBus.js"
import { eventually } from "../../test/support/eventually.js"
import { type KafkaBroker, noKafkaReason, skipKafka, startKafkaBroker } from "../../test/support/kafkaBroker.js"

const skip = skipKafka()
let broker: KafkaBroker | undefined

// The mock cannot serve an idempotent producer (docs/decisions.md, "Kafka in development and CI").
const open = (options: Partial<KafkaBusOptions> = {}) =>
  KafkaBus.make({ brokers: broker!.brokers, clientId: "kafka-test", partitions: 4, idempotent: false, ...options })

describe.skipIf(skip)(`KafkaBus${skip ? ` (${noKafkaReason})` : ""}`, () => {
  beforeAll(async () => {
    broker = await startKafkaBroker({
      topics: [
        { name: "events", partitions: 4 },
        { name: "three", partitions: 3 },
        { name: "crash", partitions: 1 }
      ]
    })
  }, 60_000)
  afterAll(() => broker?.stop(), 30_000)

  it.scopedLive("fails to start against an unreachable broker, naming it, within its bounded retries", () =>
    Effect.gen(function* () {
      const startedMs = Date.now()
      const error = yield* Effect.flip(KafkaBus.make({ brokers: ["127.0.0.1:1"], partitions: 4, retries: 1, retryInitialMs: 50, connectionTimeoutMs: 500 }))
      expect(error).toMatchObject({ reason: "Unavailable", retryable: true })
      expect(error.message).toContain("127.0.0.1:1")
      expect(Date.now() - startedMs).toBeLessThan(10_000)
    })
  )

  it.scopedLive("refuses a topic that does not exist (auto-creation off) and one with another partition count, naming them", () =>
    Effect.gen(function* () {
      // Its own broker: the mock lists a topic marked missing in every all-topics metadata answer, failing other clients' pings.
      const withMissing = yield* Effect.acquireRelease(
        Effect.promise(() => startKafkaBroker({ topics: [{ name: "three", partitions: 3 }], missingTopics: ["absent"] })),
        (b) => Effect.promise(() => b.stop())
      )
      const bus = yield* KafkaBus.make({ brokers: withMissing.brokers, clientId: "kafka-test", partitions: 4, idempotent: false })
      const missing = yield* Effect.flip(bus.publish("absent", [{ key: "k", value: new Uint8Array(1) }]))
      expect(missing).toMatchObject({ reason: "UnknownTopic", retryable: false })
      expect(missing.message).toContain("absent")
      expect(yield* Effect.flip(Effect.scoped(bus.subscribe({ group: "g", topic: "absent" }, () => Effect.void)))).toMatchObject({ reason: "UnknownTopic" })
      const wrong = yield* Effect.flip(bus.endOffsets("three"))
      expect(wrong).toMatchObject({ reason: "InvalidArgument" })
      expect(wrong.message).toContain("three has 3 partitions")
    })
  )

  it.scopedLive("a publish past one batch's bound goes out in several sends whose acks and records keep the call's order", () =>
    Effect.gen(function* () {
      // 40 KiB a send: 30 records of 5,000 bytes over 4 partitions and one key's 10 more make several sends.
      const bus = yield* open({ maxRecordBytes: 40 * 1024 })
      const before = yield* bus.endOffsets("events")
      const messages = [
        ...Array.from({ length: 30 }, (_, i) => ({ key: `spread-${i}`, value: new Uint8Array(5_000).fill(i) })),
        ...Array.from({ length: 10 }, (_, i) => ({ key: "one", value: new Uint8Array(5_000).fill(100 + i) }))
      ]
      expect(sendSlices(messages.map((m) => m.key.length + m.value.byteLength), 40 * 1024).length).toBeGreaterThan(4)
      const acks = yield* bus.publish("events", messages)
      expect(acks.map((a) => a.partition)).toEqual(messages.map((m) => partitionForKey(m.key, 4)))
      // Per partition: offsets from the old end on, one apart, in call order; each record is the one acked.
      for (let p = 0; p < 4; p++) {
        const mine = acks.flatMap((a, i) => (a.partition === p ? [{ offset: a.offset, fill: messages[i]!.value[0] }] : []))
        expect(mine.map((a) => a.offset)).toEqual(mine.map((_, k) => (before.get(p) ?? 0) + k))
        const read = yield* bus.read("events", p, before.get(p) ?? 0, 100)
        expect(read.map((r) => [r.offset, r.value[0]])).toEqual(mine.map((a) => [a.offset, a.fill]))
      }
    })
  )

  it.scopedLive("pings the cluster; refuses bad names, partitions, offsets and oversized records before sending", () =>
    Effect.gen(function* () {
      const bus = yield* open({ maxRecordBytes: 100 })
      yield* bus.ping
      expect(bus.partitions).toBe(4)
      expect(bus.partitionFor("events", "solana:mint")).toBe(partitionForKey("solana:mint", 4))
      const reason = <A>(e: Effect.Effect<A, { reason: string }>) => Effect.map(Effect.flip(e), (err) => err.reason)
      const before = yield* bus.endOffsets("events")
      expect(yield* reason(bus.publish("bad/topic", [{ key: "k", value: new Uint8Array(1) }]))).toBe("InvalidArgument")
      // The bound weighs a record as a batch of one: key + value + the batch header (61) + its framing (21).
      // 1 + 17 + 82 = 100 fits; 1 + 18 + 82 = 101 does not, and nothing of the call is sent.
      expect(yield* reason(bus.publish("events", [{ key: "k", value: new Uint8Array(17) }, { key: "k", value: new Uint8Array(18) }]))).toBe("InvalidArgument")
      expect(yield* bus.endOffsets("events")).toEqual(before)
      expect(yield* bus.publish("events", [{ key: "k", value: new Uint8Array(17) }])).toHaveLength(1)
      expect(yield* reason(bus.read("events", 4, 0, 1))).toBe("InvalidArgument")
      expect(yield* reason(bus.read("events", 0, -1, 1))).toBe("InvalidArgument")
      expect(yield* reason(bus.commit("bad group", "events", 0, 0))).toBe("InvalidArgument")
      expect(yield* reason(Effect.scoped(bus.subscribe({ group: "g", topic: "events", maxBatch: 10_001 }, () => Effect.void)))).toBe("InvalidArgument")
    })
  )

  it.scopedLive("a member killed with SIGKILL: once its session expires, the next member gets everything after its last commit", () =>
    Effect.gen(function* () {
      const bus = yield* open({ partitions: 1 })
      yield* bus.publish("crash", Array.from({ length: 10 }, (_, i) => ({ key: "k", value: new TextEncoder().encode(String(i)) })))
      const child = spawn(
        process.execPath,
        ["--import", "tsx", path.resolve(import.meta.dirname, "../../test/support/kafkaConsumerChild.ts"), broker!.brokers.join(","), "crashers", "crash", "6"],
        { stdio: ["ignore", "pipe", "pipe"] }
      )
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
      yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
      yield* Effect.promise(() => eventually(() => /^C 0 6$/m.test(out), { what: "the child's commit at 6", deadlineMs: 30_000, detail: () => out }))
      expect(out).toMatch(/^B 0 0 9$/m)
      child.kill("SIGKILL")
      yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))

      expect((yield* bus.committed("crashers", "crash")).get(0)).toBe(6)
      const seen = yield* Queue.unbounded<BusRecord>()
      yield* bus.subscribe({ group: "crashers", topic: "crash", fromBeginning: true, autoCommit: false }, (batch) => Queue.offerAll(seen, batch.records))
      const got: Array<BusRecord> = []
      while (got.length < 4) {
        got.push(...Chunk.toArray(yield* Queue.takeBetween(seen, 1, 4 - got.length).pipe(Effect.timeoutFail({ duration: Duration.seconds(30), onTimeout: () => new Error("no redelivery") }))))
      }
      expect(got.map((r) => r.offset)).toEqual([6, 7, 8, 9])
    })
  )
})
