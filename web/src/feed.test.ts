import { describe, expect, it } from "vitest"
import { applyFeed, emptyView, type FeedRow } from "./feed.js"

const row = (address: string, price: string): FeedRow => ({ chain: "solana", address, price })

describe("applyFeed", () => {
  it("takes the whole list on the first read and on a reset", () => {
    const first = applyFeed(emptyView, { bucket: "new", tokens: [row("a", "1"), row("b", "2")], cursor: 5, reset: false, removed: [] })
    expect(first).toEqual({ cursor: 5, rows: [row("a", "1"), row("b", "2")] })
    const reset = applyFeed(first, { bucket: "new", tokens: [row("c", "3")], cursor: 9, reset: true, removed: [] })
    expect(reset).toEqual({ cursor: 9, rows: [row("c", "3")] })
  })

  it("applies a delta: removed rows leave, changed rows update in place, new rows come first", () => {
    const view = { cursor: 5, rows: [row("a", "1"), row("b", "2"), row("c", "3")] }
    const next = applyFeed(view, { bucket: "new", tokens: [row("b", "20"), row("d", "4")], cursor: 7, reset: false, removed: ["c"] })
    expect(next).toEqual({ cursor: 7, rows: [row("d", "4"), row("a", "1"), row("b", "20")] })
    expect(view.rows).toHaveLength(3)
  })

  it("keeps the same view when nothing changed", () => {
    const view = { cursor: 5, rows: [row("a", "1")] }
    expect(applyFeed(view, { bucket: "new", tokens: [], cursor: 5, reset: false, removed: [] })).toBe(view)
  })

  it("keys rows by chain and address", () => {
    const view = { cursor: 1, rows: [row("a", "1")] }
    const hood: FeedRow = { chain: "hood", address: "a", price: "9" }
    expect(applyFeed(view, { bucket: "new", tokens: [hood], cursor: 2, reset: false, removed: [] }).rows).toEqual([hood, row("a", "1")])
  })
})
