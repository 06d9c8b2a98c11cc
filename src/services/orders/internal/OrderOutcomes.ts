/**
 * The conditional moves of an order past its trigger and of an open order's own state: `executed`
 * or `failed` from `triggered` (the execution; the caller fences each with `RowLease.fenceIn` in
 * the same transaction), `expired` from `open`, and a trailing stop's raised watermark. Each moves
 * a row only from the status it names, so of any number of processes one moves it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Price } from "../../../../actors/orders/OrderBook.js"
import { encodePrice } from "./OrderRows.js"

export interface ExecutedWrite {
  readonly signature: string
  readonly amountOutRaw: bigint
}

/**
 * Flips a triggered order to `executed` with its trade (conditional: only from `triggered`, so it
 * happens once); true when this call moved it. The caller fences it (`RowLease.fenceIn`) in the
 * same transaction.
 */
export const markExecuted = (id: string, trade: ExecutedWrite, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`
        UPDATE limit_orders SET status = 'executed', updated_at = ${new Date(nowMs)}, settled_at = ${new Date(nowMs)},
          trade_signature = ${trade.signature}, amount_out_raw = ${trade.amountOutRaw.toString()}
        WHERE id = ${id} AND status = 'triggered'
        RETURNING id`,
      (rows) => rows.length > 0
    )
  )

/** Flips a triggered order to `failed` with the refusal's reason (conditional, once, fenced by the caller); true when this call moved it. */
export const markFailed = (id: string, failure: { readonly reason: string; readonly message: string; readonly signature: string | null }, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`
        UPDATE limit_orders SET status = 'failed', updated_at = ${new Date(nowMs)}, settled_at = ${new Date(nowMs)},
          failure_reason = ${failure.reason}, failure_message = ${failure.message.slice(0, 500)}, trade_signature = ${failure.signature}
        WHERE id = ${id} AND status = 'triggered'
        RETURNING id`,
      (rows) => rows.length > 0
    )
  )

/** Flips an open order to `expired` (fires nothing); true when this call moved it. */
export const markExpired = (id: string, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`UPDATE limit_orders SET status = 'expired', updated_at = ${new Date(nowMs)} WHERE id = ${id} AND status = 'open' RETURNING id`,
      (rows) => rows.length > 0
    )
  )

/** Records a trailing stop's raised watermark while it is open. */
export const saveWatermark = (id: string, watermark: Price): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`UPDATE limit_orders SET watermark = ${encodePrice(watermark)} WHERE id = ${id} AND status = 'open'`)
  )
