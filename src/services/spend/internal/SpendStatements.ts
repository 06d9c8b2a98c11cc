/**
 * The spend gate's settlement writes as statements (`SpendStore.bookIn` and `releaseIn` run them
 * alone; a trade's settlement composes them into its one statement, gated on its row's move:
 * `TradeStore`, `db/StatementGate.ts`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { gatedOn } from "../../../db/StatementGate.js"
import { usageStatement } from "../../keys/KeyRepository.js"
import { isoDay, USAGE_SINCE_MS } from "../../keys/KeyRules.js"
import type { BookInput } from "../SpendStore.js"

/**
 * The booking as three CTEs of one statement (`book_settled`, `book_inserted`, `book_usage`; the
 * caller writes `WITH` before them): the open hold of `input.reservationId` (held, or released by
 * the sweep) settles as `booked` with the settled USD value (null keeps the hold's), or, with no
 * reservation of that id at all (a sell, which holds nothing), a `booked` one is inserted; either
 * adds the key's usage for the day (the booked USD value, `input.trades`). A reservation already
 * booked or in any other state books nothing (`fresh: false`: a second booking of one settlement).
 * With `gate` (the name of an earlier CTE of the statement), all of it only when that CTE returned
 * a row (a trade's settlement in one statement: `TradeStore`). The booked USD value is
 * `book_settled`'s or `book_inserted`'s `usd_micros` (text), one row when it booked.
 */
export const bookStatement = (sql: SqlClient.SqlClient, input: BookInput, nowMs: number, gate?: string): Statement.Fragment => {
  const now = new Date(nowMs)
  const usd = input.usdMicros === null ? null : input.usdMicros.toString()
  const gated = gatedOn(sql, gate)
  const usage =
    nowMs < USAGE_SINCE_MS
      ? sql.literal("")
      : sql`, book_usage AS (${usageStatement(
          sql,
          sql`SELECT ${input.keyId}, ${isoDay(nowMs)}::date, coalesce(b.usd_micros::bigint, 0), ${input.trades}, 0
              FROM (SELECT usd_micros FROM book_settled UNION ALL SELECT usd_micros FROM book_inserted) b`
        )})`
  return sql`book_settled AS (
      UPDATE spend_reservations SET state = 'booked', settled_at = ${now}, usd_micros = coalesce(${usd}::bigint, usd_micros)
      WHERE id = ${input.reservationId} AND state IN ('held', 'released') ${gated}
      RETURNING usd_micros::text AS usd_micros
    ), book_inserted AS (
      INSERT INTO spend_reservations (id, account_id, key_id, rail, purpose, chain, asset, side, amount_raw, usd_micros, state, created_at, expires_at, settled_at)
      SELECT ${input.reservationId}, ${input.accountId}, ${input.keyId}, ${input.rail}, ${input.purpose}, ${input.chain}, ${input.asset}, ${input.side},
        ${input.amountRaw.toString()}::numeric, ${usd}::bigint, 'booked', ${now}, ${now}, ${now}
      WHERE NOT EXISTS (SELECT 1 FROM spend_reservations WHERE id = ${input.reservationId}) ${gated}
      ON CONFLICT (id) DO NOTHING
      RETURNING usd_micros::text AS usd_micros
    )${usage}`
}

/** `releaseIn`'s write (`RETURNING id` when the hold was open); with `gate` (an earlier CTE's name), only when that CTE returned a row. */
export const releaseStatement = (sql: SqlClient.SqlClient, reservationId: string, nowMs: number, gate?: string): Statement.Fragment => sql`
      UPDATE spend_reservations SET state = 'released', settled_at = ${new Date(nowMs)} WHERE id = ${reservationId} AND state = 'held'
        ${gatedOn(sql, gate)}
      RETURNING id`
