/**
 * The strategy store's rows and their pure readings: the row shapes, the summaries and detail
 * views the routes answer (ISO times, jsonb read leniently), micro-USD of a decimal string, the
 * name and definition checks, and the comparison of a strategy's finished runs. No I/O.
 */
import { Either } from "effect"
import { decodeDefinition, formatUsd, problemText } from "../Definition.js"
import type { ReplayResult } from "../Engine.js"
import type { Comparison, ComparisonRow, RunStatus, RunSummary, StrategyStatus, StrategySummary } from "../Strategies.js"
import { StrategyError } from "../StrategyError.js"
import { nameMaxChars } from "../StrategyLimits.js"

export interface StrategyRow {
  readonly id: string
  readonly name: string
  readonly status: StrategyStatus
  readonly current_version: number
  readonly verdict: StrategySummary["verdict"]
  readonly created_at: Date
  readonly updated_at: Date
  readonly retired_at: Date | null
}

export interface RunRow {
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

export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())
export const isoNN = (d: Date | string): string => new Date(d).toISOString()
/** jsonb arrives parsed from PostgreSQL; PGlite through the socket too, but be lenient. */
export const parsed = <A>(v: A | string | null): A | null => (v === null ? null : typeof v === "string" ? (JSON.parse(v) as A) : v)

export const summary = (r: StrategyRow): StrategySummary => ({
  id: r.id,
  name: r.name,
  status: r.status,
  current_version: Number(r.current_version),
  verdict: r.verdict,
  created_at: isoNN(r.created_at),
  updated_at: isoNN(r.updated_at),
  retired_at: iso(r.retired_at)
})

export const runSummary = (r: RunRow): RunSummary => {
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
export const usdMicros = (text: string): bigint => {
  const m = /^(-?)([0-9]+)\.([0-9]{6})$/.exec(text)
  if (m === null) return 0n
  const v = BigInt(m[2]!) * 1_000_000n + BigInt(m[3]!)
  return m[1] === "-" ? -v : v
}

export const STRATEGY_COLUMNS = "id, name, status, current_version, verdict, created_at, updated_at, retired_at"
export const RUN_COLUMNS = "id, strategy_id, version, status, window_from, window_to, verdict, result, error, created_at, finished_at"

export const validName = (name: unknown): string | StrategyError =>
  typeof name === "string" && name.trim().length >= 1 && [...name].length <= nameMaxChars
    ? name.trim()
    : new StrategyError({ reason: "invalid", field: "name", message: `name: must be a string of 1 to ${nameMaxChars} characters` })

export const validDefinition = (definition: unknown) => {
  const decoded = decodeDefinition(definition)
  if (Either.isLeft(decoded)) {
    const path = decoded.left.path === "" ? "definition" : `definition.${decoded.left.path}`
    return Either.left(new StrategyError({ reason: "invalid", field: path, message: problemText({ path, message: decoded.left.message }) }))
  }
  return Either.right(decoded.right)
}

/** The comparison (of the given runs, or the newest finished run of each version): each finished run against the first, the best P&L, the passing run with the least drawdown. */
export const comparisonOf = (id: string, rows: ReadonlyArray<RunRow>): Comparison => {
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
}
