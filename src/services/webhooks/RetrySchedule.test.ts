import { describe, expect, it } from "vitest"
import { maxAttempts, nextAttemptAtMs, retryDelaysMs } from "./RetrySchedule.js"

describe("retry schedule (spec 6)", () => {
  it("waits 1, 5, 15, 30, 60, 120, 240 minutes; the 8th failed attempt is final", () => {
    expect(retryDelaysMs.map((ms) => ms / 60_000)).toEqual([1, 5, 15, 30, 60, 120, 240])
    expect(maxAttempts).toBe(8)
    let at = 0
    const times = [at]
    for (let attempts = 1; ; attempts++) {
      const next = nextAttemptAtMs(attempts, at)
      if (next === undefined) {
        expect(attempts).toBe(8)
        break
      }
      times.push((at = next))
    }
    expect(times.map((t) => t / 60_000)).toEqual([0, 1, 6, 21, 51, 111, 231, 471])
    // about 8 hours after the event
    expect(times.at(-1)! / 3_600_000).toBeCloseTo(7.85, 2)
    expect(nextAttemptAtMs(0, 0)).toBeUndefined()
  })
})
