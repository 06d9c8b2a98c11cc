/**
 * Staking operations and staking reward claims (spec document 2, 3.3 and 3.4), owned by
 * `src/services/staking/StakingStore.ts`.
 *
 * - `staking_operations`: one row per account and `clientStakeId`. `body_hash` binds the id to
 *   its body for the row's lifetime (a changed body is refused). `state` follows
 *   `StakingMachine.ts`: `sending` (embedded: signed, recorded before it leaves), `built` (linked
 *   or TEE: the co-signed transaction and its sign claim), `submitted` (broadcast once),
 *   `confirmed`, `failed`, `expired`. `signature` and `last_valid_block_height` are written
 *   before a transaction leaves, so a restart decides from the chain what became of it;
 *   `message_hash` is the built message a submit or confirm must match.
 * - `staking_reward_claims`: one row per reward id (rewards are global on chain): recorded
 * *   before the claim is sent (`claiming`, with the signature and block height), then `claimed`, or
 *   `retry` when that transaction can no longer pay (`RewardClaimMachine.ts`).
 *
 * No foreign keys to other modules' tables. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE staking_operations (
      account_id text NOT NULL,
      client_stake_id text NOT NULL CHECK (char_length(client_stake_id) BETWEEN 1 AND 128),
      action text NOT NULL CHECK (action IN ('stake', 'unstake', 'finish')),
      payer text NOT NULL CHECK (payer IN ('main', 'linked', 'tee')),
      wallet_id text,
      wallet text NOT NULL,
      key_id text,
      body_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('sending', 'built', 'submitted', 'confirmed', 'failed', 'expired')),
      amount_raw text,
      withdrawal text,
      signature text,
      transaction text,
      message_hash text,
      claim_id text,
      last_valid_block_height text,
      built_at timestamptz,
      expires_at timestamptz,
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, client_stake_id)
    )`
  yield* sql`CREATE INDEX staking_operations_in_flight ON staking_operations (state) WHERE state IN ('sending', 'submitted')`
  yield* sql`
    CREATE TABLE staking_reward_claims (
      reward_id text PRIMARY KEY,
      account_id text NOT NULL,
      owner text NOT NULL,
      mint text NOT NULL,
      amount_raw text NOT NULL,
      state text NOT NULL CHECK (state IN ('claiming', 'retry', 'claimed')),
      signature text,
      last_valid_block_height text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
})
