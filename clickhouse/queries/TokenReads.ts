/**
 * Token reads of the market-data service (spec 4.5) over `trades`: net positions per wallet
 * (top traders, holders, wallet P&L, cohort overlap), per-venue totals, the launch overview's
 * aggregates, gainers, tracked-wallet activity and recent graduations.
 *
 * Invariants:
 * - Every read goes through `trades FINAL` filtered on the `(chain, mint, ts)` key prefix, so a
 *   redelivered copy counts once and a retracted trade never counts.
 * - Positions are exact integers: tokens bought/sold are `token_volume_raw` sums, quote spent is
 *   what buyers paid (`quote_consumed_raw`: fee included, refund excluded), quote received is what
 *   sellers got (`amount_out_raw`, after the fee). Differences are `Int256` (a wallet may sell
 *   tokens it received outside a trade, so net can be negative). Values enter SQL only as bound
 *   parameters; every list is bounded by the caller and every result by a `LIMIT`.
 * - Spot valuation (`value`) is `held * quoteReserve / tokenReserve`, floored, with `held` the
 *   positive part of the net position: the price the market record shows, in raw quote units.
 */
import { Effect } from "effect"
import type { ClickHouseShape } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"
import { bad, big, num } from "./internal/rows.js"

/** Most rows a position read returns. */
export const positionsLimitMax = 200
/** Most wallets a cohort read returns in the overlap list (one more is read to flag truncation). */
export const cohortWalletsMax = 10_000

export interface Position {
  readonly trader: string
  readonly boughtRaw: bigint
  readonly soldRaw: bigint
  /** bought - sold (may be negative). */
  readonly netRaw: bigint
  /** Positive part of `netRaw`. */
  readonly heldRaw: bigint
  readonly spentQuoteRaw: bigint
  readonly receivedQuoteRaw: bigint
  /** `heldRaw` at the spot price, floored (raw quote units). */
  readonly valueQuoteRaw: bigint
  /** received + value - spent. */
  readonly pnlQuoteRaw: bigint
  readonly buys: number
  readonly sells: number
  readonly firstTradeMs: number
  readonly lastTradeMs: number
}

/** The spot price as reserves (`tokenRaw` 0 means no price: values are 0). */
export interface SpotReserves {
  readonly quoteRaw: bigint
  readonly tokenRaw: bigint
}

export type PositionOrder = "pnl" | "volume" | "held"


const float = (v: unknown, name: string): number => {
  if (typeof v !== "number") throw new Error(`${name} is not a number: ${JSON.stringify(v)}`)
  return v
}

const positionsInner = (filter: string) => `
  SELECT trader,
    sumIf(token_volume_raw, side = 'buy') AS bought,
    sumIf(token_volume_raw, side = 'sell') AS sold,
    sumIf(quote_consumed_raw, side = 'buy') AS spent,
    sumIf(amount_out_raw, side = 'sell') AS received,
    countIf(side = 'buy') AS buys,
    countIf(side = 'sell') AS sells,
    min(ts) AS first_ts,
    max(ts) AS last_ts
  FROM trades FINAL
  WHERE chain = {chain:String} AND mint = {mint:String}${filter}
  GROUP BY trader`

const positionsSelect = (filter: string) => `
SELECT trader,
  toString(bought) AS bought, toString(sold) AS sold, toString(n_net) AS net, toString(n_held) AS held,
  toString(spent) AS spent, toString(received) AS received, toString(n_value) AS value, toString(n_pnl) AS pnl,
  toString(buys) AS buys, toString(sells) AS sells,
  toString(toUnixTimestamp64Milli(first_ts)) AS first_ms, toString(toUnixTimestamp64Milli(last_ts)) AS last_ms,
  n_held, n_pnl, n_volume
FROM (
  SELECT *,
    toInt256(bought) - toInt256(sold) AS n_net,
    toUInt256(greatest(n_net, toInt256(0))) AS n_held,
    if({tr:UInt256} = 0, toUInt256(0), intDiv(n_held * {qr:UInt256}, {tr:UInt256})) AS n_value,
    toInt256(received) + toInt256(n_value) - toInt256(spent) AS n_pnl,
    bought + sold AS n_volume
  FROM (${positionsInner(filter)})
)`

