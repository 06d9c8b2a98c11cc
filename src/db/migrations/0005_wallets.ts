/**
 * Wallets (spec document 2, section 2.3 and the rebind rules of 4.1).
 *
 * The local wallet provider's own store (`wp_*`, what a hosted provider would keep on its side):
 * - `wp_wallets`: every key the provider custodies (embedded, imported, TEE), the secret sealed
 *   under the wallet master key (AES-256-GCM, bound to the row id), with its signer quorum and
 *   policy. One embedded wallet per account and chain.
 * - `wp_delegations`: agent access per account and chain (`active` or `revoked`), read on every use.
 * - `wp_policies`: the backstop rules and their state (`active`, `default_deny` after a failed
 *   link, `cleared` after a revoke).
 * - `wp_signer_quorums`: 1-of-1 quorums of P-256 signer keys (imported wallets).
 *
 * The service's rows:
 * - `wallets`: the account's linked (attribution-only), imported and TEE wallets. Revoke
 *   tombstones (`revoked_at`); at most one active row per address and chain across all accounts.
 *   `seq` orders an account's wallets oldest first (ties of `created_at` included).
 *   A TEE wallet's binding (`bound_key_id`, `bound_key_prefix`) lives here, keyed by key id as text.
 * - `wallet_imports`: open HPKE import sessions (recipient private key sealed), single use.
 * - `sign_claims`: one row per transaction the service built for a wallet; consumed once by the
 *   sign relay, then settled (`confirmed`, `failed`, `expired`).
 * - `tee_rebinds`: the rebind audit; `key_wallet_assignments`: a selected-scope key's wallets.
 *
 * No foreign keys to other modules' tables (accounts and keys are referenced by id as text).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE wp_policies (
      id text PRIMARY KEY,
      rules jsonb NOT NULL,
      state text NOT NULL CHECK (state IN ('active', 'default_deny', 'cleared')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )
  `
  yield* sql`
    CREATE TABLE wp_signer_quorums (
      id text PRIMARY KEY,
      threshold integer NOT NULL,
      public_keys jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )
  `
  yield* sql`
    CREATE TABLE wp_wallets (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'evm')),
      address text NOT NULL,
      custody text NOT NULL CHECK (custody IN ('embedded', 'imported', 'tee')),
      secret_sealed text NOT NULL,
      quorum_id text REFERENCES wp_signer_quorums (id),
      policy_id text REFERENCES wp_policies (id),
      created_at timestamptz NOT NULL
    )
  `
  yield* sql`CREATE UNIQUE INDEX wp_wallets_embedded ON wp_wallets (account_id, chain) WHERE custody = 'embedded'`
  yield* sql`
    CREATE TABLE wp_delegations (
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'evm')),
      state text NOT NULL CHECK (state IN ('active', 'revoked')),
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, chain)
    )
  `
  yield* sql`
    CREATE TABLE wallets (
      id text PRIMARY KEY,
      seq bigserial NOT NULL,
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'evm')),
      address text NOT NULL,
      address_key text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('linked', 'imported', 'tee')),
      label text,
      allow_launch boolean NOT NULL DEFAULT false,
      bound_key_id text,
      bound_key_prefix text,
      provider_wallet_id text,
      policy_id text,
      policy_neutralized boolean,
      vault_destination text,
      authority_status text NOT NULL DEFAULT 'verified_active',
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      CHECK ((kind = 'tee') = (bound_key_id IS NOT NULL))
    )
  `
  yield* sql`CREATE UNIQUE INDEX wallets_active_address ON wallets (chain, address_key) WHERE revoked_at IS NULL`
  yield* sql`CREATE INDEX wallets_account ON wallets (account_id, seq)`
  yield* sql`CREATE INDEX wallets_bound_key ON wallets (bound_key_id) WHERE bound_key_id IS NOT NULL`
  yield* sql`
    CREATE TABLE wallet_imports (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      key_id text,
      chain text NOT NULL CHECK (chain IN ('solana', 'evm')),
      address text NOT NULL,
      public_key text NOT NULL,
      private_key_sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz
    )
  `
  yield* sql`CREATE INDEX wallet_imports_account ON wallet_imports (account_id, created_at)`
  yield* sql`
    CREATE TABLE sign_claims (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      wallet_id text NOT NULL,
      key_id text,
      chain text NOT NULL CHECK (chain IN ('solana', 'evm')),
      purpose text NOT NULL,
      message_hash text NOT NULL,
      required_scopes jsonb NOT NULL,
      state text NOT NULL CHECK (state IN ('open', 'signed', 'confirmed', 'failed', 'expired')),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      tx_expires_at timestamptz,
      signed_at timestamptz,
      signature text,
      settled_at timestamptz
    )
  `
  yield* sql`CREATE INDEX sign_claims_wallet ON sign_claims (wallet_id, state, created_at)`
  yield* sql`
    CREATE TABLE tee_rebinds (
      id text PRIMARY KEY,
      seq bigserial NOT NULL,
      account_id text NOT NULL,
      wallet_id text NOT NULL,
      from_key_id text NOT NULL,
      from_key_prefix text NOT NULL,
      to_key_id text NOT NULL,
      to_key_prefix text NOT NULL,
      actor text NOT NULL CHECK (actor IN ('session', 'device')),
      actor_device_prefix text,
      at timestamptz NOT NULL
    )
  `
  yield* sql`CREATE INDEX tee_rebinds_account ON tee_rebinds (account_id, seq DESC)`
  yield* sql`
    CREATE TABLE key_wallet_assignments (
      key_id text NOT NULL,
      wallet_id text NOT NULL,
      account_id text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (key_id, wallet_id)
    )
  `
})
