/**
 * A creator's launches: every market by the token's creator counted, the others listed in index
 * order, at most `CREATOR_OTHER_LAUNCHES_MAX` of them.
 */
import { describe, expect, it } from "@effect/vitest"
import { newMarket } from "../../../test/support/marketCores.js"
import { CREATOR_OTHER_LAUNCHES_MAX, creatorLaunches } from "./CreatorLaunches.js"

const byCreator = (mint: string, creator: string) => newMarket("solana", { mint, creator }).core

describe("creatorLaunches", () => {
  it("counts the creator's markets and lists the others", () => {
    const token = byCreator("T", "alice")
    const markets = [byCreator("A", "alice"), token, byCreator("B", "bob"), byCreator("C", "alice")]
    const r = creatorLaunches(markets, token)
    expect(r.launches).toBe(3)
    expect(r.others.map((c) => c.mint)).toEqual(["A", "C"])
    expect(creatorLaunches([token], token)).toEqual({ launches: 1, others: [] })
  })

  it(`lists at most ${CREATOR_OTHER_LAUNCHES_MAX} others and still counts all`, () => {
    const token = byCreator("T", "carol")
    const others = Array.from({ length: CREATOR_OTHER_LAUNCHES_MAX + 1 }, (_, i) => byCreator(`M${i}`, "carol"))
    expect(creatorLaunches([token, ...others.slice(0, CREATOR_OTHER_LAUNCHES_MAX)], token).others).toHaveLength(CREATOR_OTHER_LAUNCHES_MAX)
    const r = creatorLaunches([token, ...others], token)
    expect(r.launches).toBe(CREATOR_OTHER_LAUNCHES_MAX + 2)
    expect(r.others.map((c) => c.mint)).toEqual(others.slice(0, CREATOR_OTHER_LAUNCHES_MAX).map((c) => c.mint))
  })
})
