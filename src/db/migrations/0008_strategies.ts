/**
 * Strategies of the Max strategy lab (spec 2.7, 3.6, 4.5, 8).
 *
 * - `strategies`: one row per saved strategy, owned by one account (`account_id`, text: no
 *   foreign key to the accounts module). `status` is `draft`, `backtested` or `retired` (the
 *   CHECK makes `paper` and `live` impossible to store); `current_version` is the newest version.
 * - `strategy_versions`: every saved definition, immutable (`(strategy_id, version)`, versions
 *   from 1 without gaps). Nothing updates or deletes a version.
 * - `strategy_saves`: saves per account and UTC day, incremented in the saving transaction
 *   only while under the quota (20), so the limit holds across processes.
 * - `strategy_runs`: the automatic backtest of each version (`running`, `done`, `failed`), its
 *   window, verdict and the replay result without its trades (JSON; money as decimal strings).
 * - `strategy_run_trades`: the run's trades (the first 2,000 of the replay), one row each,
 *   numbered by entry order.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE strategies (
      id text PRIMARY KEY,
      seq bigserial NOT NULL,
      account_id text NOT NULL,
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('draft', 'backtested', 'retired')),
      current_version integer NOT NULL CHECK (current_version >= 1),
      verdict text CHECK (verdict IN ('pass', 'fail', 'insufficient')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      retired_at timestamptz
    )
  `
  yield* sql`CREATE INDEX strategies_account ON strategies (account_id, seq)`
  yield* sql`
    CREATE TABLE strategy_versions (
      strategy_id text NOT NULL REFERENCES strategies (id),
      version integer NOT NULL CHECK (version >= 1),
      definition jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (strategy_id, version)
    )
  `
  yield* sql`
    CREATE TABLE strategy_saves (
      account_id text NOT NULL,
      day date NOT NULL,
      used integer NOT NULL CHECK (used >= 0),
      PRIMARY KEY (account_id, day)
    )
  `
  yield* sql`
    CREATE TABLE strategy_runs (
      id text PRIMARY KEY,
      seq bigserial NOT NULL,
      account_id text NOT NULL,
      strategy_id text NOT NULL REFERENCES strategies (id),
      version integer NOT NULL,
      kind text NOT NULL CHECK (kind IN ('backtest')),
      status text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
      window_from timestamptz NOT NULL,
      window_to timestamptz NOT NULL,
      verdict text CHECK (verdict IN ('pass', 'fail', 'insufficient')),
      result jsonb,
      error text,
      created_at timestamptz NOT NULL,
      finished_at timestamptz,
      FOREIGN KEY (strategy_id, version) REFERENCES strategy_versions (strategy_id, version)
    )
  `
  yield* sql`CREATE INDEX strategy_runs_account ON strategy_runs (account_id, seq)`
  yield* sql`CREATE INDEX strategy_runs_strategy ON strategy_runs (strategy_id, seq)`
  yield* sql`
    CREATE TABLE strategy_run_trades (
      run_id text NOT NULL REFERENCES strategy_runs (id),
      n integer NOT NULL,
      trade jsonb NOT NULL,
      PRIMARY KEY (run_id, n)
    )
  `
})
