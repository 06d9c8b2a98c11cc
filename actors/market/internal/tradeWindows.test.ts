import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { addRecentTrader, addToWindow, distinctTradersInHour, RECENT_TRADERS_MAX, type Slot, windowTotals } from "./tradeWindows.js"

describe("tradeWindows", () => {
  it("keeps at most `width` slots, none older than the newest − width + 1", () => {
    let w: ReadonlyArray<Slot> = []
    for (let slot = 0; slot < 50; slot += 2) w = addToWindow(w, slot, 12, 10n, slot % 4 === 0)
    expect(w.length).toBeLessThanOrEqual(12)
    expect(w.map((s) => s.slot)).toEqual([38, 40, 42, 44, 46, 48])
  })

  it("merges a trade into its slot and inserts an out-of-order one still in reach", () => {
    let w: ReadonlyArray<Slot> = []
    w = addToWindow(w, 10, 12, 5n, true)
    w = addToWindow(w, 10, 12, 7n, false)
    w = addToWindow(w, 14, 12, 1n, true)
    w = addToWindow(w, 12, 12, 2n, true) // older block time, still in reach
    w = addToWindow(w, 1, 12, 100n, true) // out of reach: not counted
    expect(w).toEqual([
      { slot: 10, volumeRaw: 12n, trades: 2, buys: 1 },
      { slot: 12, volumeRaw: 2n, trades: 1, buys: 1 },
      { slot: 14, volumeRaw: 1n, trades: 1, buys: 1 }
    ])
  })

  it("property: totals as of the newest slot equal the brute-force sum of trades in reach", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.bigInt({ min: 0n, max: 1000n }), fc.boolean()), { size: "large" }), (trades) => {
        let w: ReadonlyArray<Slot> = []
        let newest = -1
        const counted: Array<[number, bigint, boolean]> = []
        for (const [slot, v, buy] of trades) {
          if (newest >= 0 && slot <= newest - 24) continue // beyond reach when it arrives
          w = addToWindow(w, slot, 24, v, buy)
          newest = Math.max(newest, slot)
          counted.push([slot, v, buy])
        }
        const inWindow = counted.filter(([s]) => s > newest - 24 && s <= newest)
        const totals = windowTotals(w, newest, 24)
        expect(totals.trades).toBe(inWindow.length)
        expect(totals.volumeRaw).toBe(inWindow.reduce((a, [, v]) => a + v, 0n))
        expect(totals.buys).toBe(inWindow.filter(([, , b]) => b).length)
        expect(w.length).toBeLessThanOrEqual(24)
      })
    )
  })

  it("remembers at most RECENT_TRADERS_MAX traders and counts distinct ones in the hour", () => {
    let r: ReturnType<typeof addRecentTrader> = []
    for (let i = 0; i < 40; i++) r = addRecentTrader(r, `t${i % 5}`, i * 60_000)
    expect(r).toHaveLength(2 * RECENT_TRADERS_MAX)
    expect(distinctTradersInHour(r, Math.floor((39 * 60_000) / 300_000))).toBe(5)
    expect(distinctTradersInHour(r, 1000)).toBe(0)
  })
})
