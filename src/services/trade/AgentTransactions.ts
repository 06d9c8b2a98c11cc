/**
 * The account's movements (`GET /api/v1/agent/transactions`, issue 28): every money movement the
 * service recorded for one account, read from the rows the rails own, in one query (UNION ALL),
 * newest first by `(at, kind, id)` with a keyset cursor. Read only: nothing here is derived from
 * the chain or invented; a figure a rail does not record is null.
 *
 * - `launch`: a confirmed launch (`launch_ledger`, state `confirmed`): the quote asset and the
 *   stored result's signature, the dev buy's amount from the confirmed attempt's stored request
 *   (headless or self-signed; an atomic launch records none: null) and the dev buy's platform fee
 *   (`result.devBuy.fee`) when the result has one.
 * - `trade`: an agent trade (`agent_trades`) that was sent or found on chain (`sending`,
 *   `executed`, `failed` with a signature; a linked/TEE `built` build never sent and one that
 *   lapsed unsent, `failed` without a signature, moved nothing): a buy spends `amountIn` of the
 *   quote asset, a sell `amountIn` of the token (asset = the mint); the platform fee.
 * - `stake`, `unstake`, `unstake_finish`: a staking operation (`staking_operations`) that was
 *   sent (a `built` build never signed and an `expired` one moved nothing): the platform token
 *   (`svc`) amount, null for a finish (the row records the withdrawal, not its amount).
 * - `reward_claim`: a staking reward claim (`staking_reward_claims`): the reward's mint and amount.
 * - `transfer`: a transfer (`transfers`), every state but a TEE build not signed yet (`built`: nothing moved): its asset and amount.
 *
 * Creator-fee claims are not listed: the service keeps no record of them (only the per-token
 * claim lease, `fee_claim_locks`); the chain is their record.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { type TradeError, tradeError } from "./TradeError.js"

export const TRANSACTION_KINDS = ["launch", "trade", "stake", "unstake", "unstake_finish", "reward_claim", "transfer"] as const
export type TransactionKind = (typeof TRANSACTION_KINDS)[number]
export const TRANSACTIONS_PAGE_MAX = 100

export interface TransactionView {
  readonly kind: TransactionKind
  readonly chain: "solana" | "hood"
  /** The client's id of the record: clientLaunchId, clientTradeId, clientStakeId, rewardId, clientTransferId. */
  readonly id: string
  readonly at: string
  readonly status: string
  readonly signature: string | null
  readonly mint: string | null
  /** A trade's side; null for every other kind. */
  readonly side: "buy" | "sell" | null
  /** What `amountRaw` is counted in: a quote asset's name, `svc`, or a token's mint. */
  readonly asset: string | null
  readonly amountRaw: string | null
  readonly fee: { readonly bps: number; readonly feeRaw: string } | null
  /** The record's own read route, when it has one. */
  readonly ref: string | null
}

export interface TransactionQuery {
  readonly chain?: "solana" | "hood"
  readonly kind?: TransactionKind
  /** At or after (epoch ms). */
  readonly sinceMs?: number
  /** Before (epoch ms). */
  readonly untilMs?: number
  readonly cursor?: string
  readonly limit?: number
}

export interface TransactionPage {
  readonly transactions: ReadonlyArray<TransactionView>
  readonly nextCursor: string | null
}

interface Position {
  readonly atMs: number
  readonly kind: string
  readonly id: string
}

/** `base64url(JSON [atMs, kind, id])`: the position after which the next page starts. */
export const encodeTransactionCursor = (p: Position): string => Buffer.from(JSON.stringify([p.atMs, p.kind, p.id])).toString("base64url")

export const decodeTransactionCursor = (cursor: string): Position | undefined => {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return Array.isArray(v) && v.length === 3 && Number.isSafeInteger(v[0]) && (TRANSACTION_KINDS as ReadonlyArray<unknown>).includes(v[1]) && typeof v[2] === "string"
      ? { atMs: v[0] as number, kind: v[1] as string, id: v[2] }
      : undefined
  } catch {
    return undefined
  }
}

interface Db {
  kind: TransactionKind
  chain: "solana" | "hood"
  id: string
  at: Date | string
  status: string
  signature: string | null
  mint: string | null
  side: "buy" | "sell" | null
  asset: string | null
  amount_raw: string | null
  fee_bps: number | null
  fee_raw: string | null
}

const refOf = (kind: TransactionKind, id: string): string | null => {
  switch (kind) {
    case "launch":
      return `/api/v1/launch/headless/jobs/${encodeURIComponent(id)}`
    case "trade":
      return `/api/v1/trade/agent/trades/${encodeURIComponent(id)}`
    default:
      return null
  }
}

