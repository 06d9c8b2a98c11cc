/**
 * Saving a strategy or a new version (each counted against the daily quota in its transaction,
 * then backtested in the background), and the owner's status change (only `retired`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { StrategiesShape } from "../Strategies.js"
import { StrategyError } from "../StrategyError.js"
import type { Backtests } from "./Backtests.js"
import { validDefinition, validName } from "./StrategyRows.js"
import type { StrategyStore } from "./StrategyStore.js"

export const makeStrategyWrites = (sql: SqlClient.SqlClient, store: StrategyStore, backtests: Backtests) => {
  const { owned, countSave, insertRun, detail, sqlErrors } = store
  const { sweep, launch } = backtests

  const create: StrategiesShape["create"] = (accountId, input) =>
    sqlErrors(
      Effect.gen(function* () {
        const name = validName(input.name)
        if (name instanceof StrategyError) return yield* name
        const definition = yield* validDefinition(input.definition)
        const nowMs = yield* Clock.currentTimeMillis
        const now = new Date(nowMs)
        const id = `str_${randomUUID()}`
        yield* sweep
        const run = yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* countSave(accountId, nowMs)
            yield* sql`
              INSERT INTO strategies (id, account_id, name, status, current_version, created_at, updated_at)
              VALUES (${id}, ${accountId}, ${name}, 'draft', 1, ${now}, ${now})`
            yield* sql`INSERT INTO strategy_versions (strategy_id, version, definition, created_at) VALUES (${id}, 1, ${JSON.stringify(input.definition)}::jsonb, ${now})`
            return yield* insertRun(accountId, id, 1, nowMs)
          })
        )
        yield* launch(run, id, 1, definition)
        return yield* detail(accountId, id)
      })
    )

  const addVersion: StrategiesShape["addVersion"] = (accountId, id, input) =>
    sqlErrors(
      Effect.gen(function* () {
        const definition = yield* validDefinition(input.definition)
        const nowMs = yield* Clock.currentTimeMillis
        const now = new Date(nowMs)
        yield* sweep
        const { run, version } = yield* sql.withTransaction(
          Effect.gen(function* () {
            const s = yield* owned(accountId, id, true)
            if (s.status === "retired") {
              return yield* new StrategyError({ reason: "retired", field: "status", message: "The strategy is retired; save a new strategy instead" })
            }
            yield* countSave(accountId, nowMs)
            const version = Number(s.current_version) + 1
            yield* sql`INSERT INTO strategy_versions (strategy_id, version, definition, created_at) VALUES (${id}, ${version}, ${JSON.stringify(input.definition)}::jsonb, ${now})`
            yield* sql`UPDATE strategies SET current_version = ${version}, status = 'draft', verdict = NULL, updated_at = ${now} WHERE id = ${id}`
            return { run: yield* insertRun(accountId, id, version, nowMs), version }
          })
        )
        yield* launch(run, id, version, definition)
        return yield* detail(accountId, id)
      })
    )

  const setStatus: StrategiesShape["setStatus"] = (accountId, id, status) =>
    sqlErrors(
      Effect.gen(function* () {
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const s = yield* owned(accountId, id, true)
            if (status === "paper" || status === "live") {
              return yield* new StrategyError({ reason: "invalid", field: "status", message: `status: a strategy can never be set to ${status}` })
            }
            if (status === "draft" || status === "backtested") {
              return yield* new StrategyError({
                reason: "invalid",
                field: "status",
                message: `status: ${status} is set by saving and backtesting, not by the owner; the owner may set retired`
              })
            }
            if (status !== "retired") return yield* new StrategyError({ reason: "invalid", field: "status", message: "status: must be retired" })
            if (s.status === "retired") return yield* new StrategyError({ reason: "retired", field: "status", message: "The strategy is already retired" })
            const now = new Date(yield* Clock.currentTimeMillis)
            yield* sql`UPDATE strategies SET status = 'retired', retired_at = ${now}, updated_at = ${now} WHERE id = ${id}`
          })
        )
        return yield* detail(accountId, id)
      })
    )

  return { create, addVersion, setStatus }
}
