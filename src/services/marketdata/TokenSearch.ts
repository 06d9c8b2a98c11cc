/**
 * Token search (spec 4.5 `token-search`): the tokens of one chain whose address, ticker or name
 * matches a query, best match first. Pure over the market index's search keys and cores.
 *
 * Ranking: the exact address, then the exact ticker, the exact name, a ticker prefix, a name
 * prefix, then the ticker or name containing the query (case-insensitive; a leading `$` on the
 * query is dropped for the text matches); within a rank, the larger total volume first, then the
 * address. The order is total, so it does not depend on the order of the index's key list.
 *
 * Cost: the query is normalized once per request; the markets' lower-cased tickers and names come
 * ready from the index (`actors/SearchKeys.ts`, computed once per market by the index's writer,
 * beside each market's latest snapshot), so a search scans one array (measured by
 * `bench/tokenSearch.ts`).
 */
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { normalizeAddress } from "../../domain/Chain.js"

/** Longest query, in characters (after trimming). */
export const SEARCH_QUERY_MAX = 64

/** How a token matched, best first (the index is the rank). */
export const SEARCH_MATCHES = ["address", "symbol", "name", "symbol_prefix", "name_prefix", "contains"] as const
export type SearchMatch = (typeof SEARCH_MATCHES)[number]

export interface SearchHit {
  readonly core: MarketCore
  readonly match: SearchMatch
}

export interface SearchResult {
  /** Every token that matched. */
  readonly matched: number
  /** The best `limit` of them, in rank order. */
  readonly hits: ReadonlyArray<SearchHit>
}

interface Scored {
  readonly core: MarketCore
  readonly rank: number
}

const byRank = (a: Scored, b: Scored): number => {
  if (a.rank !== b.rank) return a.rank - b.rank
  const va = a.core.stats.volumeTotalRaw
  const vb = b.core.stats.volumeTotalRaw
  if (va !== vb) return vb > va ? 1 : -1
  return a.core.mint < b.core.mint ? -1 : a.core.mint > b.core.mint ? 1 : 0
}

/** The tokens on `chain` matching `query` (already trimmed, non-empty), the best `limit` first. */
export const searchTokens = (index: Pick<MarketIndexShape, "searchKeys">, chain: ChainId, query: string, limit: number): SearchResult => {
  const address = normalizeAddress(chain, query)
  const needle = query.toLowerCase().replace(/^\$/, "")
  const scored: Array<Scored> = []
  for (const k of index.searchKeys(chain)) {
    const rank =
      k.core.mint === address ? 0
      : k.symbol === needle ? 1
      : k.name === needle ? 2
      : k.symbol.startsWith(needle) ? 3
      : k.name.startsWith(needle) ? 4
      : k.symbol.includes(needle) || k.name.includes(needle) ? 5
      : -1
    if (rank >= 0) scored.push({ core: k.core, rank })
  }
  scored.sort(byRank)
  const hits: Array<SearchHit> = []
  for (let i = 0; i < scored.length && i < limit; i++) hits.push({ core: scored[i]!.core, match: SEARCH_MATCHES[scored[i]!.rank]! })
  return { matched: scored.length, hits }
}
