/**
 * A Hood linked trade's signed bytes (owned by `src/services/trade/TradeStore.ts`): a row a linked
 * wallet pays keeps the signed transaction its submit sent from `sending` on. The server cannot
 * sign for that wallet, so a recovery pass after a crash between the record and the send
 * broadcasts these same bytes again (the same nonce and hash: never a second trade) instead of
 * leaving the trade to wait for the caller. Null for `payer: main`, Solana rows, a build not yet
 * submitted and a confirmed (self-broadcast) one. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_trades ADD COLUMN signed_transaction text`
})
