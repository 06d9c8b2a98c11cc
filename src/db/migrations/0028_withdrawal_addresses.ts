/**
 * Withdrawal addresses and trusted linked wallets (spec document 2: 2.1 "Only Withdraw moves
 * funds", section 5 rule 7, section 6).
 *
 * - `withdrawal_addresses`: the account's approved destinations per chain. Revoke tombstones
 *   (`revoked_at`); at most one active row per account, chain and address (a partial unique
 *   index; `address_key` is the comparison form, lower-case on EVM). `seq` orders oldest first.
 * - `wallets.trusted_at`: set while the owner marks a linked wallet trusted (a destination the
 *   bound TEE wallet may send to), cleared when the owner clears it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE withdrawal_addresses (
      id text PRIMARY KEY,
      seq bigserial NOT NULL,
      account_id text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'evm')),
      address text NOT NULL,
      address_key text NOT NULL,
      label text,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    )
  `
  yield* sql`CREATE UNIQUE INDEX withdrawal_addresses_active ON withdrawal_addresses (account_id, chain, address_key) WHERE revoked_at IS NULL`
  yield* sql`CREATE INDEX withdrawal_addresses_account ON withdrawal_addresses (account_id, seq)`
  yield* sql`ALTER TABLE wallets ADD COLUMN trusted_at timestamptz`
})
