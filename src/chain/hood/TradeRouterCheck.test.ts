/**
 * `tradeRouterMismatch`: the configured trade router is refused when the address has no code, is
 * not a router, or routes for another factory or SwapRouter; the message names the variable.
 */
import { describe, expect, it } from "vitest"
import { tradeRouterMismatch } from "./TradeRouterCheck.js"

const tradeRouter = "0x1111111111111111111111111111111111111111"
const factory = "0x2222222222222222222222222222222222222222"
const swapRouter = "0x3333333333333333333333333333333333333333"
const other = "0x4444444444444444444444444444444444444444"
const expected = { tradeRouter, factory, swapRouter } as const

describe("tradeRouterMismatch", () => {
  it("accepts a router with code whose factory and SwapRouter are the configured ones (any address case)", () => {
    expect(tradeRouterMismatch(expected, { code: "0x6080", factory: factory.toUpperCase().replace("0X", "0x") as `0x${string}`, swapRouter })).toBeUndefined()
  })

  it("refuses an address with no code, naming HOOD_TRADE_ROUTER_ADDRESS", () => {
    for (const code of [undefined, "0x"] as const) {
      const m = tradeRouterMismatch(expected, { code, factory: undefined, swapRouter: undefined })
      expect(m).toContain("HOOD_TRADE_ROUTER_ADDRESS")
      expect(m).toContain("no contract code")
    }
  })

  it("refuses a contract that is not a router (its immutables' calls reverted)", () => {
    expect(tradeRouterMismatch(expected, { code: "0x6080", factory: undefined, swapRouter })).toContain("is not a TradeRouter")
  })

  it("refuses a router of another factory, or of another SwapRouter, naming both variables", () => {
    const f = tradeRouterMismatch(expected, { code: "0x6080", factory: other, swapRouter })
    expect(f).toContain("HOOD_FACTORY_ADDRESS")
    expect(f).toContain(other)
    const s = tradeRouterMismatch(expected, { code: "0x6080", factory, swapRouter: other })
    expect(s).toContain("HOOD_SWAP_ROUTER_ADDRESS")
  })
})
