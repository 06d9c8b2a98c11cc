/**
 * The rows of atomic bundles and spend holds (`0018_atomic_bundles`). Plain SQL effects the
 * atomic service composes into its own transactions; no decisions here (those are `SpendGate.ts`
 * and the BundleActor's). Holds are keyed by (bundle, leg): reserving twice is a no-op, and every
 * settling statement moves only `held` rows, so a repeated release or conversion changes nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect } from "effect"
import { type BundleState, operatorStateOf } from "../../../../actors/bundle/BundleActor.js"
import { decodeBundleState, encodeBundleState } from "../../../../actors/bundle/BundleCodec.js"
import type { Hold } from "./SpendGate.js"

type Sql = Effect.Effect<void, SqlError, SqlClient.SqlClient>

export interface HoldOwner {
  readonly bundleId: string
  readonly keyId: string
  readonly accountId: string
  readonly asset: string
}

export const reserveHolds = (o: HoldOwner, holds: ReadonlyArray<Hold>, nowMs: number): Sql =>
  holds.length === 0 ? Effect.void : Effect.flatMap(SqlClient.SqlClient, (sql) => holdsStatement(sql, o, holds, nowMs).pipe(Effect.asVoid))

/** The holds' insert (at least one hold): alone (`reserveHolds`) or a CTE of the admitting statement (`admitBundle`). */
const holdsStatement = (sql: SqlClient.SqlClient, o: HoldOwner, holds: ReadonlyArray<Hold>, nowMs: number) => sql`
          INSERT INTO spend_holds ${sql.insert(
            holds.map((h) => ({
              bundle_id: o.bundleId,
              leg_index: h.legIndex,
              key_id: o.keyId,
              account_id: o.accountId,
              wallet: h.wallet,
              asset: o.asset,
              amount_raw: h.amountRaw.toString(),
              usd_micros: h.usdMicros === null ? null : h.usdMicros.toString(),
              state: "held",
              created_at: new Date(nowMs)
            }))
          )}
          ON CONFLICT (bundle_id, leg_index) DO NOTHING`

