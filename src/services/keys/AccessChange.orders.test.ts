/**
 * The access plan's limit-order effect (spec 2.1 `effects`, 3.2): narrowing away `swap:write`
 * reports the key's open orders and warns OPEN_ORDERS_STRANDED; nothing is reported when the key
 * has none, when `swap:write` stays, or when the key widens.
 */
import { describe, expect, it } from "vitest"
import { planAccessChange } from "./AccessChange.js"
import { LevelScopes } from "./Scopes.js"

const facts = (openLimitOrders: number) => ({
  boundTeeWallets: { count: 0, sample: [] },
  walletScope: "all" as const,
  openSignClaims: 0,
  txLimit: null,
  spendLimits: null,
  openLimitOrders
})
const codes = (p: ReturnType<typeof planAccessChange>) => p.warnings.map((w) => w.code)

describe("planAccessChange: open limit orders", () => {
  it("narrowing away swap:write reports the open orders and warns OPEN_ORDERS_STRANDED", () => {
    const p = planAccessChange(LevelScopes.readwrite, "read", facts(3))
    expect(p.effects.openLimitOrders).toBe(3)
    expect(codes(p)).toContain("OPEN_ORDERS_STRANDED")
  })

  it("reports nothing without open orders, when swap:write stays, or when widening", () => {
    for (const p of [
      planAccessChange(LevelScopes.readwrite, "read", facts(0)),
      planAccessChange(LevelScopes.readwritetransfer, "readwrite", facts(3)),
      planAccessChange(LevelScopes.read, "readwrite", facts(3))
    ]) {
      expect(p.effects.openLimitOrders).toBeUndefined()
      expect(codes(p)).not.toContain("OPEN_ORDERS_STRANDED")
    }
  })
})
