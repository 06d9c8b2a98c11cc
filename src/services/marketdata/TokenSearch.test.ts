/**
 * Token search over a real `MarketIndexStore`: each rank with its match name, the `$` prefix, Hood
 * addresses compared lower-case, the chain filter, the tie-breaks, the limit, the index's keys
 * kept through a market's later states and its removal, and (as a property) an order that does
 * not depend on the order the markets were published in.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { actorKey, type MarketCore } from "../../../actors/market/MarketActor.js"
import { MarketIndexStore } from "../../../actors/MarketIndex.js"
import { newMarket } from "../../../test/support/marketCores.js"
import { searchTokens as searchIndex } from "./TokenSearch.js"

const addr = (prefix: string) => (prefix + "1".repeat(44)).slice(0, 44)
const market = (mint: string, name: string, symbol: string, volumeTotalRaw = 0n, chain: "solana" | "hood" = "solana"): MarketCore => {
  const { core } = newMarket(chain, { mint, name, symbol })
  return { ...core, stats: { ...core.stats, volumeTotalRaw } }
}

const dogA = market(addr("DogA"), "Doge Killer", "DOGK", 5n)
const dog = market(addr("Dog"), "Dog", "WOOF", 1n)
const dogSym = market(addr("DogSym"), "Something", "DOG", 1n)
const hotdog = market(addr("Hot"), "Hotdog", "HOTD", 9n)
const hood = market("0x" + "ab".repeat(20), "Dog on Hood", "HDOG", 100n, "hood")
const all = [dogA, dog, dogSym, hotdog, hood]

/** An index holding `cores`, published in that order (as the shards publish snapshots). */
const indexOf = (cores: ReadonlyArray<MarketCore>): MarketIndexStore => {
  const index = new MarketIndexStore()
  index.publish(cores.map((core) => [actorKey(core.chain, core.mint), { core, window: null }] as const))
  return index
}
const searchTokens = (cores: ReadonlyArray<MarketCore>, chain: "solana" | "hood", query: string, limit: number) => searchIndex(indexOf(cores), chain, query, limit)

const names = (r: ReturnType<typeof searchTokens>) => r.hits.map((h) => [h.core.identity.symbol, h.match])

describe("searchTokens", () => {
  it("ranks exact ticker, exact name, ticker prefix, name prefix, then contains; volume breaks ties", () => {
    const r = searchTokens(all, "solana", "dog", 10)
    expect(names(r)).toEqual([
      ["DOG", "symbol"],
      ["WOOF", "name"],
      ["DOGK", "symbol_prefix"],
      ["HOTD", "contains"]
    ])
    expect(r.matched).toBe(4)
  })

  it("matches an address exactly, Hood addresses in any case", () => {
    expect(names(searchTokens(all, "solana", addr("Dog"), 10))).toEqual([["WOOF", "address"]])
    expect(names(searchTokens(all, "hood", "0x" + "AB".repeat(20), 10))).toEqual([["HDOG", "address"]])
    // A Solana address differs by case: no match.
    expect(searchTokens(all, "solana", addr("Dog").toLowerCase(), 10).matched).toBe(0)
  })

  it("drops a leading $ for the text matches, and searches one chain", () => {
    expect(names(searchTokens(all, "solana", "$DOGK", 10))).toEqual([["DOGK", "symbol"]])
    expect(names(searchTokens(all, "hood", "dog", 10))).toEqual([["HDOG", "name_prefix"]])
  })

  it("returns the best `limit` and counts every match", () => {
    const r = searchTokens(all, "solana", "o", 2)
    expect(r.matched).toBe(4)
    // All four contain "o" only: the larger volume first.
    expect(names(r)).toEqual([
      ["HOTD", "contains"],
      ["DOGK", "contains"]
    ])
    expect(searchTokens(all, "solana", "zzz", 10)).toEqual({ matched: 0, hits: [] })
  })

  it("breaks a full tie by address", () => {
    const x = market(addr("Xb"), "Twin", "TWN", 3n)
    const y = market(addr("Xa"), "Twin", "TWN", 3n)
    expect(searchTokens([x, y], "solana", "twin", 10).hits.map((h) => h.core.mint)).toEqual([addr("Xa"), addr("Xb")])
  })

  it("orders the same whatever order the markets arrive in, and after markets leave and return", () => {
    const pool = [...all, market(addr("Tw1"), "Dogs", "DOGS", 5n), market(addr("Tw2"), "Dogs", "DOGS", 5n), market(addr("Tw3"), "dog", "x", 0n)]
    const queries = ["dog", "do", "o", "$dog", "s", addr("Tw2")]
    fc.assert(
      fc.property(fc.shuffledSubarray(pool, { minLength: pool.length }), fc.constantFrom(...queries), fc.integer({ min: 1, max: 10 }), (shuffled, q, limit) => {
        const a = searchTokens(shuffled, "solana", q, limit)
        const b = searchTokens(pool, "solana", q, limit)
        expect(a.matched).toBe(b.matched)
        expect(a.hits.map((h) => [h.core.mint, h.match])).toEqual(b.hits.map((h) => [h.core.mint, h.match]))
      })
    )
    fc.assert(
      fc.property(fc.subarray(pool), fc.constantFrom(...queries), (leaving, q) => {
        // Removals move entries around the index's key list; the ranking must not notice.
        const index = indexOf(pool)
        index.publish(leaving.map((c) => [actorKey(c.chain, c.mint), undefined] as const))
        index.publish(leaving.map((core) => [actorKey(core.chain, core.mint), { core, window: null }] as const))
        const a = searchIndex(index, "solana", q, 10)
        const b = searchTokens(pool, "solana", q, 10)
        expect(a.hits.map((h) => [h.core.mint, h.match])).toEqual(b.hits.map((h) => [h.core.mint, h.match]))
      })
    )
  })
})

describe("searchTokens over a live index", () => {
  it("ranks a market's latest state and forgets a removed market", () => {
    const index = indexOf(all)
    const busier = { ...dogA, stats: { ...dogA.stats, volumeTotalRaw: 1_000n } }
    index.publish([[actorKey("solana", dogA.mint), { core: busier, window: null }]])
    const r = searchIndex(index, "solana", "o", 10)
    expect(r.hits[0]!.core).toBe(busier)
    index.publish([[actorKey("solana", dogA.mint), undefined]])
    expect(searchIndex(index, "solana", "dogk", 10).matched).toBe(0)
    expect(searchIndex(index, "solana", "o", 10).matched).toBe(3)
  })
})
