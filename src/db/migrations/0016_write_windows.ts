/**
 * The staking-write and fee-claim limits and the one-claim-per-token lock, kept in PostgreSQL so
 * they hold across restarts and across engine processes (spec document 2, 4.3 rule 5 and
 * section 8), owned by `src/db/WindowTakes.ts` and `src/services/fees/FeeClaimLocks.ts`.
 *
 * - `account_write_takes`: one row per write taken, `scope` naming the limit (`staking`,
 *   `fee-claim`) and `account_id` the account it counts against; rows that left the window are
 *   deleted by the next take, so an account holds at most its per-minute limit of rows per scope.
 * - `fee_claim_locks`: one row per token whose claim is running, with its holder and the end of
 *   its lease; a lease left by a process that died expires, and only then may another claim take it.
 *
 * Plain text ids, no foreign keys. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE account_write_takes (
      id bigserial PRIMARY KEY,
      scope text NOT NULL,
      account_id text NOT NULL,
      taken_at_ms bigint NOT NULL
    )
  `
  yield* sql`CREATE INDEX account_write_takes_by_account ON account_write_takes (scope, account_id, taken_at_ms)`
  yield* sql`
    CREATE TABLE fee_claim_locks (
      mint text PRIMARY KEY,
      holder text NOT NULL,
      expires_at_ms bigint NOT NULL
    )
  `
})
