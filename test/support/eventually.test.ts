import { Effect, Fiber, TestClock } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { consistently, eventually, eventuallyEffect } from "./eventually.js"

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

describe("consistently", () => {
  it("holds over the whole span: checks at once, between, and once the span is over", async () => {
    const atMs: number[] = []
    const startMs = Date.now()
    const checks = await consistently(
      () => {
        atMs.push(Date.now() - startMs)
        return true
      },
      { what: "nothing", forMs: 60, intervalMs: 10 }
    )
    // It did not resolve before the span was over, and it checked several times on the way.
    expect(Date.now() - startMs).toBeGreaterThanOrEqual(60)
    expect(checks).toBe(atMs.length)
    expect(checks).toBeGreaterThanOrEqual(3)
    expect(atMs[0]).toBeLessThan(60)
    expect(atMs.at(-1)).toBeGreaterThanOrEqual(60)
    // A check that passes by returning nothing (an `expect` inside it) holds too.
    expect(await consistently(() => expect(1).toBe(1), { what: "an expect", forMs: 0 })).toBe(1)
  })

  it("fails at the first check that answers false, naming what broke and when", async () => {
    const startMs = Date.now()
    let checks = 0
    await expect(consistently(() => (++checks, Date.now() - startMs < 30), { what: "the standby stays quiet", forMs: 10_000, intervalMs: 5 })).rejects.toThrow(
      /^the standby stays quiet: stopped holding after \d+ ms \(check \d+; it had to hold 10000 ms\)$/
    )
    expect(Date.now() - startMs).toBeLessThan(5_000)
    expect(checks).toBeGreaterThanOrEqual(2)
  })

  it("breaking at the third check fails at once, naming what should have held and the detail", async () => {
    let checks = 0
    const startMs = Date.now()
    await expect(
      consistently(() => ++checks < 3, { what: "the standby sends nothing", forMs: 10_000, intervalMs: 1, detail: () => `sent at check ${checks}` })
    ).rejects.toThrow(/^the standby sends nothing: stopped holding after \d+ ms \(check 3; it had to hold 10000 ms\)\nsent at check 3$/)
    expect(checks).toBe(3)
    expect(Date.now() - startMs).toBeLessThan(5_000)
  })

  it("an async check holds over the span and fails on its first false", async () => {
    let checks = 0
    const startMs = Date.now()
    const held = await consistently(
      async () => {
        checks++
        await new Promise((resolve) => setTimeout(resolve, 1))
        return true
      },
      { what: "an async read stays put", forMs: 40, intervalMs: 5 }
    )
    expect(Date.now() - startMs).toBeGreaterThanOrEqual(40)
    expect(held).toBe(checks)
    expect(checks).toBeGreaterThanOrEqual(3)
    let n = 0
    await expect(consistently(async () => ++n !== 2, { what: "async quiet", forMs: 10_000, intervalMs: 1 })).rejects.toThrow(/^async quiet: stopped holding after \d+ ms \(check 2;/)
    // An async check that throws (a rejected `expect`) fails the wait with its own error.
    await expect(consistently(async () => expect(await Promise.resolve(1)).toBe(2), { what: "async expect", forMs: 10_000 })).rejects.toThrow(/expected 1 to be 2/)
  })

  it("a change just before the span ends is still seen (the last check runs once it is over)", async () => {
    const startMs = Date.now()
    await expect(consistently(() => Date.now() - startMs < 45, { what: "quiet", forMs: 50, intervalMs: 1_000 })).rejects.toThrow(/^quiet: stopped holding/)
  })

  it("a check that throws fails the wait with its error", async () => {
    let checks = 0
    await expect(
      consistently(
        () => {
          if (++checks === 3) expect("sent").toBe("nothing")
        },
        { what: "nothing sent", forMs: 10_000, intervalMs: 1 }
      )
    ).rejects.toThrow(/expected 'sent' to be 'nothing'/)
    expect(checks).toBe(3)
  })
})
