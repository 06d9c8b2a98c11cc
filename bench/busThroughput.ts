/**
 * Embedded bus throughput with fsync per group commit (16 partitions, 64-byte values): batched
 * publishes from 16 publishers, one-record publishes from 2,000 publishers, then one group
 * consuming and committing everything from the start. Printed, never asserted (moved out of
 * ingest/bus/EmbeddedBus.test.ts, which keeps the bus's correctness tests).
 *
 * Run: `npx tsx bench/busThroughput.ts`.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Ref } from "effect"
import { make } from "../ingest/bus/EmbeddedBus.js"
import { eventuallyEffect } from "../test/support/eventually.js"

const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "curvestream-bus-bench-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

const program = Effect.gen(function* () {
  const dir = yield* tempDir
  const bus = yield* make({ dir })
  const value = new Uint8Array(64).fill(7)
  const total = 200_000
  const batch = 500
  const publishers = 16
  const t0 = performance.now()
  yield* Effect.forEach(
    Array.from({ length: publishers }, (_, p) => p),
    (p) =>
      Effect.forEach(
        Array.from({ length: total / publishers / batch }, (_, b) => b),
        (b) => bus.publish("bench", Array.from({ length: batch }, (_, i) => ({ key: `mint-${(p * 7919 + b * batch + i) % 1000}`, value }))),
        { discard: true }
      ),
    { concurrency: "unbounded", discard: true }
  )
  const batchedMs = performance.now() - t0

  const singles = 50_000
  const singlePublishers = 2000
  const t1 = performance.now()
  yield* Effect.forEach(
    Array.from({ length: singlePublishers }, (_, p) => p),
    (p) =>
      Effect.forEach(
        Array.from({ length: singles / singlePublishers }, (_, i) => i),
        (i) => bus.publish("bench-single", [{ key: `mint-${(p * 31 + i) % 1000}`, value }]),
        { discard: true }
      ),
    { concurrency: "unbounded", discard: true }
  )
  const singleMs = performance.now() - t1

  const received = yield* Ref.make(0)
  const t2 = performance.now()
  yield* bus.subscribe({ group: "bench", topic: "bench", fromBeginning: true, maxBatch: 2000 }, (b) => Ref.update(received, (n) => n + b.records.length))
  yield* eventuallyEffect(Effect.map(Ref.get(received), (n) => n >= total), { what: "consumption", deadlineMs: 60_000, intervalMs: 5 })
  const consumeMs = performance.now() - t2
  const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString("en-US")} records/s`
  console.log(
    [
      `bus throughput (fsync on, 16 partitions, 64-byte values):`,
      `  publish, ${publishers} publishers x ${batch}-record calls: ${total} in ${batchedMs.toFixed(0)} ms = ${rate(total, batchedMs)}`,
      `  publish, one record per call, ${singlePublishers} publishers: ${singles} in ${singleMs.toFixed(0)} ms = ${rate(singles, singleMs)}`,
      `  consume + commit from the start (files, one group): ${total} in ${consumeMs.toFixed(0)} ms = ${rate(total, consumeMs)}`
    ].join("\n")
  )
})

await Effect.runPromise(Effect.scoped(program))
