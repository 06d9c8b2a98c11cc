/**
 * `hood_pools`: the graduated Uniswap pools the Hood ingester reads `Swap` logs from
 * (ingest/hood/BlockStore.ts), one row per source and pool: the token it trades, whether the
 * token is the pool's token0, its fee tier, and where it started counting (the `CurveMigrated`
 * event's position and block). Written with the cursor in one transaction; rows of blocks a reorg
 * removed are deleted with the window rows. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS hood_pools (
      source text NOT NULL,
      pool text NOT NULL,
      mint text NOT NULL,
      token_is_token0 boolean NOT NULL,
      fee_pips integer NOT NULL,
      from_position text NOT NULL,
      block bigint NOT NULL,
      PRIMARY KEY (source, pool)
    )
  `
})
