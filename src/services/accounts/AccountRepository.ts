/**
 * SQL for accounts and sessions. Plain functions over `SqlClient` (so they join the caller's
 * transaction); rows are mapped to domain shapes here and nowhere else. Times are passed in
 * (epoch ms) rather than read from the database clock, so tests control them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect } from "effect"
import type { PlanId } from "../../domain/Plans.js"
import { newId, randomString } from "../keys/Tokens.js"
import type { Entitlements, MaxSource } from "./Tier.js"
import { gatedOn } from "../../db/StatementGate.js"

export interface Account extends Entitlements {
  readonly id: string
  readonly handle: string | null
  readonly name: string | null
  readonly agentEnabled: boolean
  readonly isAdmin: boolean
  readonly referralCode: string
  readonly referredBy: string | null
  readonly createdAtMs: number
}

export interface AccountRowDb {
  readonly id: string
  readonly handle: string | null
  readonly name: string | null
  readonly plan: PlanId
  readonly plan_expires_at: Date | null
  readonly max_grant_expires_at: Date | null
  readonly max_grant_source: MaxSource | null
  readonly agent_enabled: boolean
  readonly is_admin: boolean
  readonly referral_code: string
  readonly referred_by: string | null
  readonly created_at: Date
}

const ms = (d: Date | null): number | null => (d === null ? null : d.getTime())

export const toAccount = (r: AccountRowDb): Account => ({
  id: r.id,
  handle: r.handle,
  name: r.name,
  plan: r.plan,
  planExpiresAtMs: ms(r.plan_expires_at),
  maxGrantExpiresAtMs: ms(r.max_grant_expires_at),
  maxGrantSource: r.max_grant_source,
  agentEnabled: r.agent_enabled,
  isAdmin: r.is_admin,
  referralCode: r.referral_code,
  referredBy: r.referred_by,
  createdAtMs: r.created_at.getTime()
})

const date = (msOrNull: number | null): Date | null => (msOrNull === null ? null : new Date(msOrNull))

export interface NewAccount {
  readonly handle?: string | undefined
  readonly name?: string | undefined
  readonly plan: PlanId
  readonly planExpiresAtMs?: number | null | undefined
  readonly agentEnabled: boolean
  readonly isAdmin: boolean
}

export const insertAccount = (a: NewAccount, nowMs: number): Effect.Effect<Account, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<AccountRowDb>`
      INSERT INTO accounts (id, handle, name, plan, plan_expires_at, agent_enabled, is_admin, referral_code, created_at)
      VALUES (${newId("acc")}, ${a.handle ?? null}, ${a.name ?? null}, ${a.plan}, ${date(a.planExpiresAtMs ?? null)},
              ${a.agentEnabled}, ${a.isAdmin}, ${randomString(10)}, ${new Date(nowMs)})
      RETURNING *`
    return toAccount(rows[0]!)
  })

export const findAccount = (id: string): Effect.Effect<Account | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<AccountRowDb>`SELECT * FROM accounts WHERE id = ${id}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0])))
  )

export const findAccountByHandle = (handle: string): Effect.Effect<Account | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<AccountRowDb>`SELECT * FROM accounts WHERE handle = ${handle}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0])))
  )

/** Locks the account row for the rest of the transaction (serializes key issuance per account). */
export const lockAccount = (id: string): Effect.Effect<Account | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<AccountRowDb>`SELECT * FROM accounts WHERE id = ${id} FOR UPDATE`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0])))
  )

export const setPlan = (id: string, plan: PlanId, expiresAtMs: number | null): Effect.Effect<Account | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<AccountRowDb>`UPDATE accounts SET plan = ${plan}, plan_expires_at = ${date(expiresAtMs)} WHERE id = ${id} RETURNING *`
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0]))))

/** Sets (or with `expiresAtMs` null clears) the Max grant. */
export const setMaxGrant = (id: string, expiresAtMs: number | null, source: MaxSource | null): Effect.Effect<Account | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<AccountRowDb>`
      UPDATE accounts SET max_grant_expires_at = ${date(expiresAtMs)}, max_grant_source = ${source}
      WHERE id = ${id} RETURNING *`
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toAccount(rows[0]))))

