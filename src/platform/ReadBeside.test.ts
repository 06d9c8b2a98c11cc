/**
 * `statusBeside` (a sent transaction's status, and its transaction read beside it once the stream
 * delivered it): the read goes out with the status only when delivered; its transaction is used
 * when it gave one, read again when it failed or the node did not hold it yet; a failed status
 * read fails the look and interrupts the read beside it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Either, Exit, Fiber, Option } from "effect"
import { statusBeside } from "./ReadBeside.js"

/** A read answering `answers` in turn (the last one repeated), counting its calls; an Error answer fails it. */
const scriptedRead = (answers: ReadonlyArray<string | null | Error>) => {
  let calls = 0
  const read = Effect.suspend(() => {
    const a = answers[Math.min(calls++, answers.length - 1)]!
    return a instanceof Error ? Effect.fail(a) : Effect.succeed(a)
  })
  return { read, calls: () => calls }
}

describe("statusBeside", () => {
  it.effect("delivered: the read runs beside the status (the status waits on it here) and its transaction is used", () =>
    Effect.gen(function* () {
      const readStarted = yield* Deferred.make<void>()
      let reads = 0
      const read = Effect.zipRight(Deferred.succeed(readStarted, undefined), Effect.sync(() => (reads++, "tx")))
      const status = Effect.as(Deferred.await(readStarted), "landed")
      const looked = yield* statusBeside(status, read, true)
      expect(looked.status).toBe("landed")
      expect(yield* looked.transaction).toBe("tx")
      expect(reads).toBe(1)
    })
  )

  it.effect("delivered, the node did not hold it yet (null), or the read failed: read again when asked", () =>
    Effect.gen(function* () {
      for (const first of [null, new Error("node busy")]) {
        const r = scriptedRead([first, "tx"])
        const looked = yield* statusBeside(Effect.succeed("landed"), r.read, true)
        expect(yield* looked.transaction).toBe("tx")
        expect(r.calls()).toBe(2)
      }
    })
  )

  it.effect("not delivered: the status alone; the read only when asked", () =>
    Effect.gen(function* () {
      const r = scriptedRead(["tx"])
      const looked = yield* statusBeside(Effect.succeed("pending"), r.read, false)
      expect(looked.status).toBe("pending")
      expect(r.calls()).toBe(0)
      expect(yield* looked.transaction).toBe("tx")
      expect(r.calls()).toBe(1)
    })
  )

  it.effect("delivered, the status read fails: the look fails and the read beside it is interrupted", () =>
    Effect.gen(function* () {
      const readStarted = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const read = Effect.zipRight(Deferred.succeed(readStarted, undefined), Effect.never).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      const status = Effect.zipRight(Deferred.await(readStarted), Effect.fail("status unavailable" as const))
      const fiber = yield* Effect.fork(statusBeside(status, read, true))
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined).toEqual(Option.some("status unavailable"))
      expect(yield* Deferred.isDone(interrupted)).toBe(true)
      // As the rails read it (`Effect.either`): the status's failure, a "not yet".
      const readStarted2 = yield* Deferred.make<void>()
      const again = yield* Effect.either(
        statusBeside(Effect.zipRight(Deferred.await(readStarted2), Effect.fail("status unavailable" as const)), Effect.zipRight(Deferred.succeed(readStarted2, undefined), Effect.never), true)
      )
      expect(again).toEqual(Either.left("status unavailable"))
    })
  )
})
