/**
 * A linked or TEE trade that stays `built` is settled from the chain (owned by
 * `src/services/trade/TradeStore.ts`; docs/decisions.md "A built trade its caller sent itself"):
 * - `built_slot`: the slot of the blockhash the build used (`getLatestBlockhash`'s context slot).
 *   Its transaction can land only in a later slot, so the search of the payer's signatures for it
 *   stops there. Null for rows built before this migration: the search then reads the payer's
 *   whole retained history (bounded per pass).
 * - `agent_trades_built`: the built rows the watch pass reads, least recently looked at first.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agent_trades ADD COLUMN built_slot bigint`
  yield* sql`CREATE INDEX agent_trades_built ON agent_trades (updated_at, created_at) WHERE state = 'built'`
})
