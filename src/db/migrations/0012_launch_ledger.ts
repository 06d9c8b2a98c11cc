/**
 * The launch ledger (spec document 1, 3.1 and the daily cap of section 8), owned by
 * `src/services/launch/LaunchLedger.ts`.
 *
 * - `launch_ledger`: one row per account and `clientLaunchId`, shared by the three launch paths
 *   (`path`). `body_hash` is the idempotency hash of the canonical body, bound to the id for the
 *   row's lifetime. `attempt` counts fresh attempts after definitive failures. `slot_day` is the
 *   UTC day whose daily-cap slot the row holds (null: none); `slot_kept` marks a slot kept on a
 *   definitive failure (never refunded). `result` is the stored launch result, set exactly when
 *   `confirmed`.
 * - `launch_daily_usage`: slots taken per account and UTC day. The check-and-take is one
 *   `INSERT ... ON CONFLICT DO UPDATE ... WHERE used < cap`, atomic across connections; a row
 *   holding a slot on a day is counted in that day's `used`.
 *
 * No foreign keys to other modules' tables (accounts and keys are referenced by id as text).
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE launch_ledger (
      account_id text NOT NULL,
      client_launch_id text NOT NULL CHECK (char_length(client_launch_id) BETWEEN 1 AND 128),
      path text NOT NULL CHECK (path IN ('headless', 'self', 'atomic')),
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      payer text NOT NULL CHECK (payer IN ('embedded', 'linked', 'tee')),
      key_id text,
      body_hash text NOT NULL CHECK (body_hash ~ '^[0-9a-f]{64}$'),
      state text NOT NULL CHECK (state IN ('submitted', 'confirming', 'confirmed', 'failed')),
      attempt integer NOT NULL CHECK (attempt >= 1),
      slot_day date,
      slot_kept boolean NOT NULL DEFAULT false,
      error_code text,
      mint text,
      pool text,
      signature text,
      result jsonb,
      created_at timestamptz NOT NULL,
      attempt_started_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, client_launch_id),
      CHECK ((state = 'confirmed') = (result IS NOT NULL)),
      CHECK ((state = 'failed') = (error_code IS NOT NULL))
    )
  `
  // Crash recovery and the self-signed sweep read the rows still in flight.
  yield* sql`
    CREATE INDEX launch_ledger_in_flight ON launch_ledger (account_id, attempt_started_at)
    WHERE state IN ('submitted', 'confirming')`
  yield* sql`
    CREATE TABLE launch_daily_usage (
      account_id text NOT NULL,
      day date NOT NULL,
      used integer NOT NULL CHECK (used >= 0),
      PRIMARY KEY (account_id, day)
    )
  `
})
