/**
 * The trigger of open orders: the conditional flip to `triggered` and its `order.triggered` outbox
 * rows in ONE statement, fenced by the partition owner's epoch (`partition_owners`, migration
 * 0017), and the payload that statement builds (`triggeredData` says it in TypeScript; the tests
 * hold the two equal). Of any number of processes or replays triggering an order, one moves it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { NamedStatements } from "../../../db/Database.js"
import type { Price } from "../../../../actors/orders/OrderBook.js"
import { formatPrice } from "../../../../actors/orders/OrderBook.js"
import { keyedEventId } from "../../webhooks/Outbox.js"
import { encodePrice, type OrderRow, orderTradeId, type Raw, toRow } from "./OrderRows.js"

export interface TriggerWrite {
  readonly id: string
  readonly price: Price
  readonly position: string
  readonly atMs: number
  readonly watermark: Price | null
  readonly stopPrice: Price | null
}

/** The `order.triggered` payload (keys document section 6). */
export const triggeredData = (r: OrderRow): Record<string, unknown> => ({
  clientOrderId: r.clientOrderId,
  chain: r.chain,
  mint: r.mint,
  side: r.side,
  amountRaw: r.amountRaw.toString(),
  targetPrice: r.level,
  price: r.triggerPrice,
  expiresAt: r.expiresAtMs === null ? null : new Date(r.expiresAtMs).toISOString(),
  trigger: r.trigger,
  ...(r.trigger === "trailing_stop" ? { trailBps: r.trailBps, trailWatermark: r.triggerWatermark, stopPrice: r.triggerStopPrice } : {})
})

/**
 * The ownership fence of a trigger write: the bus partition of the order's market and the epoch
 * this process claimed it at (`partition_owners`, migration 0017). Absent: not fenced (one actors
 * process consumes every partition).
 */
export interface TriggerFence {
  readonly owner: string
  readonly partition: number
  readonly epoch: number
}

/**
 * Flips open orders to `triggered` and records `order.triggered` for each, in ONE statement (so
 * one round trip and its own implicit transaction): the fence's `partition_owners` rows are read
 * `FOR SHARE` (a claim of the partition waits for it, and a write after a claim moves nothing of
 * that partition), the conditional update moves each order still `open`, and the outbox rows
 * of the orders it moved go to the account's endpoints subscribed to `order.triggered`, keyed by
 * the order (`keyedEventId`), with the payload `triggeredData` describes (built by the statement
 * from the row it updated: `OrderStore.test`/`orders.trigger.test` hold the two equal). Answers
 * the rows this call moved, in no particular order; an order not open (triggered already,
 * cancelled, expired) or fenced out is not among them.
 *
 * The statement's text is one constant (`TRIGGER_STATEMENT`, its writes as parameters), run as
 * the named statement `TRIGGER_STATEMENT_NAME` where the database layer provides
 * `NamedStatements` (parsed and planned once per connection: on PGlite the plan of its four
 * parts cost more than their execution), else through the `SqlClient` (whose pool names a
 * statement from its second run: `db/internal/StatementNames.ts`).
 */
export const markTriggeredAll = (
  writes: ReadonlyArray<TriggerWrite & { readonly fence?: TriggerFence }>,
  nowMs: number
): Effect.Effect<ReadonlyArray<OrderRow>, SqlError, SqlClient.SqlClient> => {
  if (writes.length === 0) return Effect.succeed([])
  const values = triggerValues(writes, nowMs)
  // Named statements run on a connection of their own: inside a transaction the statement must be
  // the transaction's, so it runs through the `SqlClient` there (on the transaction's connection,
  // which the pool names from the statement's second run too).
  return Effect.flatMap(Effect.all([Effect.serviceOption(NamedStatements), Effect.serviceOption(SqlClient.TransactionConnection)]), ([named, inTransaction]) =>
    Option.isSome(named) && Option.isNone(inTransaction)
      ? Effect.map(named.value.execute(TRIGGER_STATEMENT_NAME, TRIGGER_STATEMENT, values), (rows) => rows.map((r) => toRow(r as unknown as Raw)))
      : Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql.unsafe<Raw>(TRIGGER_STATEMENT, values), (rows) => rows.map(toRow)))
  )
}

