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
import { Clock, Effect, Either, Schema, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { failureFields } from "../../domain/ServiceFailure.js"
import { decodeDefinition, formatUsd, problemText, type ReplayRequest } from "./Definition.js"
import type { ReplayResult, ReplayTradeRecord } from "./Engine.js"
import type { ReplayError } from "./Replay.js"

export type StrategyStatus = "draft" | "backtested" | "retired"
export type RunStatus = "running" | "done" | "failed"

export const strategySavesPerDay = 20
export const backtestWindowMs = 14 * 86_400_000
export const backtestTimeoutMsDefault = 10 * 60_000
export const backtestsRunningMaxDefault = 2
export const staleGraceMsDefault = 60_000
export const nameMaxChars = 100
export const listLimitMax = 100
export const listLimitDefault = 50
export const tradesLimitMax = 500
export const tradesLimitDefault = 100
export const comparisonRunsMax = 10
export const offsetMax = 100_000

const DAY_MS = 86_400_000

/**
 * The strategy store's failure (a `reason` union, `src/domain/ServiceFailure.ts`); `api/ErrorTable.ts`
 * answers it. `quota` carries `details` `{quota, used}` and `retryAfterMs` (to the next UTC day);
 * `invalid` the `field` of the first problem.
 */
export class StrategyError extends Schema.TaggedError<StrategyError>()("StrategyError", {
  reason: Schema.Literal("not_found", "quota", "invalid", "retired", "unavailable"),
  ...failureFields,
  retryAfterMs: Schema.optional(Schema.Number)
}) {}

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

// ---------------------------------------------------------------------------------------------

interface StrategyRow {
  readonly id: string
  readonly name: string
  readonly status: StrategyStatus
  readonly current_version: number
  readonly verdict: StrategySummary["verdict"]
  readonly created_at: Date
  readonly updated_at: Date
  readonly retired_at: Date | null
}

interface RunRow {
  readonly id: string
  readonly strategy_id: string
  readonly version: number
  readonly status: RunStatus
  readonly window_from: Date
  readonly window_to: Date
  readonly verdict: RunSummary["verdict"]
  readonly result: (Omit<ReplayResult, "trades"> & Record<string, unknown>) | string | null
  readonly error: string | null
  readonly created_at: Date
  readonly finished_at: Date | null
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())
const isoNN = (d: Date | string): string => new Date(d).toISOString()
/** jsonb arrives parsed from PostgreSQL; PGlite through the socket too, but be lenient. */
const parsed = <A>(v: A | string | null): A | null => (v === null ? null : typeof v === "string" ? (JSON.parse(v) as A) : v)

const summary = (r: StrategyRow): StrategySummary => ({
  id: r.id,
  name: r.name,
  status: r.status,
  current_version: Number(r.current_version),
  verdict: r.verdict,
  created_at: isoNN(r.created_at),
  updated_at: isoNN(r.updated_at),
  retired_at: iso(r.retired_at)
})

const runSummary = (r: RunRow): RunSummary => {
  const result = parsed(r.result)
  return {
    id: r.id,
    strategy_id: r.strategy_id,
    version: Number(r.version),
    kind: "backtest",
    status: r.status,
    from: isoNN(r.window_from),
    to: isoNN(r.window_to),
    verdict: r.verdict,
    trade_count: result?.trade_count ?? null,
    pnl_usd: result?.pnl_usd ?? null,
    max_drawdown_pct: result?.max_drawdown_pct ?? null,
    error: r.error,
    created_at: isoNN(r.created_at),
    finished_at: iso(r.finished_at)
  }
}

/** Decimal USD string ("-12.500000") to micro-USD. */
const usdMicros = (text: string): bigint => {
  const m = /^(-?)([0-9]+)\.([0-9]{6})$/.exec(text)
  if (m === null) return 0n
  const v = BigInt(m[2]!) * 1_000_000n + BigInt(m[3]!)
  return m[1] === "-" ? -v : v
}

const STRATEGY_COLUMNS = "id, name, status, current_version, verdict, created_at, updated_at, retired_at"
const RUN_COLUMNS = "id, strategy_id, version, status, window_from, window_to, verdict, result, error, created_at, finished_at"

const validName = (name: unknown): string | StrategyError =>
  typeof name === "string" && name.trim().length >= 1 && [...name].length <= nameMaxChars
    ? name.trim()
    : new StrategyError({ reason: "invalid", field: "name", message: `name: must be a string of 1 to ${nameMaxChars} characters` })

const validDefinition = (definition: unknown) => {
  const decoded = decodeDefinition(definition)
  if (Either.isLeft(decoded)) {
    const path = decoded.left.path === "" ? "definition" : `definition.${decoded.left.path}`
    return Either.left(new StrategyError({ reason: "invalid", field: path, message: problemText({ path, message: decoded.left.message }) }))
  }
  return Either.right(decoded.right)
}

export const make = (options: StrategiesOptions): Effect.Effect<StrategiesShape, SqlError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const quota = options.savesPerDay ?? strategySavesPerDay
    const timeoutMs = options.backtestTimeoutMs ?? backtestTimeoutMsDefault
    const permits = yield* Effect.makeSemaphore(options.backtestsRunningMax ?? backtestsRunningMaxDefault)
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
    yield* sweep

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

    const shape: StrategiesShape = {
      create: (accountId, input) =>
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
        ),

      addVersion: (accountId, id, input) =>
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
        ),

      setStatus: (accountId, id, status) =>
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
        ),

      list: (accountId, page, status) =>
        sqlErrors(
          Effect.map(
            status === undefined
              ? sql<StrategyRow>`SELECT ${sql.literal(STRATEGY_COLUMNS)} FROM strategies WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`
              : sql<StrategyRow>`SELECT ${sql.literal(STRATEGY_COLUMNS)} FROM strategies WHERE account_id = ${accountId} AND status = ${status} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
            (rows) => rows.map(summary)
          )
        ),

      get: (accountId, id, version) => sqlErrors(detail(accountId, id, version)),

      runs: (accountId, page, strategyId) =>
        sqlErrors(
          Effect.gen(function* () {
            if (strategyId !== undefined) yield* owned(accountId, strategyId)
            const rows =
              strategyId === undefined
                ? yield* sql<RunRow>`SELECT ${sql.literal(RUN_COLUMNS)} FROM strategy_runs WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`
                : yield* sql<RunRow>`SELECT ${sql.literal(RUN_COLUMNS)} FROM strategy_runs WHERE account_id = ${accountId} AND strategy_id = ${strategyId} ORDER BY seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`
            return rows.map(runSummary)
          })
        ),

      trades: (accountId, page, which) =>
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
        ),

      comparison: (accountId, id, runIds) =>
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
            const done = rows.filter((r) => r.status === "done" && r.result !== null)
            const firstPnl = done[0] === undefined ? 0n : usdMicros(parsed(done[0].result)!.pnl_usd)
            const out: Array<ComparisonRow> = done.map((r) => {
              const res = parsed(r.result)!
              return {
                run_id: r.id,
                version: Number(r.version),
                from: isoNN(r.window_from),
                to: isoNN(r.window_to),
                verdict: r.verdict,
                trade_count: res.trade_count,
                pnl_usd: res.pnl_usd,
                pnl_vs_first_usd: formatUsd(usdMicros(res.pnl_usd) - firstPnl),
                max_drawdown_pct: res.max_drawdown_pct,
                win_rate: res.win_rate,
                profit_factor: res.profit_factor,
                sharpe: res.sharpe,
                sortino: res.sortino,
                fees_paid_usd: res.fees_paid_usd,
                final_usd: res.final_usd,
                required_start_usd: res.required_start_usd
              }
            })
            let best: ComparisonRow | undefined
            for (const r of out) if (best === undefined || usdMicros(r.pnl_usd) > usdMicros(best.pnl_usd)) best = r
            let bestPass: ComparisonRow | undefined
            for (const r of out) if (r.verdict === "pass" && (bestPass === undefined || r.max_drawdown_pct < bestPass.max_drawdown_pct)) bestPass = r
            return { strategy_id: id, runs: out, best_pnl_run_id: best?.run_id ?? null, best_passing_run_id: bestPass?.run_id ?? null }
          })
        ),

      idle: Effect.async<void>((resume) => {
        if (inFlight === 0) resume(Effect.void)
        else idleWaiters.push(() => resume(Effect.void))
      })
    }
    return shape
  })
