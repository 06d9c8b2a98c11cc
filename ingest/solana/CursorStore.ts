/**
 * The ingesters' resume points in PostgreSQL (`ingest_cursors`, migration 0002): per source, the
 * last slot (or block) whose events are all acknowledged by the bus. Written only after the
 * publish is acknowledged, so a cursor never claims an event the bus does not hold; a crash
 * between the two republishes at most the slots after the cursor (harmless downstream).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export const readCursor = (source: string): Effect.Effect<bigint | null, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ slot: string }>`SELECT slot::text AS slot FROM ingest_cursors WHERE source = ${source}`
    const row = rows[0]
    return row === undefined ? null : BigInt(row.slot)
  })

export const writeCursor = (source: string, slot: bigint): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO ingest_cursors (source, slot, updated_at)
      VALUES (${source}, ${slot.toString()}::bigint, now())
      ON CONFLICT (source) DO UPDATE SET slot = EXCLUDED.slot, updated_at = EXCLUDED.updated_at`
  })
