import { Effect, Fiber, TestClock } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { eventually, eventuallyEffect } from "./eventually.js"

describe("eventually", () => {
  it("returns the first answer that is neither undefined nor false", async () => {
    let probes = 0
    const value = await eventually(() => (++probes < 3 ? undefined : { probes }), { what: "the third probe", intervalMs: 1 })
    expect(value).toEqual({ probes: 3 })
    let n = 0
    expect(await eventually(async () => ++n >= 2, { what: "a true", intervalMs: 1 })).toBe(true)
    // null and 0 are answers, not "not yet".
    expect(await eventually(() => null, { what: "null" })).toBeNull()
    expect(await eventually(() => 0, { what: "zero" })).toBe(0)
  })

  it("fails at the deadline naming what it awaited", async () => {
    await expect(eventually(() => false, { what: "the impossible", deadlineMs: 30, intervalMs: 5, detail: () => "engine log tail" })).rejects.toThrow(
      /^timed out after 30 ms \(\d+ probes\) waiting for the impossible\nengine log tail$/
    )
  })

  it("a probe that throws fails the wait at once", async () => {
    let probes = 0
    await expect(
      eventually(
        () => {
          probes++
          throw new Error("broken probe")
        },
        { what: "anything", deadlineMs: 10_000 }
      )
    ).rejects.toThrow("broken probe")
    expect(probes).toBe(1)
  })

  it.effect("eventuallyEffect polls on the Effect clock and fails at its deadline", () =>
    Effect.gen(function* () {
      let probes = 0
      const waiting = yield* Effect.fork(eventuallyEffect(Effect.sync(() => ++probes >= 4 && "ready"), { what: "four probes", intervalMs: 100 }))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(waiting)).toBe("ready")
      expect(probes).toBe(4)
      const never = yield* Effect.fork(Effect.flip(eventuallyEffect(Effect.succeed(false), { what: "never", deadlineMs: 1_000, intervalMs: 100 })))
      yield* TestClock.adjust("2 seconds")
      expect((yield* Fiber.join(never)).message).toMatch(/^timed out after 1000 ms \(\d+ probes\) waiting for never$/)
    })
  )
})