/** A row of the union as the wire's item. Pure. */
export const transactionView = (r: Db): TransactionView => ({
  kind: r.kind,
  chain: r.chain,
  id: r.id,
  at: new Date(r.at).toISOString(),
  status: r.status,
  signature: r.signature,
  mint: r.mint,
  side: r.side,
  asset: r.asset,
  amountRaw: r.amount_raw,
  fee: r.fee_bps === null || r.fee_raw === null ? null : { bps: Number(r.fee_bps), feeRaw: r.fee_raw },
  ref: refOf(r.kind, r.id)
})

const storage = storageFailure("transactions", () => tradeError("storage", "Internal error"))

export const makeAgentTransactions = (sql: SqlClient.SqlClient) => {
  const list = Effect.fn("AgentTransactions.list")(function* (accountId: string, query: TransactionQuery) {
    const after = query.cursor === undefined ? undefined : decodeTransactionCursor(query.cursor)
    if (query.cursor !== undefined && after === undefined) return yield* tradeError("invalid_cursor", "cursor is not one this service issued", { field: "cursor" })
    const limit = Math.max(1, Math.min(TRANSACTIONS_PAGE_MAX, query.limit ?? 50))
    const conditions = [sql`true`]
    if (query.chain !== undefined) conditions.push(sql`chain = ${query.chain}`)
    if (query.kind !== undefined) conditions.push(sql`kind = ${query.kind}`)
    if (query.sinceMs !== undefined) conditions.push(sql`at >= ${new Date(query.sinceMs)}`)
    if (query.untilMs !== undefined) conditions.push(sql`at < ${new Date(query.untilMs)}`)
    if (after !== undefined) conditions.push(sql`(at, kind, id) < (${new Date(after.atMs)}, ${after.kind}, ${after.id})`)
    // Every branch is one account's rows; `at` is in milliseconds so the cursor's position is exact.
    const rows = yield* storage(sql<Db>`
      SELECT * FROM (
        SELECT 'launch'::text AS kind, l.chain, l.client_launch_id AS id, date_trunc('milliseconds', l.created_at) AS at, l.state AS status,
          COALESCE(l.result->>'signature', l.signature) AS signature, l.mint, NULL::text AS side, l.result->>'quoteAsset' AS asset,
          COALESCE(h.request->>'buyAmountRaw', s.request->>'buyAmountRaw') AS amount_raw,
          (l.result->'devBuy'->'fee'->>'bps')::int AS fee_bps, l.result->'devBuy'->'fee'->>'feeRaw' AS fee_raw
        FROM launch_ledger l
        LEFT JOIN headless_launch_attempts h ON h.account_id = l.account_id AND h.client_launch_id = l.client_launch_id AND h.attempt = l.attempt
        LEFT JOIN self_launch_builds s ON s.account_id = l.account_id AND s.client_launch_id = l.client_launch_id AND s.attempt = l.attempt
        WHERE l.account_id = ${accountId} AND l.state = 'confirmed'
        UNION ALL
        SELECT 'trade', chain, client_trade_id, date_trunc('milliseconds', created_at), state, signature, mint, side,
          CASE WHEN side = 'buy' THEN quote_asset ELSE mint END, amount_in_raw, fee_bps, fee_raw
        FROM agent_trades WHERE account_id = ${accountId} AND state <> 'built' AND signature <> ''
        UNION ALL
        SELECT CASE WHEN action = 'finish' THEN 'unstake_finish' ELSE action END, 'solana', client_stake_id, date_trunc('milliseconds', created_at),
          state, signature, NULL, NULL, 'svc', amount_raw, NULL, NULL
        FROM staking_operations WHERE account_id = ${accountId} AND state NOT IN ('built', 'expired')
        UNION ALL
        SELECT 'reward_claim', 'solana', reward_id, date_trunc('milliseconds', created_at), state, signature, mint, NULL, mint, amount_raw, NULL, NULL
        FROM staking_reward_claims WHERE account_id = ${accountId}
        UNION ALL
        SELECT 'transfer', chain, client_transfer_id, date_trunc('milliseconds', created_at), state, signature, mint, NULL, asset, amount_raw::text, NULL, NULL
        FROM transfers WHERE account_id = ${accountId} AND state <> 'built'
      ) movements
      WHERE ${sql.and(conditions)}
      ORDER BY at DESC, kind DESC, id DESC
      LIMIT ${limit + 1}`)
    const page = rows.slice(0, limit).map(transactionView)
    const last = page[page.length - 1]
    const nextCursor = rows.length > limit && last !== undefined ? encodeTransactionCursor({ atMs: Date.parse(last.at), kind: last.kind, id: last.id }) : null
    return { transactions: page, nextCursor } satisfies TransactionPage
  })
  return { list } as { readonly list: (accountId: string, query: TransactionQuery) => Effect.Effect<TransactionPage, TradeError> }
}

export type AgentTransactions = ReturnType<typeof makeAgentTransactions>
