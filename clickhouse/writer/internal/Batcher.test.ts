/**
 * The shared writer buffer, on the test clock: flush by size, by time, by close; the buffer
 * bound and backpressure; retries, giving a batch back, and a bounded close.
 *
 * The flush callback here is the batcher's own input (what to do with a batch), not a stand-in
 * for a component: the writers pass ClickHouse inserts, exercised in test/integration.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope, TestClock } from "effect"
import { ClickHouseError } from "../../ClickHouseError.js"
import { type BatcherOptions, makeBatcher } from "./Batcher.js"

const base: BatcherOptions = {
  name: "test",
  batchRows: 3,
  flushIntervalMs: 1_000,
  maxBufferedRows: 6,
  flushAttemptsMax: 3,
  closeFlushAttemptsMax: 2,
  retryBaseMs: 10,
  retryMaxDelayMs: 40
}

const down = new ClickHouseError({ reason: "Unavailable", message: "down" })

/** A batcher whose flushes are recorded; `failing` makes the next flushes fail. */
const setup = (options: Partial<BatcherOptions> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const batches: Array<ReadonlyArray<number>> = []
    const control = { failing: 0, attempts: 0, gate: undefined as Deferred.Deferred<void> | undefined }
    const batcher = yield* makeBatcher<number>({ ...base, ...options }, (entries) =>
      Effect.gen(function* () {
        control.attempts++
        if (control.gate !== undefined) yield* Deferred.await(control.gate)
        if (control.failing > 0) {
          control.failing--
          return yield* down
        }
        batches.push(entries)
      })
    ).pipe(Scope.extend(scope))
    return { batcher, batches, control, close: Scope.close(scope, Exit.void) }
  })

/** Lets forked fibers run up to their next wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("Batcher", () => {
  it.effect("flushes full batches at once and the rest when the oldest entry is flushIntervalMs old", () =>
    Effect.gen(function* () {
      const { batcher, batches, close } = yield* setup()
      yield* batcher.offer([1, 2, 3, 4])
      yield* batcher.offer([5, 6, 7])
      yield* settle
      expect(batches).toEqual([[1, 2, 3], [4, 5, 6]])
      yield* TestClock.adjust("999 millis")
      yield* settle
      expect(batches.length).toBe(2)
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(batches).toEqual([[1, 2, 3], [4, 5, 6], [7]])
      const stats = yield* batcher.stats
      expect([stats.flushesBySize, stats.flushesByTime, stats.flushedRows, stats.bufferedRows]).toEqual([2, 1, 7, 0])
      yield* close
    })
  )

  it.effect("the time bound counts from the oldest buffered entry, not the newest", () =>
    Effect.gen(function* () {
      const { batcher, batches, close } = yield* setup()
      yield* batcher.offer([1])
      yield* TestClock.adjust("600 millis")
      yield* batcher.offer([2])
      yield* TestClock.adjust("400 millis")
      yield* settle
      expect(batches).toEqual([[1, 2]])
      yield* close
    })
  )

  it.effect("offerAndAwait returns only after its entries were flushed", () =>
    Effect.gen(function* () {
      const { batcher, batches, close } = yield* setup()
      const waiting = yield* Effect.fork(batcher.offerAndAwait([1, 2]))
      yield* settle
      expect(waiting.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(waiting)
      expect(batches).toEqual([[1, 2]])
      yield* close
    })
  )

  it.effect("retries a failing flush with backoff, then gives the batch back to offerAndAwait", () =>
    Effect.gen(function* () {
      const { batcher, batches, control, close } = yield* setup()
      control.failing = 2
      const ok = yield* Effect.fork(batcher.offerAndAwait([1, 2, 3]))
      yield* settle
      expect(control.attempts).toBe(1)
      yield* TestClock.adjust("10 millis") // first retry after 10 ms
      yield* settle
      expect(control.attempts).toBe(2)
      yield* TestClock.adjust("19 millis") // second after 20 ms more
      yield* settle
      expect(control.attempts).toBe(2)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(ok)
      expect(batches).toEqual([[1, 2, 3]])

      control.failing = 3 // = flushAttemptsMax
      const failed = yield* Effect.fork(batcher.offerAndAwait([4, 5, 6]))
      yield* settle
      yield* TestClock.adjust("100 millis")
      const exit = yield* Fiber.await(failed)
      expect(Exit.isFailure(exit)).toBe(true)
      const stats = yield* batcher.stats
      expect([stats.failedAttempts, stats.failedBatches, stats.bufferedRows]).toEqual([5, 1, 0])
      yield* close
    })
  )

  it.effect("bounds the buffer, counting the batch being flushed: offers wait at maxBufferedRows, in order", () =>
    Effect.gen(function* () {
      const { batcher, batches, control, close } = yield* setup({ batchRows: 3, maxBufferedRows: 6 })
      control.gate = yield* Deferred.make<void>()
      yield* batcher.offer([1, 2, 3, 4, 5, 6]) // the flusher takes [1,2,3] and blocks on the gate
      yield* settle
      let stats = yield* batcher.stats
      expect(stats.bufferedRows).toBe(6) // [1,2,3] is still held while it is written
      const big = yield* Effect.fork(batcher.offer([7, 8, 9])) // does not fit: waits
      yield* settle
      const small = yield* Effect.fork(batcher.offer([10])) // waits behind the big one (FIFO)
      yield* settle
      expect(big.unsafePoll()).toBeNull()
      expect(small.unsafePoll()).toBeNull()
      expect(yield* batcher.tryOffer([99])).toBe(false)
      stats = yield* batcher.stats
      expect([stats.bufferedRows, stats.offerWaits, stats.dropped]).toEqual([6, 2, 1])
      yield* Deferred.succeed(control.gate, undefined)
      control.gate = undefined
      yield* Fiber.join(big)
      yield* Fiber.join(small)
      yield* TestClock.adjust("1 second")
      yield* settle
      expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
      stats = yield* batcher.stats
      expect(stats.bufferedRowsHighWater).toBe(6)
      expect(stats.bufferedRows).toBe(0)
      yield* close
    })
  )

  it.effect("refuses an offer larger than the buffer bound and bad options", () =>
    Effect.gen(function* () {
      const { batcher, close } = yield* setup()
      const error = yield* Effect.flip(batcher.offer([1, 2, 3, 4, 5, 6, 7]))
      expect(error.reason).toBe("InvalidRequest")
      yield* close
      const bad = yield* Effect.flip(setup({ maxBufferedRows: 2 }))
      expect(bad.reason).toBe("InvalidRequest")
    })
  )

  it.effect("closing flushes what is buffered, with bounded attempts, and refuses later offers", () =>
    Effect.gen(function* () {
      const first = yield* setup()
      yield* first.batcher.offer([1, 2])
      yield* first.close
      expect(first.batches).toEqual([[1, 2]])
      expect((yield* first.batcher.stats).flushesByClose).toBe(1)
      expect((yield* Effect.flip(first.batcher.offer([3]))).reason).toBe("Unavailable")

      // ClickHouse down at close: two attempts (closeFlushAttemptsMax), then given up, not hung.
      const second = yield* setup({ flushAttemptsMax: undefined })
      second.control.failing = 1_000
      yield* second.batcher.offer([1])
      const closing = yield* Effect.fork(second.close)
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      expect(second.control.attempts).toBe(2)
      expect((yield* second.batcher.stats).abandonedAtClose).toBe(1)
    })
  )
})
