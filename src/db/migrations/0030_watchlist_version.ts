/**
 * `md_watchlist_version`: one row counting the watchlist's changes (every add and remove bumps it
 * in its own transaction), so the tracked-wallets follower (`src/services/personal/TrackedWallets.ts`)
 * reloads the watchlist only when it changed, not the whole table every pass.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE md_watchlist_version (id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)`
  yield* sql`INSERT INTO md_watchlist_version (id, version) VALUES (1, 0)`
})
