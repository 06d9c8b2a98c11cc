/**
 * Writes composed into ONE statement of CTEs (a trade's settlement: `TradeStore`), each gated on an
 * earlier CTE of it: `gatedOn` is the condition a write's `WHERE` ends with, `EXISTS` over that
 * CTE (a write runs only when the CTE returned a row: the row's move, the lease's renewal). The
 * statement builders that take a `gate` (`addFeeStatement`, `enqueueStatement`, `bookStatement`,
 * `releaseStatement`) use it; without a gate the condition is empty and the write runs on its own.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"

/** `<keyword> EXISTS (SELECT 1 FROM <gate>)`, or nothing without a gate (`keyword`: `AND` after a `WHERE`, `WHERE` where there is none). */
export const gatedOn = (sql: SqlClient.SqlClient, gate: string | undefined, keyword: "AND" | "WHERE" = "AND"): Statement.Fragment =>
  gate === undefined ? sql.literal("") : sql`${sql.literal(keyword)} EXISTS (SELECT 1 FROM ${sql(gate)})`
