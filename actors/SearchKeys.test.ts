/**
 * SearchKeys: one entry per live market on its chain's list, lower-cased once; a later state with
 * the same identity only moves the entry's core on, a new identity replaces the entry; removals
 * keep the list exact (checked against a model under random add/remove sequences).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { newMarket } from "../test/support/marketCores.js"
import { actorKey, type MarketCore } from "./market/MarketActor.js"
import { SearchKeys } from "./SearchKeys.js"

const core = (mint: string, chain: "solana" | "hood" = "solana", name = `Name ${mint}`): MarketCore => newMarket(chain, { mint, name, symbol: `SYM${mint}` }).core
const put = (keys: SearchKeys, c: MarketCore | undefined, chain: "solana" | "hood", mint: string) => keys.update(actorKey(chain, mint), chain, c)

describe("SearchKeys", () => {
  it("keeps a market's lower-cased keys on its chain's list", () => {
    const keys = new SearchKeys()
    const a = core("Aa")
    put(keys, a, "solana", "Aa")
    put(keys, core("0xbb", "hood"), "hood", "0xbb")
    expect(keys.list("solana")).toEqual([{ core: a, symbol: "symaa", name: "name aa" }])
    expect(keys.list("hood").map((k) => k.core.mint)).toEqual(["0xbb"])
  })

  it("reuses the entry for a later state of the same identity and replaces it for a new one", () => {
    const keys = new SearchKeys()
    const a = core("Aa")
    put(keys, a, "solana", "Aa")
    const entry = keys.list("solana")[0]
    const later = { ...a, lifecycle: "completed" as const }
    put(keys, later, "solana", "Aa")
    expect(keys.list("solana")[0]).toBe(entry)
    expect(entry!.core).toBe(later)
    const renamed = { ...a, identity: { ...a.identity, name: "Renamed" } }
    put(keys, renamed, "solana", "Aa")
    expect(keys.list("solana")).toEqual([{ core: renamed, symbol: "symaa", name: "renamed" }])
  })

  it("holds exactly the live markets under any sequence of additions and removals", () => {
    const mints = ["A", "B", "C", "D", "E"]
    const cores = new Map(mints.map((m) => [m, core(m)]))
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...mints), fc.boolean()), { maxLength: 40 }), (ops) => {
        const keys = new SearchKeys()
        const live = new Set<string>()
        for (const [mint, add] of ops) {
          put(keys, add ? cores.get(mint) : undefined, "solana", mint)
          if (add) live.add(mint)
          else live.delete(mint)
          expect(keys.list("solana").map((k) => k.core.mint).sort()).toEqual([...live].sort())
        }
        // Every entry is still addressable: removing all empties the list.
        for (const mint of mints) put(keys, undefined, "solana", mint)
        expect(keys.list("solana")).toEqual([])
      })
    )
  })
})
