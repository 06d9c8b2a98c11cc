/**
 * Wallet and social reads of the market-data service (spec 4.5) over `trades`: one wallet's trade
 * history (stats, activity, token breakdown, portfolio), trades by a set of labelled wallets,
 * a wallet's book legs (opposite-side trades by other wallets on the same token close in time),
 * per-token volume over a window (trending) and the price in force at given instants (mention
 * marks).
 *
 * Invariants:
 * - Each trade counts once and a retracted trade never does. Reads keyed by trader keep the newest
 *   version of each sorting key (`LIMIT 1 BY` the key after ordering by version, then drop
 *   retractions), which is exactly FINAL for those rows (see `Trades.ts`); reads keyed by mint use
 *   `trades FINAL` on the key prefix.
 * - Amounts are exact `bigint` raw units; values enter SQL only as bound parameters; every result
 *   is bounded by a `LIMIT` (one more row is read where the caller must know it was cut).
 */
import { Effect } from "effect"
import type { ClickHouseShape } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"
import { bad, big, num } from "./internal/rows.js"

/** Most trades of one wallet a history read considers (the newest ones). */
export const walletHistoryMax = 20_000
/** Most rows a trade list returns. */
export const tradeListMax = 500
/** Most book-leg pairs one read returns. */
export const bookLegsMax = 1_000
/** Most instants one price-at read resolves. */
export const pricesAtMax = 1_000

export interface WalletTrade {
  readonly id: string
  readonly mint: string
  readonly venue: "curve" | "pool"
  readonly side: "buy" | "sell"
  readonly trader: string
  /** Tokens bought (buy) or sold (sell). */
  readonly tokenRaw: bigint
  /** What a buyer paid (fee included, refund excluded) or what a seller received (after the fee). */
  readonly quoteRaw: bigint
  /** Gross quote notional (the candles' volume): buyer's payment or seller's proceeds before the fee. */
  readonly volumeQuoteRaw: bigint
  readonly feeRaw: bigint
  readonly quoteReserveRaw: bigint
  readonly tokenReserveRaw: bigint
  readonly position: string
  readonly atMs: number
  readonly signature: string
}



const decodeAll = <A>(what: string, rows: ReadonlyArray<Record<string, unknown>>, f: (r: Record<string, unknown>) => A) =>
  Effect.try({ try: () => rows.map(f), catch: bad(what) })

const invalid = (message: string) => new ClickHouseError({ reason: "InvalidRequest", message })

const tradeColumns = `id, mint, toString(venue) AS venue, toString(side) AS side, trader,
  toString(token_volume_raw) AS token_raw,
  toString(if(side = 'buy', quote_consumed_raw, amount_out_raw)) AS quote_raw,
  toString(quote_volume_raw) AS volume_raw, toString(fee_raw) AS fee_raw,
  toString(quote_reserve_raw) AS qr, toString(token_reserve_raw) AS tr,
  position, toString(toUnixTimestamp64Milli(ts)) AS at_ms, signature`

const decodeTrade = (r: Record<string, unknown>): WalletTrade => ({
  id: String(r.id),
  mint: String(r.mint),
  venue: r.venue === "pool" ? "pool" : "curve",
  side: r.side === "sell" ? "sell" : "buy",
  trader: String(r.trader),
  tokenRaw: big(r.token_raw, "token_raw"),
  quoteRaw: big(r.quote_raw, "quote_raw"),
  volumeQuoteRaw: big(r.volume_raw, "volume_raw"),
  feeRaw: big(r.fee_raw, "fee_raw"),
  quoteReserveRaw: big(r.qr, "qr"),
  tokenReserveRaw: big(r.tr, "tr"),
  position: String(r.position),
  atMs: num(r.at_ms, "at_ms"),
  signature: String(r.signature)
})

/** The live rows of `traders` (deduplicated exactly like FINAL), with extra filters. */
const liveByTrader = (filter: string) => `
  SELECT * FROM (
    SELECT id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, quote_consumed_raw,
      quote_reserve_raw, token_reserve_raw, quote_volume_raw, token_volume_raw, position, ts, signature, version, retracted
    FROM trades
    WHERE chain = {chain:String} AND trader IN {traders:Array(String)}${filter}
    ORDER BY ts DESC, position DESC, id, version DESC
    LIMIT 1 BY chain, mint, ts, position, id
  ) WHERE retracted = 0`

export interface TradeFilter {
  readonly sinceMs?: number | undefined
  /** Exclusive. */
  readonly beforeMs?: number | undefined
  readonly mint?: string | undefined
}

