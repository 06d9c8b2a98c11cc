/**
 * The strategy replay's read of trade history: every live trade of the candidate tokens inside
 * a window, in chain order, handed over page by page.
 *
 * Invariants:
 * - Each trade once and no retracted trade (`FINAL`); pages in `(ts, position)` order and
 *   consecutive, so the concatenation is the window's trades in chain order.
 * - Only what the replay can use: the tokens in `assets`, from the earliest `startMs` among
 *   them (the first signal that could open a position).
 * - Bounded memory: a page covers at most one day and at most `replayPageRowsMax` rows; a
 *   slice with more rows is halved and read again (never truncated).
 * - Exact: the fee-free quote notional and the post-trade reserves are `UInt256` decimal
 *   strings (converted to `bigint` by the engine only for tokens it holds or is filling).
 *   Times are ms offsets from the window start (`UInt32`: 14 days fit).
 */
import { Effect } from "effect"
import { ClickHouse } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"

/** A trade as the replay reads it (short keys: millions of these are parsed per replay). */
export interface ReplayTrade {
  /** Chain. */
  readonly c: string
  /** Mint / token address. */
  readonly m: string
  /** ms after the window start. */
  readonly t: number
  /** Fee-free quote notional, raw units (decimal string). */
  readonly q: string
  /** Tokens traded, raw units (decimal string). */
  readonly k: string
  /** Post-trade virtual quote reserve, raw (decimal string; "0" where the venue has none). */
  readonly v: string
  /** Post-trade virtual token reserve, raw (decimal string). */
  readonly x: string
}

export const replayPageRowsMax = 500_000
const DAY_MS = 86_400_000
const SLICE_MIN_MS = 1_000

export interface ReplayTradeQuery {
  readonly chains: ReadonlyArray<string>
  readonly fromMs: number
  readonly toMs: number
  /** Tokens to read, each with the earliest time it is needed from (ms, absolute). */
  readonly assets: ReadonlyArray<{ readonly asset: string; readonly startMs: number }>
  /** Rows per page (tests lower it to exercise halving). */
  readonly pageRowsMax?: number
}

/** A UInt256 as decimal text; through UInt64 when it fits (measured much cheaper to print). */
const dec = (col: string) => `if(${col} < 18446744073709551616, toString(toUInt64(${col})), toString(${col}))`

/**
 * One row per page: the count, and the page as text (`c,m,t,q,k,v,x` lines in chain order,
 * sorted inside ClickHouse). Parsing one string and splitting it measured about twice as fast
 * as a JSONEachRow object per trade. Mints and chains never contain `,` or a newline (base58
 * and 0x-hex addresses).
 */
const pageSql = `
SELECT toString(count()) AS n,
  if(count() > {limit:UInt32}, '', arrayStringConcat(arrayMap(r -> r.3, arraySort(r -> (r.1, r.2), groupArray((ts_ms, position, line)))), '\n')) AS page
FROM (
  SELECT toUnixTimestamp64Milli(ts) AS ts_ms, position,
    concat(chain, ',', mint, ',', toString(toUInt32(ts_ms - {fromMs:Int64})), ',',
      ${dec("if(side = 'buy', quote_volume_raw - least(fee_raw, quote_volume_raw), quote_volume_raw)")}, ',',
      ${dec("token_volume_raw")}, ',', ${dec("quote_reserve_raw")}, ',', ${dec("token_reserve_raw")}) AS line
  FROM trades FINAL
  WHERE chain IN {chains:Array(String)} AND mint IN {mints:Array(String)}
    AND ts >= fromUnixTimestamp64Milli({sliceFrom:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({sliceTo:Int64}, 'UTC')
)`

const parsePage = (text: string): Array<ReplayTrade> => {
  const out: Array<ReplayTrade> = []
  if (text === "") return out
  for (const line of text.split("\n")) {
    const a = line.split(",")
    if (a.length !== 7) throw new Error(`replay page: malformed line ${JSON.stringify(line.slice(0, 200))}`)
    out.push({ c: a[0]!, m: a[1]!, t: Number(a[2]), q: a[3]!, k: a[4]!, v: a[5]!, x: a[6]! })
  }
  return out
}

/**
 * Calls `onPage` with each page of the window's trades, in order. `onPage` may fail (the
 * replay's own failures pass through untouched).
 */
export const forEachReplayPage = <E, R>(
  query: ReplayTradeQuery,
  onPage: (page: ReadonlyArray<ReplayTrade>) => Effect.Effect<void, E, R>
): Effect.Effect<{ readonly rows: number; readonly pages: number }, ClickHouseError | E, ClickHouse | R> =>
  Effect.gen(function* () {
    const ch = yield* ClickHouse
    const limit = query.pageRowsMax ?? replayPageRowsMax
    let rows = 0
    let pages = 0
    if (query.assets.length === 0 || query.chains.length === 0 || query.toMs <= query.fromMs) return { rows, pages }
    const mints = query.assets.map((a) => a.asset)
    // Read from the earliest start of any token: a per-token start in SQL (indexOf over the
    // token list per row) measured 5x slower than reading the few extra rows; the engine
    // ignores a token's trades before its first signal.
    const earliest = Math.max(query.fromMs, query.assets.reduce((m, a) => Math.min(m, a.startMs), Number.POSITIVE_INFINITY))
    let sliceFrom = earliest
    let sliceMs = DAY_MS
    while (sliceFrom < query.toMs) {
      const sliceTo = Math.min(query.toMs, sliceFrom + sliceMs)
      const [raw] = yield* ch.query<{ n: string; page: string }>(pageSql, {
        fromMs: query.fromMs,
        chains: [...query.chains],
        mints,
        sliceFrom,
        sliceTo,
        limit
      })
      const n = Number(raw?.n ?? "0")
      if (n > limit) {
        if (sliceMs <= SLICE_MIN_MS) {
          return yield* new ClickHouseError({
            reason: "QueryFailed",
            message: `replay: more than ${limit} trades in ${SLICE_MIN_MS} ms; cannot page this window`
          })
        }
        sliceMs = Math.max(SLICE_MIN_MS, Math.floor(sliceMs / 2))
        continue
      }
      const page = yield* Effect.try({
        try: () => parsePage(raw?.page ?? ""),
        catch: (cause) => new ClickHouseError({ reason: "QueryFailed", message: String(cause), cause })
      })
      rows += page.length
      pages += 1
      if (page.length > 0) yield* onPage(page)
      sliceFrom = sliceTo
      sliceMs = DAY_MS
    }
    return { rows, pages }
  }).pipe(Effect.withSpan("ClickHouse.replayTrades"))

/** The earliest stored trade time (ms) of the chains, or undefined when there is none. */
export const historyStartMs = (chains: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const ch = yield* ClickHouse
    const [row] = yield* ch.query<{ n: string; first_ms: string }>(
      `SELECT toString(count()) AS n, toString(toUnixTimestamp64Milli(min(ts))) AS first_ms FROM trades WHERE chain IN {chains:Array(String)}`,
      { chains: [...chains] }
    )
    return row === undefined || row.n === "0" ? undefined : Number(row.first_ms)
  })
