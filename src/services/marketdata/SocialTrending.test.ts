/**
 * Trending by mentions: the tally per token (authors case-insensitive, KOL mentions, latest
 * mention) and the ranking (mentions, then USD volume with unpriced volume last, then address).
 */
import { describe, expect, it } from "@effect/vitest"
import { rankTrending, tallyMentions } from "./SocialTrending.js"

const m = (asset: string, author: string, atMs: number) => ({ asset, author, atMs })

describe("tallyMentions", () => {
  it("counts mentions, KOL mentions, distinct authors and the latest mention per token", () => {
    const tallies = tallyMentions([m("B", "kol", 5), m("A", "Ann", 9), m("A", "ann", 3), m("A", "kol", 4)], (a) => a === "kol")
    expect([...tallies]).toEqual([
      ["B", { mentions: 1, kolMentions: 1, authors: 1, lastMentionMs: 5 }],
      ["A", { mentions: 3, kolMentions: 1, authors: 2, lastMentionMs: 9 }]
    ])
  })
})

describe("rankTrending", () => {
  const tally = (mentions: number) => ({ mentions, kolMentions: 0, authors: 1, lastMentionMs: 0 })
  it("ranks by mentions, then USD volume (unpriced last), then address", () => {
    const ranked = rankTrending([
      { mint: "D", tally: tally(1), volumeUsdMicros: 500n },
      { mint: "C", tally: tally(2), volumeUsdMicros: null },
      { mint: "B", tally: tally(2), volumeUsdMicros: 0n },
      { mint: "A", tally: tally(2), volumeUsdMicros: 0n },
      { mint: "E", tally: tally(2), volumeUsdMicros: 7n }
    ])
    expect(ranked.map((r) => r.mint)).toEqual(["E", "A", "B", "C", "D"])
  })
})