/** An unsigned build failed or expired: its holds stop counting. */
export const releaseHolds = (bundleId: string, nowMs: number): Sql =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE spend_holds SET state = 'released', settled_at = ${new Date(nowMs)} WHERE bundle_id = ${bundleId} AND state = 'held'`
  ).pipe(Effect.asVoid)

/**
 * The landed buys' holds become metered usage (the caller records it in the same transaction);
 * the other legs' holds stay held (rule 7 keeps them). Returns the converted legs' USD total.
 */
export const convertHolds = (
  bundleId: string,
  landedLegIndexes: ReadonlyArray<number>,
  nowMs: number
): Effect.Effect<bigint, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    landedLegIndexes.length === 0
      ? Effect.succeed(0n)
      : sql<{ usd_micros: string | null }>`
          UPDATE spend_holds SET state = 'converted', settled_at = ${new Date(nowMs)}
          WHERE bundle_id = ${bundleId} AND state = 'held' AND leg_index IN ${sql.in(landedLegIndexes)}
          RETURNING usd_micros::text AS usd_micros`.pipe(Effect.map((rows) => rows.reduce((s, r) => s + BigInt(r.usd_micros ?? "0"), 0n)))
  )

export interface HoldRow {
  readonly legIndex: number
  readonly state: "held" | "released" | "converted"
  readonly amountRaw: bigint
  readonly usdMicros: bigint | null
}

export const holdsOfBundle = (bundleId: string): Effect.Effect<ReadonlyArray<HoldRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ leg_index: number; state: HoldRow["state"]; amount_raw: string; usd_micros: string | null }>`
      SELECT leg_index, state, amount_raw, usd_micros::text AS usd_micros FROM spend_holds WHERE bundle_id = ${bundleId} ORDER BY leg_index`
  ).pipe(
    Effect.map((rows) =>
      rows.map((r) => ({ legIndex: r.leg_index, state: r.state, amountRaw: BigInt(r.amount_raw), usdMicros: r.usd_micros === null ? null : BigInt(r.usd_micros) }))
    )
  )

// ---------------------------------------------------------------------------------------------
// Bundle rows

export interface BundleRow<B> {
  readonly bundleId: string
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  readonly clientLaunchId: string
  readonly attempt: number
  readonly mint: string
  readonly build: B
  readonly state: BundleState
  readonly submitToken: string | null
  readonly expiresAtMs: number
}

interface BundleRowDb {
  readonly bundle_id: string
  readonly account_id: string
  readonly key_id: string
  readonly key_prefix: string
  readonly client_launch_id: string
  readonly attempt: number
  readonly mint: string
  readonly build: string
  readonly state: string
  readonly submit_token: string | null
  readonly expires_at: Date | string
}

const toRow = <B>(r: BundleRowDb, decodeBuild: (text: string) => B): BundleRow<B> => ({
  bundleId: r.bundle_id,
  accountId: r.account_id,
  keyId: r.key_id,
  keyPrefix: r.key_prefix,
  clientLaunchId: r.client_launch_id,
  attempt: r.attempt,
  mint: r.mint,
  build: decodeBuild(r.build),
  state: decodeBundleState(r.state),
  submitToken: r.submit_token,
  expiresAtMs: new Date(r.expires_at).getTime()
})

/** The `phase` column: the state's phase, or `booked` once nothing is owed (no resume needed). */
const phaseColumn = (s: BundleState): string => (operatorStateOf(s) === "booked" ? "booked" : s.phase)

export const insertBundle = <B>(row: BundleRow<B>, encodeBuild: (b: B) => string, nowMs: number): Sql =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => bundleStatement(sql, row, encodeBuild, nowMs)).pipe(Effect.asVoid)

const bundleStatement = <B>(sql: SqlClient.SqlClient, row: BundleRow<B>, encodeBuild: (b: B) => string, nowMs: number) => sql`
      INSERT INTO atomic_bundles (bundle_id, account_id, key_id, key_prefix, client_launch_id, attempt, mint, phase, build, state,
                                  submit_token, expires_at, created_at, updated_at)
      VALUES (${row.bundleId}, ${row.accountId}, ${row.keyId}, ${row.keyPrefix}, ${row.clientLaunchId}, ${row.attempt}, ${row.mint},
              ${phaseColumn(row.state)}, ${encodeBuild(row.build)}, ${encodeBundleState(row.state)}, ${row.submitToken},
              ${new Date(row.expiresAtMs)}, ${new Date(nowMs)}, ${new Date(nowMs)})`

/**
 * An admitted build's rows in ONE statement (one round trip inside the ledger's transaction): the
 * bundle row, its holds (none: no CTE) and `also`, a further insert of the same transaction (the
 * token row: `attributionStatement`). Each part fails or conflicts as it would alone.
 */
export const admitBundle = <B>(
  row: BundleRow<B>,
  encodeBuild: (b: B) => string,
  holds: { readonly owner: HoldOwner; readonly holds: ReadonlyArray<Hold> },
  also: (sql: SqlClient.SqlClient) => Statement.Fragment,
  nowMs: number
): Sql =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const parts = [sql`bundle AS (${bundleStatement(sql, row, encodeBuild, nowMs)})`, sql`also AS (${also(sql)})`]
    if (holds.holds.length > 0) parts.push(sql`holds AS (${holdsStatement(sql, holds.owner, holds.holds, nowMs)})`)
    return sql`WITH ${sql.join(", ", false)(parts)} SELECT 1`
  }).pipe(Effect.asVoid)

export const findBundle = <B>(bundleId: string, decodeBuild: (text: string) => B, lock = false) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    (lock
      ? sql<BundleRowDb>`SELECT * FROM atomic_bundles WHERE bundle_id = ${bundleId} FOR UPDATE`
      : sql<BundleRowDb>`SELECT * FROM atomic_bundles WHERE bundle_id = ${bundleId}`
    ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toRow(rows[0], decodeBuild))))
  )

/** Writes a step's new state; `submitToken` when given replaces the stored one. */
export const saveState = (bundleId: string, state: BundleState, nowMs: number, submitToken?: string | null): Sql =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    submitToken === undefined
      ? sql`UPDATE atomic_bundles SET state = ${encodeBundleState(state)}, phase = ${phaseColumn(state)}, updated_at = ${new Date(nowMs)} WHERE bundle_id = ${bundleId}`
      : sql`UPDATE atomic_bundles SET state = ${encodeBundleState(state)}, phase = ${phaseColumn(state)}, submit_token = ${submitToken}, updated_at = ${new Date(nowMs)}
            WHERE bundle_id = ${bundleId}`
  ).pipe(Effect.asVoid)

/** Unsettled bundles one resume or recovery pass takes, oldest first (the rest wait for the next pass). */
export const UNSETTLED_BATCH_MAX = 500

/** Unsettled bundles with what a recovery pass decides on before touching one (a live build has nothing due). */
export const unsettledBundles = (
  limit = UNSETTLED_BATCH_MAX
): Effect.Effect<ReadonlyArray<{ readonly bundleId: string; readonly phase: string; readonly expiresAtMs: number }>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ bundle_id: string; phase: string; expires_at: Date | string }>`
      SELECT bundle_id, phase, expires_at FROM atomic_bundles WHERE phase IN ('built', 'submitting', 'signing', 'sent', 'landed') ORDER BY created_at LIMIT ${limit}`
  ).pipe(Effect.map((rows) => rows.map((r) => ({ bundleId: r.bundle_id, phase: r.phase, expiresAtMs: new Date(r.expires_at).getTime() }))))

/** Bundles a restart must carry on: sent, or landed with bookkeeping owed, or live builds to expire. */
export const unsettledBundleIds = (limit = UNSETTLED_BATCH_MAX): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.map(unsettledBundles(limit), (rows) => rows.map((r) => r.bundleId))

/** The newest bundle of a ledger attempt (a same-id build's repeat table, the job read). */
export const findBundleOfAttempt = <B>(accountId: string, clientLaunchId: string, attempt: number, decodeBuild: (text: string) => B) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<BundleRowDb>`
      SELECT * FROM atomic_bundles WHERE account_id = ${accountId} AND client_launch_id = ${clientLaunchId} AND attempt = ${attempt}
      ORDER BY created_at DESC LIMIT 1`.pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toRow(rows[0], decodeBuild))))
  )
