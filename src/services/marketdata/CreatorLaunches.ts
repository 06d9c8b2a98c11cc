/**
 * A creator's launches (the token profile's `creator` block): how many markets the index holds by
 * the creator of a token, and the others among them. Pure over the market index's cores. Bounded:
 * at most `CREATOR_OTHER_LAUNCHES_MAX` others are listed (the count covers all of them).
 */
import type { MarketCore } from "../../../actors/market/MarketActor.js"

export const CREATOR_OTHER_LAUNCHES_MAX = 20

export interface CreatorLaunches {
  /** Every market by the creator, `token` included. */
  readonly launches: number
  /** The creator's other markets, in index order, at most `CREATOR_OTHER_LAUNCHES_MAX`. */
  readonly others: ReadonlyArray<MarketCore>
}

export const creatorLaunches = (markets: Iterable<MarketCore>, token: MarketCore): CreatorLaunches => {
  const creator = token.identity.creator
  const others: Array<MarketCore> = []
  let launches = 0
  for (const m of markets) {
    if (m.identity.creator !== creator) continue
    launches++
    if (m.mint !== token.mint && others.length < CREATOR_OTHER_LAUNCHES_MAX) others.push(m)
  }
  return { launches, others }
}
