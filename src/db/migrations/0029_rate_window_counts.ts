/**
 * `rate_window_counts`: the request counts each API process admitted, per limit (`scope`), subject
 * (a key id, a client address) and fixed window, so the per-key and per-client rate limits hold
 * across replicas (owned by `src/db/SharedWindowCounts.ts`). One row per (scope, subject, window,
 * owner): a process upserts its own count and reads the others' sums; `expires_at_ms` (the end of
 * the window after it) is when the row stops mattering to the sliding estimate and is deleted.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rate_window_counts (
      scope text NOT NULL,
      subject text NOT NULL,
      window_start_ms bigint NOT NULL,
      owner text NOT NULL,
      count integer NOT NULL,
      expires_at_ms bigint NOT NULL,
      PRIMARY KEY (scope, subject, window_start_ms, owner)
    )
  `
  yield* sql`CREATE INDEX rate_window_counts_by_expiry ON rate_window_counts (expires_at_ms)`
})
