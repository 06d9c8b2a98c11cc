/**
 * Linked and TEE payers on the trade rail (owned by `src/services/trade/TradeStore.ts`): a build
 * for a wallet the service does not sign with by itself is recorded `built` with the unsigned
 * transaction and its sign claim, and moves to `sending` once the signed bytes (submit) or the
 * caller's own broadcast (confirm) prove they are exactly the built message.
 * - `state` gains `built` (no signature yet: `signature` is '' until then);
 * - `wallet_id`: the wallet row that pays (null for `payer: main`);
 * - `claim_id`: the single-use sign claim of the built transaction (`sign_claims.id`);
 * - `transaction`: the unsigned transaction (base64 wire bytes), answered again on a replay;
 * - `message_hash`: sha-256 hex of the built message, what a signed transaction must match.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_trades DROP CONSTRAINT agent_trades_state_check`
  yield* sql`ALTER TABLE agent_trades ADD CONSTRAINT agent_trades_state_check CHECK (state IN ('built', 'sending', 'executed', 'failed'))`
  yield* sql`ALTER TABLE agent_trades ADD COLUMN wallet_id text`
  yield* sql`ALTER TABLE agent_trades ADD COLUMN claim_id text`
  yield* sql`ALTER TABLE agent_trades ADD COLUMN transaction text`
  yield* sql`ALTER TABLE agent_trades ADD COLUMN message_hash text`
})
