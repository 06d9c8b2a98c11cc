/**
 * The spend gate's decision at its bounds: sells never refused and never held; the per-asset cap
 * at the unit on every rail; the txLimit window against bookings plus holds, refused on service
 * signing and on a linked trade, advisory on a linked dev buy; fail-closed without a price or
 * usage on `main` and `tee`, open on `linked` (when a hold weighs and the sweep: `test/integration/spendGate.test.ts`).
 */
import { describe, expect, it } from "vitest"
import { DAY_MS, utcDayStart } from "../keys/KeyRules.js"
import { decide, LIMIT_UNAVAILABLE_RETRY_AFTER_S, type SpendAttempt, type SpendKey, SpendRails } from "./SpendGate.js"

const NOW = Date.UTC(2026, 10, 25, 12)
const key = (o: Partial<SpendKey> = {}): SpendKey => ({ keyPrefix: "abcd1234", spendLimits: null, txLimit: null, ...o })
const buy = (o: Partial<SpendAttempt> = {}): SpendAttempt => ({ rail: "main", purpose: "trade", side: "buy", asset: "sol", amountRaw: 1_000n, usdMicros: 100n, ...o })
const solCap = [{ asset: "sol" as const, maxPerTxRaw: "1000" }]
const daily = { usdMicros: 1_000, reset: "daily" as const }

describe("SpendGate.decide", () => {
  it("a sell is never refused and takes no hold, whatever the caps and the window say", () => {
    for (const rail of SpendRails) {
      const d = decide(key({ spendLimits: solCap, txLimit: daily }), buy({ rail, side: "sell", amountRaw: 10n ** 30n, usdMicros: null }), null, NOW)
      expect(d).toEqual({ _tag: "Admitted", hold: false, advisory: null })
    }
  })

  it("the per-asset cap: amount plus fee at the cap passes, one unit above is refused on every rail, strict to this transaction", () => {
    for (const rail of SpendRails) {
      expect(decide(key({ spendLimits: solCap }), buy({ rail, amountRaw: 1_000n }), 0n, NOW)).toEqual({ _tag: "Admitted", hold: true, advisory: null })
      const d = decide(key({ spendLimits: solCap }), buy({ rail, amountRaw: 1_001n, purpose: "dev_buy" }), 0n, NOW)
      expect(d._tag === "Refused" ? d.error : undefined).toMatchObject({
        reason: "spend_limit_exceeded",
        retryable: false,
        details: { spendLimit: { limitSource: "key", keyPrefix: "abcd1234", asset: "sol", capDecimal: "0.000001", attemptedDecimal: "0.000001001" } }
      })
    }
    // A cap on another asset leaves this one uncapped; an asset outside the spend assets is never capped.
    expect(decide(key({ spendLimits: [{ asset: "usdc", maxPerTxRaw: "1" }] }), buy({ amountRaw: 10n ** 20n }), 0n, NOW)._tag).toBe("Admitted")
    expect(decide(key({ spendLimits: solCap }), buy({ asset: "wbtc", amountRaw: 10n ** 20n }), 0n, NOW)._tag).toBe("Admitted")
  })

  it("the txLimit window: used plus this spend at the limit passes, one micro-dollar above is refused with resetsAt", () => {
    expect(decide(key({ txLimit: daily }), buy({ usdMicros: 400n }), 600n, NOW)._tag).toBe("Admitted")
    const d = decide(key({ txLimit: daily }), buy({ usdMicros: 401n }), 600n, NOW)
    expect(d._tag === "Refused" ? d.error : undefined).toMatchObject({
      reason: "tx_limit_reached",
      retryable: true,
      details: { resetsAt: utcDayStart(NOW) + DAY_MS, usedUsdMicros: 600 }
    })
    const never = decide(key({ txLimit: { usdMicros: 1_000, reset: "never" } }), buy({ usdMicros: 401n }), 600n, NOW)
    expect(never._tag === "Refused" ? never.error : undefined).toMatchObject({ reason: "tx_limit_reached", retryable: false, details: { resetsAt: null } })
  })

  it("over the window: refused on main, tee and a linked trade; a linked dev buy is admitted and metered, the refusal advisory", () => {
    for (const rail of ["main", "tee"] as const) {
      for (const purpose of ["trade", "dev_buy"] as const) expect(decide(key({ txLimit: daily }), buy({ rail, purpose, usdMicros: 2_000n }), 0n, NOW)._tag).toBe("Refused")
    }
    expect(decide(key({ txLimit: daily }), buy({ rail: "linked", usdMicros: 2_000n }), 0n, NOW)._tag).toBe("Refused")
    const d = decide(key({ txLimit: daily }), buy({ rail: "linked", purpose: "dev_buy", usdMicros: 2_000n }), 0n, NOW)
    expect(d._tag).toBe("Admitted")
    expect(d._tag === "Admitted" ? { hold: d.hold, reason: d.advisory?.reason } : undefined).toEqual({ hold: true, reason: "tx_limit_reached" })
  })

  it("no price or unreadable usage with a USD cap: service signing fails closed (limit_unavailable, retryable), linked goes through", () => {
    for (const rail of ["main", "tee"] as const) {
      for (const [usd, used] of [[null, 0n], [100n, null]] as const) {
        const d = decide(key({ txLimit: daily }), buy({ rail, usdMicros: usd }), used, NOW)
        expect(d._tag === "Refused" ? d.error : undefined).toMatchObject({
          reason: "limit_unavailable",
          retryable: true,
          details: { reason: "limit_unavailable", retryAfter: LIMIT_UNAVAILABLE_RETRY_AFTER_S }
        })
      }
    }
    expect(decide(key({ txLimit: daily }), buy({ rail: "linked", usdMicros: null }), 0n, NOW)).toEqual({ _tag: "Admitted", hold: true, advisory: null })
    // Without a txLimit neither the price nor the usage matters.
    expect(decide(key(), buy({ usdMicros: null }), null, NOW)).toEqual({ _tag: "Admitted", hold: true, advisory: null })
  })
})