const decodePosition = (r: Record<string, unknown>): Position => ({
  trader: String(r.trader),
  boughtRaw: big(r.bought, "bought"),
  soldRaw: big(r.sold, "sold"),
  netRaw: big(r.net, "net"),
  heldRaw: big(r.held, "held"),
  spentQuoteRaw: big(r.spent, "spent"),
  receivedQuoteRaw: big(r.received, "received"),
  valueQuoteRaw: big(r.value, "value"),
  pnlQuoteRaw: big(r.pnl, "pnl"),
  buys: num(r.buys, "buys"),
  sells: num(r.sells, "sells"),
  firstTradeMs: num(r.first_ms, "first_ms"),
  lastTradeMs: num(r.last_ms, "last_ms")
})

const decodeAll = <A>(what: string, rows: ReadonlyArray<Record<string, unknown>>, f: (r: Record<string, unknown>) => A) =>
  Effect.try({ try: () => rows.map(f), catch: bad(what) })

const reserveParams = (spot: SpotReserves) => ({ qr: spot.quoteRaw.toString(), tr: spot.tokenRaw.toString() })

const ORDER_SQL: Record<PositionOrder, string> = {
  pnl: "n_pnl DESC, trader",
  volume: "n_volume DESC, trader",
  held: "n_held DESC, trader"
}

/**
 * The top `limit` wallets of a token by `order`; `holdersOnly` keeps wallets still holding. With
 * the count of wallets that qualify (traders, or holders).
 */
