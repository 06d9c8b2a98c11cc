/**
 * One feed bucket kept live from `since_seq` deltas (the route's contract: a read with the last
 * `cursor` gets the rows changed since and the addresses removed since, or `reset: true` with the
 * whole list). Pure: `applyFeed` returns the next view, never mutates the last.
 */

export type Chain = "solana" | "hood"

export interface FeedRow {
  readonly chain: Chain
  readonly address: string
  readonly name?: string
  readonly symbol?: string
  readonly image?: string | null
  readonly lifecycle?: string
  readonly progressBps?: number | null
  readonly createdAt?: string
  readonly migratedAt?: string | null
  readonly price?: string | null
  readonly marketCap?: string | null
  readonly volume24h?: string | null
  readonly trades24h?: number
  readonly tradesTotal?: number
  readonly lastTradeAt?: string | null
}

export interface FeedResponse {
  readonly bucket: string
  readonly tokens: ReadonlyArray<FeedRow>
  readonly cursor: number
  readonly reset: boolean
  readonly removed: ReadonlyArray<string>
}

export interface FeedView {
  readonly cursor: number | undefined
  /** Rows in display order (best first). */
  readonly rows: ReadonlyArray<FeedRow>
}

export const emptyView: FeedView = { cursor: undefined, rows: [] }

const keyOf = (r: Pick<FeedRow, "chain" | "address">): string => `${r.chain}:${r.address}`

/**
 * The next view: a reset replaces the rows in the server's order; a delta drops the removed
 * addresses, replaces changed rows in place and puts rows new to the view first (the buckets
 * rank the newest or busiest first).
 */
export const applyFeed = (view: FeedView, res: FeedResponse, maxRows = 200): FeedView => {
  if (res.reset || view.cursor === undefined) return { cursor: res.cursor, rows: res.tokens.slice(0, maxRows) }
  if (res.tokens.length === 0 && res.removed.length === 0) return res.cursor === view.cursor ? view : { ...view, cursor: res.cursor }
  const removed = new Set(res.removed)
  const changed = new Map(res.tokens.map((r) => [keyOf(r), r]))
  const kept: FeedRow[] = []
  for (const row of view.rows) {
    if (removed.has(row.address)) continue
    const next = changed.get(keyOf(row))
    kept.push(next ?? row)
    if (next !== undefined) changed.delete(keyOf(row))
  }
  return { cursor: res.cursor, rows: [...changed.values(), ...kept].slice(0, maxRows) }
}
