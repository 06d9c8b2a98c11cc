/**
 * Saved strategies of the Max strategy lab (spec 2.7, 3.6, 4.5, 8) in PostgreSQL (migration
 * 0008): drafts, immutable versions, the automatic 14-day backtest of every new version, and
 * the runs, trades and comparison reads.
 *
 * States (spec 3.6):
 *
 *   save / new version ──▶ draft ──(its backtest done)──▶ backtested
 *                            ▲                               │
 *                            └─────── new version ───────────┘
 *   draft | backtested ──(owner)──▶ retired (terminal: no new version, no other status)
 *   anything ──▶ paper | live: refused, always (`Invalid`, field `status`)
 *
 * Invariants:
 * - Every read and write names the account: another account's strategy or run is `NotFound`,
 *   exactly like an unknown id.
 * - 20 saves (a new strategy or a new version) per account per UTC day, counted in the saving
 *   transaction by a conditional upsert, so the 21st is refused (`Quota`) and records nothing,
 *   across processes too.
 * - A version is never changed once written; a new version gets `current_version + 1` under a
 *   row lock of its strategy.
 * - Each saved version starts one backtest run over `[now - 14 days, now)` through the replay
 *   engine (`runBacktest`). A run that finishes for the strategy's current version while it is
 *   `draft` moves it to `backtested` with the run's verdict; a run of an older version, or one
 *   finishing after retirement, is kept but changes no status. A failed run leaves `draft`.
 * - Bounded: at most `backtestsRunningMax` backtests run at once (the rest wait on a
 *   semaphore; the quota bounds how many can wait), each stopped `backtestTimeoutMs` after
 *   its save (waiting included); a run's stored trades are the replay's first 2,000. Runs a
 *   stopped process left `running` are marked `failed` (`interrupted`) once older than the
 *   limit plus `staleGraceMs`, at start and before each save (never a live process's run).
 * - Money stays as the replay's decimal strings; nothing here does arithmetic on it except the
 *   comparison's P&L differences, in micro-USD `bigint`s.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type Scope } from "effect"
import type { ReplayRequest } from "./Definition.js"
import type { ReplayResult, ReplayTradeRecord } from "./Engine.js"
import { makeBacktests } from "./internal/Backtests.js"
import { makeStrategyReads } from "./internal/StrategyReads.js"
import { makeStrategyStore } from "./internal/StrategyStore.js"
import { makeStrategyWrites } from "./internal/StrategyWrites.js"
import type { ReplayError } from "./Replay.js"
import type { StrategyError } from "./StrategyError.js"
import { backtestsRunningMaxDefault, backtestTimeoutMsDefault, strategySavesPerDay } from "./StrategyLimits.js"

export { StrategyError } from "./StrategyError.js"
export {
  backtestsRunningMaxDefault,
  backtestTimeoutMsDefault,
  backtestWindowMs,
  comparisonRunsMax,
  listLimitDefault,
  listLimitMax,
  nameMaxChars,
  offsetMax,
  staleGraceMsDefault,
  strategySavesPerDay,
  tradesLimitDefault,
  tradesLimitMax
} from "./StrategyLimits.js"


export type StrategyStatus = "draft" | "backtested" | "retired"
export type RunStatus = "running" | "done" | "failed"

export interface StrategySummary {
  readonly id: string
  readonly name: string
  readonly status: StrategyStatus
  readonly current_version: number
  readonly verdict: "pass" | "fail" | "insufficient" | null
  readonly created_at: string
  readonly updated_at: string
  readonly retired_at: string | null
}

export interface RunSummary {
  readonly id: string
  readonly strategy_id: string
  readonly version: number
  readonly kind: "backtest"
  readonly status: RunStatus
  readonly from: string
  readonly to: string
  readonly verdict: "pass" | "fail" | "insufficient" | null
  readonly trade_count: number | null
  readonly pnl_usd: string | null
  readonly max_drawdown_pct: number | null
  readonly error: string | null
  readonly created_at: string
  readonly finished_at: string | null
}

export interface StrategyDetail extends StrategySummary {
  readonly versions: ReadonlyArray<{ readonly version: number; readonly definition: unknown; readonly created_at: string }>
  /** The newest run of the shown version (`version` param, else the current one), with its result (trades excluded). */
  readonly run: (RunSummary & { readonly result: Omit<ReplayResult, "trades"> | null }) | null
}

