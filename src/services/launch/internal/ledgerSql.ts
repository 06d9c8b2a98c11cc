/**
 * SQL of the launch ledger (`launch_ledger`, `launch_daily_usage`; migration 0012). Plain
 * functions over `SqlClient` so they join the caller's transaction; `LaunchLedger.ts` owns the
 * order they run in. Days travel as `YYYY-MM-DD` text, times as epoch ms.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect } from "effect"
import { gatedOn } from "../../../db/StatementGate.js"
import type { Chain } from "../../../domain/Chain.js"
import type { LaunchPath, LaunchState, LedgerRow, PayerKind, StoredResult } from "../LaunchLedgerMachine.js"

export interface LaunchRef {
  readonly accountId: string
  readonly clientLaunchId: string
}

/** A ledger row with its identity and bookkeeping. */
export interface LaunchRecord extends LedgerRow, LaunchRef {
  /** The key whose request began the current attempt. */
  readonly keyId: string | null
  readonly createdAtMs: number
}

interface RowDb {
  readonly account_id: string
  readonly client_launch_id: string
  readonly path: LaunchPath
  readonly chain: Chain
  readonly payer: PayerKind
  readonly key_id: string | null
  readonly body_hash: string
  readonly state: LaunchState
  readonly attempt: number
  readonly slot_day: string | null
  readonly slot_kept: boolean
  readonly error_code: string | null
  readonly mint: string | null
  readonly pool: string | null
  readonly signature: string | null
  readonly result: StoredResult | null
  readonly created_at: Date
  readonly attempt_started_at: Date
  readonly updated_at: Date
}

const toRecord = (r: RowDb): LaunchRecord => ({
  accountId: r.account_id,
  clientLaunchId: r.client_launch_id,
  path: r.path,
  chain: r.chain,
  payer: r.payer,
  keyId: r.key_id,
  bodyHash: r.body_hash,
  state: r.state,
  attempt: r.attempt,
  slot: r.slot_day === null ? null : { day: r.slot_day, kept: r.slot_kept },
  errorCode: r.error_code,
  mint: r.mint,
  pool: r.pool,
  signature: r.signature,
  result: r.result,
  createdAtMs: r.created_at.getTime(),
  attemptStartedAtMs: r.attempt_started_at.getTime(),
  updatedAtMs: r.updated_at.getTime()
})

const columns = (sql: SqlClient.SqlClient) => sql`
  account_id, client_launch_id, path, chain, payer, key_id, body_hash, state, attempt,
  slot_day::text AS slot_day, slot_kept, error_code, mint, pool, signature, result,
  created_at, attempt_started_at, updated_at`

const resultJson = (result: StoredResult | null): string | null => (result === null ? null : JSON.stringify(result))

/** Reads the row; `lock` takes its row lock for the rest of the transaction. */
export const selectRow = (ref: LaunchRef, lock: boolean): Effect.Effect<LaunchRecord | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<RowDb>`
      SELECT ${columns(sql)} FROM launch_ledger
      WHERE account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId}
      ${sql.literal(lock ? "FOR UPDATE" : "")}`
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toRecord(rows[0]))))

/**
 * The row (no lock) and the account's slots used on `day`, in one statement: what a preview reads
 * (issue 34: two statements before, the row and then the day's counter). One row always comes
 * back: the ledger's columns are null when the id has none.
 */
export const selectRowAndDayUsed = (
  ref: LaunchRef,
  day: string
): Effect.Effect<{ readonly record: LaunchRecord | undefined; readonly dayUsed: number }, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Omit<RowDb, "account_id"> & { readonly account_id: string | null; readonly day_used: number | null }>`
      SELECT ${columns(sql)},
        (SELECT used FROM launch_daily_usage WHERE account_id = ${ref.accountId} AND day = ${day}::date) AS day_used
      FROM (SELECT 1 AS one) AS here
      LEFT JOIN launch_ledger ON account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId}`
  ).pipe(
    Effect.map((rows) => {
      const r = rows[0]!
      return { record: r.account_id === null ? undefined : toRecord(r as RowDb), dayUsed: r.day_used ?? 0 }
    })
  )

