/**
 * Agent trades (issue 28), owned by `src/services/trade/TradeStore.ts`.
 *
 * - `agent_trades`: one row per account and `clientTradeId`. `body_hash` binds the id to its body
 *   for the row's lifetime (a changed body is refused). `state` follows `TradeMachine.ts`:
 *   `sending` (signed by the embedded wallet, recorded before it leaves), `executed`, `failed`.
 *   `signature` and `last_valid_block_height` are written before the transaction leaves, so a
 *   restart decides from the chain what became of it and never resends. `expected_out_raw` is the
 *   quote's fill the build priced, `min_amount_out_raw` what the chain enforces, `amount_out_raw`
 *   what the chain executed. Amounts are raw units as decimal text.
 *
 * No foreign keys to other modules' tables. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_trades (
      account_id text NOT NULL,
      client_trade_id text NOT NULL CHECK (char_length(client_trade_id) BETWEEN 1 AND 128),
      chain text NOT NULL CHECK (chain IN ('solana', 'hood')),
      mint text NOT NULL,
      side text NOT NULL CHECK (side IN ('buy', 'sell')),
      venue text NOT NULL,
      quote_mint text NOT NULL,
      quote_asset text NOT NULL,
      payer text NOT NULL CHECK (payer IN ('main', 'linked', 'tee')),
      wallet text NOT NULL,
      key_id text,
      body_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('sending', 'executed', 'failed')),
      amount_in_raw text NOT NULL,
      expected_out_raw text NOT NULL,
      min_amount_out_raw text NOT NULL,
      amount_out_raw text,
      fee_bps integer NOT NULL,
      fee_raw text NOT NULL,
      signature text NOT NULL,
      last_valid_block_height text NOT NULL,
      error_code text,
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, client_trade_id)
    )`
  yield* sql`CREATE INDEX agent_trades_in_flight ON agent_trades (state) WHERE state = 'sending'`
  yield* sql`CREATE INDEX agent_trades_by_account ON agent_trades (account_id, created_at DESC, client_trade_id DESC)`
})
