/**
 * Book-leg counterparties: legs, distinct tokens and volume per quote asset for each other
 * wallet, the most legs first, ties by address.
 */
import { describe, expect, it } from "@effect/vitest"
import type { WalletTrade } from "../../../clickhouse/queries/WalletReads.js"
import { QuotePairs } from "../../domain/QuotePairs.js"
import { counterparties } from "./Counterparties.js"

const sol = QuotePairs.find((p) => p.id === "sol")!
let id = 0
const trade = (trader: string, mint: string, volumeQuoteRaw: bigint): WalletTrade => ({
  id: `t${++id}`,
  signature: `s${id}`,
  mint,
  venue: "curve",
  side: "buy",
  trader,
  tokenRaw: 1n,
  quoteRaw: volumeQuoteRaw,
  volumeQuoteRaw,
  feeRaw: 0n,
  quoteReserveRaw: 1n,
  tokenReserveRaw: 1n,
  position: String(id),
  atMs: id
})
const leg = (other: string, mint: string, volume: bigint) => ({ mine: trade("me", mint, 1n), other: trade(other, mint, volume) })

describe("counterparties", () => {
  it("summarizes the legs by the other wallet", () => {
    const legs = [leg("Bob", "A", 5n), leg("Al", "A", 1n), leg("Bob", "B", 7n), leg("Cy", "A", 2n), leg("Al", "A", 3n), leg("Bob", "U", 9n)]
    const out = counterparties(legs, (mint) => (mint === "U" ? { core: undefined, pair: undefined, price: null } : { core: undefined, pair: sol, price: null }))
    expect(out.map((c) => [c.wallet, c.legs, c.tokens, c.volume.byQuote().map((e) => e.raw)])).toEqual([
      ["Bob", 3, 3, [12n]],
      ["Al", 2, 1, [4n]],
      ["Cy", 1, 1, [2n]]
    ])
    expect(counterparties([], () => ({ core: undefined, pair: sol, price: null }))).toEqual([])
  })
})
