/**
 * The first schema: what the engine needs on day one.
 *
 * - `checkpoints`: one row per (actor owner, key). `position` is the fixed-width, sortable
 *   total-order key of the last applied chain event (text so both chains' keys fit);
 *   `state` is the actor's snapshot as JSON, money carried as decimal strings (never JSON
 *   numbers, which lose precision past 2^53).
 * - `meta`: small engine-wide facts (schema notes, install id, ...), one JSON value per key.
 *
 * Portable SQL only: the same statements run on PGlite and on PostgreSQL 15.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE checkpoints (
      owner text NOT NULL,
      key text NOT NULL,
      position text NOT NULL,
      state jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (owner, key)
    )
  `
  yield* sql`
    CREATE TABLE meta (
      key text PRIMARY KEY,
      value jsonb NOT NULL
    )
  `
})
