/**
 * Trending tokens by social mentions (spec 4.5 `mentions/trending`): the mentions of a window
 * tallied per token, ranked by mentions, then by the token's traded volume in USD over the window,
 * then by address. Pure over the mentions the store returns (the read bounds them to
 * `TRENDING_SCAN_MAX`, the newest of the window).
 */
import type { SocialMention } from "../../../actors/signals/KolMention.js"

/** Most mentions a trending read ranks (the newest in the window). */
export const TRENDING_SCAN_MAX = 10_000

export interface MentionTally {
  readonly mentions: number
  /** Mentions whose author is a known KOL. */
  readonly kolMentions: number
  /** Distinct authors (handles compare case-insensitively). */
  readonly authors: number
  readonly lastMentionMs: number
}

/** The mentions tallied per token (in order of first appearance). */
export const tallyMentions = (
  mentions: ReadonlyArray<Pick<SocialMention, "asset" | "author" | "atMs">>,
  isKol: (author: string) => boolean
): ReadonlyMap<string, MentionTally> => {
  const byToken = new Map<string, { mentions: number; kolMentions: number; authors: Set<string>; lastMentionMs: number }>()
  for (const m of mentions) {
    let e = byToken.get(m.asset)
    if (e === undefined) {
      e = { mentions: 0, kolMentions: 0, authors: new Set(), lastMentionMs: m.atMs }
      byToken.set(m.asset, e)
    }
    e.mentions++
    if (isKol(m.author)) e.kolMentions++
    e.authors.add(m.author.toLowerCase())
    if (m.atMs > e.lastMentionMs) e.lastMentionMs = m.atMs
  }
  const out = new Map<string, MentionTally>()
  for (const [asset, e] of byToken) out.set(asset, { mentions: e.mentions, kolMentions: e.kolMentions, authors: e.authors.size, lastMentionMs: e.lastMentionMs })
  return out
}

export interface TrendingCandidate {
  readonly mint: string
  readonly tally: MentionTally
  /** The token's volume over the window in micro-dollars; null when it cannot be priced (ranked below any priced volume). */
  readonly volumeUsdMicros: bigint | null
}

/** The candidates ranked (a sorted copy): most mentions, then the larger USD volume, then the address. */
export const rankTrending = <T extends TrendingCandidate>(candidates: Iterable<T>): Array<T> => {
  const micros = (c: T) => c.volumeUsdMicros ?? -1n
  return [...candidates].sort((a, b) => {
    if (a.tally.mentions !== b.tally.mentions) return b.tally.mentions - a.tally.mentions
    const va = micros(a)
    const vb = micros(b)
    if (va !== vb) return vb > va ? 1 : -1
    return a.mint < b.mint ? -1 : a.mint > b.mint ? 1 : 0
  })
}
