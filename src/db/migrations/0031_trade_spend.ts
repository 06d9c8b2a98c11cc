/**
 * `agent_trades.spend_usd_micros`: what the spend gate counts for a trade (owned by
 * `src/services/trade/TradeStore.ts`), valued at pricing: a buy's amount plus platform fee, a
 * sell's expected quote out, in USD micro-dollars; null when no price was available or the trade
 * has no key. The settlement books it (a sell counts when it books) in the transaction that saves
 * the trade `executed`. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_trades ADD COLUMN spend_usd_micros bigint`
})
