/**
 * The strategy replay's reads of trade history, in chain order `(ts, position)`:
 *
 * - `readReplayRanges` (what replays use): per token, the trades after a position in chain
 *   order up to an offset, at most a given number of rows each. The engine asks only for the
 *   stretches where a trade can change the result (`src/services/strategy/Replay.ts`), so the
 *   filtering happens here, in ClickHouse, and only those rows cross over.
 * - `lastReplayTrades`: per token, its last trade inside a range (the benchmark's final mark).
 * - `forEachReplayPage`: every trade of the candidate tokens from the earliest start, page by
 *   page (the exhaustive read, kept as the tests' reference for the range read).
 *
 * Invariants:
 * - Each trade once and no retracted trade (`FINAL`). A token is `(chain, mint)`. A range read
 *   pays for the granules its tokens' ranges touch, every column it reads (five `UInt256` among
 *   them): `trades` has 1024-row granules since migration 6 for that (8192 before: one held
 *   about four small mints' whole month); replaying FINAL's rule by `GROUP BY` over the ranges'
 *   rows instead measured 5x slower on the bench's 10M trades.
 * - The token and time filter is a `PREWHERE` on sorting-key columns only (`chain`, `mint`,
 *   `ts`), so it runs before FINAL merges: every copy of a trade (redelivered, retracted,
 *   re-included) has the same key, so the filter keeps or drops all of them together and the
 *   merge sees whole groups (`test/integration/replay.reads.test.ts`: one part per copy).
 *   ClickHouse does not move a `WHERE` past FINAL by itself (`optimize_move_to_prewhere_if_final`
 *   is off because a condition on other columns would be wrong there). Measured on the bench's
 *   one-day range reads (2026-11-30, loaded): FINAL's merge then works on the ~47K matching rows
 *   instead of every row of the ~385 granules they sit in (count with FINAL 1.1-1.5 s to
 *   0.6-0.8 s); the replay ~20% faster. Any condition on another column stays in `WHERE`.
 * - Bounded: one statement returns at most `replayPageRowsMax` rows (range reads are split so
 *   their row caps add up to at most that; pages halve their time slice until they fit).
 * - Exact: the fee-free quote notional and the post-trade reserves are `UInt256` decimal
 *   strings (converted to `bigint` by the engine only where it fills or compares). Times are ms
 *   offsets from the window start (`UInt32`: 14 days fit).
 * - Chain order inside one millisecond is the `position` string (byte order, the same in
 *   ClickHouse and in JS for these ASCII keys); `(ts, position)` identifies a trade of a token.
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
  /** Chain-order position inside the millisecond (the `position` column). */
  readonly p: string
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
 * One row per page: the count, and the page as text (`c,m,t,q,k,v,x,p` lines in chain order,
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
      ${dec("token_volume_raw")}, ',', ${dec("quote_reserve_raw")}, ',', ${dec("token_reserve_raw")}, ',', position) AS line
  FROM trades FINAL
  PREWHERE chain IN {chains:Array(String)} AND mint IN {mints:Array(String)}
    AND ts >= fromUnixTimestamp64Milli({sliceFrom:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({sliceTo:Int64}, 'UTC')
)`

const parsePage = (text: string): Array<ReplayTrade> => {
  const out: Array<ReplayTrade> = []
  if (text === "") return out
  for (const line of text.split("\n")) {
    const a = line.split(",")
    if (a.length !== 8) throw new Error(`replay page: malformed line ${JSON.stringify(line.slice(0, 200))}`)
    out.push({ c: a[0]!, m: a[1]!, t: Number(a[2]), q: a[3]!, k: a[4]!, v: a[5]!, x: a[6]!, p: a[7]! })
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

/**
 * One stretch of a token's trades: those after `(afterT, afterP)` in chain order (`afterP` `""`:
 * after every trade of millisecond `afterT`) up to and including offset `toT`, the first
 * `rowsMax` of them. Ranges of one token must not overlap.
 */
export interface ReplayRange {
  readonly chain: string
  readonly asset: string
  readonly afterT: number
  readonly afterP: string
  readonly toT: number
  readonly rowsMax: number
}

export interface ReplayRangeQuery {
  /** The window start (ms): offsets count from it. */
  readonly fromMs: number
  readonly ranges: ReadonlyArray<ReplayRange>
  /** Rows per statement (default `replayPageRowsMax`): ranges are grouped so their `rowsMax` add up to at most this. */
  readonly pageRowsMax?: number
}

/** The rows of the tokens (`i`: 1-based index in `keys`) between `lo` and `hi`, with the replay's columns. */
const tokenRowsSql = `
    SELECT transform(concat(chain, ',', mint), {keys:Array(String)}, {idx:Array(UInt32)}, toUInt32(0)) AS i,
      toUnixTimestamp64Milli(ts) - {fromMs:Int64} AS t, position AS p,
      if(side = 'buy', quote_volume_raw - least(fee_raw, quote_volume_raw), quote_volume_raw) AS q,
      token_volume_raw AS k, quote_reserve_raw AS v, token_reserve_raw AS x
    FROM trades FINAL
    PREWHERE chain IN {chains:Array(String)} AND mint IN {mints:Array(String)}
      AND ts >= fromUnixTimestamp64Milli({lo:Int64}, 'UTC') AND ts <= fromUnixTimestamp64Milli({hi:Int64}, 'UTC')`

const lineSql = (c: (name: "j" | "t" | "p" | "q" | "k" | "v" | "x") => string) =>
  `concat(toString(${c("j")}), ',', toString(${c("t")}), ',', ${c("p")}, ',', ${dec(c("q"))}, ',', ${dec(c("k"))}, ',', ${dec(c("v"))}, ',', ${dec(c("x"))})`
const tupleIndex = { j: 1, t: 2, p: 3, q: 4, k: 5, v: 6, x: 7 } as const

/**
 * The ranges' rows as one text page (`j,t,p,q,k,v,x` lines, `j` the 1-based range, any order).
 * A row joins the range of its token it falls in (`ranges[i]`: the token's range indexes);
 * `row_number` per range in chain order keeps each range's first `rowsMax` (measured cheaper
 * than `ORDER BY ... LIMIT BY` over `FINAL`).
 */
const rangesSql = `
SELECT toString(count()) AS n, arrayStringConcat(groupArray(line), '\n') AS page FROM (
  SELECT ${lineSql((c) => c)} AS line FROM (
    SELECT j, t, p, q, k, v, x, row_number() OVER (PARTITION BY j ORDER BY t, p) AS rn FROM (
      SELECT arrayJoin(arrayFilter(
          j -> t <= {toT:Array(Int64)}[j] AND (t > {afterT:Array(Int64)}[j] OR (t = {afterT:Array(Int64)}[j] AND {afterP:Array(String)}[j] != '' AND p > {afterP:Array(String)}[j])),
          {ranges:Array(Array(UInt32))}[i])) AS j, t, p, q, k, v, x
      FROM (${tokenRowsSql}) WHERE i > 0
    )
  ) WHERE rn <= {rowsMax:Array(UInt32)}[j]
)`

/** Per token, its last row (chain order) between `fromT[i]` and `toT[i]`. */
const lastSql = `
SELECT arrayStringConcat(groupArray(line), '\n') AS page FROM (
  SELECT ${lineSql((c) => `r.${tupleIndex[c]}`)} AS line FROM (
    SELECT argMax((i, t, p, q, k, v, x), (t, p)) AS r FROM (${tokenRowsSql})
    WHERE i > 0 AND t >= {fromT:Array(Int64)}[i] AND t <= {toT:Array(Int64)}[i]
    GROUP BY i
  )
)`

interface Token {
  readonly chain: string
  readonly asset: string
}

const tokenKey = (t: Token) => `${t.chain},${t.asset}`

/** The statement's tokens (`keys`, `idx`) and the coarse filter every row passes. */
const tokenParams = (fromMs: number, keys: ReadonlyArray<string>, tokens: ReadonlyArray<Token>, loT: number, hiT: number) => ({
  fromMs,
  keys,
  idx: keys.map((_, i) => i + 1),
  chains: [...new Set(tokens.map((r) => r.chain))],
  mints: [...new Set(tokens.map((r) => r.asset))],
  lo: fromMs + Math.max(0, loT),
  hi: fromMs + hiT
})

/** `j,t,p,q,k,v,x` lines into trades of `owners[j - 1]`, appended to `out[j - 1]`. */
const parseLines = (text: string, owners: ReadonlyArray<Token>, out: Array<Array<ReplayTrade>>): void => {
  if (text === "") return
  for (const line of text.split("\n")) {
    const a = line.split(",")
    const j = Number(a[0]) - 1
    const owner = owners[j]
    if (a.length !== 7 || owner === undefined) throw new Error(`replay ranges: malformed line ${JSON.stringify(line.slice(0, 200))}`)
    out[j]!.push({ c: owner.chain, m: owner.asset, t: Number(a[1]), p: a[2]!, q: a[3]!, k: a[4]!, v: a[5]!, x: a[6]! })
  }
}

/** Chain order of two trades of one token. */
export const chainOrder = (a: ReplayTrade, b: ReplayTrade): number => a.t - b.t || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0)

const malformed = (cause: unknown) => new ClickHouseError({ reason: "QueryFailed", message: String(cause), cause })

/**
 * Reads the ranges: per range (same index), its trades in chain order, at most `rowsMax` (fewer
 * means the range holds no more). One statement per group of ranges whose `rowsMax` add up to at
 * most the page bound (`statements`: how many ran).
 */
export const readReplayRanges = (
  query: ReplayRangeQuery
): Effect.Effect<{ readonly trades: Array<Array<ReplayTrade>>; readonly statements: number }, ClickHouseError, ClickHouse> =>
  Effect.gen(function* () {
    const ch = yield* ClickHouse
    const pageRowsMax = query.pageRowsMax ?? replayPageRowsMax
    const out: Array<Array<ReplayTrade>> = query.ranges.map(() => [])
    let statements = 0
    let start = 0
    while (start < query.ranges.length) {
      let end = start
      let rows = 0
      while (end < query.ranges.length && (end === start || rows + query.ranges[end]!.rowsMax <= pageRowsMax)) {
        rows += query.ranges[end]!.rowsMax
        end++
      }
      const group = query.ranges.slice(start, end)
      if (group.some((r) => r.rowsMax < 1 || r.rowsMax > pageRowsMax || r.toT < r.afterT || (r.toT === r.afterT && r.afterP === "")))
        return yield* new ClickHouseError({ reason: "InvalidRequest", message: "replay ranges: an empty range, or rowsMax outside 1..pageRowsMax" })
      const keys: Array<string> = []
      const tokens: Array<Token> = []
      const rangesOf: Array<Array<number>> = []
      const indexOf = new Map<string, number>()
      group.forEach((r, j) => {
        const key = tokenKey(r)
        let i = indexOf.get(key)
        if (i === undefined) {
          i = keys.length
          indexOf.set(key, i)
          keys.push(key)
          tokens.push(r)
          rangesOf.push([])
        }
        rangesOf[i]!.push(j + 1)
      })
      statements++
      const [raw] = yield* ch.query<{ n: string; page: string }>(rangesSql, {
        ...tokenParams(query.fromMs, keys, tokens, group.reduce((m, r) => Math.min(m, r.afterT), Number.POSITIVE_INFINITY), group.reduce((m, r) => Math.max(m, r.toT), 0)),
        ranges: rangesOf,
        afterT: group.map((r) => r.afterT),
        afterP: group.map((r) => r.afterP),
        toT: group.map((r) => r.toT),
        rowsMax: group.map((r) => r.rowsMax)
      })
      const part: Array<Array<ReplayTrade>> = group.map(() => [])
      yield* Effect.try({ try: () => parseLines(raw?.page ?? "", group, part), catch: malformed })
      for (let j = 0; j < group.length; j++) {
        const rowsOf = part[j]!.sort(chainOrder)
        if (rowsOf.length > group[j]!.rowsMax) return yield* malformed(new Error("replay ranges: a range returned more than its rowsMax"))
        out[start + j] = rowsOf
      }
      start = end
    }
    return { trades: out, statements }
  }).pipe(Effect.withSpan("ClickHouse.replayRanges"))

/** Per token (same index, each token once): its last trade with offset in `[fromT, toT]`, or undefined when it has none there. */
export const lastReplayTrades = (query: {
  readonly fromMs: number
  readonly ranges: ReadonlyArray<Token & { readonly fromT: number; readonly toT: number }>
}): Effect.Effect<Array<ReplayTrade | undefined>, ClickHouseError, ClickHouse> =>
  Effect.gen(function* () {
    if (query.ranges.length === 0) return []
    const ch = yield* ClickHouse
    const keys = query.ranges.map(tokenKey)
    if (new Set(keys).size !== keys.length) return yield* new ClickHouseError({ reason: "InvalidRequest", message: "replay last trades: a token twice" })
    const [raw] = yield* ch.query<{ page: string }>(lastSql, {
      ...tokenParams(query.fromMs, keys, query.ranges, query.ranges.reduce((m, r) => Math.min(m, r.fromT), Number.POSITIVE_INFINITY), query.ranges.reduce((m, r) => Math.max(m, r.toT), 0)),
      fromT: query.ranges.map((r) => r.fromT),
      toT: query.ranges.map((r) => r.toT)
    })
    const rows: Array<Array<ReplayTrade>> = query.ranges.map(() => [])
    yield* Effect.try({ try: () => parseLines(raw?.page ?? "", query.ranges, rows), catch: malformed })
    return rows.map((r) => r[0])
  }).pipe(Effect.withSpan("ClickHouse.replayLastTrades"))

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
