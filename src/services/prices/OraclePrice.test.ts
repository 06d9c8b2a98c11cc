/**
 * Judging an oracle's answer (spec: USD figures come from a price source; a stale or invalid price
 * is `PriceUnavailable`, which the routes answer `QUOTE_UNAVAILABLE` and caps treat as "no price",
 * failing closed). Time is the Effect `Clock` (TestClock here).
 */
import { Effect, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"
import { judgeObservation, type OracleObservation, oraclePriceSource } from "./OraclePrice.js"
import { fixedPriceSource, PriceUnavailable, type UsdPrice } from "./PriceSource.js"

const NOW = 1_790_000_000_000
const LIMITS = { maxAgeMs: 60_000, maxConfidenceBps: 200 }
const good: OracleObservation = { price: 16_325_000_000n, conf: 7_000_000n, exponent: -8, publishTimeMs: NOW - 1_000, trading: true }
const judge = (o: OracleObservation | undefined, nowMs = NOW) => judgeObservation("sol", "pyth:test", o, nowMs, LIMITS)
const reasonOf = (r: UsdPrice | PriceUnavailable) => (r instanceof PriceUnavailable ? r.reason : "ok")

describe("oracle prices", () => {
  it("a fresh, trading, tight price is the oracle's exact number: price · 10^exponent as raw and scale", () => {
    expect(judge(good)).toEqual({ asset: "sol", usdRaw: 16_325_000_000n, scale: 8, asOfMs: NOW - 1_000, source: "pyth:test" })
    expect(judge({ ...good, price: 3n, conf: 0n, exponent: 2 })).toMatchObject({ usdRaw: 300n, scale: 0 })
  })

  it("stale: published longer ago than the max age (or that far in the future) is PriceUnavailable stale", () => {
    expect(reasonOf(judge(good, good.publishTimeMs + 60_000))).toBe("ok")
    expect(reasonOf(judge(good, good.publishTimeMs + 60_001))).toBe("stale")
    expect(reasonOf(judge(good, good.publishTimeMs - 60_001))).toBe("stale")
  })

  it("invalid: not trading (partially verified), price ≤ 0, confidence wider than the bound, an absurd exponent", () => {
    expect(reasonOf(judge({ ...good, trading: false }))).toBe("invalid")
    expect(reasonOf(judge({ ...good, price: 0n }))).toBe("invalid")
    expect(reasonOf(judge({ ...good, price: -5n }))).toBe("invalid")
    // 200 bps of 163.25 is 3.265: exactly at the bound passes, one unit wider is refused.
    expect(reasonOf(judge({ ...good, conf: 326_500_000n }))).toBe("ok")
    expect(reasonOf(judge({ ...good, conf: 326_500_001n }))).toBe("invalid")
    expect(reasonOf(judge({ ...good, exponent: -19 }))).toBe("invalid")
  })

  it("nothing read yet is provider_failed", () => {
    expect(reasonOf(judge(undefined))).toBe("provider_failed")
  })

  it("the source reads time from the Clock, and assets without a feed come from the fixed prices", async () => {
    let latest: OracleObservation | undefined = { ...good, publishTimeMs: NOW }
    const source = oraclePriceSource({ sol: { name: "pyth:test", latest: () => latest } }, fixedPriceSource({ usdc: "1" }), LIMITS)
    const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e).pipe(Effect.provide(TestContext.TestContext)))
    const at = (ms: number) => Effect.zipRight(TestClock.setTime(ms), source.usd("sol"))
    const fresh = await run(at(NOW + 60_000))
    expect(fresh._tag === "Right" && fresh.right.usdRaw).toBe(16_325_000_000n)
    const stale = await run(at(NOW + 60_001))
    expect(stale._tag === "Left" && stale.left.reason).toBe("stale")
    latest = undefined
    const none = await run(at(NOW))
    expect(none._tag === "Left" && none.left.reason).toBe("provider_failed")
    const usdc = await run(source.usd("usdc"))
    expect(usdc._tag === "Right" && usdc.right.source).toBe("localnet-fixed")
  })
})
