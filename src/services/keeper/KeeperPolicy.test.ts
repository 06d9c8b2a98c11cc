/**
 * Migration schedule states (spec 3.6, keeper side):
 *
 *   (completed) --discovered--> Pending(0) --failed--> Pending(n) ... --failed x maxAttempts--> Delayed
 *                                    \--succeeded--> Done               \--succeeded--> Done
 *
 * discovered → Pending: "picks up a completed curve at once"; Pending → Pending: "backs off";
 * Pending → Delayed: "gives up after maxAttempts"; Pending → Done: "a success is final".
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { backoffMs, DefaultKeeperPolicy, discovered, failed, isDue, nextWakeMs, succeeded, worstCaseLastAttemptMs } from "./KeeperPolicy.js"

const p = DefaultKeeperPolicy

describe("keeper schedule", () => {
  it("picks up a completed curve at once", () => {
    const s = discovered(1_000)
    expect(isDue(s, 1_000)).toBe(true)
    expect(isDue(s, 999)).toBe(false)
  })

  it("backs off 15 s, 30 s, 60 s, 120 s and caps", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffMs(p, n))).toEqual([15_000, 30_000, 60_000, 120_000, 120_000, 120_000])
    let s = discovered(0)
    s = failed(p, s, 0, "rpc down")
    expect(s).toEqual({ _tag: "Pending", attempts: 1, nextAttemptAtMs: 15_000 })
    expect(isDue(s, 14_999)).toBe(false)
    s = failed(p, s, 15_000, "rpc down")
    expect(s).toEqual({ _tag: "Pending", attempts: 2, nextAttemptAtMs: 45_000 })
  })

  it("gives up after maxAttempts, keeping the last error", () => {
    let s = discovered(0)
    for (let i = 0; i < p.maxAttempts; i++) s = failed(p, s, i, `e${i}`)
    expect(s).toEqual({ _tag: "Delayed", attempts: p.maxAttempts, gaveUpAtMs: p.maxAttempts - 1, lastError: `e${p.maxAttempts - 1}` })
    expect(failed(p, s, 99, "later")).toBe(s)
    expect(isDue(s, Number.MAX_SAFE_INTEGER)).toBe(false)
  })

  it("a success is final", () => {
    const s = succeeded(failed(p, discovered(0), 0, "x"))
    expect(s).toEqual({ _tag: "Done", attempts: 2 })
    expect(failed(p, s, 1, "y")).toBe(s)
    expect(isDue(s, 10 ** 12)).toBe(false)
  })

  it("meets the 10-minute target with the defaults", () => {
    expect(worstCaseLastAttemptMs(p)).toBeLessThanOrEqual(10 * 60_000)
  })

  it("wakes for the earliest retry before the next sweep", () => {
    const pending = failed(p, discovered(0), 0, "x") // retry at 15 s
    expect(nextWakeMs(p, 0, [pending])).toBe(15_000)
    expect(nextWakeMs(p, 0, [])).toBe(120_000)
    expect(nextWakeMs(p, 0, [succeeded(pending)])).toBe(120_000)
  })

  it("attempts only grow and retries are always in the future", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 10 ** 9 })), { maxLength: 20 }), (steps) => {
        let s = discovered(0)
        let now = 0
        for (const [ok, dt] of steps) {
          now += dt
          const before = s.attempts
          const next = ok ? succeeded(s) : failed(p, s, now, "e")
          expect(next.attempts).toBeGreaterThanOrEqual(before)
          if (next._tag === "Pending" && next !== s) expect(next.nextAttemptAtMs).toBeGreaterThan(now)
          if (next._tag === "Delayed") expect(next.attempts).toBe(p.maxAttempts)
          s = next
        }
      })
    )
  })
})
