/**
 * `spend_reservations`: the spend gate's holds and bookings (owned by
 * `src/services/spend/SpendStore.ts`). One row per spending transaction a rail builds, keyed by
 * the rail's own idempotent id (`trade:<account>:<clientTradeId>`, `launch:<account>:<clientLaunchId>:<attempt>`):
 * `held` weighs on the key's txLimit window it was created in until it is `booked` (the spend
 * landed and its USD value was metered into `agent_key_usage_daily` in the same transaction) or
 * `released` (the build failed, expired or was never used; the sweep releases holds past
 * `expires_at`). A sell takes no hold: its row is written `booked` when it books. Plain text ids,
 * no foreign keys to other modules' tables. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE spend_reservations (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      key_id text NOT NULL,
      rail text NOT NULL CHECK (rail IN ('main', 'linked', 'tee')),
      purpose text NOT NULL,
      chain text NOT NULL,
      asset text NOT NULL,
      side text NOT NULL CHECK (side IN ('buy', 'sell')),
      amount_raw numeric(78, 0) NOT NULL,
      usd_micros bigint,
      state text NOT NULL CHECK (state IN ('held', 'booked', 'released')),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      settled_at timestamptz
    )`
  yield* sql`CREATE INDEX spend_reservations_key ON spend_reservations (key_id, state, created_at)`
  yield* sql`CREATE INDEX spend_reservations_expiry ON spend_reservations (state, expires_at)`
})
