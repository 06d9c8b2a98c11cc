/**
 * Atomic launch bundles and the main payer's spend holds (launch spec 2.4, 2.8, 3.5, 4 rules 7
 * to 9), owned by `src/services/launch/atomic/BundleStore.ts`.
 *
 * - `atomic_bundles`: one row per built bundle. `build` is the build as answered (legs, unsigned
 *   client legs, the server legs' messages, the ladder, payers) and `state` the BundleActor's
 *   state (`actors/bundle/BundleCodec.ts`), rewritten with every step, so a restart resumes each
 *   bundle where it was; `phase` mirrors the state's phase for the resume and sweep queries.
 *   `submit_token` is set by the submit that consumed the bundle (compare-and-set).
 * - `spend_holds`: one row per main-payer buy leg, reserved in the build's transaction before the
 *   owner signs anything. `held` weighs on the key's txLimit window it was created in; `released`
 *   (an unsigned build failed or expired) and `converted` (the buy landed and its usage was
 *   metered) no longer do.
 * - `atomic_bookings`: one row per bookkeeping item done for a bundle (`token`, `launch`,
 *   `finalization`, `buy:<clientTradeId>`), written in the same transaction as the item's writes:
 *   an item performed again after a crash finds its row and writes nothing twice.
 *
 * No foreign keys to other modules' tables. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE atomic_bundles (
      bundle_id text PRIMARY KEY,
      account_id text NOT NULL,
      key_id text NOT NULL,
      key_prefix text NOT NULL,
      client_launch_id text NOT NULL,
      attempt integer NOT NULL,
      mint text NOT NULL,
      phase text NOT NULL,
      build text NOT NULL,
      state text NOT NULL,
      submit_token text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX atomic_bundles_phase ON atomic_bundles (phase)`
  yield* sql`CREATE INDEX atomic_bundles_launch ON atomic_bundles (account_id, client_launch_id)`
  yield* sql`
    CREATE TABLE spend_holds (
      bundle_id text NOT NULL,
      leg_index integer NOT NULL CHECK (leg_index BETWEEN 1 AND 4),
      key_id text NOT NULL,
      account_id text NOT NULL,
      wallet text NOT NULL,
      asset text NOT NULL,
      amount_raw text NOT NULL,
      usd_micros bigint,
      state text NOT NULL CHECK (state IN ('held', 'released', 'converted')),
      created_at timestamptz NOT NULL,
      settled_at timestamptz,
      PRIMARY KEY (bundle_id, leg_index)
    )`
  yield* sql`CREATE INDEX spend_holds_key ON spend_holds (key_id, state, created_at)`
  yield* sql`
    CREATE TABLE atomic_bookings (
      bundle_id text NOT NULL,
      item text NOT NULL,
      booked_at timestamptz NOT NULL,
      PRIMARY KEY (bundle_id, item)
    )`
})
