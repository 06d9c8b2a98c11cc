/**
 * A headless attempt's stored inputs (`headless_launch_attempts`): written in the ledger
 * transaction that accepts the attempt, the Solana launch's last valid block height added in the
 * `sent` transaction, and read back by a resumed run. And the attempt's row-lease key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Clock, Effect } from "effect"
import type { Also, AttemptRef, LaunchRecord, LaunchRef } from "../LaunchLedger.js"
import { decodeStoredRequest, encodeStoredRequest } from "../StoredRequest.js"
import type { Attempt, Resolved } from "./HeadlessContext.js"

export const LAUNCH_LEASE_KIND = "launch"

export const launchLeaseKey = (ref: LaunchRef): string => JSON.stringify([ref.accountId, ref.clientLaunchId])

/** The attempt's inputs; `riding` (the lease's claim, `RowLeases.claim`), a write on another table, in the same statement. */
export const writeAttempt = (a: Attempt, riding?: Statement.Fragment): Also => () =>
  Effect.gen(function* () {
    const s = yield* SqlClient.SqlClient
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* s`
      ${riding === undefined ? s.literal("") : s`WITH riding AS (${riding})`}
      INSERT INTO headless_launch_attempts (account_id, client_launch_id, attempt, request, resolved, created_at)
      VALUES (${a.ref.accountId}, ${a.ref.clientLaunchId}, ${a.ref.attempt}, ${JSON.stringify(encodeStoredRequest(a.request))}::jsonb,
        ${JSON.stringify(a.resolved)}::jsonb, ${at})
      ON CONFLICT (account_id, client_launch_id, attempt) DO NOTHING`
  })

export const readLastValid = (ref: AttemptRef) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (s) => s<{ lvbh: string | null }>`
      SELECT last_valid_block_height::text AS lvbh FROM headless_launch_attempts
      WHERE account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId} AND attempt = ${ref.attempt}`
  ).pipe(Effect.map((rows) => (rows[0]?.lvbh == null ? undefined : BigInt(rows[0].lvbh))))

export const readAttempt = (row: LaunchRecord) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (s) => s<{ request: unknown; resolved: Resolved }>`
      SELECT request, resolved FROM headless_launch_attempts
      WHERE account_id = ${row.accountId} AND client_launch_id = ${row.clientLaunchId} AND attempt = ${row.attempt}`
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : { request: decodeStoredRequest(rows[0].request), resolved: rows[0].resolved })))
