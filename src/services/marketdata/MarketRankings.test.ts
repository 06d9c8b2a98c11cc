/**
 * The market lists' orderings: gainers (only known tokens that rose, the largest rise first,
 * ties by address, bounded by `limit`), the final stretch (trading curves on the chain by
 * progress, then quote raised, then address), graduations and the quote left to raise.
 */
import { describe, expect, it } from "@effect/vitest"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import type { PriceMove } from "../../../clickhouse/queries/TokenReads.js"
import { newMarket } from "../../../test/support/marketCores.js"
import { closestToGraduation, graduatedMarkets, rankGainers, remainingToGraduationRaw } from "./MarketRankings.js"

const market = (mint: string, realQuoteRaw = 0n, lifecycle: MarketCore["lifecycle"] = "trading", chain: "solana" | "hood" = "solana"): MarketCore => {
  const { core } = newMarket(chain, { mint })
  return { ...core, lifecycle, curveState: { ...core.curveState, realQuoteRaw } }
}
const move = (mint: string, startPrice: number, lastPrice: number): PriceMove => ({ mint, startPrice, lastPrice, trades: 2, volumeQuoteRaw: 10n })

describe("rankGainers", () => {
  const known = new Map(["A", "B", "C", "D"].map((m) => [m, market(m)]))
  const marketOf = (mint: string) => known.get(mint)

  it("keeps known tokens that rose, the largest rise first, ties by address", () => {
    const moves = [move("A", 1, 1.5), move("B", 2, 2), move("C", 1, 3), move("D", 1, 1.5), move("Z", 1, 9), move("B", 0, 5), move("A", 2, 1)]
    const ranked = rankGainers(moves, marketOf, 10)
    expect(ranked.map((g) => [g.move.mint, g.changePct])).toEqual([
      ["C", 200],
      ["A", 50],
      ["D", 50]
    ])
    expect(ranked[0]!.core).toBe(known.get("C"))
    expect(rankGainers(moves, marketOf, 1).map((g) => g.move.mint)).toEqual(["C"])
  })
})

describe("closestToGraduation", () => {
  it("orders trading curves of the chain by progress, then quote raised, then address", () => {
    const { core } = newMarket("solana", { mint: "x" })
    const threshold = core.params.thresholdRaw
    const half = threshold / 2n
    const markets = [
      market("low", threshold / 10n),
      market("halfB", half),
      market("halfA", half),
      // The same bps as `half` (floored), a little more raised.
      market("halfMore", half + 1n),
      market("done", threshold, "completed"),
      market("gone", threshold, "migrated"),
      market("hoodHigh", threshold - 1n, "trading", "hood")
    ]
    expect(closestToGraduation(markets, "solana", 10).map((c) => c.mint)).toEqual(["halfMore", "halfA", "halfB", "low"])
    expect(closestToGraduation(markets, "solana", 2).map((c) => c.mint)).toEqual(["halfMore", "halfA"])
    expect(closestToGraduation(markets, "hood", 10).map((c) => c.mint)).toEqual(["hoodHigh"])
  })
})

describe("graduatedMarkets", () => {
  it("keeps graduations of known markets that left the curve, in the order given", () => {
    const known = new Map([market("M", 0n, "migrated"), market("C", 0n, "completed"), market("T")].map((c) => [c.mint, c]))
    const graduations = [{ mint: "C", graduatedAtMs: 2 }, { mint: "T", graduatedAtMs: 3 }, { mint: "U", graduatedAtMs: 4 }, { mint: "M", graduatedAtMs: 1 }]
    expect(graduatedMarkets(graduations, (m) => known.get(m)).map((g) => [g.graduation.mint, g.core.lifecycle])).toEqual([
      ["C", "completed"],
      ["M", "migrated"]
    ])
  })
})

describe("remainingToGraduationRaw", () => {
  it("is the threshold less what was raised, never below 0", () => {
    const { core } = newMarket("solana", { mint: "r" })
    const t = core.params.thresholdRaw
    expect(remainingToGraduationRaw(market("a", 0n))).toBe(t)
    expect(remainingToGraduationRaw(market("b", t - 5n))).toBe(5n)
    expect(remainingToGraduationRaw(market("c", t + 5n))).toBe(0n)
  })
})
