/**
 * OHLCV reads for one token: `candles(chain, mint, interval, fromMs, toMs)` returns the candles
 * of the range and a summary over it.
 *
 * Invariants:
 * - Exact whatever the delivery history: minutes the writer marked in `candles_1m_dirty` are
 *   recomputed from `trades FINAL` (retractions and copies collapsed), every other minute
 *   comes from the materialized `candles_1m` (which saw each of its trades once). Both halves
 *   are read by one statement, so a read never mixes two states of the mark table.
 * - Coarser intervals are rolled up from those minutes at query time (open = the first
 *   minute's open, close = the last minute's close), so every interval agrees with the 1m
 *   candles and with computing it from the trades directly (tested).
 * - Candles are aligned to the interval in UTC (4h at 00, 04, ... and 1d at midnight): `fromMs`
 *   is rounded down and `toMs` up to the interval, and only intervals with trades appear
 *   (gaps are not filled).
 * - Volumes are exact `bigint` raw units (decimal strings on the wire, see `Candle`); prices
 *   are floats (quote raw per token raw, `trades.price`), for charts only.
 * - Bounded: a request over `candlesMax` candles is refused before anything runs.
 */
import { Effect, Schema } from "effect"
import { ClickHouse } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"

export const CandleInterval = Schema.Literal("1m", "5m", "15m", "1h", "4h", "1d")
export type CandleInterval = typeof CandleInterval.Type

/** Minutes per interval. */
export const intervalMinutes: Record<CandleInterval, number> = {
  "1m": 1,
  "5m": 5,
  "15m": 15,
  "1h": 60,
  "4h": 240,
  "1d": 1440
}

/** Most candles one request may cover (30 days of 1m candles is 43,200). */
export const candlesMax = 50_000

export const Candle = Schema.Struct({
  /** Start of the interval, epoch ms (UTC). */
  startMs: Schema.Number,
  open: Schema.Number,
  high: Schema.Number,
  low: Schema.Number,
  close: Schema.Number,
  /** Gross quote notional in quote raw units (buys: quote paid less refunds; sells: proceeds before fee). */
  volumeQuoteRaw: Schema.BigInt,
  /** Tokens traded, raw units. */
  volumeTokenRaw: Schema.BigInt,
  trades: Schema.Number,
  buys: Schema.Number,
  sells: Schema.Number
})
export type Candle = typeof Candle.Type

export const CandleSummary = Schema.Struct({
  open: Schema.Number,
  high: Schema.Number,
  low: Schema.Number,
  close: Schema.Number,
  /** close - open. */
  change: Schema.Number,
  /** (close / open - 1) * 100; null when open is 0. */
  changePct: Schema.NullOr(Schema.Number),
  volumeQuoteRaw: Schema.BigInt,
  volumeTokenRaw: Schema.BigInt,
  trades: Schema.Number,
  buys: Schema.Number,
  sells: Schema.Number
})
export type CandleSummary = typeof CandleSummary.Type

export const CandleSeries = Schema.Struct({
  chain: Schema.String,
  mint: Schema.String,
  interval: CandleInterval,
  /** The aligned range actually covered: [fromMs, toMs). */
  fromMs: Schema.Number,
  toMs: Schema.Number,
  candles: Schema.Array(Candle),
  /** Over the candles returned; null when the range has no trades. */
  summary: Schema.NullOr(CandleSummary)
})
export type CandleSeries = typeof CandleSeries.Type

interface Row {
  readonly start_s: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume_quote_raw: string
  readonly volume_token_raw: string
  readonly trades: string
  readonly buys: string
  readonly sells: string
}

/**
 * Row decoding by hand: a 30-day 1m read is 43,200 rows, and Schema decoding them measured
 * several times the query itself. Checks every field it reads; a surprise is `QueryFailed`.
 */