export interface StrategiesOptions {
  /** The replay engine over ClickHouse (see `src/DataService.ts` `replayRunner`). */
  readonly runBacktest: (request: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError>
  readonly backtestTimeoutMs?: number
  readonly backtestsRunningMax?: number
  readonly savesPerDay?: number
  /** A run still `running` this long after the time limit is failed as interrupted (default 60 s). */
  readonly staleGraceMs?: number
}

export interface Page {
  readonly limit: number
  readonly offset: number
}

export interface StrategiesShape {
  /** Saves a new strategy (version 1, `draft`) and starts its backtest. */
  readonly create: (accountId: string, input: { readonly name: unknown; readonly definition: unknown }) => Effect.Effect<StrategyDetail, StrategyError>
  /** Saves a new version (status back to `draft`) and starts its backtest. */
  readonly addVersion: (accountId: string, id: string, input: { readonly definition: unknown }) => Effect.Effect<StrategyDetail, StrategyError>
  /** Owner status change: only `retired` is accepted. */
  readonly setStatus: (accountId: string, id: string, status: unknown) => Effect.Effect<StrategyDetail, StrategyError>
  readonly list: (accountId: string, page: Page, status?: StrategyStatus) => Effect.Effect<ReadonlyArray<StrategySummary>, StrategyError>
  readonly get: (accountId: string, id: string, version?: number) => Effect.Effect<StrategyDetail, StrategyError>
  readonly runs: (accountId: string, page: Page, strategyId?: string) => Effect.Effect<ReadonlyArray<RunSummary>, StrategyError>
  /** Trades of one run, or of a strategy's newest finished run, or of all the account's runs (newest run first). */
  readonly trades: (
    accountId: string,
    page: Page,
    scope: { readonly runId?: string; readonly strategyId?: string; readonly version?: number }
  ) => Effect.Effect<{ readonly run_id: string | null; readonly trades: ReadonlyArray<RunTrade> }, StrategyError>
  /** The newest finished run of each version of a strategy (or the named runs), side by side. */
  readonly comparison: (accountId: string, id: string, runIds?: ReadonlyArray<string>) => Effect.Effect<Comparison, StrategyError>
  /** Resolves once no backtest started by this service is running (tests, shutdown). */
  readonly idle: Effect.Effect<void>
}

export interface RunTrade extends ReplayTradeRecord {
  readonly run_id: string
  readonly strategy_id: string
  readonly version: number
  readonly n: number
}

export interface ComparisonRow {
  readonly run_id: string
  readonly version: number
  readonly from: string
  readonly to: string
  readonly verdict: "pass" | "fail" | "insufficient" | null
  readonly trade_count: number
  readonly pnl_usd: string
  /** P&L minus the first row's (exact). */
  readonly pnl_vs_first_usd: string
  readonly max_drawdown_pct: number
  readonly win_rate: number | null
  readonly profit_factor: number | null
  readonly sharpe: number | null
  readonly sortino: number | null
  readonly fees_paid_usd: string
  readonly final_usd: string
  readonly required_start_usd: string
}

export interface Comparison {
  readonly strategy_id: string
  readonly runs: ReadonlyArray<ComparisonRow>
  /** The run with the highest P&L (first on a tie), null when none finished. */
  readonly best_pnl_run_id: string | null
  /** The run with the lowest drawdown among those that pass, null when none passes. */
  readonly best_passing_run_id: string | null
}

/**
 * The service is a table of methods over parts in `internal/`: `StrategyStore` (rows, quota,
 * runs, detail), `Backtests` (background runs, the stale sweep, idle), `StrategyWrites` and
 * `StrategyReads`, with the pure readings in `StrategyRows`.
 */
export const make = (options: StrategiesOptions): Effect.Effect<StrategiesShape, SqlError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const timeoutMs = options.backtestTimeoutMs ?? backtestTimeoutMsDefault
    const permits = yield* Effect.makeSemaphore(options.backtestsRunningMax ?? backtestsRunningMaxDefault)
    const store = makeStrategyStore(sql, options.savesPerDay ?? strategySavesPerDay)
    const backtests = makeBacktests(sql, scope, options, permits, timeoutMs, store)
    yield* backtests.sweep
    const writes = makeStrategyWrites(sql, store, backtests)
    const reads = makeStrategyReads(sql, store)
    const shape: StrategiesShape = {
      create: Effect.fn("Strategies.create")(function* (accountId: string, input: Parameters<StrategiesShape["create"]>[1]) {
        return yield* writes.create(accountId, input)
      }),
      addVersion: Effect.fn("Strategies.addVersion")(function* (accountId: string, id: string, input: Parameters<StrategiesShape["addVersion"]>[2]) {
        return yield* writes.addVersion(accountId, id, input)
      }),
      setStatus: Effect.fn("Strategies.setStatus")(function* (accountId: string, id: string, status: Parameters<StrategiesShape["setStatus"]>[2]) {
        return yield* writes.setStatus(accountId, id, status)
      }),
      list: Effect.fn("Strategies.list")(function* (accountId: string, page: Page, status?: Parameters<StrategiesShape["list"]>[2]) {
        return yield* reads.list(accountId, page, status)
      }),
      get: Effect.fn("Strategies.get")(function* (accountId: string, id: string, version?: number) {
        return yield* reads.get(accountId, id, version)
      }),
      runs: Effect.fn("Strategies.runs")(function* (accountId: string, page: Page, strategyId?: string) {
        return yield* reads.runs(accountId, page, strategyId)
      }),
      trades: Effect.fn("Strategies.trades")(function* (accountId: string, page: Page, which: Parameters<StrategiesShape["trades"]>[2]) {
        return yield* reads.trades(accountId, page, which)
      }),
      comparison: Effect.fn("Strategies.comparison")(function* (accountId: string, id: string, runIds?: Parameters<StrategiesShape["comparison"]>[2]) {
        return yield* reads.comparison(accountId, id, runIds)
      }),
      idle: backtests.idle
    }
    return shape
  })
