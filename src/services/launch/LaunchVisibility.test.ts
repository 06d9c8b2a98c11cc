import { describe, expect, it } from "vitest"
import { LaunchVisibility } from "./LaunchVisibility.js"

describe("LaunchVisibility", () => {
  it("holds only non-production launches; a promotion to production removes one; Hood mints compare lower-case", () => {
    const v = new LaunchVisibility()
    v.set("solana", "MintA", "hidden")
    v.set("hood", "0xAbC", "test")
    v.set("solana", "MintB", "production")
    expect(v.restricted("solana", "MintA")).toBe("hidden")
    expect(v.restricted("hood", "0xabc")).toBe("test")
    expect(v.restricted("solana", "MintB")).toBeUndefined()
    expect(v.restricted("solana", "mintA")).toBeUndefined()
    v.set("solana", "MintA", "production")
    expect(v.restricted("solana", "MintA")).toBeUndefined()
    expect(v.size).toBe(1)
  })

  it("is bounded: past maxEntries the oldest is forgotten (it then reads as production)", () => {
    const v = new LaunchVisibility(2)
    v.set("solana", "M1", "test")
    v.set("solana", "M2", "local")
    v.set("solana", "M3", "hidden")
    expect([v.restricted("solana", "M1"), v.restricted("solana", "M2"), v.restricted("solana", "M3")]).toEqual([undefined, "local", "hidden"])
    expect(v.size).toBe(2)
  })
})
