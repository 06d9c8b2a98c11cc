/**
 * `ingest_cursors`: where each chain ingester resumes. One row per source (e.g.
 * `solana:yellowstone:<program id>`); `slot` is the last slot (or block) whose events the bus
 * has acknowledged, written after the acknowledgement. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ingest_cursors (
      source text PRIMARY KEY,
      slot bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
})
