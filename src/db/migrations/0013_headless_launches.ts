/**
 * Headless launches (launch spec 2.1, 2.5, 3.1 "Also"), owned by `src/services/launch/HeadlessLaunch.ts`.
 *
 * - `headless_launch_attempts`: what one accepted attempt launches, written in the ledger's `begin`
 *   transaction: the decoded request (`request`, amounts as decimal strings) and what the gates
 *   resolved for it (`resolved`: the payer wallet, the metadata URI, the fee, the key), and, once
 *   the Solana transaction is signed and about to leave, its blockhash's last valid block height.
 *   With the ledger row's signature it is everything crash recovery needs to ask the chain.
 * - `launched_tokens`: one row per (chain, mint) a launch path sent, written before the
 *   transaction leaves (the attribution `isAgent` / `viaAgentKey` / `launchesViaApi` read), with the
 *   requested visibility; `confirmed_at` is set when the launch is confirmed (the token recorded).
 *
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE headless_launch_attempts (
      account_id text NOT NULL,
      client_launch_id text NOT NULL,
      attempt integer NOT NULL CHECK (attempt >= 1),
      request jsonb NOT NULL,
      resolved jsonb NOT NULL,
      last_valid_block_height numeric(20, 0),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, client_launch_id, attempt)
    )
  `
  yield* sql`
    CREATE TABLE launched_tokens (
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      mint text NOT NULL,
      account_id text NOT NULL,
      key_id text,
      client_launch_id text NOT NULL,
      path text NOT NULL CHECK (path IN ('headless', 'self', 'atomic')),
      visibility text NOT NULL CHECK (visibility IN ('production', 'test', 'local', 'hidden')),
      attributed_at timestamptz NOT NULL,
      confirmed_at timestamptz,
      PRIMARY KEY (chain, mint)
    )
  `
  yield* sql`CREATE INDEX launched_tokens_account ON launched_tokens (account_id)`
})
