import { describe, expect, it } from "vitest"
import { DefaultTierThresholds, type Entitlements, maxStatus, resolveTier } from "./Tier.js"

const free: Entitlements = { plan: "free", planExpiresAtMs: null, maxGrantExpiresAtMs: null, maxGrantSource: null }
const unit = 10n ** 6n
const t = DefaultTierThresholds

describe("tier resolution", () => {
  it("Pro by staking 500,000 or holding 1,000,000 platform-token units, exactly at the thresholds", () => {
    expect(resolveTier(free, { stakedRaw: 500_000n * unit, heldRaw: 0n }, t, 0)).toBe("pro")
    expect(resolveTier(free, { stakedRaw: 500_000n * unit - 1n, heldRaw: 0n }, t, 0)).toBe("free")
    expect(resolveTier(free, { stakedRaw: 0n, heldRaw: 1_000_000n * unit }, t, 0)).toBe("pro")
    expect(resolveTier(free, { stakedRaw: 499_999n * unit, heldRaw: 999_999n * unit }, t, 0)).toBe("free")
    expect(resolveTier(free, undefined, t, 0)).toBe("free")
  })
  it("max > pro > free; expired plans and grants do not count", () => {
    expect(resolveTier({ ...free, plan: "pro", maxGrantExpiresAtMs: 10 }, undefined, t, 5)).toBe("max")
    expect(resolveTier({ ...free, plan: "pro", maxGrantExpiresAtMs: 10 }, undefined, t, 10)).toBe("pro")
    expect(resolveTier({ ...free, plan: "max", planExpiresAtMs: 10 }, undefined, t, 11)).toBe("free")
  })
  it("Max status: expiry while Max, the latest lapse and its source afterwards", () => {
    expect(maxStatus({ ...free, plan: "max" }, 0)).toEqual({ maxTierExpiresAt: null, maxExpired: false })
    expect(maxStatus({ ...free, maxGrantExpiresAtMs: 50, maxGrantSource: "promo" }, 10)).toEqual({ maxTierExpiresAt: 50, maxExpired: false })
    expect(maxStatus({ ...free, plan: "max", planExpiresAtMs: 40, maxGrantExpiresAtMs: 30, maxGrantSource: "trial" }, 60)).toEqual({
      maxTierExpiresAt: null,
      maxExpired: true,
      maxExpiredAt: 40,
      maxExpiredSource: "subscription"
    })
    expect(maxStatus(free, 0)).toEqual({ maxTierExpiresAt: null, maxExpired: false })
  })
})
