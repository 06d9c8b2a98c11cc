import { describe, expect, it } from "vitest"
import { walkPrice } from "./PythPublisher.js"

describe("the localnet publishers' price walk", () => {
  it("moves by the drawn basis points, exactly in bigint, and stays within half and twice the start", () => {
    const start = 15_000_000_000n
    expect(walkPrice(start, start, 50)).toBe(15_075_000_000n)
    expect(walkPrice(start, start, -50)).toBe(14_925_000_000n)
    expect(walkPrice(start, start, 0)).toBe(start)
    expect(walkPrice(7_510_000_000n, start, -50)).toBe(7_500_000_000n) // clamped at start / 2
    expect(walkPrice(29_990_000_000n, start, 50)).toBe(30_000_000_000n) // clamped at 2 · start
  })
})
