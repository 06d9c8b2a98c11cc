/**
 * The rows of a Hood TEE sell's server-built approval (`agent_trade_approvals`, migration 0045),
 * and the pure rule that says where one stands (`approvalStanding`). No chain, no HTTP: the
 * approval flow (`HoodTeeApprovals.ts`) reads the claim and the chain and decides with the rule.
 * Every write is conditional on the row's claim and state, so two requests never both move one row.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export type ApprovalState = "built" | "sending" | "approved" | "lapsed"

export interface ApprovalRow {
  readonly accountId: string
  readonly clientTradeId: string
  /** The sell request's body hash (`tradeBodyHash`): a changed body under the id is refused. */
  readonly bodyHash: string
  readonly walletId: string
  readonly wallet: string
  readonly mint: string
  readonly spender: string
  readonly nonce: bigint
  /** The unsigned transaction, base64. */
  readonly transaction: string
  /** sha-256 (hex) of the unsigned bytes, as the sign claim binds them. */
  readonly messageHash: string
  readonly claimId: string
  /** The relay's signed bytes (0x-hex) once submitted; sent again after a crash. */
  readonly signedTransaction: string | null
  /** The signed transaction's hash once submitted. */
  readonly signature: string | null
  readonly state: ApprovalState
  readonly createdAtMs: number
}

interface Db {
  account_id: string
  client_trade_id: string
  body_hash: string
  wallet_id: string
  wallet: string
  mint: string
  spender: string
  nonce: string
  transaction: string
  message_hash: string
  claim_id: string
  signed_transaction: string | null
  signature: string | null
  state: ApprovalState
  created_at_ms: string | number
}

const rowOf = (r: Db): ApprovalRow => ({
  accountId: r.account_id,
  clientTradeId: r.client_trade_id,
  bodyHash: r.body_hash,
  walletId: r.wallet_id,
  wallet: r.wallet,
  mint: r.mint,
  spender: r.spender,
  nonce: BigInt(r.nonce),
  transaction: r.transaction,
  messageHash: r.message_hash,
  claimId: r.claim_id,
  signedTransaction: r.signed_transaction,
  signature: r.signature,
  state: r.state,
  createdAtMs: Number(r.created_at_ms)
})

/**
 * Where an approval stands, from its row, its claim and (when a hash is known) the chain's verdict
 * on it. Pure.
 * - `open`: built, its claim unsigned and still signable (the same approval answers a repeat);
 * - `expire`: built, its claim unsigned: signable only until its lifetime (the caller expires it
 *   conditionally: lapsed when that succeeds, else open);
 * - `in_flight`: signed and not mined, its nonce not passed (the caller holds or broadcast the bytes);
 * - `resend`: the same, with the signed bytes kept on the row (a submit recorded `sending`): sent again;
 * - `approved`: mined and succeeded; `lapsed`: reverted, its nonce taken, or its claim gone unsigned.
 */
export type ApprovalStanding = "open" | "expire" | "in_flight" | "resend" | "approved" | "lapsed"

export type ApprovalVerdict = { readonly _tag: "Receipt"; readonly success: boolean } | { readonly _tag: "NoReceipt"; readonly neverLands: boolean }

export const approvalStanding = (
  row: Pick<ApprovalRow, "state" | "signedTransaction">,
  claim: { readonly state: string; readonly signature: string | null } | undefined,
  verdict: ApprovalVerdict | undefined
): ApprovalStanding => {
  if (row.state === "approved" || row.state === "lapsed") return row.state
  if (verdict !== undefined) {
    if (verdict._tag === "Receipt") return verdict.success ? "approved" : "lapsed"
    if (verdict.neverLands) return "lapsed"
    return row.signedTransaction !== null ? "resend" : "in_flight"
  }
  // No hash known: nothing signed it yet.
  if (claim?.state === "open") return "expire"
  return "lapsed"
}

/** The hash an approval's verdict is read under: the submitted bytes', else the relay's signature on the claim. Pure. */
export const approvalHashOf = (row: Pick<ApprovalRow, "signature">, claim: { readonly signature: string | null } | undefined): string | undefined => {
  const hash = row.signature ?? claim?.signature ?? null
  return hash === null || hash === "" ? undefined : hash
}

