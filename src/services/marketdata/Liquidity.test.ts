/**
 * Liquidity through a market's life, on markets folded by the market actor: zero at creation, the
 * curve's real quote while trading and once complete, the pool's quote reserve after migration
 * (and its later trades); never the virtual reserve.
 */
import { describe, expect, it } from "@effect/vitest"
import { foldCore } from "../../../test/support/marketCores.js"
import { ChainClock, SimMarket } from "../../../test/support/marketSim.js"
import { liquidityQuoteRaw } from "./Liquidity.js"

const T0 = Date.UTC(2026, 0, 1)
const W = "W".padEnd(44, "1")

describe("liquidityQuoteRaw", () => {
  it("is the curve's real quote before migration and the pool's quote reserve after", () => {
    for (const chain of ["solana", "hood"] as const) {
      const m = new SimMarket(new ChainClock(chain, T0), { mint: `${chain}Liq` })
      const created = [m.created()]
      const fresh = foldCore(created)
      expect(liquidityQuoteRaw(fresh)).toBe(0n)
      expect(fresh.curveState.virtualQuoteRaw > 0n).toBe(true)

      const traded = [...created, ...m.buy(W, 1_000_000_000n)]
      const trading = foldCore(traded)
      expect(trading.lifecycle).toBe("trading")
      expect(liquidityQuoteRaw(trading)).toBe(trading.curveState.realQuoteRaw)
      expect(trading.curveState.realQuoteRaw > 0n && trading.curveState.realQuoteRaw < trading.curveState.virtualQuoteRaw).toBe(true)

      const completedEvents = [...traded, ...m.buy(W, fresh.params.thresholdRaw * 2n)]
      const completed = foldCore(completedEvents)
      expect(completed.lifecycle).toBe("completed")
      expect(liquidityQuoteRaw(completed)).toBe(completed.curveState.realQuoteRaw)

      const migratedEvents = [...completedEvents, m.migrated()]
      const migrated = foldCore(migratedEvents)
      expect([migrated.lifecycle, migrated.pool !== null]).toEqual(["migrated", true])
      expect(liquidityQuoteRaw(migrated)).toBe(migrated.pool!.quoteReserveRaw)

      const afterPoolBuy = foldCore([...migratedEvents, m.poolBuy(W, 1_000_000n)])
      expect(afterPoolBuy.pool!.quoteReserveRaw).toBeGreaterThan(migrated.pool!.quoteReserveRaw)
      expect(liquidityQuoteRaw(afterPoolBuy)).toBe(afterPoolBuy.pool!.quoteReserveRaw)
    }
  })

  it("falls back to the curve's real quote for a migrated market with no pool yet", () => {
    const core = { lifecycle: "migrated" as const, pool: null, curveState: { virtualQuoteRaw: 9n, virtualTokenRaw: 9n, realQuoteRaw: 5n, complete: true } }
    expect(liquidityQuoteRaw(core)).toBe(5n)
  })
})
