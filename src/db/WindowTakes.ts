/**
 * Durable "N per window" limits kept in PostgreSQL, so a limit holds across restarts and across
 * engine processes sharing the database (the in-memory `api/RateLimiter` forgets both). One row per
 * take; a take first deletes the subject's rows that left the window, so a subject never holds more
 * than `limit` rows. Takes of one subject are serialized by a transaction advisory lock, so
 * concurrent requests (in any process) count exactly: at most `limit` in any window of `windowMs`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export type WindowTake = { readonly taken: true } | { readonly taken: false; readonly retryAfterMs: number }

/** A table of takes: its name and the columns (with their values) that name one subject. */
export interface WindowSubject {
  readonly table: string
  readonly columns: Readonly<Record<string, string>>
}

/**
 * Takes one from the subject's window of `windowMs`, or says when its oldest take leaves
 * (`retryAfterMs`, at least 1). A `limit` of 0 allows none.
 */
export const takeFromWindow = (
  sql: SqlClient.SqlClient,
  subject: WindowSubject,
  limit: number,
  windowMs: number,
  nowMs: number
): Effect.Effect<WindowTake, SqlError> => {
  const entries = Object.entries(subject.columns)
  const where = sql.and(entries.map(([column, value]) => sql`${sql(column)} = ${value}`))
  const lockKey = `${subject.table}:${entries.map(([, v]) => v).join(":")}`
  return sql.withTransaction(
    Effect.gen(function* () {
      yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`
      yield* sql`DELETE FROM ${sql(subject.table)} WHERE ${where} AND taken_at_ms <= ${nowMs - windowMs}`
      const rows = yield* sql<{ n: number; oldest: string | null }>`
        SELECT count(*)::int AS n, min(taken_at_ms)::text AS oldest FROM ${sql(subject.table)} WHERE ${where}`
      const n = rows[0]?.n ?? 0
      if (n >= limit) {
        const oldest = rows[0]?.oldest
        const retryAfterMs = oldest === null || oldest === undefined ? windowMs : Number(oldest) + windowMs - nowMs
        return { taken: false, retryAfterMs: Math.max(1, retryAfterMs) } as const
      }
      yield* sql`INSERT INTO ${sql(subject.table)} ${sql.insert({ ...subject.columns, taken_at_ms: nowMs })}`
      return { taken: true } as const
    })
  )
}

/** One account's writes of one kind ("staking", "fee-claim"), `limit` a minute (`account_write_takes`). */
export interface AccountWriteWindow {
  readonly limit: number
  readonly windowMs: number
  readonly take: (accountId: string, nowMs: number) => Effect.Effect<WindowTake, SqlError>
}

export const accountWriteWindow = (sql: SqlClient.SqlClient, scope: string, limit: number, windowMs = 60_000): AccountWriteWindow => ({
  limit,
  windowMs,
  take: (accountId, nowMs) => takeFromWindow(sql, { table: "account_write_takes", columns: { scope, account_id: accountId } }, limit, windowMs, nowMs)
})