const filterSql = (f: TradeFilter) =>
  (f.sinceMs === undefined ? "" : " AND ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')") +
  (f.beforeMs === undefined ? "" : " AND ts < fromUnixTimestamp64Milli({before:Int64}, 'UTC')") +
  (f.mint === undefined ? "" : " AND mint = {mint:String}")

const filterParams = (f: TradeFilter) => ({
  ...(f.sinceMs === undefined ? {} : { since: f.sinceMs }),
  ...(f.beforeMs === undefined ? {} : { before: f.beforeMs }),
  ...(f.mint === undefined ? {} : { mint: f.mint })
})

/**
 * Trades of `traders` matching `filter`, newest first, at most `limit` (1..`walletHistoryMax`+1:
 * history reads ask one more to learn whether the history was cut).
 */
export const tradesOf = (
  ch: ClickHouseShape,
  chain: string,
  traders: ReadonlyArray<string>,
  filter: TradeFilter,
  limit: number
): Effect.Effect<ReadonlyArray<WalletTrade>, ClickHouseError> =>
  Effect.gen(function* () {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > walletHistoryMax + 1) return yield* invalid(`limit must be 1..${walletHistoryMax + 1}`)
    if (traders.length === 0) return []
    const rows = yield* ch.query(`SELECT ${tradeColumns} FROM (${liveByTrader(filterSql(filter))}) ORDER BY ts DESC, position DESC, id LIMIT {limit:UInt32}`, {
      chain,
      traders,
      limit,
      ...filterParams(filter)
    })
    return yield* decodeAll("tradesOf", rows, decodeTrade)
  })

/**
 * One wallet's whole trade history, oldest first, for average-cost accounting: the newest
 * `walletHistoryMax` trades; `truncated` when older ones exist (their cost basis is then unknown).
 */
export const walletHistory = (
  ch: ClickHouseShape,
  chain: string,
  trader: string
): Effect.Effect<{ readonly trades: ReadonlyArray<WalletTrade>; readonly truncated: boolean }, ClickHouseError> =>
  Effect.map(tradesOf(ch, chain, [trader], {}, walletHistoryMax + 1), (newestFirst) => ({
    trades: newestFirst.slice(0, walletHistoryMax).reverse(),
    truncated: newestFirst.length > walletHistoryMax
  }))

export interface BookLeg {
  readonly mine: WalletTrade
  readonly other: WalletTrade
}

/**
 * Book legs of `trader`: each of its trades since `sinceMs` paired with every opposite-side
 * trade by another wallet on the same token within `windowMs` either side, newest first, at most
 * `limit` pairs (1..`bookLegsMax` + 1).
 */
export const bookLegs = (
  ch: ClickHouseShape,
  chain: string,
  trader: string,
  sinceMs: number,
  windowMs: number,
  limit: number
): Effect.Effect<ReadonlyArray<BookLeg>, ClickHouseError> =>
  Effect.gen(function* () {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > bookLegsMax + 1) return yield* invalid(`limit must be 1..${bookLegsMax + 1}`)
    const cols = (p: string) =>
      `${p}.id AS ${p}_id, ${p}.mint AS ${p}_mint, toString(${p}.venue) AS ${p}_venue, toString(${p}.side) AS ${p}_side, ${p}.trader AS ${p}_trader,
       toString(${p}.token_volume_raw) AS ${p}_token_raw,
       toString(if(${p}.side = 'buy', ${p}.quote_consumed_raw, ${p}.amount_out_raw)) AS ${p}_quote_raw,
       toString(${p}.quote_volume_raw) AS ${p}_volume_raw, toString(${p}.fee_raw) AS ${p}_fee_raw,
       toString(${p}.quote_reserve_raw) AS ${p}_qr, toString(${p}.token_reserve_raw) AS ${p}_tr,
       ${p}.position AS ${p}_position, toString(toUnixTimestamp64Milli(${p}.ts)) AS ${p}_at_ms, ${p}.signature AS ${p}_signature`
    const rows = yield* ch.query(
      `WITH mine AS (${liveByTrader(" AND ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')")})
      SELECT ${cols("m")}, ${cols("o")}
      FROM mine AS m
      INNER JOIN (
        SELECT mint, venue, side, trader, id, amount_out_raw, fee_raw, quote_consumed_raw, quote_reserve_raw, token_reserve_raw,
          quote_volume_raw, token_volume_raw, position, ts, signature
        FROM trades FINAL
        WHERE chain = {chain:String} AND mint IN (SELECT DISTINCT mint FROM mine)
          AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND trader != {trader:String}
      ) AS o ON m.mint = o.mint
      WHERE o.side != m.side AND abs(toUnixTimestamp64Milli(o.ts) - toUnixTimestamp64Milli(m.ts)) <= {window:Int64}
      ORDER BY m.ts DESC, m.position DESC, o.ts, o.position
      LIMIT {limit:UInt32}`,
      { chain, traders: [trader], trader, since: sinceMs, from: sinceMs - windowMs, window: windowMs, limit }
    )
    const strip = (r: Record<string, unknown>, p: string) => {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(r)) if (k.startsWith(`${p}_`)) out[k.slice(p.length + 1)] = v
      return out
    }
    return yield* decodeAll("bookLegs", rows, (r) => ({ mine: decodeTrade(strip(r, "m")), other: decodeTrade(strip(r, "o")) }))
  })

