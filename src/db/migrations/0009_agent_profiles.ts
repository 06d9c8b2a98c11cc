/**
 * Published agent profiles (spec launch-and-market-reads 2.9 and section 4: the copy score, the
 * cohorts, the agent record).
 *
 * - `agent_profiles`: at most one per account. `wallet` on `chain` is the wallet whose trades the
 *   copy score reads (Hood addresses in their checksummed form, as the trades carry them). Only
 *   `published` profiles are readable by the public routes; unpublishing keeps the row (and the
 *   id, so a republished profile keeps its links).
 * - An index on the embedded wallets' addresses: the agent record resolves a user by wallet.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_profiles (
      id text PRIMARY KEY,
      account_id text NOT NULL UNIQUE REFERENCES accounts (id),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      wallet text NOT NULL,
      published boolean NOT NULL DEFAULT false,
      published_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )
  `
  yield* sql`CREATE INDEX agent_profiles_published ON agent_profiles (published_at, id) WHERE published`
  yield* sql`CREATE INDEX agent_profiles_wallet ON agent_profiles (chain, wallet)`
  yield* sql`CREATE INDEX wp_wallets_address ON wp_wallets (chain, lower(address))`
})
