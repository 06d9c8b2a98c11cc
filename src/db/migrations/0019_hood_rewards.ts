/**
 * Hood (EVM-chain) staking rewards (spec document 2, 2.4), owned by
 * `src/services/staking/HoodRewards.ts`:
 *
 * - `hood_reward_distributions`: one row per graduated Hood token (keyed by the ingest source and
 *   the token, like `hood_pools`, so a replaced chain's rows are deleted with its pools): the
 *   token's symbol and name, the curve's staker allocation, the denominator of the split (the recipients' eligible staked
 *   receipt), what was shared, what stayed undistributed and how many accounts forfeited. Written
 *   once, with its shares, in one transaction; a second writer's insert does nothing.
 * - `hood_rewards`: one row per account that earned a share (`seq` gives the reward id
 *   `hood-<seq>`): the EVM wallet it is owed to, the account's staked receipt at the split and the
 *   amount of the token. Read-only for agents (claimed from the site, spec 4.2).
 *
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE hood_reward_distributions (
      source text NOT NULL,
      mint text NOT NULL,
      curve text NOT NULL,
      pool text NOT NULL,
      symbol text NOT NULL,
      name text NOT NULL,
      allocation_raw text NOT NULL,
      eligible_staked_raw text NOT NULL,
      distributed_raw text NOT NULL,
      undistributed_raw text NOT NULL,
      recipients integer NOT NULL,
      forfeited_accounts integer NOT NULL,
      distributed_at timestamptz NOT NULL,
      PRIMARY KEY (source, mint)
    )`
  yield* sql`
    CREATE TABLE hood_rewards (
      seq bigserial PRIMARY KEY,
      source text NOT NULL,
      mint text NOT NULL,
      account_id text NOT NULL,
      evm_wallet text NOT NULL,
      staked_raw text NOT NULL,
      amount_raw text NOT NULL,
      distributed_at timestamptz NOT NULL,
      UNIQUE (source, mint, account_id)
    )`
  yield* sql`CREATE INDEX hood_rewards_account ON hood_rewards (account_id, seq)`
})
