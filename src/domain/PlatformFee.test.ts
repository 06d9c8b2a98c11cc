import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ladderPlatformFeeRaw } from "../services/launch/atomic/PricingLadder.js"
import { platformFeeRaw } from "./PlatformFee.js"

describe("platformFeeRaw", () => {
  it("is the plan's bps rounded up, 10 % less (before rounding) for a referred account", () => {
    expect(platformFeeRaw(1_000_000n, 100n, false)).toBe(10_000n)
    expect(platformFeeRaw(1_000_000n, 100n, true)).toBe(9_000n)
    expect(platformFeeRaw(1_000_000n, 25n, true)).toBe(2_250n)
    expect(platformFeeRaw(1n, 25n, false)).toBe(1n) // rounded up: never free by splitting
    expect(platformFeeRaw(101n, 100n, true)).toBe(1n) // ceil(0.909)
    expect(platformFeeRaw(0n, 100n, true)).toBe(0n)
  })

  it("charges exactly what the atomic ladder's buy legs charge", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 128n }), fc.constantFrom(100n, 50n, 25n, 0n, 333n), fc.boolean(), (amount, bps, referred) => {
        expect(platformFeeRaw(amount, bps, referred)).toBe(ladderPlatformFeeRaw(amount, bps, referred))
      })
    )
  })
})