const decodeRow = (raw: unknown): Candle => {
  const r = raw as Partial<Record<keyof Row, unknown>>
  const num = (v: unknown, name: string): number => {
    if (typeof v !== "number") throw new Error(`${name} is not a number: ${JSON.stringify(v)}`)
    return v
  }
  const int = (v: unknown, name: string): bigint => {
    if (typeof v !== "string" || !/^[0-9]+$/.test(v)) throw new Error(`${name} is not a decimal string: ${JSON.stringify(v)}`)
    return BigInt(v)
  }
  const count = (v: unknown, name: string): number => {
    const n = int(v, name)
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${name} is too large: ${n}`)
    return Number(n)
  }
  return {
    startMs: num(r.start_s, "start_s") * 1000,
    open: num(r.open, "open"),
    high: num(r.high, "high"),
    low: num(r.low, "low"),
    close: num(r.close, "close"),
    volumeQuoteRaw: int(r.volume_quote_raw, "volume_quote_raw"),
    volumeTokenRaw: int(r.volume_token_raw, "volume_token_raw"),
    trades: count(r.trades, "trades"),
    buys: count(r.buys, "buys"),
    sells: count(r.sells, "sells")
  }
}

/**
 * The statement. Both halves filter on the `(chain, mint, time)` key prefix; the trades half
 * reads only the granules of marked minutes (an `IN` on the key's time column), so with no
 * marks it reads next to nothing.
 */
const candlesSql = `
WITH dirty AS (
  SELECT bucket FROM candles_1m_dirty
  WHERE chain = {chain:String} AND mint = {mint:String}
    AND bucket >= toDateTime({fromS:UInt32}, 'UTC') AND bucket < toDateTime({toS:UInt32}, 'UTC')
)
SELECT
  toUnixTimestamp(toStartOfInterval(bucket, toIntervalMinute({minutes:UInt32}))) AS start_s,
  argMin(open, bucket) AS open,
  max(high) AS high,
  min(low) AS low,
  argMax(close, bucket) AS close,
  toString(sum(volume_quote_raw)) AS volume_quote_raw,
  toString(sum(volume_token_raw)) AS volume_token_raw,
  toString(sum(trades)) AS trades,
  toString(sum(buys)) AS buys,
  toString(sum(sells)) AS sells
FROM (
  SELECT
    bucket,
    argMinMerge(open) AS open,
    max(high) AS high,
    min(low) AS low,
    argMaxMerge(close) AS close,
    sum(volume_quote_raw) AS volume_quote_raw,
    sum(volume_token_raw) AS volume_token_raw,
    sum(trades) AS trades,
    sum(buys) AS buys,
    sum(sells) AS sells
  FROM candles_1m
  WHERE chain = {chain:String} AND mint = {mint:String}
    AND bucket >= toDateTime({fromS:UInt32}, 'UTC') AND bucket < toDateTime({toS:UInt32}, 'UTC')
    AND bucket NOT IN dirty
  GROUP BY bucket
  UNION ALL
  SELECT
    toStartOfMinute(ts) AS bucket,
    argMin(price, position),
    max(price),
    min(price),
    argMax(price, position),
    sum(quote_volume_raw),
    sum(token_volume_raw),
    toUInt64(count()),
    toUInt64(countIf(side = 'buy')),
    toUInt64(countIf(side = 'sell'))
  FROM trades FINAL
  WHERE chain = {chain:String} AND mint = {mint:String}
    AND ts >= toDateTime64({fromS:UInt32}, 3, 'UTC') AND ts < toDateTime64({toS:UInt32}, 3, 'UTC')
    AND toStartOfMinute(ts) IN dirty
  GROUP BY bucket
)
GROUP BY start_s
ORDER BY start_s`

/** Latest epoch second a `DateTime` holds. */
const DATETIME_S_MAX = 4_294_967_295

const invalid = (message: string) => new ClickHouseError({ reason: "InvalidRequest", message })

/** The candle range `[fromMs, toMs)` widened to whole intervals, in epoch seconds. */
export const alignRange = (
  interval: CandleInterval,
  fromMs: number,
  toMs: number
): { readonly fromS: number; readonly toS: number } => {
  const stepMs = intervalMinutes[interval] * 60_000
  return {
    fromS: (Math.floor(fromMs / stepMs) * stepMs) / 1000,
    toS: (Math.ceil(toMs / stepMs) * stepMs) / 1000
  }
}

export const summarize = (candles: ReadonlyArray<Candle>): CandleSummary | null => {
  const first = candles[0]
  const last = candles[candles.length - 1]
  if (first === undefined || last === undefined) return null
  let high = -Infinity
  let low = Infinity
  let volumeQuoteRaw = 0n
  let volumeTokenRaw = 0n
  let trades = 0
  let buys = 0
  let sells = 0
  for (const c of candles) {
    if (c.high > high) high = c.high
    if (c.low < low) low = c.low
    volumeQuoteRaw += c.volumeQuoteRaw
    volumeTokenRaw += c.volumeTokenRaw
    trades += c.trades
    buys += c.buys
    sells += c.sells
  }
  return {
    open: first.open,
    high,
    low,
    close: last.close,
    change: last.close - first.open,
    changePct: first.open === 0 ? null : (last.close / first.open - 1) * 100,
    volumeQuoteRaw,
    volumeTokenRaw,
    trades,
    buys,
    sells
  }
}

/** OHLCV of one token over `[fromMs, toMs)` (widened to whole intervals), with its summary. */
export const candles = Effect.fn("ClickHouse.candles")(function* (
  chain: string,
  mint: string,
  interval: CandleInterval,
  fromMs: number,
  toMs: number
) {
  if (!Schema.is(CandleInterval)(interval)) return yield* invalid(`unknown candle interval ${JSON.stringify(interval)}`)
  if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs < 0 || fromMs >= toMs) {
    return yield* invalid(`candle range must be whole epoch ms with 0 <= from < to, got [${fromMs}, ${toMs})`)
  }
  const { fromS, toS } = alignRange(interval, fromMs, toMs)
  if (toS > DATETIME_S_MAX) return yield* invalid(`candle range ends after 2106`)
  const count = (toS - fromS) / (intervalMinutes[interval] * 60)
  if (count > candlesMax) {
    return yield* invalid(`candle range covers ${count} ${interval} candles; at most ${candlesMax} per request`)
  }
  const ch = yield* ClickHouse
  const raw = yield* ch.query(candlesSql, { chain, mint, fromS, toS, minutes: intervalMinutes[interval] })
  const series = yield* Effect.try({
    try: () => raw.map(decodeRow),
    catch: (cause) =>
      new ClickHouseError({ reason: "QueryFailed", message: `candles: unexpected row shape: ${String(cause)}`, cause })
  })
  const result: CandleSeries = {
    chain,
    mint,
    interval,
    fromMs: fromS * 1000,
    toMs: toS * 1000,
    candles: series,
    summary: summarize(series)
  }
  return result
})
