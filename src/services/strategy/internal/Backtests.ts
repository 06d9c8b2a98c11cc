/**
 * Backtests in the background (at most `backtestsRunningMax` at once, each within its time limit
 * counted from the save), their results recorded by `finishRun`; a sweep fails the runs a stopped
 * process left behind; `idle` resolves once none is in flight.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Effect, Either, type Scope } from "effect"
import type { ReplayRequest } from "../Definition.js"
import type { StrategiesOptions, StrategiesShape } from "../Strategies.js"
import { staleGraceMsDefault } from "../StrategyLimits.js"
import type { StrategyStore } from "./StrategyStore.js"

export type Backtests = ReturnType<typeof makeBacktests>

export const makeBacktests = (
  sql: SqlClient.SqlClient,
  scope: Scope.Scope,
  options: StrategiesOptions,
  permits: Effect.Semaphore,
  timeoutMs: number,
  store: StrategyStore
) => {
  const { finishRun } = store
  let inFlight = 0
  const idleWaiters: Array<() => void> = []

  const staleAfterMs = timeoutMs + (options.staleGraceMs ?? staleGraceMsDefault)
  /**
   * Runs a stopped process left behind will never finish. Another live process may be running
   * some right now, so only runs older than the time limit (counted from the save, queueing
   * included) plus a grace are failed: no live run can be that old.
   */
  const sweep = Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    yield* sql`
      UPDATE strategy_runs SET status = 'failed', error = 'interrupted: the service stopped during the backtest', finished_at = ${new Date(nowMs)}
      WHERE status = 'running' AND created_at < ${new Date(nowMs - staleAfterMs)}`
  })

  const backtest = (run: { readonly id: string; readonly fromMs: number; readonly toMs: number }, strategyId: string, version: number, definition: ReplayRequest["definition"]) =>
    permits
      .withPermits(1)(options.runBacktest({ definition, from: run.fromMs, to: run.toMs }))
      .pipe(
          // Counted from the save, waiting for a permit included (see `sweep`).
          Effect.timeoutFail({ duration: timeoutMs, onTimeout: () => ({ _tag: "Timeout" as const, message: "" }) }),
          Effect.either,
          Effect.map(
            Either.mapLeft((e) =>
              e._tag === "Timeout" ? `timed_out: the backtest stopped after ${Math.round(timeoutMs / 1000)} s` : `replay_failed: ${e.message}`
            )
          ),
        Effect.flatMap((outcome) => finishRun(run.id, strategyId, version, outcome)),
        Effect.catchAllCause((cause) => Effect.logError("strategies: backtest could not be recorded", cause)),
        Effect.ensuring(
          Effect.sync(() => {
            inFlight--
            if (inFlight === 0) for (const w of idleWaiters.splice(0)) w()
          })
        )
      )

  const launch = (run: { readonly id: string; readonly fromMs: number; readonly toMs: number }, strategyId: string, version: number, definition: ReplayRequest["definition"]) =>
    Effect.suspend(() => {
      inFlight++
      return Effect.asVoid(Effect.forkIn(backtest(run, strategyId, version, definition), scope))
    })

  const idle: StrategiesShape["idle"] = Effect.async<void>((resume) => {
    if (inFlight === 0) resume(Effect.void)
    else idleWaiters.push(() => resume(Effect.void))
  })

  return { sweep, launch, idle }
}
