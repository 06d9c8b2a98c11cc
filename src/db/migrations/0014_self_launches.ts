/**
 * Self-signed launches (launch spec 2.3, 3.2, 3.3), owned by `src/services/launch/SelfLaunch.ts`.
 *
 * - `self_launch_builds`: one row per ledger attempt of a self-signed build: who pays (the wallet,
 *   its kind and address, the key), what was asked (the decoded request, with the requested
 *   visibility and the dev buy, held across build and confirm: 3.2), and what was built (mint,
 *   pool, the unsigned transaction, its blockhash's last valid block height, `expiresAt`, the fee
 *   leg and the single-use sign claim), and for a Hood TEE build the sequenced operation
 *   (`operation`: its legs, their hashes and statuses, `nextLeg`), rewritten as it advances;
 *   `fee_tx_hash`, the Hood fee transfer a confirm accepted (unique: one transfer pays one launch). Written in the ledger's `begin` (or `rebuild`) transaction,
 *   so a ledger attempt and its stored transaction commit together.
 *
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE self_launch_builds (
      account_id text NOT NULL,
      client_launch_id text NOT NULL,
      attempt integer NOT NULL CHECK (attempt >= 1),
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      wallet_id text NOT NULL,
      wallet_kind text NOT NULL CHECK (wallet_kind IN ('imported', 'tee')),
      payer_address text NOT NULL,
      key_id text NOT NULL,
      request jsonb NOT NULL,
      resolved jsonb NOT NULL,
      mint text NOT NULL,
      pool text,
      transaction text NOT NULL,
      last_valid_block_height numeric(20, 0),
      expires_at timestamptz NOT NULL,
      fee jsonb,
      claim_id text NOT NULL,
      operation jsonb,
      fee_tx_hash text,
      built_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, client_launch_id, attempt)
    )
  `
  // A fee transfer confirms one launch only.
  yield* sql`CREATE UNIQUE INDEX self_launch_builds_fee_tx ON self_launch_builds (fee_tx_hash) WHERE fee_tx_hash IS NOT NULL`
})
