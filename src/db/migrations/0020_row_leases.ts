/**
 * `row_leases`: who drives a row that moves money, across engine processes sharing the database
 * (owned by `src/db/RowLease.ts`). One row per (kind, key): the owning process's id and the end of
 * its lease, which the owner renews while its run is alive. Another process takes the row only
 * once the lease has ended (its owner died); the owner's writes check the lease in their own
 * transaction. `kind` names the table the key belongs to (`launch`, `staking_operation`); `key` is
 * that row's key as text. Plain text ids, no foreign keys. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE row_leases (
      kind text NOT NULL,
      key text NOT NULL,
      owner text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (kind, key)
    )
  `
})
