import { constants } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Exit, Fiber, FiberRef, HashMap, Logger, Option, Queue, Ref, Scope } from "effect"
import { Bus, type BusBatch, type BusError, type BusRecord, Topics } from "./Bus.js"
import { EmbeddedBus, type EmbeddedBusOptions, type EmbeddedBusShape, make } from "./EmbeddedBus.js"
import { eventuallyEffect } from "../../test/support/eventually.js"

const enc = new TextEncoder()
const dec = new TextDecoder()
const bytes = (s: string): Uint8Array => enc.encode(s)
const text = (r: BusRecord): string => dec.decode(r.value)

const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "curvestream-bus-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

/** Opens a bus in its own scope, so a test can close and reopen it. */
const openBus = (options: Partial<EmbeddedBusOptions>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const bus = yield* make(options).pipe(Scope.extend(scope))
    return { bus, close: Scope.close(scope, Exit.void) }
  })

const withBus = <A, E>(options: Partial<EmbeddedBusOptions>, use: (bus: EmbeddedBusShape) => Effect.Effect<A, E, Scope.Scope>) =>
  Effect.scoped(Effect.flatMap(make(options), use))

/** Collects log lines (level and message) for the effect it is provided to and the fibers it forks. */
const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${Array.isArray(message) ? message.map(String).join(" ") : String(message)}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Takes from `queue` until `count` items arrived; fails after `timeoutMs`. */
const takeAtLeast = <A>(queue: Queue.Queue<A>, count: number, timeoutMs = 10_000) =>
  Effect.gen(function* () {
    const out: Array<A> = []
    while (out.length < count) out.push(...Chunk.toArray(yield* Queue.takeBetween(queue, 1, count - out.length)))
    return out
  }).pipe(Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => new Error(`timed out waiting for ${count} items`) }))

const readAll = (bus: EmbeddedBusShape, topic: string, partition: number) =>
  Effect.gen(function* () {
    const out: Array<BusRecord> = []
    let offset = (yield* bus.startOffsets(topic)).get(partition) ?? 0
    while (true) {
      const batch = yield* bus.read(topic, partition, offset, 1000)
      if (batch.length === 0) return out
      out.push(...batch)
      offset = batch[batch.length - 1]!.offset + 1
    }
  })

const segmentFiles = (dir: string, topic: string, partition: number) =>
  Effect.promise(async () => (await fs.readdir(path.join(dir, topic, String(partition)))).filter((f) => f.endsWith(".log")).sort())