/**
 * Inserts the row unless the id exists (`inserted` false: a concurrent insert of the same id waits
 * on the unique index until the first commits, then false, or rolls back) and, only when it
 * inserted, takes a slot of `slot` (`takeSlot`) in the same statement: a new id's admission in one
 * round trip. `used` is the day's count after the slot was taken, undefined when the cap refused
 * it (the caller fails, rolling the row back) or nothing was inserted.
 */
export const insertRowTakingSlot = (
  r: LaunchRecord,
  slot: { readonly day: string; readonly cap: number } | undefined
): Effect.Effect<{ readonly inserted: boolean; readonly used: number | undefined }, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const insert = sql`
      INSERT INTO launch_ledger (account_id, client_launch_id, path, chain, payer, key_id, body_hash, state, attempt,
        slot_day, slot_kept, error_code, mint, pool, signature, result, created_at, attempt_started_at, updated_at)
      VALUES (${r.accountId}, ${r.clientLaunchId}, ${r.path}, ${r.chain}, ${r.payer}, ${r.keyId}, ${r.bodyHash}, ${r.state},
        ${r.attempt}, ${r.slot?.day ?? null}::date, ${r.slot?.kept ?? false}, ${r.errorCode}, ${r.mint}, ${r.pool},
        ${r.signature}, ${resultJson(r.result)}::jsonb, ${new Date(r.createdAtMs)}, ${new Date(r.attemptStartedAtMs)},
        ${new Date(r.updatedAtMs)})
      ON CONFLICT (account_id, client_launch_id) DO NOTHING
      RETURNING attempt`
    if (slot === undefined) return Effect.map(insert, (rows) => ({ inserted: rows.length === 1, used: undefined }))
    return sql<{ inserted: number; used: number | null }>`
      WITH inserted AS (${insert}), slot AS (${takeSlotStatement(sql, r.accountId, slot.day, slot.cap, "inserted")})
      SELECT (SELECT count(*)::int FROM inserted) AS inserted, (SELECT used FROM slot) AS used`.pipe(
      Effect.map((rows) => ({ inserted: rows[0]!.inserted === 1, used: rows[0]!.used ?? undefined }))
    )
  })

const updateStatement = (sql: SqlClient.SqlClient, r: LaunchRecord, gate?: string): Statement.Fragment => sql`
      UPDATE launch_ledger SET
        chain = ${r.chain}, payer = ${r.payer}, key_id = ${r.keyId}, state = ${r.state}, attempt = ${r.attempt},
        slot_day = ${r.slot?.day ?? null}::date, slot_kept = ${r.slot?.kept ?? false}, error_code = ${r.errorCode},
        mint = ${r.mint}, pool = ${r.pool}, signature = ${r.signature}, result = ${resultJson(r.result)}::jsonb,
        attempt_started_at = ${new Date(r.attemptStartedAtMs)}, updated_at = ${new Date(r.updatedAtMs)}
      WHERE account_id = ${r.accountId} AND client_launch_id = ${r.clientLaunchId} ${gatedOn(sql, gate)}`

/** Writes every mutable column of a row already locked by this transaction. */
export const updateRow = (r: LaunchRecord): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`${updateStatement(sql, r)}`).pipe(Effect.asVoid)

/**
 * The lease a transition is made under (`RowLeases.renewal` and `fenced` of the row's lease): its
 * renewal rides in the statement that writes the ledger row (`updateRowFenced`), and a lease found
 * lost dies with `RowLeaseLost` (`check`), rolling the transaction back with the caller's `Also`:
 * a process that no longer owns the row writes nothing, as `RowLeases.fenceIn` would have it.
 */
