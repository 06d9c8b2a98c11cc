/**
 * The market-data service's per-account data (spec 4.5, 8): follows, rules, own wallet groups,
 * the watchlist and the personal signals.
 *
 * - `md_follows`: `{chain, address}` per account, unique per account (a token or a wallet).
 * - `md_rules`: a pattern with validated params (jsonb) and an optional tracked `wallet_id`.
 * - `md_groups` / `md_group_wallets`: an account's own groups, private to it; wallets unique
 *   per group; deleting a group deletes its wallets.
 * - `md_watchlist`: wallets whose trades and launches reach the account's webhooks.
 * - `md_personal_signals`: signals matched to an account; `seq` is the `next_after` cursor
 *   (written under one advisory lock so sequence values commit in order); one row per account
 *   and signal id; the writer keeps the newest N per account.
 *
 * Caps are enforced by the service under a per-account advisory lock, not by the schema.
 * No foreign keys to other modules' tables (accounts are referenced by id as text).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE md_follows (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      address text NOT NULL,
      created_at timestamptz NOT NULL,
      UNIQUE (account_id, chain, address)
    )
  `
  yield* sql`CREATE INDEX md_follows_account ON md_follows (account_id, created_at)`
  yield* sql`
    CREATE TABLE md_rules (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      name text NOT NULL,
      pattern text NOT NULL,
      wallet_id text,
      params jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )
  `
  yield* sql`CREATE INDEX md_rules_account ON md_rules (account_id, created_at)`
  yield* sql`
    CREATE TABLE md_groups (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL
    )
  `
  yield* sql`CREATE INDEX md_groups_account ON md_groups (account_id, created_at)`
  yield* sql`
    CREATE TABLE md_group_wallets (
      group_id text NOT NULL REFERENCES md_groups (id) ON DELETE CASCADE,
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      address text NOT NULL,
      added_at timestamptz NOT NULL,
      seq bigserial NOT NULL,
      PRIMARY KEY (group_id, chain, address)
    )
  `
  yield* sql`
    CREATE TABLE md_watchlist (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      address text NOT NULL,
      label text,
      created_at timestamptz NOT NULL,
      UNIQUE (account_id, chain, address)
    )
  `
  yield* sql`CREATE INDEX md_watchlist_address ON md_watchlist (chain, address)`
  yield* sql`
    CREATE TABLE md_personal_signals (
      seq bigserial PRIMARY KEY,
      account_id text NOT NULL,
      signal_id text NOT NULL,
      signal jsonb NOT NULL,
      reasons jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      UNIQUE (account_id, signal_id)
    )
  `
  yield* sql`CREATE INDEX md_personal_signals_account ON md_personal_signals (account_id, seq)`
})
