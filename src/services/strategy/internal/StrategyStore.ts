/**
 * The strategy store's reads and writes over its tables (migration rows: `strategies`,
 * `strategy_versions`, `strategy_runs`, `strategy_run_trades`, `strategy_saves`): ownership, the
 * daily save quota (counted inside the saving transaction), runs inserted and finished, the
 * detail view; a database failure is `unavailable` (logged once).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import type { ReplayResult } from "../Engine.js"
import type { StrategyDetail } from "../Strategies.js"
import { StrategyError } from "../StrategyError.js"
import { backtestWindowMs, DAY_MS } from "../StrategyLimits.js"
import { isoNN, parsed, RUN_COLUMNS, type RunRow, runSummary, STRATEGY_COLUMNS, type StrategyRow, summary } from "./StrategyRows.js"

export type StrategyStore = ReturnType<typeof makeStrategyStore>

export const makeStrategyStore = (sql: SqlClient.SqlClient, quota: number) => {
  const unavailable = (e: SqlError) =>
    Effect.zipRight(Effect.logError("strategies: database failure", e), Effect.fail(new StrategyError({ reason: "unavailable", message: "The strategy store is unavailable; retry shortly" })))
  const notFound = () => new StrategyError({ reason: "not_found", message: "not found" })

  const owned = (accountId: string, id: string, lock = false) =>
    Effect.flatMap(
      lock
        ? sql<StrategyRow>`SELECT ${sql.literal(STRATEGY_COLUMNS)} FROM strategies WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`
        : sql<StrategyRow>`SELECT ${sql.literal(STRATEGY_COLUMNS)} FROM strategies WHERE id = ${id} AND account_id = ${accountId}`,
      (rows) => (rows[0] === undefined ? Effect.fail(notFound()) : Effect.succeed(rows[0]))
    )

  /** Counts one save for today, or fails with `Quota` (nothing counted). Inside the saving transaction. */
  const countSave = (accountId: string, nowMs: number) =>
    Effect.gen(function* () {
      const day = new Date(Math.floor(nowMs / DAY_MS) * DAY_MS).toISOString().slice(0, 10)
      const rows = yield* sql<{ used: number }>`
        INSERT INTO strategy_saves (account_id, day, used) VALUES (${accountId}, ${day}, 1)
        ON CONFLICT (account_id, day) DO UPDATE SET used = strategy_saves.used + 1 WHERE strategy_saves.used < ${quota}
        RETURNING used`
      if (rows.length === 0) {
        return yield* new StrategyError({
          reason: "quota",
          message: `Daily strategy save quota reached (${quota} of ${quota})`,
          details: { quota, used: quota },
          retryAfterMs: (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS - nowMs
        })
      }
    })

  const insertRun = (accountId: string, strategyId: string, version: number, nowMs: number) =>
    Effect.gen(function* () {
      const id = `run_${randomUUID()}`
      const to = Math.floor(nowMs / 60_000) * 60_000
      yield* sql`
        INSERT INTO strategy_runs (id, account_id, strategy_id, version, kind, status, window_from, window_to, created_at)
        VALUES (${id}, ${accountId}, ${strategyId}, ${version}, 'backtest', 'running', ${new Date(to - backtestWindowMs)}, ${new Date(to)}, ${new Date(nowMs)})`
      return { id, fromMs: to - backtestWindowMs, toMs: to }
    })

  const finishRun = (runId: string, strategyId: string, version: number, outcome: Either.Either<ReplayResult, string>) =>
    Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* sql.withTransaction(
        Effect.gen(function* () {
          if (Either.isLeft(outcome)) {
            yield* sql`UPDATE strategy_runs SET status = 'failed', error = ${outcome.left}, finished_at = ${now} WHERE id = ${runId} AND status = 'running'`
            return
          }
          const { trades, ...rest } = outcome.right
          const updated = yield* sql<{ id: string }>`
            UPDATE strategy_runs SET status = 'done', verdict = ${rest.verdict}, result = ${JSON.stringify(rest)}::jsonb, finished_at = ${now}
            WHERE id = ${runId} AND status = 'running' RETURNING id`
          if (updated.length === 0) return
          // In batches: one statement per 200 trades (at most 2,000 of them).
          for (let i = 0; i < trades.length; i += 200) {
            const rows = trades.slice(i, i + 200).map((t, k) => ({ run_id: runId, n: i + k + 1, trade: JSON.stringify(t) }))
            yield* sql`
              INSERT INTO strategy_run_trades (run_id, n, trade)
              SELECT r.run_id, r.n, r.trade::jsonb FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(run_id text, n integer, trade text)`
          }
          yield* sql`
            UPDATE strategies SET status = 'backtested', verdict = ${rest.verdict}, updated_at = ${now}
            WHERE id = ${strategyId} AND current_version = ${version} AND status = 'draft'`
        })
      )
    })

  const detail = (accountId: string, id: string, version?: number) =>
    Effect.gen(function* () {
      const s = yield* owned(accountId, id)
      const versions = yield* sql<{ version: number; definition: unknown; created_at: Date }>`
        SELECT version, definition, created_at FROM strategy_versions WHERE strategy_id = ${id} ORDER BY version`
      const shown = version ?? Number(s.current_version)
      if (!versions.some((v) => Number(v.version) === shown)) {
        return yield* new StrategyError({ reason: "invalid", field: "version", message: `version: strategy has versions 1 to ${s.current_version}` })
      }
      const runs = yield* sql<RunRow>`
        SELECT ${sql.literal(RUN_COLUMNS)} FROM strategy_runs WHERE strategy_id = ${id} AND version = ${shown} ORDER BY seq DESC LIMIT 1`
      const run = runs[0]
      return {
        ...summary(s),
        versions: versions.map((v) => ({ version: Number(v.version), definition: parsed(v.definition), created_at: isoNN(v.created_at) })),
        run: run === undefined ? null : { ...runSummary(run), result: parsed(run.result) }
      } satisfies StrategyDetail
    })

  const sqlErrors = <A>(e: Effect.Effect<A, StrategyError | SqlError>): Effect.Effect<A, StrategyError> =>
    Effect.catchTag(e, "SqlError", unavailable)

  return { unavailable, notFound, owned, countSave, insertRun, finishRun, detail, sqlErrors }
}
