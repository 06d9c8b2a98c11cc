/**
 * `hosted_metadata`: the launches' metadata documents (issue 31), content-addressed like
 * `hosted_images`: `id` is the SHA-256 of `body`, a row is inserted once and never changes. `seq`
 * orders the rows for the readers' followers (`src/services/images/HostedMetadata.ts`).
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE hosted_metadata (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    body bytea NOT NULL,
    created_at timestamptz NOT NULL
  )`
})