/** The name `markTriggeredAll` runs `TRIGGER_STATEMENT` under (one text for the name, always). */
export const TRIGGER_STATEMENT_NAME = "orders_trigger_v1"

/**
 * `markTriggeredAll`'s statement (also what `orders.server`'s EXPLAIN reads): `$1` the writes as a
 * JSON array (`triggerValues`), `$2` now, `$3` the orders' ids (what the update reads
 * `limit_orders` by).
 */
export const TRIGGER_STATEMENT = `
      WITH v AS (
        SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, event_id text, owner text, part integer, epoch bigint,
          at_ms bigint, price text, position text, watermark text, stop_price text, stored_watermark text, trade_id text)
      ), owned AS (
        SELECT p.owner, p.partition, p.epoch FROM partition_owners p
        WHERE (p.owner, p.partition) IN (SELECT owner, part FROM v WHERE part IS NOT NULL)
        FOR SHARE
      ), t AS (
        UPDATE limit_orders o SET status = 'triggered', updated_at = $2::timestamptz,
          triggered_at = timestamptz 'epoch' + v.at_ms * interval '1 millisecond',
          trigger_price = v.price, trigger_position = v.position, trigger_watermark = v.watermark,
          trigger_stop_price = v.stop_price, watermark = v.stored_watermark, client_trade_id = v.trade_id
        FROM v LEFT JOIN owned ON owned.owner = v.owner AND owned.partition = v.part
        WHERE o.id = ANY($3::text[]) AND o.id = v.id AND o.status = 'open' AND (v.part IS NULL OR owned.epoch = v.epoch)
        RETURNING o.*, v.event_id
      ), d AS (
        INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event, data, created_at, status, attempts, next_attempt_at)
        SELECT t.event_id, e.id, e.account_id, 'order.triggered',
          jsonb_build_object('clientOrderId', t.client_order_id, 'chain', t.chain, 'mint', t.mint, 'side', t.side,
            'amountRaw', t.amount_raw, 'targetPrice', t.level, 'price', t.trigger_price,
            'expiresAt', to_char(t.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'trigger', t.trigger)
          || CASE WHEN t.trigger = 'trailing_stop'
               THEN jsonb_build_object('trailBps', t.trail_bps, 'trailWatermark', t.trigger_watermark, 'stopPrice', t.trigger_stop_price)
               ELSE '{}'::jsonb END,
          $2::timestamptz, 'pending', 0, $2::timestamptz
        FROM t JOIN webhook_endpoints e ON e.account_id = t.account_id AND e.status = 'active' AND e.events ? 'order.triggered'
        ON CONFLICT (endpoint_id, id) DO NOTHING
      )
      SELECT * FROM t`

/** `TRIGGER_STATEMENT`'s parameters for `writes` (not empty) at `nowMs`. */
export const triggerValues = (writes: ReadonlyArray<TriggerWrite & { readonly fence?: TriggerFence }>, nowMs: number): ReadonlyArray<unknown> => [
  JSON.stringify(
    writes.map((t) => ({
      id: t.id,
      event_id: keyedEventId(`order.triggered:${t.id}`),
      owner: t.fence?.owner ?? null,
      part: t.fence?.partition ?? null,
      epoch: t.fence?.epoch ?? null,
      at_ms: t.atMs,
      price: formatPrice(t.price),
      position: t.position,
      watermark: t.watermark === null ? null : formatPrice(t.watermark),
      stop_price: t.stopPrice === null ? null : formatPrice(t.stopPrice),
      stored_watermark: t.watermark === null ? null : encodePrice(t.watermark),
      trade_id: orderTradeId(t.id)
    }))
  ),
  new Date(nowMs),
  writes.map((t) => t.id)
]
