import { Clock, Deferred, Effect, Exit, Fiber, Option, Ref, TestClock } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { AwaitTimedOut, awaitUntil, awaitVerdict } from "./AwaitUntil.js"

/** A poll that counts itself and answers its own count, noting the Clock time of each start. */
const counter = Effect.gen(function* () {
  const starts = yield* Ref.make<ReadonlyArray<number>>([])
  const poll = Effect.flatMap(Clock.currentTimeMillis, (nowMs) => Ref.modify(starts, (s) => [s.length + 1, [...s, nowMs]] as const))
  return { starts, poll }
})

describe("awaitUntil", () => {
  it.effect("answers the first poll that satisfies the condition, polls spaced by the interval on the Clock", () =>
    Effect.gen(function* () {
      const { starts, poll } = yield* counter
      const fiber = yield* Effect.fork(awaitUntil(poll, (n) => n >= 3, { what: "the third poll", timeoutMs: 1_000, intervalMs: 100 }))
      yield* TestClock.adjust("99 millis")
      expect(yield* Ref.get(starts)).toEqual([0])
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(starts)).toEqual([0, 100])
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(fiber)).toBe(3)
      expect(yield* Ref.get(starts)).toEqual([0, 100, 200])
    })
  )

  it.effect("a first answer that satisfies it ends the wait without a pause, even with no time left", () =>
    Effect.gen(function* () {
      const { starts, poll } = yield* counter
      expect(yield* awaitUntil(poll, (n) => n === 1, { what: "one poll", timeoutMs: 0, intervalMs: 100 })).toBe(1)
      expect(yield* Ref.get(starts)).toEqual([0])
    })
  )

  it.effect("narrows the answer by a refinement", () =>
    Effect.gen(function* () {
      const answers: ReadonlyArray<Option.Option<string>> = [Option.none(), Option.some("receipt")]
      let i = 0
      const found = yield* awaitUntil(
        Effect.sync(() => answers[i++]!),
        Option.isSome,
        { what: "a receipt", timeoutMs: 0, intervalMs: 0 }
      ).pipe(Effect.either)
      // Past the deadline after the first poll: the second one never runs.
      expect(found._tag).toBe("Left")
      expect(i).toBe(1)
      i = 0
      const some = yield* awaitUntil(Effect.sync(() => answers[i++]!), Option.isSome, { what: "a receipt", timeoutMs: 10, intervalMs: 0 })
      expect(some.value).toBe("receipt")
    })
  )

  it.effect("fails with AwaitTimedOut once a poll ends past the deadline, naming what, the bound and the polls", () =>
    Effect.gen(function* () {
      const { starts, poll } = yield* counter
      const fiber = yield* Effect.fork(awaitUntil(poll, () => false, { what: "the impossible", timeoutMs: 250, intervalMs: 100 }))
      yield* TestClock.adjust("200 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("100 millis")
      const exit = yield* Fiber.await(fiber)
      expect(exit).toEqual(Exit.fail(new AwaitTimedOut({ what: "the impossible", timeoutMs: 250, polls: 4 })))
      // Polls at 0, 100, 200 (before the deadline) and 300, the one that finds it passed: bounded.
      expect(yield* Ref.get(starts)).toEqual([0, 100, 200, 300])
      const error = Exit.isFailure(exit) ? Option.getOrThrow(Exit.causeOption(exit)) : undefined
      expect(String(error)).toContain("the impossible: not within 250 ms (4 polls)")
    })
  )

  it.effect("a poll that fails fails the wait at once, with its own error", () =>
    Effect.gen(function* () {
      let polls = 0
      const exit = yield* awaitUntil(
        Effect.suspend(() => (++polls < 2 ? Effect.succeed(false) : Effect.fail("node down" as const))),
        (ok) => ok,
        { what: "x", timeoutMs: 1_000, intervalMs: 0 }
      ).pipe(Effect.exit)
      expect(exit).toEqual(Exit.fail("node down"))
      expect(polls).toBe(2)
    })
  )

  it.effect("never cuts a poll by default: a slow poll ends, then the deadline is read", () =>
    Effect.gen(function* () {
      const ended = yield* Ref.make(0)
      const slow = Effect.zipRight(Effect.sleep("500 millis"), Ref.updateAndGet(ended, (n) => n + 1))
      const fiber = yield* Effect.fork(awaitUntil(slow, () => false, { what: "slow", timeoutMs: 100, intervalMs: 10 }))
      yield* TestClock.adjust("499 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.await(fiber)).toEqual(Exit.fail(new AwaitTimedOut({ what: "slow", timeoutMs: 100, polls: 1 })))
      expect(yield* Ref.get(ended)).toBe(1)
    })
  )

  it.effect("with interruptPoll the deadline interrupts the poll in flight", () =>
    Effect.gen(function* () {
      const ended = yield* Ref.make(0)
      const hangs = Effect.zipRight(Effect.sleep("1 hour"), Ref.updateAndGet(ended, (n) => n + 1))
      const fiber = yield* Effect.fork(awaitUntil(hangs, () => false, { what: "a hanging read", timeoutMs: 100, intervalMs: 10, interruptPoll: true }))
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.await(fiber)).toEqual(Exit.fail(new AwaitTimedOut({ what: "a hanging read", timeoutMs: 100, polls: 0 })))
      expect(yield* Ref.get(ended)).toBe(0)
    })
  )

  it("refuses an unbounded or negative timeout and interval", () => {
    const poll = Effect.succeed(true)
    expect(() => awaitUntil(poll, (b) => b, { what: "x", timeoutMs: Infinity, intervalMs: 10 })).toThrow(/timeoutMs must be a finite number/)
    expect(() => awaitUntil(poll, (b) => b, { what: "x", timeoutMs: -1, intervalMs: 10 })).toThrow(/timeoutMs/)
    expect(() => awaitUntil(poll, (b) => b, { what: "x", timeoutMs: 10, intervalMs: Number.NaN })).toThrow(/intervalMs/)
  })

  describe("awaitVerdict", () => {
    it.effect("a verdict that never comes ends the wait at the deadline (None), read every interval", () =>
      Effect.gen(function* () {
        const reads = yield* Ref.make(0)
        const fiber = yield* Effect.fork(awaitVerdict(Ref.updateAndGet(reads, (n) => n + 1), () => false, { what: "x", intervalMs: 100, timeoutMs: 1_000 }))
        yield* TestClock.adjust("999 millis")
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
        yield* TestClock.adjust("1 millis")
        expect(Option.isNone(yield* Fiber.join(fiber))).toBe(true)
        expect(yield* Ref.get(reads)).toBe(11)
      })
    )

    it.effect("a verdict before the deadline ends the wait with it; failed reads in between are retried", () =>
      Effect.gen(function* () {
        const reads = yield* Ref.make(0)
        const read = Effect.flatMap(Ref.updateAndGet(reads, (n) => n + 1), (n) => (n < 3 ? Effect.fail("node did not answer") : Effect.succeed(n)))
        const fiber = yield* Effect.fork(awaitVerdict(read, (n) => n >= 5, { what: "x", intervalMs: 100, timeoutMs: 1_000 }))
        yield* TestClock.adjust("400 millis")
        expect(yield* Fiber.join(fiber)).toEqual(Option.some(5))
      })
    )

    it.effect("a wake ends the pause early, once: the next read runs then, the later ones keep the interval", () =>
      Effect.gen(function* () {
        const { starts, poll } = yield* counter
        const woken = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(awaitVerdict(poll, (n) => n >= 4, { what: "x", intervalMs: 100, timeoutMs: 1_000, wake: Deferred.await(woken) }))
        yield* TestClock.adjust("30 millis")
        expect(yield* Ref.get(starts)).toEqual([0])
        yield* Deferred.succeed(woken, undefined)
        // The race's fibers and the read run (no Clock time passes).
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
        expect(yield* Ref.get(starts)).toEqual([0, 30])
        // The wake fired: the pauses are the interval again (it is not read twice).
        yield* TestClock.adjust("99 millis")
        expect(yield* Ref.get(starts)).toEqual([0, 30])
        yield* TestClock.adjust("1 millis")
        expect(yield* Ref.get(starts)).toEqual([0, 30, 130])
        yield* TestClock.adjust("100 millis")
        expect(yield* Fiber.join(fiber)).toEqual(Option.some(4))
        expect(yield* Ref.get(starts)).toEqual([0, 30, 130, 230])
      })
    )

    it.effect("with wakeCutsPoll a wake during a read cuts it and reads again at once; without, the read in flight ends first", () =>
      Effect.gen(function* () {
        for (const cut of [true, false]) {
          // The second read is slow (1 s); the third is the verdict.
          const reads = yield* Ref.make(0)
          const read = Effect.flatMap(Ref.updateAndGet(reads, (n) => n + 1), (n) => (n === 2 ? Effect.as(Effect.sleep("1 second"), n) : Effect.succeed(n)))
          const woken = yield* Deferred.make<void>()
          const fiber = yield* Effect.fork(
            awaitVerdict(read, (n) => n >= 3, { what: "x", intervalMs: 100, timeoutMs: 5_000, wake: Deferred.await(woken), wakeCutsPoll: cut })
          )
          yield* TestClock.adjust("100 millis") // the pause ends unwoken: the slow read starts
          yield* TestClock.adjust("50 millis")
          yield* Deferred.succeed(woken, undefined)
          for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
          if (cut) {
            expect(yield* Fiber.join(fiber)).toEqual(Option.some(3))
            expect(yield* TestClock.currentTimeMillis).toBe(150)
          } else {
            expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
            // The slow read ends (2, not the verdict) at 1,100 ms; the wake (fired meanwhile) ends the pause after it at once.
            yield* TestClock.adjust("950 millis")
            for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
            expect(yield* Fiber.join(fiber)).toEqual(Option.some(3))
            expect(yield* TestClock.currentTimeMillis).toBe(1_100)
          }
          expect(yield* Ref.get(reads)).toBe(3)
          yield* TestClock.setTime(0)
        }
      })
    )

    it.effect("a wake that never comes leaves the reads at the interval and the deadline as it was", () =>
      Effect.gen(function* () {
        const reads = yield* Ref.make(0)
        const fiber = yield* Effect.fork(awaitVerdict(Ref.updateAndGet(reads, (n) => n + 1), () => false, { what: "x", intervalMs: 100, timeoutMs: 1_000, wake: Effect.never }))
        yield* TestClock.adjust("999 millis")
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
        yield* TestClock.adjust("1 millis")
        expect(Option.isNone(yield* Fiber.join(fiber))).toBe(true)
        expect(yield* Ref.get(reads)).toBe(11)
      })
    )

    it.effect("a first read that is already the verdict does not wait", () =>
      Effect.gen(function* () {
        expect(yield* awaitVerdict(Effect.succeed("landed"), (s) => s === "landed", { what: "x", intervalMs: 100, timeoutMs: 1_000 })).toEqual(Option.some("landed"))
      })
    )
  })
})
