import { describe, expect, it } from "vitest"
import { AgentLaunches } from "./AgentLaunches.js"

describe("AgentLaunches", () => {
  it("answers attributions and counts an account's markets that exist", () => {
    const r = new AgentLaunches(10)
    r.add("solana", "MintA", "acct-1")
    r.add("hood", "0xabc", "acct-1")
    r.add("solana", "MintB", "acct-2")
    expect(r.has("solana", "MintA")).toBe(true)
    expect(r.has("hood", "MintA")).toBe(false)
    expect(r.countOf("acct-1", () => true)).toBe(2)
    expect(r.countOf("acct-1", (chain) => chain === "solana")).toBe(1)
    expect(r.countOf("acct-3", () => true)).toBe(0)
    // A repeat is one attribution.
    expect(r.add("solana", "MintA", "acct-1")).toBeUndefined()
    expect(r.size).toBe(3)
  })

  it("at the bound forgets the oldest attribution and says which", () => {
    const r = new AgentLaunches(2)
    expect(r.add("solana", "M1", "a")).toBeUndefined()
    expect(r.add("solana", "M2", "b")).toBeUndefined()
    expect(r.add("solana", "M3", "a")).toEqual({ chain: "solana", mint: "M1" })
    expect(r.size).toBe(2)
    expect(r.has("solana", "M1")).toBe(false)
    expect(r.countOf("a", () => true)).toBe(1)
    expect(r.countOf("b", () => true)).toBe(1)
  })

  it("refuses a bound that is not a positive integer", () => {
    expect(() => new AgentLaunches(0)).toThrow(RangeError)
  })
})
