/**
 * Accounts, owner credentials and agent keys (spec document 2, sections 2.1, 2.2, 5).
 *
 * - `accounts`: the paid plan (`plan`, `plan_expires_at`; null = no expiry), a Max grant with
 *   its expiry and source (admin, promo, trial, team), the agent-features switch, the admin
 *   flag (operator-created), an optional unique `handle` (the embedded `local` account), and
 *   referral attribution.
 * - `sessions`, `devices`: owner credentials. Only `sha256(token)` is stored (hex) beside the
 *   8-character public id; `device_authorizations` is the device flow (device code hashed, user
 *   code in clear while pending).
 * - `agent_keys`: one row per key, hash + 8-character `prefix` only; scopes as a sorted jsonb
 *   array; caps issued at creation; per-asset spend limits (jsonb array or null = uncapped);
 *   `txLimit` as two columns; `paused` and `wallet_scope` for the wallet side (TEE binding lives
 *   on the wallet row).
 * - `agent_key_access_changes`: committed access changes, newest first by `seq`.
 * - `agent_key_usage_daily`: metering roll-up per key and UTC day (from 2026-08-15);
 *   `account_fee_totals`: platform fees per chain and quote asset (raw units, numeric).
 *
 * Portable SQL only (PGlite and PostgreSQL 15). Money is numeric(78,0) raw units or bigint
 * micro-dollars, never floats.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE accounts (
      id text PRIMARY KEY,
      handle text UNIQUE,
      name text,
      plan text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'pro', 'max')),
      plan_expires_at timestamptz,
      max_grant_expires_at timestamptz,
      max_grant_source text CHECK (max_grant_source IN ('subscription', 'trial', 'team', 'promo')),
      agent_enabled boolean NOT NULL DEFAULT false,
      is_admin boolean NOT NULL DEFAULT false,
      referral_code text NOT NULL UNIQUE,
      referred_by text REFERENCES accounts (id),
      referred_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE sessions (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts (id),
      token_hash text NOT NULL,
      label text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    )
  `
  yield* sql`CREATE INDEX sessions_account ON sessions (account_id)`
  yield* sql`
    CREATE TABLE devices (
      id text PRIMARY KEY,
      prefix text NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id),
      token_hash text NOT NULL,
      client_name text,
      approved_scopes jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )
  `
  yield* sql`CREATE INDEX devices_account ON devices (account_id)`
  yield* sql`
    CREATE TABLE device_authorizations (
      id text PRIMARY KEY,
      device_code_hash text NOT NULL UNIQUE,
      user_code text NOT NULL,
      client_name text,
      requested_scopes jsonb,
      environment text NOT NULL CHECK (environment IN ('production', 'test')),
      status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'exchanged')),
      account_id text REFERENCES accounts (id),
      approved_session_id text,
      device_id text REFERENCES devices (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      decided_at timestamptz,
      last_polled_at timestamptz
    )
  `
  yield* sql`CREATE INDEX device_authorizations_user_code ON device_authorizations (user_code)`
  yield* sql`
    CREATE TABLE agent_keys (
      id text PRIMARY KEY,
      prefix text NOT NULL UNIQUE,
      account_id text NOT NULL REFERENCES accounts (id),
      key_hash text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('production', 'test')),
      scopes jsonb NOT NULL,
      label text,
      avatar text,
      rate_limit_per_min integer NOT NULL,
      daily_launch_cap integer NOT NULL,
      launch_chains jsonb NOT NULL,
      embedded_wallet text NOT NULL CHECK (embedded_wallet IN ('allowed', 'denied')),
      expires_at timestamptz,
      tx_limit_usd_micros bigint,
      tx_limit_reset text CHECK (tx_limit_reset IN ('never', 'daily', 'weekly', 'monthly')),
      spend_limits jsonb,
      paused boolean NOT NULL DEFAULT false,
      wallet_scope text NOT NULL DEFAULT 'all' CHECK (wallet_scope IN ('all', 'selected')),
      minted_by_device_id text REFERENCES devices (id),
      provisioned_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz,
      CHECK ((tx_limit_usd_micros IS NULL) = (tx_limit_reset IS NULL))
    )
  `
  yield* sql`CREATE INDEX agent_keys_account ON agent_keys (account_id, created_at)`
  yield* sql`CREATE INDEX agent_keys_device ON agent_keys (minted_by_device_id)`
  yield* sql`
    CREATE TABLE agent_key_access_changes (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      key_id text NOT NULL REFERENCES agent_keys (id),
      account_id text NOT NULL REFERENCES accounts (id),
      at timestamptz NOT NULL,
      direction text NOT NULL CHECK (direction IN ('unchanged', 'narrow', 'widen')),
      from_access text,
      from_scopes jsonb NOT NULL,
      to_access text,
      to_scopes jsonb NOT NULL,
      actor text NOT NULL CHECK (actor IN ('session', 'device', 'agent')),
      actor_device_prefix text,
      actor_key_prefix text
    )
  `
  yield* sql`CREATE INDEX agent_key_access_changes_key ON agent_key_access_changes (key_id, seq)`
  yield* sql`
    CREATE TABLE agent_key_usage_daily (
      key_id text NOT NULL REFERENCES agent_keys (id),
      day date NOT NULL,
      usd_micros bigint NOT NULL DEFAULT 0,
      trade_count integer NOT NULL DEFAULT 0,
      launch_count integer NOT NULL DEFAULT 0,
      PRIMARY KEY (key_id, day)
    )
  `
  yield* sql`
    CREATE TABLE account_fee_totals (
      account_id text NOT NULL REFERENCES accounts (id),
      chain text NOT NULL,
      quote_asset text NOT NULL,
      fee_raw_sum numeric(78, 0) NOT NULL DEFAULT 0,
      fee_count bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, chain, quote_asset)
    )
  `
})
