import { Effect, Ref, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"
import { IN_FLIGHT_SWEEP_MS, periodicPass, recoveryPass } from "./Recovery.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect.pipe(Effect.provide(TestContext.TestContext)))

describe("recovery passes", () => {
  it("runs the pass at once, then every IN_FLIGHT_SWEEP_MS, and a failed sweep does not stop the next", async () => {
    const calls = await run(
      Effect.scoped(
        Effect.gen(function* () {
          const n = yield* Ref.make(0)
          const pass = Effect.flatMap(Ref.updateAndGet(n, (x) => x + 1), (i) => (i === 2 ? Effect.fail("chain down") : Effect.succeed(i)))
          yield* recoveryPass({ what: "things", pass, started: (k) => `started ${k}`, swept: (k) => `swept ${k}` })
          const atStart = yield* Ref.get(n)
          yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS - 1)
          const beforeFirstSweep = yield* Ref.get(n)
          yield* TestClock.adjust(1)
          yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS)
          yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS)
          return [atStart, beforeFirstSweep, yield* Ref.get(n)]
        })
      )
    )
    // Start pass; none before the first period; the failing second call and two more after it.
    expect(calls).toEqual([1, 1, 4])
  })

  it("a failed start pass stops the start (the engine does not serve half-recovered)", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(recoveryPass({ what: "things", pass: Effect.fail("storage down"), started: () => "", swept: () => "" })).pipe(
        Effect.provide(TestContext.TestContext)
      )
    )
    expect(exit._tag).toBe("Failure")
  })

  it("the sweep ends with the scope that holds it", async () => {
    const calls = await run(
      Effect.gen(function* () {
        const n = yield* Ref.make(0)
        const pass = Effect.as(Ref.update(n, (x) => x + 1), 0)
        yield* Effect.scoped(recoveryPass({ what: "things", pass, started: () => "", swept: () => "" }))
        yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS * 3)
        return yield* Ref.get(n)
      })
    )
    expect(calls).toBe(1)
  })

  it("a periodic pass has no start pass: it runs first after IN_FLIGHT_SWEEP_MS, then every period, a failure not stopping the next", async () => {
    const calls = await run(
      Effect.scoped(
        Effect.gen(function* () {
          const n = yield* Ref.make(0)
          const pass = Effect.flatMap(Ref.updateAndGet(n, (x) => x + 1), (i) => (i === 1 ? Effect.fail("chain down") : Effect.succeed(i)))
          yield* periodicPass({ what: "things", pass, swept: (k) => `swept ${k}` })
          const atStart = yield* Ref.get(n)
          yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS)
          yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS)
          yield* TestClock.adjust(IN_FLIGHT_SWEEP_MS)
          return [atStart, yield* Ref.get(n)]
        })
      )
    )
    expect(calls).toEqual([0, 3])
  })
})
