/**
 * The limit orders' executions (issue 29): what the trade rail did with a triggered order, owned by
 * `src/services/orders/OrderStore.ts` (`markExecuted`, `markFailed`). `client_trade_id` is the
 * trade the order executes as (`order:<id>`, written with `triggered`), so the rail's idempotency
 * on (account, clientTradeId) makes any number of executions of an order one trade. An executed
 * order keeps the trade's signature and executed `amount_out_raw`; a failed one the rail's reason
 * (`failure_reason`, already in 0025) and its message. The partial index serves the recovery pass
 * over `triggered` rows. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE limit_orders ADD COLUMN client_trade_id text`
  yield* sql`ALTER TABLE limit_orders ADD COLUMN trade_signature text`
  yield* sql`ALTER TABLE limit_orders ADD COLUMN amount_out_raw text`
  yield* sql`ALTER TABLE limit_orders ADD COLUMN settled_at timestamptz`
  yield* sql`ALTER TABLE limit_orders ADD COLUMN failure_message text`
  yield* sql`CREATE INDEX limit_orders_triggered_idx ON limit_orders (triggered_at, id) WHERE status = 'triggered'`
})
