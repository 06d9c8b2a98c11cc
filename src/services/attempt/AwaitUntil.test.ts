/**
 * `awaitUntil` on the Effect `Clock`: the deadline is the Schedule's, so `TestClock` moves it
 * without waiting; a failed read is "not yet", not the end of the wait.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Ref, TestClock } from "effect"
import { awaitUntil } from "./AwaitUntil.js"

describe("awaitUntil", () => {
  it.effect("a verdict that never comes ends the wait at the deadline (None), read every interval", () =>
    Effect.gen(function* () {
      const reads = yield* Ref.make(0)
      const fiber = yield* Effect.fork(awaitUntil(Ref.updateAndGet(reads, (n) => n + 1), () => false, { intervalMs: 100, deadlineMs: 1_000 }))
      yield* TestClock.adjust("999 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 millis")
      const out = yield* Fiber.join(fiber)
      expect(Option.isNone(out)).toBe(true)
      expect(yield* Ref.get(reads)).toBe(11)
    })
  )

  it.effect("a verdict before the deadline ends the wait with it; failed reads in between are retried", () =>
    Effect.gen(function* () {
      const reads = yield* Ref.make(0)
      const read = Effect.flatMap(Ref.updateAndGet(reads, (n) => n + 1), (n) => (n < 3 ? Effect.fail("node did not answer") : Effect.succeed(n)))
      const fiber = yield* Effect.fork(awaitUntil(read, (n) => n >= 5, { intervalMs: 100, deadlineMs: 1_000 }))
      yield* TestClock.adjust("400 millis")
      expect(yield* Fiber.join(fiber)).toEqual(Option.some(5))
    })
  )

  it.effect("a first read that is already the verdict does not wait", () =>
    Effect.gen(function* () {
      expect(yield* awaitUntil(Effect.succeed("landed"), (s) => s === "landed", { intervalMs: 100, deadlineMs: 1_000 })).toEqual(Option.some("landed"))
    })
  )
})
