/**
 * The agent transfer rail (spec document 2: 2.1 "Only Withdraw moves funds", section 6
 * `transfer.executed`): one row per `(account_id, client_transfer_id)`, the attempt the one
 * attempt runner drives (leases of kind `transfer`).
 *
 * - `request_hash`: the digest of the request's body; the same id with another body is refused.
 * - `state`: `sending` (signed and recorded before the one send), `confirmed`, `failed`.
 * - `asset` is `sol`, `usdc`, `svc` or a mint address; `mint` is null for native SOL.
 * - `destination_class` `own` or `approved`; `destination_kind` the destination wallet's kind or
 *   `withdrawal_address`; `to_wallet_id` the destination wallet row when it is one.
 * - `last_valid_block_height`: the Solana blockhash's bound (when the send can no longer land).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE transfers (
      account_id text NOT NULL,
      client_transfer_id text NOT NULL,
      key_id text NOT NULL,
      key_prefix text NOT NULL,
      request_hash text NOT NULL,
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      asset text NOT NULL,
      mint text,
      amount_raw numeric(78, 0) NOT NULL CHECK (amount_raw > 0),
      from_address text NOT NULL,
      to_address text NOT NULL,
      destination_class text NOT NULL CHECK (destination_class IN ('own', 'approved')),
      destination_kind text NOT NULL,
      to_wallet_id text,
      state text NOT NULL CHECK (state IN ('sending', 'confirmed', 'failed')),
      signature text NOT NULL,
      last_valid_block_height numeric(20, 0),
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, client_transfer_id)
    )
  `
  yield* sql`CREATE INDEX transfers_in_flight ON transfers (updated_at) WHERE state = 'sending'`
})
