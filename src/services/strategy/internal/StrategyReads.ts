/**
 * The strategy store's reads (an account's own only): strategies, one strategy's detail, runs,
 * a run's trades (or the newest finished run's), and the comparison of a strategy's runs.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { ReplayTradeRecord } from "../Engine.js"
import type { StrategiesShape } from "../Strategies.js"
import { comparisonOf, parsed, RUN_COLUMNS, type RunRow, runSummary, STRATEGY_COLUMNS, type StrategyRow, summary } from "./StrategyRows.js"
import type { StrategyStore } from "./StrategyStore.js"

export const makeStrategyReads = (sql: SqlClient.SqlClient, store: StrategyStore) => {
  const { notFound, owned, detail, sqlErrors } = store

  const list: StrategiesShape["list"] = (accountId, page, status) =>
    sqlErrors(
      Effect.map(
        status === undefined
          ? sql<StrategyRow>`SELECT ${sql.literal(STRATEGY_COLUMNS)} FROM strategies WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`
          : sql<StrategyRow>`SELECT ${sql.literal(STRATEGY_COLUMNS)} FROM strategies WHERE account_id = ${accountId} AND status = ${status} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
        (rows) => rows.map(summary)
      )
    )

  const get: StrategiesShape["get"] = (accountId, id, version) => sqlErrors(detail(accountId, id, version))

  const runs: StrategiesShape["runs"] = (accountId, page, strategyId) =>
    sqlErrors(
      Effect.gen(function* () {
        if (strategyId !== undefined) yield* owned(accountId, strategyId)
        const rows =
          strategyId === undefined
            ? yield* sql<RunRow>`SELECT ${sql.literal(RUN_COLUMNS)} FROM strategy_runs WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`
            : yield* sql<RunRow>`SELECT ${sql.literal(RUN_COLUMNS)} FROM strategy_runs WHERE account_id = ${accountId} AND strategy_id = ${strategyId} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`
        return rows.map(runSummary)
      })
    )

  const trades: StrategiesShape["trades"] = (accountId, page, which) =>
    sqlErrors(
      Effect.gen(function* () {
        let runId: string | undefined = which.runId
        if (runId !== undefined) {
          const r = yield* sql<{ id: string }>`SELECT id FROM strategy_runs WHERE id = ${runId} AND account_id = ${accountId}`
          if (r.length === 0) return yield* notFound()
        } else if (which.strategyId !== undefined) {
          yield* owned(accountId, which.strategyId)
          const r =
            which.version === undefined
              ? yield* sql<{ id: string }>`SELECT id FROM strategy_runs WHERE strategy_id = ${which.strategyId} AND status = 'done' ORDER BY seq DESC LIMIT 1`
              : yield* sql<{ id: string }>`SELECT id FROM strategy_runs WHERE strategy_id = ${which.strategyId} AND version = ${which.version} AND status = 'done' ORDER BY seq DESC LIMIT 1`
          if (r[0] === undefined) return { run_id: null, trades: [] }
          runId = r[0].id
        }
        const rows =
          runId !== undefined
            ? yield* sql<{ run_id: string; strategy_id: string; version: number; n: number; trade: unknown }>`
                SELECT t.run_id, r.strategy_id, r.version, t.n, t.trade FROM strategy_run_trades t JOIN strategy_runs r ON r.id = t.run_id
                WHERE t.run_id = ${runId} ORDER BY t.n LIMIT ${page.limit} OFFSET ${page.offset}`
            : yield* sql<{ run_id: string; strategy_id: string; version: number; n: number; trade: unknown }>`
                SELECT t.run_id, r.strategy_id, r.version, t.n, t.trade FROM strategy_run_trades t JOIN strategy_runs r ON r.id = t.run_id
                WHERE r.account_id = ${accountId} ORDER BY r.seq DESC, t.n LIMIT ${page.limit} OFFSET ${page.offset}`
        return {
          run_id: runId ?? null,
          trades: rows.map((r) => ({
            ...(parsed(r.trade) as ReplayTradeRecord),
            run_id: r.run_id,
            strategy_id: r.strategy_id,
            version: Number(r.version),
            n: Number(r.n)
          }))
        }
      })
    )

  const comparison: StrategiesShape["comparison"] = (accountId, id, runIds) =>
    sqlErrors(
      Effect.gen(function* () {
        yield* owned(accountId, id)
        let rows: ReadonlyArray<RunRow>
        if (runIds !== undefined) {
          rows = yield* sql<RunRow>`
            SELECT ${sql.literal(RUN_COLUMNS)} FROM strategy_runs WHERE strategy_id = ${id} AND account_id = ${accountId} AND id IN ${sql.in([...runIds])} ORDER BY version, seq`
          if (rows.length !== new Set(runIds).size) return yield* notFound()
        } else {
          // The newest finished run of each version, oldest version first.
          rows = yield* sql<RunRow>`
            SELECT DISTINCT ON (version) ${sql.literal(RUN_COLUMNS)} FROM strategy_runs
            WHERE strategy_id = ${id} AND status = 'done' ORDER BY version, seq DESC`
        }
        return comparisonOf(id, rows)
      })
    )

  return { list, get, runs, trades, comparison }
}