export interface MintVolume {
  readonly mint: string
  readonly trades: number
  readonly traders: number
  readonly volumeQuoteRaw: bigint
}

/** Trades, distinct traders and gross quote volume of each of `mints` since `sinceMs`. */
export const mintVolumes = (
  ch: ClickHouseShape,
  chain: string,
  mints: ReadonlyArray<string>,
  sinceMs: number
): Effect.Effect<ReadonlyArray<MintVolume>, ClickHouseError> =>
  mints.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(
        ch.query(
          `SELECT mint, toString(count()) AS n, toString(uniqExact(trader)) AS traders, toString(sum(quote_volume_raw)) AS volume
          FROM trades FINAL
          WHERE chain = {chain:String} AND mint IN {mints:Array(String)} AND ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
          GROUP BY mint ORDER BY mint`,
          { chain, mints, since: sinceMs }
        ),
        (rows) =>
          decodeAll("mintVolumes", rows, (r) => ({
            mint: String(r.mint),
            trades: num(r.n, "n"),
            traders: num(r.traders, "traders"),
            volumeQuoteRaw: big(r.volume, "volume")
          }))
      )

export interface PriceAt {
  readonly atMs: number
  /** The last trade at or before `atMs`, or null when the token had not traded yet. */
  readonly tradeAtMs: number | null
  readonly quoteReserveRaw: bigint
  readonly tokenReserveRaw: bigint
}

/**
 * The reserves after the last trade of `mint` at or before each instant (the price in force
 * then), in the order of `instantsMs` (at most `pricesAtMax`).
 */
export const pricesAt = (
  ch: ClickHouseShape,
  chain: string,
  mint: string,
  instantsMs: ReadonlyArray<number>
): Effect.Effect<ReadonlyArray<PriceAt>, ClickHouseError> =>
  Effect.gen(function* () {
    if (instantsMs.length > pricesAtMax) return yield* invalid(`at most ${pricesAtMax} instants`)
    if (instantsMs.length === 0) return []
    const distinct = [...new Set(instantsMs)]
    const rows = yield* ch.query(
      `SELECT toString(m.at) AS at_ms, toString(t.t_ms) AS trade_ms, toString(t.qr) AS qr, toString(t.tr) AS tr, t.found AS found
      FROM (SELECT arrayJoin({instants:Array(Int64)}) AS at, 1 AS k) AS m
      ASOF LEFT JOIN (
        SELECT 1 AS k, toUnixTimestamp64Milli(ts) AS t_ms, quote_reserve_raw AS qr, token_reserve_raw AS tr, toUInt8(1) AS found
        FROM trades FINAL WHERE chain = {chain:String} AND mint = {mint:String} AND ts <= fromUnixTimestamp64Milli({last:Int64}, 'UTC')
        ORDER BY ts, position DESC
        LIMIT 1 BY ts
      ) AS t ON m.k = t.k AND m.at >= t.t_ms`,
      { chain, mint, instants: distinct, last: Math.max(...distinct) }
    )
    const decoded = yield* decodeAll("pricesAt", rows, (r): PriceAt => {
      const found = Number(r.found) === 1
      return {
        atMs: num(r.at_ms, "at_ms"),
        tradeAtMs: found ? num(r.trade_ms, "trade_ms") : null,
        quoteReserveRaw: found ? big(r.qr, "qr") : 0n,
        tokenReserveRaw: found ? big(r.tr, "tr") : 0n
      }
    })
    const byAt = new Map(decoded.map((p) => [p.atMs, p]))
    return instantsMs.map((at) => byAt.get(at) ?? { atMs: at, tradeAtMs: null, quoteReserveRaw: 0n, tokenReserveRaw: 0n })
  })