describe("EmbeddedBus (memory)", () => {
  it.scopedLive("acks consecutive offsets per partition, same key same partition, exact bytes on read", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 8 })
      const acks = yield* bus.publish("t", [
        { key: "a", value: bytes("a0") },
        { key: "b", value: bytes("b0") },
        { key: "a", value: bytes("a1") },
        { key: "a", value: new Uint8Array([0, 255, 7]) }
      ])
      const pa = bus.partitionFor("t", "a")
      const pb = bus.partitionFor("t", "b")
      expect(acks.map((a) => a.partition)).toEqual([pa, pb, pa, pa])
      expect([acks[0], acks[2], acks[3]].map((a) => a!.offset)).toEqual(pa === pb ? [0, 2, 3] : [0, 1, 2])
      const records = (yield* bus.read("t", pa, 0, 10)).filter((r) => r.key === "a")
      expect(records.map((r) => r.offset)).toEqual([acks[0]!.offset, acks[2]!.offset, acks[3]!.offset])
      expect(text(records[0]!)).toBe("a0")
      expect([...records[2]!.value]).toEqual([0, 255, 7])
      expect((yield* bus.endOffsets("t")).get(pa)).toBe(pa === pb ? 4 : 3)
      expect((yield* bus.endOffsets("never-published")).get(0)).toBe(0)
      expect(yield* bus.read("never-published", 0, 0, 10)).toEqual([])
      expect(yield* bus.read("t", pa, pa === pb ? 4 : 3, 10)).toEqual([])
    })
  )

  it.live("EmbeddedBus.layer provides the Bus port", () =>
    Effect.gen(function* () {
      const bus = yield* Bus
      expect(bus.partitions).toBe(16)
      yield* bus.ping
      const [ack] = yield* bus.publish(Topics.chainEvents, [{ key: "solana:mint", value: bytes("e") }])
      expect(ack).toEqual({ partition: bus.partitionFor(Topics.chainEvents, "solana:mint"), offset: 0 })
    }).pipe(Effect.provide(EmbeddedBus.layer()))
  )

  it.scopedLive("refuses bad names, partitions, offsets and sizes, appending nothing", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 4, maxRecordBytes: 100 })
      const reason = (e: Effect.Effect<unknown, BusError>) => Effect.flip(e).pipe(Effect.map((err) => err.reason))
      expect(yield* reason(bus.publish("bad/topic", [{ key: "k", value: bytes("v") }]))).toBe("InvalidArgument")
      expect(yield* reason(bus.publish("..", [{ key: "k", value: bytes("v") }]))).toBe("InvalidArgument")
      expect(yield* reason(bus.publish("t", [{ key: "k", value: new Uint8Array(99) }, { key: "k", value: new Uint8Array(101) }]))).toBe(
        "InvalidArgument"
      )
      expect((yield* bus.endOffsets("t")).get(bus.partitionFor("t", "k")) ?? 0).toBe(0)
      expect(yield* reason(bus.read("t", 4, 0, 1))).toBe("InvalidArgument")
      expect(yield* reason(bus.read("t", 0, -1, 1))).toBe("InvalidArgument")
      expect(yield* reason(bus.read("t", 0, 0, 0))).toBe("InvalidArgument")
      expect(yield* reason(bus.commit("g", "t", 0, 1))).toBe("InvalidArgument") // past the end offset 0
      expect(yield* reason(bus.commit("bad group", "t", 0, 0))).toBe("InvalidArgument")
      expect(yield* reason(Effect.scoped(bus.subscribe({ group: "g", topic: "t", maxBatch: 0 }, () => Effect.void)))).toBe("InvalidArgument")
      expect(yield* reason(Effect.scoped(bus.subscribe({ group: "g", topic: "t", maxBatch: 10_001 }, () => Effect.void)))).toBe("InvalidArgument")
      expect(yield* Effect.flip(make({ partitions: 0 }))).toMatchObject({ reason: "InvalidArgument" })
    })
  )

  it.scopedLive("delivers per partition in offset order, wakes on publish and commits after each batch", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 4 })
      const seen = yield* Queue.unbounded<BusRecord>()
      yield* bus.subscribe({ group: "g", topic: "t" }, (batch) => Queue.offerAll(seen, batch.records))
      const keys = ["m1", "m2", "m3", "m4", "m5"]
      for (let i = 0; i < 40; i++) yield* bus.publish("t", [{ key: keys[i % keys.length]!, value: bytes(`${keys[i % keys.length]}:${i}`) }])
      const got = yield* takeAtLeast(seen, 40)
      for (const key of keys) {
        const values = got.filter((r) => r.key === key).map(text)
        expect(values).toEqual(Array.from({ length: 8 }, (_, j) => `${key}:${j * 5 + keys.indexOf(key)}`))
      }
      const ends = yield* bus.endOffsets("t")
      yield* eventuallyEffect(Effect.map(bus.committed("g", "t"), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) === end)), { what: "commits to reach the end offsets", deadlineMs: 10_000, intervalMs: 5 })
    })
  )

  it.scopedLive("beforeDurable delivers an appended record while its group commit lingers; durable, commits and readers follow the disk", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      // A 300 ms linger holds every record appended-but-not-durable long enough to look at.
      const bus = yield* make({ dir, partitions: 1, flushIntervalMs: 300 })
      const early = yield* Queue.unbounded<BusBatch>()
      const late = yield* Queue.unbounded<BusRecord>()
      yield* bus.subscribe({ group: "early", topic: "t", beforeDurable: true }, (batch) => Queue.offer(early, batch))
      yield* bus.subscribe({ group: "late", topic: "t" }, (batch) => Queue.offerAll(late, batch.records))
      const publishing = yield* Effect.fork(bus.publish("t", [{ key: "k", value: bytes("a") }, { key: "k", value: bytes("b") }]))
      const [batch] = yield* takeAtLeast(early, 1)
      expect(batch!.records.map(text)).toEqual(["a", "b"])
      expect(batch!.durable).toBeDefined()
      // Delivered early: the publish has not resolved, the durable end has not moved, nothing is
      // committed past it and the ordinary consumer has not seen the records.
      expect(publishing.unsafePoll()).toBeNull()
      expect((yield* bus.endOffsets("t")).get(0)).toBe(0)
      expect((yield* bus.committed("early", "t")).get(0)).toBe(0)
      expect(yield* Queue.size(late)).toBe(0)
      // A manual commit past the durable end is refused.
      expect(yield* Effect.flip(bus.commit("early", "t", 0, 2))).toMatchObject({ reason: "InvalidArgument" })
      yield* batch!.durable!
      expect((yield* bus.endOffsets("t")).get(0)).toBe(2)
      expect(yield* Fiber.join(publishing)).toEqual([
        { partition: 0, offset: 0 },
        { partition: 0, offset: 1 }
      ])
      expect((yield* takeAtLeast(late, 2)).map(text)).toEqual(["a", "b"])
      yield* eventuallyEffect(Effect.map(bus.committed("early", "t"), (c) => c.get(0) === 2), { what: "the early group's commit after durability", deadlineMs: 10_000, intervalMs: 5 })
      // Once durable, later batches come from the durable log as before: no `durable` to wait on.
      const more = yield* Effect.fork(bus.publish("t", [{ key: "k", value: bytes("c") }]))
      const [next] = yield* takeAtLeast(early, 1)
      expect(next!.records.map(text)).toEqual(["c"])
      yield* Fiber.join(more)
      yield* next!.durable ?? Effect.void
      // Memory mode: appends are durable at once; batches carry no `durable`.
      const memory = yield* make({ partitions: 1 })
      const seen = yield* Queue.unbounded<BusBatch>()
      yield* memory.subscribe({ group: "g", topic: "t", beforeDurable: true }, (b) => Queue.offer(seen, b))
      yield* memory.publish("t", [{ key: "k", value: bytes("m") }])
      expect((yield* takeAtLeast(seen, 1))[0]!.durable).toBeUndefined()
    })
  )

  it.scopedLive("maxBatch bounds every batch; records stay contiguous", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 2 })
      yield* bus.publish("t", Array.from({ length: 25 }, (_, i) => ({ key: "k", value: bytes(String(i)) })))
      const batches = yield* Queue.unbounded<BusBatch>()
      yield* bus.subscribe({ group: "g", topic: "t", fromBeginning: true, maxBatch: 10 }, (batch) => Queue.offer(batches, batch))
      const got: Array<BusBatch> = []
      while (got.reduce((n, b) => n + b.records.length, 0) < 25) got.push(yield* Queue.take(batches))
      expect(got.map((b) => b.records.length)).toEqual([10, 10, 5])
      expect(got.flatMap((b) => b.records.map((r) => r.offset))).toEqual(Array.from({ length: 25 }, (_, i) => i))
    })
  )


  it.scopedLive("autoCommit false: later batches are delivered without a commit; only the consumer's commit moves the offset", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 1 })
      yield* bus.publish("t", Array.from({ length: 25 }, (_, i) => ({ key: "k", value: bytes(String(i)) })))
      const batches = yield* Queue.unbounded<BusBatch>()
      yield* bus.subscribe({ group: "g", topic: "t", fromBeginning: true, maxBatch: 10, autoCommit: false }, (batch) => Queue.offer(batches, batch))
      const got: Array<BusBatch> = []
      while (got.reduce((n, b) => n + b.records.length, 0) < 25) got.push(yield* Queue.take(batches))
      expect(got.map((b) => b.records.length)).toEqual([10, 10, 5])
      // Subscribing from the beginning commits the start position (0) and nothing since.
      expect((yield* bus.committed("g", "t")).get(0)).toBe(0)
      yield* bus.commit("g", "t", 0, 20)
      expect((yield* bus.committed("g", "t")).get(0)).toBe(20)
    })
  )
  it.scopedLive("a failing onBatch gets the same batch again (bounded backoff) and nothing is committed until it succeeds", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 1 })
      yield* bus.publish("t", [0, 1, 2].map((i) => ({ key: "k", value: bytes(String(i)) })))
      const attempts = yield* Ref.make<Array<ReadonlyArray<number>>>([])
      const committedWhileFailing = yield* Ref.make<Array<number | undefined>>([])
      const done = yield* Queue.unbounded<BusBatch>()
      yield* bus.subscribe({ group: "g", topic: "t", fromBeginning: true }, (batch) =>
        Effect.gen(function* () {
          const n = (yield* Ref.getAndUpdate(attempts, (a) => [...a, batch.records.map((r) => r.offset)])).length
          if (n < 2) {
            const c = yield* Effect.orDie(bus.committed("g", "t"))
            yield* Ref.update(committedWhileFailing, (a) => [...a, c.get(0)])
            return yield* Effect.fail("handler not ready" as const)
          }
          yield* Queue.offer(done, batch)
        })
      )
      yield* takeAtLeast(done, 1)
      expect(yield* Ref.get(attempts)).toEqual([
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2]
      ])
      expect(yield* Ref.get(committedWhileFailing)).toEqual([0, 0])
      yield* eventuallyEffect(Effect.map(bus.committed("g", "t"), (c) => c.get(0) === 3), { what: "the commit after success", deadlineMs: 10_000, intervalMs: 5 })
    })
  )

  it.scopedLive("a closing consumer scope stops a handler that keeps failing", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 1 })
      yield* bus.publish("t", [{ key: "k", value: bytes("x") }])
      const calls = yield* Ref.make(0)
      const scope = yield* Scope.make()
      yield* bus.subscribe({ group: "g", topic: "t", fromBeginning: true }, () => Effect.zipRight(Ref.update(calls, (n) => n + 1), Effect.fail("no"))).pipe(
        Scope.extend(scope)
      )
      yield* eventuallyEffect(Effect.map(Ref.get(calls), (n) => n >= 2), { what: "two attempts", deadlineMs: 10_000, intervalMs: 5 })
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("2 seconds"))
      expect((yield* bus.committed("g", "t")).get(0)).toBe(0)
    })
  )

  it.scopedLive("members of one group split the partitions and take over a leaving member's share", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 4 })
      const seen = yield* Queue.unbounded<readonly [string, BusRecord]>()
      const member = (name: string) =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          yield* bus.subscribe({ group: "g", topic: "t" }, (b) => Queue.offerAll(seen, b.records.map((r) => [name, r] as const))).pipe(Scope.extend(scope))
          return scope
        })
      yield* member("a")
      const bScope = yield* member("b")
      const publishMany = (from: number) =>
        Effect.forEach(Array.from({ length: 200 }, (_, i) => from + i), (i) => bus.publish("t", [{ key: `mint-${i % 50}`, value: bytes(String(i)) }]), {
          discard: true
        })
      const allCommitted = Effect.gen(function* () {
        const ends = yield* bus.endOffsets("t")
        const c = yield* bus.committed("g", "t")
        return [...ends].every(([p, end]) => c.get(p) === end)
      })
      yield* publishMany(0)
      const first = yield* takeAtLeast(seen, 200)
      const owners = new Map<number, Set<string>>()
      for (const [name, r] of first) owners.set(r.partition, (owners.get(r.partition) ?? new Set()).add(name))
      for (const names of owners.values()) expect(names.size).toBe(1)
      expect(new Set(first.map(([name]) => name))).toEqual(new Set(["a", "b"]))
      yield* eventuallyEffect(allCommitted, { what: "commits of the first round", deadlineMs: 10_000, intervalMs: 5 })

      yield* Scope.close(bScope, Exit.void)
      yield* publishMany(200)
      const second = yield* takeAtLeast(seen, 200)
      expect(second.every(([name]) => name === "a")).toBe(true)
      const all = [...first, ...second].map(([, r]) => `${r.partition}:${r.offset}`)
      expect(new Set(all).size).toBe(400)
      expect(yield* Queue.size(seen)).toBe(0)
    })
  )

  it.scopedLive("a member's onRevoked runs with its own fiber refs; the rebalancing member's fiber comes out of the rebalance with its refs unchanged", () =>
    Effect.gen(function* () {
      const bus = yield* make({ partitions: 4 })
      const who = FiberRef.unsafeMake("nobody")
      const told: Array<readonly [number, string, unknown]> = []
      const onRevoked = (partition: number) =>
        Effect.gen(function* () {
          const annotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
          told.push([partition, yield* FiberRef.get(who), HashMap.get(annotations, "member").pipe(Option.getOrUndefined)])
        })
      // Both members subscribe from this one fiber, each with its refs set (not scoped: a leak stays).
      yield* FiberRef.set(who, "a")
      yield* FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("member", "a"))
      yield* bus.subscribe({ group: "g", topic: "t", onRevoked }, () => Effect.void)
      yield* FiberRef.set(who, "b")
      yield* FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("member", "b"))
      // b joins: a rebalance on this fiber takes partitions 1 and 3 from a, telling a.
      yield* bus.subscribe({ group: "g", topic: "t", onRevoked }, () => Effect.void)
      expect(told).toEqual([
        [1, "a", "a"],
        [3, "a", "a"]
      ])
      expect(yield* FiberRef.get(who)).toBe("b")
      expect(HashMap.get(yield* FiberRef.get(FiberRef.currentLogAnnotations), "member")).toEqual(Option.some("b"))
      const revokedAnnotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
      expect(HashMap.has(revokedAnnotations, "partition")).toBe(false)
    })
  )

  it.scopedLive("memory retention drops the oldest records; a lagging group resumes at the log start with a warning", () =>
    Effect.gen(function* () {
      const logs = captureLogs()
      const bus = yield* make({ partitions: 1, retentionBytesPerPartition: 2000 })
      yield* bus.publish("t", [{ key: "k", value: new Uint8Array(10) }])
      yield* bus.commit("lagging", "t", 0, 1)
      for (let i = 0; i < 50; i++) yield* bus.publish("t", [{ key: "k", value: new Uint8Array(100) }])
      const start = (yield* bus.startOffsets("t")).get(0)!
      expect(start).toBeGreaterThan(1)
      expect((yield* bus.stats).partitions[0]!.storedBytes).toBeLessThanOrEqual(2000)
      const seen = yield* Queue.unbounded<BusRecord>()
      yield* bus.subscribe({ group: "lagging", topic: "t" }, (b) => Queue.offerAll(seen, b.records)).pipe(Effect.provide(logs.layer))
      const got = yield* takeAtLeast(seen, 51 - start)
      expect(got[0]!.offset).toBe(start)
      expect(logs.lines.some((l) => l.startsWith("WARN") && l.includes(`offsets 1..${start - 1} were deleted by retention`))).toBe(true)
    })
  )
})