export const makeTradeApprovalStore = (sql: SqlClient.SqlClient) => {
  const get = (accountId: string, clientTradeId: string) =>
    Effect.map(sql<Db>`SELECT * FROM agent_trade_approvals WHERE account_id = ${accountId} AND client_trade_id = ${clientTradeId}`, (rows) =>
      rows[0] === undefined ? undefined : rowOf(rows[0])
    )

  /** The live (`built` or `sending`) approval of a wallet, token and spender, whichever request built it. */
  const live = (wallet: string, mint: string, spender: string) =>
    Effect.map(sql<Db>`SELECT * FROM agent_trade_approvals WHERE wallet = ${wallet} AND mint = ${mint} AND spender = ${spender} AND state IN ('built', 'sending')`, (rows) =>
      rows[0] === undefined ? undefined : rowOf(rows[0])
    )

  /** Records a built approval; false when the id or the wallet's live approval was taken first (nothing written). */
  const insert = (r: ApprovalRow) =>
    Effect.map(
      sql<{ client_trade_id: string }>`
        INSERT INTO agent_trade_approvals (account_id, client_trade_id, body_hash, wallet_id, wallet, mint, spender, nonce, transaction,
          message_hash, claim_id, signed_transaction, signature, state, created_at_ms)
        VALUES (${r.accountId}, ${r.clientTradeId}, ${r.bodyHash}, ${r.walletId}, ${r.wallet}, ${r.mint}, ${r.spender}, ${r.nonce.toString()},
          ${r.transaction}, ${r.messageHash}, ${r.claimId}, NULL, NULL, 'built', ${r.createdAtMs})
        ON CONFLICT DO NOTHING
        RETURNING client_trade_id`,
      (rows) => rows.length === 1
    )

  /** `built → sending` with the submitted bytes and their hash; false when another request moved it first. */
  const markSending = (r: ApprovalRow, signature: string, signedTransaction: string) =>
    Effect.map(
      sql<{ client_trade_id: string }>`
        UPDATE agent_trade_approvals SET state = 'sending', signature = ${signature}, signed_transaction = ${signedTransaction}
        WHERE account_id = ${r.accountId} AND client_trade_id = ${r.clientTradeId} AND claim_id = ${r.claimId} AND state = 'built'
        RETURNING client_trade_id`,
      (rows) => rows.length === 1
    )

  /** A live approval settled (`approved` or `lapsed`), once. */
  const settle = (r: ApprovalRow, state: "approved" | "lapsed") =>
    sql`UPDATE agent_trade_approvals SET state = ${state}
        WHERE account_id = ${r.accountId} AND client_trade_id = ${r.clientTradeId} AND claim_id = ${r.claimId} AND state IN ('built', 'sending')`

  /**
   * `built → lapsed` for an approval whose bytes never reached this server (no submitted bytes),
   * only while still so: false when a submit moved it to `sending` first (one conditional UPDATE,
   * as `markSending` is: of the two racing, one wins).
   */
  const lapseUnsent = (r: ApprovalRow) =>
    Effect.map(
      sql<{ client_trade_id: string }>`
        UPDATE agent_trade_approvals SET state = 'lapsed'
        WHERE account_id = ${r.accountId} AND client_trade_id = ${r.clientTradeId} AND claim_id = ${r.claimId} AND state = 'built' AND signed_transaction IS NULL
        RETURNING client_trade_id`,
      (rows) => rows.length === 1
    )

  /** A settled approval removed so the id can build a new one (its claim stays in `sign_claims`). */
  const remove = (r: ApprovalRow) =>
    sql`DELETE FROM agent_trade_approvals
        WHERE account_id = ${r.accountId} AND client_trade_id = ${r.clientTradeId} AND claim_id = ${r.claimId} AND state IN ('approved', 'lapsed')`

  return { get, live, insert, markSending, settle, lapseUnsent, remove }
}

export type TradeApprovalStore = ReturnType<typeof makeTradeApprovalStore>
