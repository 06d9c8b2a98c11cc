/**
 * `hood_ingest_blocks`: the Hood ingester's recent block window (ingest/hood/BlockStore.ts), one
 * row per source and block: its hash, parent hash and the events it carried (`[mint, id,
 * position, digest]` as JSON), so a restart still detects a reorg of blocks it already published
 * and retracts exactly their events. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS hood_ingest_blocks (
      source text NOT NULL,
      block bigint NOT NULL,
      hash text NOT NULL,
      parent_hash text NOT NULL,
      events text NOT NULL,
      PRIMARY KEY (source, block)
    )
  `
})