export interface LedgerFence {
  readonly renewal: Statement.Fragment
  /** Nothing when the lease held; otherwise dies (`RowLeases.fenced`). */
  readonly check: (held: boolean) => Effect.Effect<void>
}

/** `updateRow` with the fence's renewal as the statement's first CTE, the update gated on it: one round trip for both, then the fence's check. */
export const updateRowFenced = (r: LaunchRecord, fence: LedgerFence): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ held: boolean }>`
      WITH lease AS (${fence.renewal}), moved AS (${updateStatement(sql, r, "lease")})
      SELECT EXISTS (SELECT 1 FROM lease) AS held`
  ).pipe(Effect.flatMap((rows) => fence.check(rows[0]?.held === true)))

/** Rows of `path` in flight, oldest attempt first (crash recovery; the partial index `launch_ledger_in_flight`). */
export const selectInFlight = (path: LaunchPath, limit: number): Effect.Effect<ReadonlyArray<LaunchRecord>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<RowDb>`
      SELECT ${columns(sql)} FROM launch_ledger
      WHERE state IN ('submitted', 'confirming') AND path = ${path}
      ORDER BY attempt_started_at, account_id, client_launch_id LIMIT ${limit}`
  ).pipe(Effect.map((rows) => rows.map(toRecord)))

/** Self-signed builds of the account still `submitted` and started at or before `startedBeforeMs`, by id. */
export const selectExpiredSelfBuilds = (
  accountId: string,
  startedBeforeMs: number,
  limit: number
): Effect.Effect<ReadonlyArray<LaunchRef>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ client_launch_id: string }>`
      SELECT client_launch_id FROM launch_ledger
      WHERE account_id = ${accountId} AND state = 'submitted' AND path = 'self'
        AND attempt_started_at < ${new Date(startedBeforeMs)}
      ORDER BY client_launch_id LIMIT ${limit}`
  ).pipe(Effect.map((rows) => rows.map((r) => ({ accountId, clientLaunchId: r.client_launch_id }))))

/**
 * Takes one slot of the account's `day` when fewer than `cap` are used, in one statement
 * (concurrent takers queue on the row and each re-checks the count). Returns the count after
 * the take, or undefined when the cap is reached.
 */
export const takeSlot = (accountId: string, day: string, cap: number): Effect.Effect<number | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ used: number }>`${takeSlotStatement(sql, accountId, day, cap)}`).pipe(Effect.map((rows) => rows[0]?.used))

/** `takeSlot`'s write; with `gate` (an earlier CTE's name) only when that CTE returned a row. */
const takeSlotStatement = (sql: SqlClient.SqlClient, accountId: string, day: string, cap: number, gate?: string): Statement.Fragment => sql`
      INSERT INTO launch_daily_usage (account_id, day, used)
      SELECT ${accountId}, ${day}::date, 1 WHERE ${cap}::integer >= 1 ${gatedOn(sql, gate)}
      ON CONFLICT (account_id, day) DO UPDATE SET used = launch_daily_usage.used + 1
      WHERE launch_daily_usage.used < ${cap}::integer
      RETURNING used`

/** Takes one slot of `day` whatever the cap says. */
export const forceSlot = (accountId: string, day: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO launch_daily_usage (account_id, day, used) VALUES (${accountId}, ${day}::date, 1)
      ON CONFLICT (account_id, day) DO UPDATE SET used = launch_daily_usage.used + 1`
  ).pipe(Effect.asVoid)

/** Returns one slot of `day`. */
export const refundSlot = (accountId: string, day: string): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE launch_daily_usage SET used = used - 1
      WHERE account_id = ${accountId} AND day = ${day}::date AND used > 0`
  ).pipe(Effect.asVoid)

/** Slots used on the account's `day` (0 when none). */
export const slotsUsed = (accountId: string, day: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ used: number }>`
      SELECT used FROM launch_daily_usage WHERE account_id = ${accountId} AND day = ${day}::date`
  ).pipe(Effect.map((rows) => rows[0]?.used ?? 0))