describe("EmbeddedBus (files)", () => {
  it.scopedLive("publish, close, reopen: records, offsets file and end offsets survive", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const options = { dir, partitions: 4 }
      const first = yield* openBus(options)
      const acks = yield* first.bus.publish(
        "chain.events",
        Array.from({ length: 100 }, (_, i) => ({ key: `mint-${i % 7}`, value: bytes(`v${i}`) }))
      )
      yield* first.bus.commit("actors", "chain.events", acks[0]!.partition, 1)
      yield* first.close
      expect(yield* Effect.either(first.bus.publish("chain.events", [{ key: "x", value: bytes("x") }]))).toMatchObject({
        _tag: "Left",
        left: { reason: "Closed" }
      })
      const offsetsDir = path.join(dir, "chain.events", "_offsets")
      expect(yield* Effect.promise(() => fs.readdir(offsetsDir))).toEqual(["actors.json"])
      expect(yield* Effect.promise(() => fs.access(path.join(dir, ".lock")).then(() => true, () => false))).toBe(false)

      yield* withBus(options, (bus) =>
        Effect.gen(function* () {
          for (let i = 0; i < acks.length; i++) {
            const [r] = yield* bus.read("chain.events", acks[i]!.partition, acks[i]!.offset, 1)
            expect(r).toMatchObject({ key: `mint-${i % 7}`, offset: acks[i]!.offset })
            expect(text(r!)).toBe(`v${i}`)
          }
          expect(yield* bus.committed("actors", "chain.events")).toEqual(new Map([[acks[0]!.partition, 1]]))
          const ends = yield* bus.endOffsets("chain.events")
          expect([...ends.values()].reduce((a, b) => a + b, 0)).toBe(100)
          const more = yield* bus.publish("chain.events", [{ key: "mint-0", value: bytes("after") }])
          expect(more[0]!.offset).toBe(ends.get(more[0]!.partition))
        })
      )
    })
  )

  /** The octal `flags` of every descriptor this process holds on `file` (Linux's `/proc/self/fdinfo`). */
  const openFlagsOf = (file: string) =>
    Effect.promise(async () => {
      const out: Array<number> = []
      for (const fd of await fs.readdir("/proc/self/fd")) {
        const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => "")
        if (target !== file) continue
        const info = await fs.readFile(`/proc/self/fdinfo/${fd}`, "utf8").catch(() => "")
        const flags = /^flags:\s+([0-7]+)$/m.exec(info)?.[1]
        if (flags !== undefined) out.push(parseInt(flags, 8))
      }
      return out
    })

  it.scopedLive.skipIf(process.platform !== "linux")(
    "with fsync a segment is written O_DSYNC (durable when the write returns, no fdatasync after it); without fsync, not",
    () =>
      Effect.gen(function* () {
        for (const fsync of [true, false]) {
          const dir = yield* tempDir
          yield* withBus({ dir, partitions: 1, fsync }, (bus) =>
            Effect.gen(function* () {
              yield* bus.publish("t", [{ key: "k", value: bytes("v") }])
              const [segment] = yield* segmentFiles(dir, "t", 0)
              const flags = yield* openFlagsOf(yield* Effect.promise(() => fs.realpath(path.join(dir, "t", "0", segment!))))
              expect(flags.length).toBeGreaterThan(0)
              for (const f of flags) expect((f & constants.O_DSYNC) !== 0, `fsync ${fsync}: flags ${f.toString(8)}`).toBe(fsync)
              expect((yield* bus.read("t", 0, 0, 10)).map(text)).toEqual(["v"])
            })
          )
        }
      })
  )

  const tornTailCase = (name: string, damage: (file: string, size: number) => Promise<void>) =>
    it.scopedLive(`recovers a torn tail (${name}): truncates the bad frame, keeps everything before it`, () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const options = { dir, partitions: 1 }
        yield* withBus(options, (bus) =>
          Effect.forEach([0, 1, 2, 3, 4], (i) => bus.publish("t", [{ key: "k", value: bytes(`value-${i}`) }]), { discard: true })
        )
        const [segment] = yield* segmentFiles(dir, "t", 0)
        const file = path.join(dir, "t", "0", segment!)
        const sizeBefore = (yield* Effect.promise(() => fs.stat(file))).size
        const frameSize = sizeBefore / 5
        yield* Effect.promise(() => damage(file, sizeBefore))
        const logs = captureLogs()
        yield* withBus(options, (bus) =>
          Effect.gen(function* () {
            const records = yield* bus.read("t", 0, 0, 100)
            const kept = name === "garbage appended" ? 5 : 4
            expect(records.map(text)).toEqual(Array.from({ length: kept }, (_, i) => `value-${i}`))
            expect((yield* Effect.promise(() => fs.stat(file))).size).toBe(kept * frameSize)
            const [ack] = yield* bus.publish("t", [{ key: "k", value: bytes("next") }])
            expect(ack!.offset).toBe(kept)
          })
        ).pipe(Effect.provide(logs.layer))
        expect(logs.lines.some((l) => l.startsWith("WARN") && l.includes("truncated a torn tail"))).toBe(true)
        yield* withBus(options, (bus) =>
          Effect.map(bus.read("t", 0, 0, 100), (records) => expect(text(records[records.length - 1]!)).toBe("next"))
        )
      })
    )

  tornTailCase("partial last frame", (file, size) => fs.truncate(file, size - 3))
  tornTailCase("bad CRC in the last frame", async (file, size) => {
    const handle = await fs.open(file, "r+")
    await handle.write(Buffer.from([0xff]), 0, 1, size - 2)
    await handle.close()
  })
  tornTailCase("garbage appended", (file) => fs.appendFile(file, Buffer.from([0, 0, 0, 200, 1, 2, 3])))

  it.scopedLive("reads any offset of sealed segments after a restart (lazy sparse index) and frames larger than a read chunk", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const options = { dir, partitions: 1, segmentBytes: 4096, indexIntervalBytes: 512, tailCacheBytesPerPartition: 1 }
      const big = new Uint8Array(300 * 1024).map((_, i) => i % 251)
      yield* withBus(options, (bus) =>
        Effect.gen(function* () {
          for (let i = 0; i < 50; i++) {
            yield* bus.publish("t", Array.from({ length: 10 }, (_, j) => ({ key: "k", value: bytes(`r${i * 10 + j}`) })))
          }
          yield* bus.publish("t", [{ key: "k", value: big }, { key: "k", value: bytes("after-big") }])
          // The tail cache bound (1 byte here) still keeps the newest record, and only it.
          expect((yield* bus.stats).partitions[0]!.cachedRecords).toBe(1)
        })
      )
      expect((yield* segmentFiles(dir, "t", 0)).length).toBeGreaterThan(5)
      yield* withBus(options, (bus) =>
        Effect.gen(function* () {
          for (const offset of [0, 1, 123, 250, 311, 499]) {
            const [r] = yield* bus.read("t", 0, offset, 1)
            expect([r!.offset, text(r!)]).toEqual([offset, `r${offset}`])
          }
          const span = yield* bus.read("t", 0, 95, 300)
          expect(span.map((r) => r.offset)).toEqual(Array.from({ length: 300 }, (_, i) => 95 + i))
          const [bigRecord, after] = yield* bus.read("t", 0, 500, 2)
          expect(Buffer.from(bigRecord!.value).equals(Buffer.from(big))).toBe(true)
          expect(text(after!)).toBe("after-big")
        })
      )
    })
  )

  it.scopedLive("retention deletes the oldest whole segments; a lagging group resumes at the log start, logged", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const logs = captureLogs()
      const options = { dir, partitions: 1, segmentBytes: 1024, retentionBytesPerPartition: 3000, flushIntervalMs: 0 }
      yield* withBus(options, (bus) =>
        Effect.gen(function* () {
          yield* bus.publish("t", [{ key: "k", value: new Uint8Array(100) }, { key: "k", value: new Uint8Array(100) }])
          yield* bus.commit("lagging", "t", 0, 1)
          for (let i = 0; i < 60; i++) yield* bus.publish("t", [{ key: "k", value: new Uint8Array(100) }])
          const stats = (yield* bus.stats).partitions[0]!
          expect(stats.storedBytes).toBeLessThanOrEqual(3000)
          expect(stats.segments).toBe((yield* segmentFiles(dir, "t", 0)).length)
          expect(stats.logStartOffset).toBeGreaterThan(1)
          expect((yield* segmentFiles(dir, "t", 0))[0]).toBe(`${String(stats.logStartOffset).padStart(20, "0")}.log`)
          // Replay below the log start reads from the log start.
          const [first] = yield* bus.read("t", 0, 0, 1)
          expect(first!.offset).toBe(stats.logStartOffset)
        })
      )
      yield* withBus(options, (bus) =>
        Effect.gen(function* () {
          const start = (yield* bus.startOffsets("t")).get(0)!
          const seen = yield* Queue.unbounded<BusRecord>()
          yield* bus.subscribe({ group: "lagging", topic: "t" }, (b) => Queue.offerAll(seen, b.records))
          const got = yield* takeAtLeast(seen, 62 - start)
          expect(got.map((r) => r.offset)).toEqual(Array.from({ length: 62 - start }, (_, i) => start + i))
          expect(logs.lines.some((l) => l.startsWith("WARN") && l.includes(`offsets 1..${start - 1} were deleted by retention`))).toBe(true)
        })
      ).pipe(Effect.provide(logs.layer))
    })
  )

  it.scopedLive("backpressure at maxPendingBytes: publishers wait in order, the bound holds, nothing is dropped", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const bus = yield* make({ dir, partitions: 4, maxPendingBytes: 4096, flushIntervalMs: 5 })
      const publishers = 20
      const perPublisher = 10
      yield* Effect.forEach(
        Array.from({ length: publishers }, (_, p) => p),
        (p) => bus.publish("t", Array.from({ length: perPublisher }, (_, i) => ({ key: `pub-${p}`, value: bytes(`${p}:${i}:`.padEnd(300, ".")) }))),
        { concurrency: "unbounded", discard: true }
      )
      // One call larger than the whole budget is admitted chunk by chunk, in order.
      const large = yield* bus.publish("t", Array.from({ length: 50 }, (_, i) => ({ key: "large", value: bytes(`L${i}`.padEnd(300, ".")) })))
      expect(large.map((a) => a.offset)).toEqual(Array.from({ length: 50 }, (_, i) => large[0]!.offset + i))
      const stats = yield* bus.stats
      expect(stats.pendingBytesHighWater).toBeLessThanOrEqual(4096)
      expect(stats.publishWaits).toBeGreaterThan(0)
      expect(stats.pendingBytes).toBe(0)
      for (let p = 0; p < publishers; p++) {
        const partition = bus.partitionFor("t", `pub-${p}`)
        const mine = (yield* readAll(bus, "t", partition)).filter((r) => r.key === `pub-${p}`).map((r) => text(r).split(":")[1])
        expect(mine).toEqual(Array.from({ length: perPublisher }, (_, i) => String(i)))
      }
      expect(yield* Effect.flip(bus.publish("t", [{ key: "k", value: new Uint8Array(4096) }]))).toMatchObject({ reason: "InvalidArgument" })
    })
  )

  it.scopedLive("closing the scope with publishes in flight loses no acknowledged record", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const options = { dir, partitions: 4, maxPendingBytes: 64 * 1024, flushIntervalMs: 5 }
      const { bus, close } = yield* openBus(options)
      const acked: Array<readonly [string, number, number]> = []
      const publishers = yield* Effect.forEach(Array.from({ length: 30 }, (_, p) => p), (p) =>
        Effect.fork(
          Effect.forEach(
            Array.from({ length: 1000 }, (_, i) => i),
            (i) =>
              Effect.map(bus.publish("t", [{ key: `k${p}`, value: bytes(`${p}:${i}`) }]), ([ack]) => {
                acked.push([`${p}:${i}`, ack!.partition, ack!.offset])
              }),
            { discard: true }
          )
        )
      )
      yield* eventuallyEffect(Effect.sync(() => acked.length >= 300), { what: "some acknowledgements", deadlineMs: 10_000, intervalMs: 5 })
      yield* close
      const exits = yield* Effect.forEach(publishers, Fiber.await)
      expect(exits.every((e) => Exit.isSuccess(e) || JSON.stringify(e).includes("Closed"))).toBe(true)
      expect(exits.some(Exit.isFailure)).toBe(true)
      yield* withBus(options, (reopened) =>
        Effect.gen(function* () {
          for (const [value, partition, offset] of acked) {
            const [r] = yield* reopened.read("t", partition, offset, 1)
            expect(r && text(r)).toBe(value)
          }
        })
      )
    })
  )

  it.scopedLive("one live bus per directory; a second is refused until the first closes", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const first = yield* openBus({ dir })
      expect(yield* Effect.flip(openBus({ dir }))).toMatchObject({ reason: "Locked" })
      yield* first.close
      const second = yield* openBus({ dir })
      yield* second.bus.ping
      yield* second.close
      expect(yield* Effect.flip(second.bus.ping)).toMatchObject({ reason: "Closed" })
    })
  )

  it.scopedLive("refuses to open a topic written with another partition count", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* withBus({ dir, partitions: 4 }, (bus) => bus.publish("t", [{ key: "k", value: bytes("v") }]))
      expect(yield* Effect.flip(openBus({ dir, partitions: 8 }))).toMatchObject({ reason: "InvalidArgument" })
    })
  )
})
