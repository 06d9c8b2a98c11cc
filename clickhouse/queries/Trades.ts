/**
 * Trade reads: a token's newest trades (`recentTrades`) and a wallet's (`walletTrades`).
 *
 * Invariants:
 * - Each trade appears once and retracted trades never do. How, per read (both measured on
 *   10M trades, `bench/clickhouse.ts`):
 *   - `recentTrades` reads `trades FINAL` over a window: the time of the token's newest
 *     `window` rows is found first without FINAL (read in key order), then FINAL collapses only
 *     that window. Every copy of a trade has the same `ts`, so a window cut by time holds all
 *     of a trade's copies. When copies or retractions leave fewer than `limit` live trades in
 *     the window, it grows (x8) until it covers the token.
 *   - `walletTrades` cannot use FINAL cheaply (a wallet's trades are spread over every mint's
 *     granules, and FINAL would merge all of them), so it keeps the newest version of each
 *     sorting key among the wallet's rows (`LIMIT 1 BY` the key after ordering by version) and
 *     drops retracted ones. This is exactly FINAL for those rows, because every copy and
 *     retraction of a trade carries the same trader (measured 5-10x faster than FINAL).
 * - Amounts are exact `bigint` raw units (decimal strings on the wire, see `TradeRecord`).
 * - `limit` is 1..`tradesLimitMax`; values enter SQL only as bound parameters.
 */
import { Effect, Schema } from "effect"
import { ChainId } from "../../ingest/ChainEvent.js"
import { ClickHouse } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"

/** Most trades one read returns. */
export const tradesLimitMax = 1_000

export const TradeRecord = Schema.Struct({
  id: Schema.String,
  chain: ChainId,
  mint: Schema.String,
  venue: Schema.Literal("curve", "pool"),
  side: Schema.Literal("buy", "sell"),
  trader: Schema.String,
  amountInRaw: Schema.BigInt,
  amountOutRaw: Schema.BigInt,
  feeRaw: Schema.BigInt,
  refundRaw: Schema.BigInt,
  quoteConsumedRaw: Schema.BigInt,
  quoteReserveRaw: Schema.BigInt,
  tokenReserveRaw: Schema.BigInt,
  realQuoteRaw: Schema.BigInt,
  /** Gross quote notional and tokens of the trade (as the candles count them). */
  volumeQuoteRaw: Schema.BigInt,
  volumeTokenRaw: Schema.BigInt,
  /** Quote raw per token raw, fee-free execution price; analytics only. */
  price: Schema.Number,
  crossesGraduation: Schema.Boolean,
  position: Schema.String,
  timestampMs: Schema.Number,
  signature: Schema.String
})
export type TradeRecord = typeof TradeRecord.Type

