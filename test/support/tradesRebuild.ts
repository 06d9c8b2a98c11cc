/**
 * What `test/integration/clickhouse.rebuild.test.ts` and its child process
 * (`tradesRebuildChild.ts`) share. No side effects on import.
 */
import type { ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import type { Executor } from "../../clickhouse/internal/executor.js"

/** What a trades table holds: stored rows and their fingerprint, rows FINAL keeps, candle trades. */
export const tradesStateSql = `SELECT
  toString((SELECT count() FROM trades)) AS rows,
  toString((SELECT sum(cityHash64(id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw, quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, quote_volume_raw, token_volume_raw, price, crosses_graduation, position, ts, signature, version, retracted)) FROM trades)) AS fingerprint,
  toString((SELECT count() FROM trades FINAL)) AS visible,
  toString((SELECT sum(trades) FROM candles_1m)) AS candle_trades`

export interface TradesState {
  readonly rows: string
  readonly fingerprint: string
  readonly visible: string
  readonly candle_trades: string
}

/**
 * The service over a bare executor, without the engine's layer (which would apply every
 * migration). `executor` says which executor the runner believes it has: a chDB executor
 * presented as `server` stands in for a server when what is tested is the runner's decision.
 */
export const shapeOf = (ex: Executor, executor: ClickHouseShape["executor"] = ex.kind): ClickHouseShape => ({
  executor,
  database: "curvestream",
  query: ((sql: string, params?: Record<string, unknown>) => ex.query(sql, params)) as ClickHouseShape["query"],
  command: (sql, params) => ex.command(sql, params),
  insert: (table, rows) =>
    ex.insertJsonEachRow(table, Buffer.from(rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).join("\n"))),
  ping: ex.ping
})

/** The most active parts any partition of `trades` has (1 once merged). */
export const tradesPartsMaxSql = `SELECT toString(max(n)) AS n FROM (
  SELECT partition, count() AS n FROM system.parts WHERE database = currentDatabase() AND table = 'trades' AND active GROUP BY partition)`
