import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RateLimiter } from "./RateLimiter.js"

describe("RateLimiter", () => {
  it("allows the limit within a minute and refuses the next with Retry-After", () => {
    const rl = new RateLimiter({ limit: 120 })
    for (let i = 0; i < 120; i++) expect(rl.hit("a", 1_000 + i).allowed).toBe(true)
    const refused = rl.hit("a", 2_000)
    expect(refused.allowed).toBe(false)
    // The window ends at 60 s; then the full minute must decay by one request (0.5 s) more.
    expect(refused.retryAfterSec).toBe(59)
    expect(rl.hit("a", 2_000 + 58_000).allowed).toBe(false)
    expect(rl.hit("a", 2_000 + 59_000).allowed).toBe(true)
    expect(rl.hit("b", 2_000).allowed).toBe(true)
  })

  it("does not let a burst at the window edge through twice", () => {
    const rl = new RateLimiter({ limit: 10 })
    for (let i = 0; i < 10; i++) expect(rl.hit("a", 59_900).allowed).toBe(true)
    // Just after the boundary the previous minute still weighs almost fully.
    expect(rl.hit("a", 60_100).allowed).toBe(false)
    // Half a minute later half of it has decayed.
    let allowed = 0
    for (let i = 0; i < 10; i++) if (rl.hit("a", 90_000).allowed) allowed++
    expect(allowed).toBe(5)
  })

  it("forgets a client after two idle windows", () => {
    const rl = new RateLimiter({ limit: 2 })
    rl.hit("a", 0)
    rl.hit("a", 1)
    expect(rl.hit("a", 2).allowed).toBe(false)
    expect(rl.hit("a", 120_000).allowed).toBe(true)
  })

  it("tracks at most maxKeys clients, evicting the least recently seen", () => {
    const rl = new RateLimiter({ limit: 1, maxKeys: 3 })
    for (const k of ["a", "b", "c"]) rl.hit(k, 0)
    rl.hit("a", 1) // refused but seen: a is now the most recent
    rl.hit("d", 2) // evicts b
    expect(rl.size).toBe(3)
    expect(rl.hit("a", 3).allowed).toBe(false)
    expect(rl.hit("b", 3).allowed).toBe(true) // b was evicted, starts fresh
  })

  it("never allows more than the limit in any window-long span", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 300 }), (gaps) => {
        const limit = 20
        const rl = new RateLimiter({ limit, windowMs: 10_000 })
        const allowedAt: number[] = []
        let now = 0
        for (const g of gaps) {
          now += g
          const d = rl.hit("k", now)
          if (d.allowed) allowedAt.push(now)
          else expect(d.retryAfterSec).toBeGreaterThanOrEqual(1)
        }
        // The sliding estimate is conservative: no aligned window holds more than the limit.
        const perWindow = new Map<number, number>()
        for (const t of allowedAt) perWindow.set(Math.floor(t / 10_000), (perWindow.get(Math.floor(t / 10_000)) ?? 0) + 1)
        for (const n of perWindow.values()) expect(n).toBeLessThanOrEqual(limit)
      })
    )
  })

  it("a client that waits Retry-After is allowed", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 400 }),
        (limit, gaps) => {
          const rl = new RateLimiter({ limit, windowMs: 60_000 })
          let now = 0
          for (const g of gaps) {
            now += g
            const d = rl.hit("k", now)
            if (!d.allowed) {
              now += d.retryAfterSec * 1000
              expect(rl.hit("k", now).allowed).toBe(true)
            }
          }
        }
      )
    )
  })
})