export const setAgentEnabled = (id: string, enabled: boolean): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE accounts SET agent_enabled = ${enabled} WHERE id = ${id}`).pipe(Effect.asVoid)

/**
 * Referral attribution: once, only for an account created in the last 24 hours, never to
 * itself, only from an existing code. Returns true when attributed; never fails the caller's
 * flow for a bad code.
 */
export const attributeReferral = (accountId: string, code: string, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`
      UPDATE accounts SET referred_by = r.id, referred_at = ${new Date(nowMs)}
      FROM accounts r
      WHERE accounts.id = ${accountId} AND accounts.referred_by IS NULL
        AND accounts.created_at > ${new Date(nowMs - 86_400_000)}
        AND r.referral_code = ${code} AND r.id <> ${accountId}
      RETURNING accounts.id`
    return rows.length > 0
  })

// ---------------------------------------------------------------------------------------------
// Sessions

export interface SessionRow {
  readonly id: string
  readonly account_id: string
  readonly token_hash: string
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
}

export const insertSession = (
  s: { readonly id: string; readonly accountId: string; readonly hash: string; readonly label: string | null; readonly expiresAtMs: number | null },
  nowMs: number
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO sessions (id, account_id, token_hash, label, created_at, expires_at)
      VALUES (${s.id}, ${s.accountId}, ${s.hash}, ${s.label}, ${new Date(nowMs)}, ${date(s.expiresAtMs)})`
  ).pipe(Effect.asVoid)

export const findSession = (id: string): Effect.Effect<SessionRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<SessionRow>`SELECT id, account_id, token_hash, expires_at, revoked_at FROM sessions WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0])
  )

export const revokeSession = (id: string, nowMs: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE sessions SET revoked_at = ${new Date(nowMs)} WHERE id = ${id} AND revoked_at IS NULL`).pipe(
    Effect.asVoid
  )

// ---------------------------------------------------------------------------------------------
// Fee totals (tier snapshot `feeTotals`); written by the trade and launch rails.

export interface FeeTotal {
  readonly chain: string
  readonly quoteAsset: string
  readonly feeRawSum: string
  readonly count: number
}

export const feeTotals = (accountId: string): Effect.Effect<ReadonlyArray<FeeTotal>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ chain: string; quote_asset: string; fee_raw_sum: string; fee_count: string }>`
      SELECT chain, quote_asset, fee_raw_sum::text AS fee_raw_sum, fee_count::text AS fee_count
      FROM account_fee_totals WHERE account_id = ${accountId} ORDER BY chain, quote_asset`
  ).pipe(Effect.map((rows) => rows.map((r) => ({ chain: r.chain, quoteAsset: r.quote_asset, feeRawSum: r.fee_raw_sum, count: Number(r.fee_count) }))))

/**
 * The statement that adds one fee to the account's totals; with `gate` (the name of a CTE of the
 * statement it is part of), only when that CTE returned a row (`addFee`'s write inside one
 * statement of several, e.g. a trade's settlement: `TradeStore`).
 */
export const addFeeStatement = (sql: SqlClient.SqlClient, accountId: string, chain: string, quoteAsset: string, feeRaw: bigint, gate?: string): Statement.Fragment => sql`
      INSERT INTO account_fee_totals (account_id, chain, quote_asset, fee_raw_sum, fee_count)
      SELECT ${accountId}, ${chain}, ${quoteAsset}, ${feeRaw.toString()}::numeric, 1 ${gatedOn(sql, gate, "WHERE")}
      ON CONFLICT (account_id, chain, quote_asset) DO UPDATE
        SET fee_raw_sum = account_fee_totals.fee_raw_sum + EXCLUDED.fee_raw_sum,
            fee_count = account_fee_totals.fee_count + 1`

export const addFee = (accountId: string, chain: string, quoteAsset: string, feeRaw: bigint): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`${addFeeStatement(sql, accountId, chain, quoteAsset, feeRaw)}`).pipe(Effect.asVoid)
