/**
 * A Hood TEE wallet's token approval before a sell (owned by
 * `src/services/trade/internal/TradeApprovalStore.ts`, docs/decisions.md "A Hood TEE sell's
 * approval, built by the server"): the `approve` transaction the service built for one sell's
 * `clientTradeId`, its single-use sign claim, and once submitted the relay's signed bytes (sent
 * again after a crash between the record and the send). `state`: `built` (its claim may be signed),
 * `sending` (submitted, awaiting the chain), `approved` (mined), `lapsed` (reverted, its nonce taken
 * by another transaction, or its claim expired unsigned). At most one live (`built` or `sending`)
 * approval per wallet, token and spender: never two approvals of one wallet in flight on two nonces.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_trade_approvals (
      account_id text NOT NULL,
      client_trade_id text NOT NULL CHECK (char_length(client_trade_id) BETWEEN 1 AND 128),
      body_hash text NOT NULL,
      wallet_id text NOT NULL,
      wallet text NOT NULL,
      mint text NOT NULL,
      spender text NOT NULL,
      nonce text NOT NULL,
      transaction text NOT NULL,
      message_hash text NOT NULL,
      claim_id text NOT NULL,
      signed_transaction text,
      signature text,
      state text NOT NULL CHECK (state IN ('built', 'sending', 'approved', 'lapsed')),
      created_at_ms bigint NOT NULL,
      PRIMARY KEY (account_id, client_trade_id)
    )`
  yield* sql`
    CREATE UNIQUE INDEX agent_trade_approvals_live ON agent_trade_approvals (wallet, mint, spender)
    WHERE state IN ('built', 'sending')`
})
