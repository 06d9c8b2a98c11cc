/**
 * The reads of orders the API and the execution make: one order (of an account, or by id), an
 * account's page of orders, how many open orders a key placed, and the `triggered` orders the
 * execution's recovery pass picks up. Read only.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type OrderRow, type OrderStatus, type Raw, toRow } from "./OrderRows.js"

export const readOrder = (accountId: string, id: string): Effect.Effect<OrderRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<Raw>`SELECT * FROM limit_orders WHERE account_id = ${accountId} AND id = ${id}`, (rows) => (rows.length === 0 ? undefined : toRow(rows[0]!)))
  )

/** One page, newest first, of the orders `filter` selects; `after` is the last row of the previous page (created_at, id). */
export const listOrders = (
  accountId: string,
  filter: { readonly status: OrderStatus | null; readonly chain: string | null; readonly mint: string | null },
  after: { readonly createdAtMs: number; readonly id: string } | null,
  limit: number
): Effect.Effect<ReadonlyArray<OrderRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<Raw>`
        SELECT * FROM limit_orders
        WHERE account_id = ${accountId}
          AND (${filter.status}::text IS NULL OR status = ${filter.status})
          AND (${filter.chain}::text IS NULL OR chain = ${filter.chain})
          AND (${filter.mint}::text IS NULL OR mint = ${filter.mint})
          AND (${after === null} OR (created_at, id) < (${after === null ? new Date(0) : new Date(after.createdAtMs)}, ${after?.id ?? ""}))
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit}`,
      (rows) => rows.map(toRow)
    )
  )

/** Open orders placed through a key (the access change's effects). */
export const openOrdersOfKey = (keyId: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: string | number }>`SELECT count(*) AS n FROM limit_orders WHERE key_id = ${keyId} AND status = 'open'`, (rows) => Number(rows[0]!.n))
  )

/** An order by id (the execution's read; any account). */
export const orderById = (id: string): Effect.Effect<OrderRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql<Raw>`SELECT * FROM limit_orders WHERE id = ${id}`, (rows) => (rows.length === 0 ? undefined : toRow(rows[0]!))))

/** The ids of `triggered` orders, oldest trigger first (the execution's recovery pass), at most `limit`. */
export const triggeredIds = (limit: number): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT id FROM limit_orders WHERE status = 'triggered' ORDER BY triggered_at, id LIMIT ${limit}`, (rows) => rows.map((r) => r.id))
  )