const Row = Schema.Struct({
  id: Schema.String,
  chain: ChainId,
  mint: Schema.String,
  venue: Schema.Literal("curve", "pool"),
  side: Schema.Literal("buy", "sell"),
  trader: Schema.String,
  amount_in_raw: Schema.BigInt,
  amount_out_raw: Schema.BigInt,
  fee_raw: Schema.BigInt,
  refund_raw: Schema.BigInt,
  quote_consumed_raw: Schema.BigInt,
  quote_reserve_raw: Schema.BigInt,
  token_reserve_raw: Schema.BigInt,
  real_quote_raw: Schema.BigInt,
  quote_volume_raw: Schema.BigInt,
  token_volume_raw: Schema.BigInt,
  price: Schema.Number,
  crosses_graduation: Schema.Boolean,
  position: Schema.String,
  ts_ms: Schema.NumberFromString,
  signature: Schema.String
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const columnsSql = `id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw,
  quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, quote_volume_raw, token_volume_raw,
  price, crosses_graduation, position, toUnixTimestamp64Milli(ts) AS ts_ms, signature`

const toRecord = (r: typeof Row.Type): TradeRecord => ({
  id: r.id,
  chain: r.chain,
  mint: r.mint,
  venue: r.venue,
  side: r.side,
  trader: r.trader,
  amountInRaw: r.amount_in_raw,
  amountOutRaw: r.amount_out_raw,
  feeRaw: r.fee_raw,
  refundRaw: r.refund_raw,
  quoteConsumedRaw: r.quote_consumed_raw,
  quoteReserveRaw: r.quote_reserve_raw,
  tokenReserveRaw: r.token_reserve_raw,
  realQuoteRaw: r.real_quote_raw,
  volumeQuoteRaw: r.quote_volume_raw,
  volumeTokenRaw: r.token_volume_raw,
  price: r.price,
  crossesGraduation: r.crosses_graduation,
  position: r.position,
  timestampMs: r.ts_ms,
  signature: r.signature
})

const invalid = (message: string) => new ClickHouseError({ reason: "InvalidRequest", message })

const checkLimit = (limit: number) =>
  Number.isSafeInteger(limit) && limit >= 1 && limit <= tradesLimitMax
    ? Effect.void
    : Effect.fail(invalid(`limit must be an integer in 1..${tradesLimitMax}, got ${limit}`))

const decode = (what: string, raw: ReadonlyArray<unknown>) =>
  decodeRows(raw).pipe(
    Effect.map((rows) => rows.map(toRecord)),
    Effect.mapError((cause) => new ClickHouseError({ reason: "QueryFailed", message: `${what}: unexpected row shape: ${cause.message}`, cause }))
  )

/** A window this large is not worth bounding: read the token whole. */
const windowRowsMax = 1_000_000

const windowSql = `
SELECT toString(toUnixTimestamp64Milli(min(ts))) AS since_ms, toString(count()) AS n FROM (
  SELECT ts FROM trades WHERE chain = {chain:String} AND mint = {mint:String}
  ORDER BY ts DESC LIMIT {window:UInt32}
)`

const recentInWindowSql = `
SELECT ${columnsSql} FROM trades FINAL
WHERE chain = {chain:String} AND mint = {mint:String} AND ts >= fromUnixTimestamp64Milli({sinceMs:Int64}, 'UTC')
ORDER BY ts DESC, position DESC
LIMIT {limit:UInt32}`

const recentAllSql = `
SELECT ${columnsSql} FROM trades FINAL
WHERE chain = {chain:String} AND mint = {mint:String}
ORDER BY ts DESC, position DESC
LIMIT {limit:UInt32}`

/** The newest `limit` live trades of one token, newest first. */
export const recentTrades = Effect.fn("ClickHouse.recentTrades")(function* (chain: string, mint: string, limit: number) {
  yield* checkLimit(limit)
  const ch = yield* ClickHouse
  // Room for copies and retractions in the first window; most reads need only it.
  let window = limit * 2 + 16
  while (window < windowRowsMax) {
    const [stats] = yield* ch.query<{ since_ms: string; n: string }>(windowSql, { chain, mint, window })
    const rows = Number(stats?.n ?? "0")
    if (rows === 0) return []
    const found = yield* decode("recentTrades", yield* ch.query(recentInWindowSql, { chain, mint, sinceMs: Number(stats!.since_ms), limit }))
    // Enough live trades, or the window already holds every row of the token.
    if (found.length >= limit || rows < window) return found
    window *= 8
  }
  return yield* decode("recentTrades", yield* ch.query(recentAllSql, { chain, mint, limit }))
})

const walletSql = `
SELECT ${columnsSql} FROM (
  SELECT id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw,
    quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, quote_volume_raw, token_volume_raw,
    price, crosses_graduation, position, ts, signature, version, retracted
  FROM trades
  WHERE trader = {trader:String}
  ORDER BY ts DESC, position DESC, id, version DESC
  LIMIT 1 BY chain, mint, ts, position, id
)
WHERE retracted = 0
ORDER BY ts DESC, position DESC
LIMIT {limit:UInt32}`

/** The newest `limit` live trades of one wallet across tokens, newest first. */
export const walletTrades = Effect.fn("ClickHouse.walletTrades")(function* (trader: string, limit: number) {
  yield* checkLimit(limit)
  const ch = yield* ClickHouse
  return yield* decode("walletTrades", yield* ch.query(walletSql, { trader, limit }))
})
