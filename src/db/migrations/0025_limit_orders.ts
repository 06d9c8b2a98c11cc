/**
 * `limit_orders` (issue 29): one row per limit order, keyed by (account, clientOrderId); owned by
 * `src/services/orders/OrderStore.ts`. Prices are exact decimals (text) in the market's quote units
 * per whole token; `level` is the limit target or the stop price (null for a trailing stop),
 * `watermark` a trailing stop's highest price seen (the actors write it as it rises). `status`:
 * open → triggered (once, by a conditional update) → executed | failed; open → cancelled | expired.
 * `rev` comes from a sequence bumped on every create and cancel, under one advisory lock, so the
 * actors' order books follow new and cancelled orders in commit order. Portable SQL (PGlite and
 * PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE limit_orders_rev`
  yield* sql`
    CREATE TABLE limit_orders (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      client_order_id text NOT NULL,
      key_id text NOT NULL,
      request_hash text NOT NULL,
      chain text NOT NULL,
      mint text NOT NULL,
      side text NOT NULL,
      trigger text NOT NULL,
      amount_raw text NOT NULL,
      level text,
      trail_bps integer,
      watermark text,
      slippage_bps integer NOT NULL,
      payer text NOT NULL,
      expires_at timestamptz,
      after_position text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      triggered_at timestamptz,
      trigger_price text,
      trigger_position text,
      trigger_watermark text,
      trigger_stop_price text,
      failure_reason text,
      rev bigint NOT NULL,
      UNIQUE (account_id, client_order_id)
    )
  `
  yield* sql`CREATE INDEX limit_orders_rev_idx ON limit_orders (rev)`
  yield* sql`CREATE INDEX limit_orders_list_idx ON limit_orders (account_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX limit_orders_open_idx ON limit_orders (status, chain, mint) WHERE status = 'open'`
})
