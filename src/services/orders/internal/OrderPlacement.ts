/**
 * Placing and cancelling an order: both under one advisory lock, each bumping `rev` from the
 * `limit_orders_rev` sequence inside it, so rows become visible in `rev` order (the books' follow,
 * `changedSince`, never skips one). A create is idempotent on (account, clientOrderId) and bounded
 * by the account's open orders; a cancel moves only an `open` row.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { partitionForKey } from "../../../../ingest/bus/Bus.js"
import { encodePrice, marketKeyOf, type NewOrder, type OrderRow, type Raw, toRow } from "./OrderRows.js"

const lock = (sql: SqlClient.SqlClient) => sql`SELECT pg_advisory_xact_lock(hashtextextended('limit_orders', 0))`

export type CreateResult =
  | { readonly _tag: "Created"; readonly row: OrderRow }
  | { readonly _tag: "Existing"; readonly row: OrderRow }
  | { readonly _tag: "Full"; readonly open: number }

/**
 * Inserts the order unless the account already has its clientOrderId (then answers that row) or
 * already has `maxOpen` open orders. `busPartitions`: the bus's partition count, to record the
 * market's partition on the row (without it the actors' `repairPartitions` fills it).
 */
export const createOrder = (
  o: NewOrder,
  nowMs: number,
  maxOpen = Number.MAX_SAFE_INTEGER,
  busPartitions?: number
): Effect.Effect<CreateResult, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* lock(sql)
        const existing = yield* sql<Raw>`SELECT * FROM limit_orders WHERE account_id = ${o.accountId} AND client_order_id = ${o.clientOrderId}`
        if (existing.length > 0) return { _tag: "Existing", row: toRow(existing[0]!) } as const
        const open = yield* sql<{ n: string | number }>`SELECT count(*) AS n FROM limit_orders WHERE account_id = ${o.accountId} AND status = 'open'`
        if (Number(open[0]!.n) >= maxOpen) return { _tag: "Full", open: Number(open[0]!.n) } as const
        const now = new Date(nowMs)
        const partition = busPartitions === undefined ? null : partitionForKey(marketKeyOf(o), busPartitions)
        const rows = yield* sql<Raw>`
          INSERT INTO limit_orders (id, account_id, client_order_id, key_id, request_hash, chain, mint, side, trigger, amount_raw,
            level, trail_bps, watermark, slippage_bps, payer, expires_at, after_position, status, created_at, updated_at, rev,
            bus_partition, bus_partitions)
          VALUES (${o.id}, ${o.accountId}, ${o.clientOrderId}, ${o.keyId}, ${o.requestHash}, ${o.chain}, ${o.mint}, ${o.side},
            ${o.trigger}, ${o.amountRaw.toString()}, ${o.level}, ${o.trailBps}, ${o.watermark === null ? null : encodePrice(o.watermark)},
            ${o.slippageBps}, ${o.payer}, ${o.expiresAtMs === null ? null : new Date(o.expiresAtMs)}, ${o.afterPosition}, 'open',
            ${now}, ${now}, nextval('limit_orders_rev'), ${partition}, ${busPartitions ?? null})
          RETURNING *`
        return { _tag: "Created", row: toRow(rows[0]!) } as const
      })
    )
  )

export type CancelResult = { readonly _tag: "Cancelled"; readonly row: OrderRow } | { readonly _tag: "NotOpen"; readonly row: OrderRow } | { readonly _tag: "NotFound" }

/** Cancels an open order of the account (any status but `open` answers `NotOpen` with the row). */
export const cancelOrder = (accountId: string, id: string, nowMs: number): Effect.Effect<CancelResult, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* lock(sql)
        const rows = yield* sql<Raw>`
          UPDATE limit_orders SET status = 'cancelled', updated_at = ${new Date(nowMs)}, rev = nextval('limit_orders_rev')
          WHERE account_id = ${accountId} AND id = ${id} AND status = 'open'
          RETURNING *`
        if (rows.length > 0) return { _tag: "Cancelled", row: toRow(rows[0]!) } as const
        const found = yield* sql<Raw>`SELECT * FROM limit_orders WHERE account_id = ${accountId} AND id = ${id}`
        return found.length === 0 ? ({ _tag: "NotFound" } as const) : ({ _tag: "NotOpen", row: toRow(found[0]!) } as const)
      })
    )
  )
