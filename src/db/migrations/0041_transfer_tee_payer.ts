/**
 * The TEE payer on the agent transfer rail (owned by `src/services/transfers/TransferStore.ts`):
 * a transfer out of a TEE wallet is recorded `built` with the unsigned transaction and its sign
 * claim, and moves to `sending` once the signed bytes prove they are exactly the built message.
 * - `transfers.state` gains `built` (no signature yet: `signature` is '' until then);
 * - `payer`: `main` (the embedded wallet, signed server-side) or `tee`;
 * - `wallet_id`: the paying TEE wallet's row (null for `payer: main`);
 * - `claim_id`, `claim_expires_at`: the single-use sign claim of the built transaction;
 * - `transaction`: the unsigned transaction (base64 wire bytes), answered again on a replay;
 * - `message_hash`: sha-256 hex of the built message, what a signed transaction must match;
 *   `transfers_built` lists builds for the recovery pass that settles relay-signed ones the caller
 *   broadcast itself.
 * - `wallets.linked_by`: the credential that linked the row (`session`, `device`, `agentKey`);
 *   null for rows linked before it was recorded. A wallet the owner linked while signed in
 *   (`session`) is a destination of the bound TEE wallet.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transfers DROP CONSTRAINT transfers_state_check`
  yield* sql`ALTER TABLE transfers ADD CONSTRAINT transfers_state_check CHECK (state IN ('built', 'sending', 'confirmed', 'failed'))`
  yield* sql`ALTER TABLE transfers ADD COLUMN payer text NOT NULL DEFAULT 'main' CHECK (payer IN ('main', 'tee'))`
  yield* sql`ALTER TABLE transfers ADD COLUMN wallet_id text`
  yield* sql`ALTER TABLE transfers ADD COLUMN claim_id text`
  yield* sql`ALTER TABLE transfers ADD COLUMN claim_expires_at timestamptz`
  yield* sql`ALTER TABLE transfers ADD COLUMN transaction text`
  yield* sql`ALTER TABLE transfers ADD COLUMN message_hash text`
  yield* sql`CREATE INDEX transfers_built ON transfers (created_at) WHERE state = 'built'`
  yield* sql`ALTER TABLE wallets ADD COLUMN linked_by text CHECK (linked_by IN ('session', 'device', 'agentKey'))`
})
