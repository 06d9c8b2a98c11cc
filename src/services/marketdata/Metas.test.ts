/**
 * Metas: the words shared by recent launches, ranked by token count, USD volume and word; stop
 * words, short words, old launches and other chains left out; each meta's top tokens; and the
 * bound on distinct words tallied, at and past it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { newMarket } from "../../../test/support/marketCores.js"
import { META_TOP_TOKENS, metaWordsOf, METAS_WORDS_MAX, rankMetas } from "./Metas.js"

const T0 = Date.UTC(2026, 0, 1)
let n = 0
const market = (name: string, symbol: string, volumeTotalRaw = 0n, createdAtMs = T0, chain: "solana" | "hood" = "solana"): MarketCore => {
  const { core } = newMarket(chain, { mint: `So1Meta${++n}`, name, symbol }, createdAtMs)
  return { ...core, stats: { ...core.stats, volumeTotalRaw } }
}
/** One micro-dollar per raw unit of volume (test pricing). */
const usd = (core: MarketCore) => core.stats.volumeTotalRaw

describe("metaWordsOf", () => {
  it("keeps distinct lower-case words of 3+ letters or digits, without stop words", () => {
    expect(metaWordsOf(market("The Dog-Coin of CATS", "DOG2").identity)).toEqual(["dog", "cats", "dog2"])
    expect(metaWordsOf(market("Inu Token", "AB").identity)).toEqual([])
    expect(metaWordsOf(market("Ünïcödé Ñame", "ÇAT").identity)).toEqual(["ünïcödé", "ñame", "çat"])
  })

  it("is computed once per identity", () => {
    const core = market("Frog Party", "FROG")
    expect(metaWordsOf(core.identity)).toBe(metaWordsOf({ ...core, lifecycle: "migrated" }.identity))
  })
})

describe("rankMetas", () => {
  it("ranks words shared by two or more tokens: count, then USD volume, then the word", () => {
    const markets = [
      market("Frog One", "FRG", 10n),
      market("Frog Two", "FRG2", 20n),
      market("Frog Cat", "FC", 5n),
      market("Cat Two", "CT", 100n),
      market("Lone Wolf", "LW", 1_000n)
    ]
    const ranked = rankMetas(markets, "solana", T0, 10, usd)
    // frog: 10 + 20 + 5; two: 20 + 100; cat: 5 + 100. "one", "frg", "lone", "wolf": one token each.
    expect(ranked.map((m) => [m.word, m.tokens.length, m.volumeUsdMicros])).toEqual([
      ["frog", 3, 35n],
      ["two", 2, 120n],
      ["cat", 2, 105n]
    ])
    expect(rankMetas(markets, "solana", T0, 1, usd).map((m) => m.word)).toEqual(["frog"])
  })

  it("breaks a full tie alphabetically and counts an unpriced token as 0", () => {
    const markets = [market("Beta Alpha", "BA", 7n), market("Alpha Beta", "AB", 7n)]
    expect(rankMetas(markets, "solana", T0, 10, usd).map((m) => m.word)).toEqual(["alpha", "beta"])
    const unpriced = rankMetas(markets, "solana", T0, 10, () => null)
    expect(unpriced.map((m) => m.volumeUsdMicros)).toEqual([0n, 0n])
  })

  it("leaves out launches before the window and other chains", () => {
    const markets = [market("Moon Shot", "MS", 1n, T0 - 1), market("Moon Pie", "MP", 1n), market("Moon Hood", "MH", 1n, T0, "hood")]
    expect(rankMetas(markets, "solana", T0, 10, usd)).toEqual([])
    expect(rankMetas(markets, "solana", T0 - 1, 10, usd).map((m) => m.word)).toEqual(["moon"])
  })

  it("lists each meta's largest tokens by volume, at most five", () => {
    const markets = Array.from({ length: 7 }, (_, i) => market(`Pepe ${"abcdefg"[i]}xx`, `P${i}`, BigInt([3, 9, 1, 7, 5, 9, 2][i]!)))
    const [pepe] = rankMetas(markets, "solana", T0, 10, usd)
    expect(pepe!.tokens).toHaveLength(7)
    expect(pepe!.top).toHaveLength(META_TOP_TOKENS)
    // Ties keep the index's order.
    expect(pepe!.top.map((c) => c.stats.volumeTotalRaw)).toEqual([9n, 9n, 7n, 5n, 3n])
    expect(pepe!.top[0]).toBe(markets[1])
  })

  it(`tallies at most ${METAS_WORDS_MAX} distinct words per read`, () => {
    const base = market("Base", "BS")
    const filler = (count: number) => Array.from({ length: count }, (_, i) => ({ ...base, mint: `f${i}`, identity: { ...base.identity, name: `w${i}x`, symbol: "x" } }))
    const late = [market("Late Arrival", "LA"), market("Late Again", "LG")]
    // At the bound: the filler leaves room for "late" (and "arrival"), so it is a meta.
    expect(rankMetas([...filler(METAS_WORDS_MAX - 2), ...late], "solana", T0, 10, usd).map((m) => m.word)).toEqual(["late"])
    // Past it: "late" arrives after the bound and is not tallied.
    expect(rankMetas([...filler(METAS_WORDS_MAX), ...late], "solana", T0, 10, usd)).toEqual([])
  })
})