export const topPositions = (
  ch: ClickHouseShape,
  chain: string,
  mint: string,
  spot: SpotReserves,
  order: PositionOrder,
  limit: number,
  holdersOnly: boolean
): Effect.Effect<{ readonly positions: ReadonlyArray<Position>; readonly total: number }, ClickHouseError> =>
  Effect.gen(function* () {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > positionsLimitMax) {
      return yield* new ClickHouseError({ reason: "InvalidRequest", message: `limit must be 1..${positionsLimitMax}` })
    }
    const where = holdersOnly ? "WHERE n_held > 0" : ""
    const params = { chain, mint, limit, ...reserveParams(spot) }
    const rows = yield* ch.query(`${positionsSelect("")} ${where} ORDER BY ${ORDER_SQL[order]} LIMIT {limit:UInt32}`, params)
    const positions = yield* decodeAll("topPositions", rows, decodePosition)
    const [count] = yield* ch.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM (${positionsInner("")}) ${holdersOnly ? "WHERE toInt256(bought) > toInt256(sold)" : ""}`,
      { chain, mint }
    )
    return { positions, total: Number(count?.n ?? "0") }
  })

/** Positions of the given wallets in a token (wallets that never traded it are absent). */
export const walletPositions = (
  ch: ClickHouseShape,
  chain: string,
  mint: string,
  spot: SpotReserves,
  wallets: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Position>, ClickHouseError> =>
  wallets.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(
        ch.query(`${positionsSelect(" AND trader IN {wallets:Array(String)}")} ORDER BY trader`, {
          chain,
          mint,
          wallets,
          ...reserveParams(spot)
        }),
        (rows) => decodeAll("walletPositions", rows, decodePosition)
      )

export interface VenueTotals {
  readonly venue: "curve" | "pool"
  readonly trades: number
  readonly buys: number
  readonly sells: number
  readonly volumeQuoteRaw: bigint
  readonly trades24h: number
  readonly volume24hQuoteRaw: bigint
  readonly firstTradeMs: number
  readonly lastTradeMs: number
}

/** Lifetime and last-24-hours totals per venue (`since24hMs` = now - 24 h). */
export const venueTotals = (
  ch: ClickHouseShape,
  chain: string,
  mint: string,
  since24hMs: number
): Effect.Effect<ReadonlyArray<VenueTotals>, ClickHouseError> =>
  Effect.flatMap(
    ch.query(
      `SELECT toString(venue) AS venue, toString(count()) AS trades, toString(countIf(side = 'buy')) AS buys,
        toString(countIf(side = 'sell')) AS sells, toString(sum(quote_volume_raw)) AS volume,
        toString(countIf(ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC'))) AS trades24h,
        toString(sumIf(quote_volume_raw, ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC'))) AS volume24h,
        toString(toUnixTimestamp64Milli(min(ts))) AS first_ms, toString(toUnixTimestamp64Milli(max(ts))) AS last_ms
      FROM trades FINAL WHERE chain = {chain:String} AND mint = {mint:String}
      GROUP BY venue ORDER BY venue`,
      { chain, mint, since: since24hMs }
    ),
    (rows) =>
      decodeAll("venueTotals", rows, (r) => ({
        venue: r.venue === "pool" ? ("pool" as const) : ("curve" as const),
        trades: num(r.trades, "trades"),
        buys: num(r.buys, "buys"),
        sells: num(r.sells, "sells"),
        volumeQuoteRaw: big(r.volume, "volume"),
        trades24h: num(r.trades24h, "trades24h"),
        volume24hQuoteRaw: big(r.volume24h, "volume24h"),
        firstTradeMs: num(r.first_ms, "first_ms"),
        lastTradeMs: num(r.last_ms, "last_ms")
      }))
  )

export interface LaunchAggregates {
  readonly trades: number
  readonly buys: number
  readonly sells: number
  readonly traders: number
  readonly volumeQuoteRaw: bigint
  readonly firstTradeMs: number | null
  readonly lastTradeMs: number | null
  /** Distinct buyers within `earlyWindowMs` of creation. */
  readonly earlyBuyers: number
  readonly creatorBoughtRaw: bigint
  readonly creatorSoldRaw: bigint
  readonly creatorSpentQuoteRaw: bigint
  /** Time of the trade that crossed the graduation threshold, when one did. */
  readonly graduatedAtMs: number | null
}

export const launchAggregates = (
  ch: ClickHouseShape,
  chain: string,
  mint: string,
  creator: string,
  createdAtMs: number,
  earlyWindowMs: number
): Effect.Effect<LaunchAggregates, ClickHouseError> =>
  Effect.gen(function* () {
    const rows = yield* ch.query(
      `SELECT toString(count()) AS trades, toString(countIf(side = 'buy')) AS buys, toString(countIf(side = 'sell')) AS sells,
        toString(uniqExact(trader)) AS traders, toString(sum(quote_volume_raw)) AS volume,
        toString(toUnixTimestamp64Milli(min(ts))) AS first_ms, toString(toUnixTimestamp64Milli(max(ts))) AS last_ms,
        toString(uniqExactIf(trader, side = 'buy' AND ts < fromUnixTimestamp64Milli({early:Int64}, 'UTC'))) AS early,
        toString(sumIf(token_volume_raw, side = 'buy' AND trader = {creator:String})) AS c_bought,
        toString(sumIf(token_volume_raw, side = 'sell' AND trader = {creator:String})) AS c_sold,
        toString(sumIf(quote_consumed_raw, side = 'buy' AND trader = {creator:String})) AS c_spent,
        toString(countIf(crosses_graduation)) AS crossings,
        toString(toUnixTimestamp64Milli(minIf(ts, crosses_graduation))) AS grad_ms
      FROM trades FINAL WHERE chain = {chain:String} AND mint = {mint:String}`,
      { chain, mint, creator, early: createdAtMs + earlyWindowMs }
    )
    const r = rows[0]
    return yield* Effect.try({
      try: (): LaunchAggregates => {
        if (r === undefined) throw new Error("no row")
        const trades = num(r.trades, "trades")
        return {
          trades,
          buys: num(r.buys, "buys"),
          sells: num(r.sells, "sells"),
          traders: num(r.traders, "traders"),
          volumeQuoteRaw: big(r.volume, "volume"),
          firstTradeMs: trades === 0 ? null : num(r.first_ms, "first_ms"),
          lastTradeMs: trades === 0 ? null : num(r.last_ms, "last_ms"),
          earlyBuyers: num(r.early, "early"),
          creatorBoughtRaw: big(r.c_bought, "c_bought"),
          creatorSoldRaw: big(r.c_sold, "c_sold"),
          creatorSpentQuoteRaw: big(r.c_spent, "c_spent"),
          graduatedAtMs: num(r.crossings, "crossings") === 0 ? null : num(r.grad_ms, "grad_ms")
        }
      },
      catch: bad("launchAggregates")
    })
  })

export interface PriceMove {
  readonly mint: string
  /** Last price before the window (within the 24 h before it), else the first price in it. */
  readonly startPrice: number
  readonly lastPrice: number
  readonly trades: number
  readonly volumeQuoteRaw: bigint
}

/** Most mints a gainers read considers (the busiest by trades in the window). */
export const gainersScanMax = 5_000

/** Per-mint price move over `[startMs, endMs)` on one chain, for mints that traded in it. */
export const priceMoves = (
  ch: ClickHouseShape,
  chain: string,
  startMs: number,
  endMs: number
): Effect.Effect<ReadonlyArray<PriceMove>, ClickHouseError> =>
  Effect.flatMap(
    ch.query(
      `WITH fromUnixTimestamp64Milli({start:Int64}, 'UTC') AS start
      SELECT mint,
        if(countIf(ts < start) > 0, argMaxIf(price, position, ts < start), argMinIf(price, position, ts >= start)) AS start_price,
        argMax(price, position) AS last_price,
        toString(countIf(ts >= start)) AS n,
        toString(sumIf(quote_volume_raw, ts >= start)) AS volume
      FROM trades FINAL
      WHERE chain = {chain:String}
        AND ts >= fromUnixTimestamp64Milli({lookback:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
      GROUP BY mint
      HAVING countIf(ts >= start) > 0
      ORDER BY countIf(ts >= start) DESC, mint
      LIMIT {scan:UInt32}`,
      { chain, start: startMs, lookback: startMs - 86_400_000, end: endMs, scan: gainersScanMax }
    ),
    (rows) =>
      decodeAll("priceMoves", rows, (r) => ({
        mint: String(r.mint),
        startPrice: float(r.start_price, "start_price"),
        lastPrice: float(r.last_price, "last_price"),
        trades: num(r.n, "n"),
        volumeQuoteRaw: big(r.volume, "volume")
      }))
  )

export interface TokenActivity {
  readonly mint: string
  readonly wallets: number
  readonly trades: number
  readonly buys: number
  readonly sells: number
  readonly volumeQuoteRaw: bigint
  readonly lastTradeMs: number
}

/** Tokens most traded since `sinceMs` by `wallets` (all wallets when undefined), by distinct wallets. */
export const tokenActivity = (
  ch: ClickHouseShape,
  chain: string,
  sinceMs: number,
  wallets: ReadonlyArray<string> | undefined,
  limit: number
): Effect.Effect<ReadonlyArray<TokenActivity>, ClickHouseError> =>
  Effect.flatMap(
    ch.query(
      `SELECT mint, toString(uniqExact(trader)) AS wallets, toString(count()) AS trades,
        toString(countIf(side = 'buy')) AS buys, toString(countIf(side = 'sell')) AS sells,
        toString(sum(quote_volume_raw)) AS volume, toString(toUnixTimestamp64Milli(max(ts))) AS last_ms
      FROM trades FINAL
      WHERE chain = {chain:String} AND ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
        ${wallets === undefined ? "" : "AND trader IN {wallets:Array(String)}"}
      GROUP BY mint
      ORDER BY uniqExact(trader) DESC, count() DESC, mint
      LIMIT {limit:UInt32}`,
      { chain, since: sinceMs, limit, ...(wallets === undefined ? {} : { wallets }) }
    ),
    (rows) =>
      decodeAll("tokenActivity", rows, (r) => ({
        mint: String(r.mint),
        wallets: num(r.wallets, "wallets"),
        trades: num(r.trades, "trades"),
        buys: num(r.buys, "buys"),
        sells: num(r.sells, "sells"),
        volumeQuoteRaw: big(r.volume, "volume"),
        lastTradeMs: num(r.last_ms, "last_ms")
      }))
  )

/** Mints whose graduation-crossing trade happened since `sinceMs`, with its time. */
export const recentGraduations = (
  ch: ClickHouseShape,
  chain: string,
  sinceMs: number
): Effect.Effect<ReadonlyArray<{ readonly mint: string; readonly graduatedAtMs: number }>, ClickHouseError> =>
  Effect.flatMap(
    ch.query(
      `SELECT mint, toString(toUnixTimestamp64Milli(min(ts))) AS at_ms FROM trades FINAL
      WHERE chain = {chain:String} AND crosses_graduation AND ts >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
      GROUP BY mint ORDER BY min(ts) DESC, mint LIMIT 1000`,
      { chain, since: sinceMs }
    ),
    (rows) => decodeAll("recentGraduations", rows, (r) => ({ mint: String(r.mint), graduatedAtMs: num(r.at_ms, "at_ms") }))
  )

export interface Cohorts {
  /** Wallets per mint (in the order asked). */
  readonly sizes: ReadonlyArray<{ readonly mint: string; readonly wallets: number }>
  /** Wallets in at least two of the cohorts, each with the mints it is in (sorted), at most `cohortWalletsMax`. */
  readonly shared: ReadonlyArray<{ readonly wallet: string; readonly mints: ReadonlyArray<string> }>
  readonly truncated: boolean
}

/** Cohort of each mint (holders: net position > 0; traders: any trade) and the wallets they share. */
export const cohorts = (
  ch: ClickHouseShape,
  chain: string,
  mints: ReadonlyArray<string>,
  basis: "holders" | "traders"
): Effect.Effect<Cohorts, ClickHouseError> =>
  Effect.gen(function* () {
    const inner = `
      SELECT mint, trader FROM trades FINAL
      WHERE chain = {chain:String} AND mint IN {mints:Array(String)}
      GROUP BY mint, trader
      ${basis === "holders" ? "HAVING toInt256(sumIf(token_volume_raw, side = 'buy')) > toInt256(sumIf(token_volume_raw, side = 'sell'))" : ""}`
    const sizeRows = yield* ch.query(`SELECT mint, toString(count()) AS n FROM (${inner}) GROUP BY mint`, { chain, mints })
    const sizes = new Map<string, number>()
    for (const r of sizeRows) sizes.set(String(r.mint), Number(r.n))
    const sharedRows = yield* ch.query(
      `SELECT trader, arraySort(groupArray(mint)) AS ms FROM (${inner}) GROUP BY trader HAVING length(ms) >= 2
       ORDER BY length(ms) DESC, trader LIMIT {cap:UInt32}`,
      { chain, mints, cap: cohortWalletsMax + 1 }
    )
    const shared = yield* decodeAll("cohorts", sharedRows, (r) => {
      if (!Array.isArray(r.ms)) throw new Error("ms is not an array")
      return { wallet: String(r.trader), mints: r.ms.map(String) }
    })
    return {
      sizes: mints.map((mint) => ({ mint, wallets: sizes.get(mint) ?? 0 })),
      shared: shared.slice(0, cohortWalletsMax),
      truncated: shared.length > cohortWalletsMax
    }
  })
