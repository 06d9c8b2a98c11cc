/**
 * The strategy and strategy-lab research routes' answers as schemas (spec document 2, 4.5;
 * issue 32), over the services' typed views (`Strategies.ts`, `Research.ts`); the type checks
 * below keep each schema and its view the same shape (a member added to one and not the other
 * fails to compile). A version's definition is `StrategyDefinitionDoc` (the decoder's own JSON
 * Schema); a run's stored result is `ReplaySummaryDoc` (`api/ReplayResultDoc.ts`).
 */
import { Schema } from "effect"
import { ReplaySummaryDoc, ReplayTradeFields } from "../../ReplayResultDoc.js"
import { StrategyDefinitionDoc } from "../../StrategyDefinitionDoc.js"
import type { Comparison, RunSummary, RunTrade, StrategyDetail, StrategySummary } from "../../../src/services/strategy/Strategies.js"
import type { EdgesReport, FirstSignalsReport, RunnersReport } from "../../../src/services/strategy/Research.js"

const Verdict = Schema.NullOr(Schema.Literal("pass", "fail", "insufficient"))

const SummaryFields = {
  id: Schema.String,
  name: Schema.String,
  status: Schema.Literal("draft", "backtested", "retired"),
  current_version: Schema.Int,
  verdict: Verdict,
  created_at: Schema.String,
  updated_at: Schema.String,
  retired_at: Schema.NullOr(Schema.String)
}
const Summary = Schema.Struct(SummaryFields)
const RunFields = {
  id: Schema.String,
  strategy_id: Schema.String,
  version: Schema.Int,
  kind: Schema.Literal("backtest"),
  status: Schema.Literal("running", "done", "failed"),
  from: Schema.String,
  to: Schema.String,
  verdict: Verdict,
  trade_count: Schema.NullOr(Schema.Int),
  pnl_usd: Schema.NullOr(Schema.String),
  max_drawdown_pct: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  finished_at: Schema.NullOr(Schema.String)
}
const Run = Schema.Struct(RunFields)

export const StrategyDetailDoc = Schema.Struct({
  ...SummaryFields,
  versions: Schema.Array(Schema.Struct({ version: Schema.Int, definition: StrategyDefinitionDoc, created_at: Schema.String })),
  run: Schema.NullOr(Schema.Struct({ ...RunFields, result: Schema.NullOr(ReplaySummaryDoc) }))
}).annotations({ identifier: "StrategyDetail" })
export const StrategyList = Schema.Struct({ strategies: Schema.Array(Summary) }).annotations({ identifier: "StrategyList" })
export const RunList = Schema.Struct({ runs: Schema.Array(Run) }).annotations({ identifier: "StrategyRunList" })

const Trade = Schema.Struct({ ...ReplayTradeFields, run_id: Schema.String, strategy_id: Schema.String, version: Schema.Int, n: Schema.Int })
export const RunTrades = Schema.Struct({ run_id: Schema.NullOr(Schema.String), trades: Schema.Array(Trade) }).annotations({ identifier: "StrategyRunTrades" })

const ComparisonRow = Schema.Struct({
  run_id: Schema.String,
  version: Schema.Int,
  from: Schema.String,
  to: Schema.String,
  verdict: Verdict,
  trade_count: Schema.Int,
  pnl_usd: Schema.String,
  pnl_vs_first_usd: Schema.String,
  max_drawdown_pct: Schema.Number,
  win_rate: Schema.NullOr(Schema.Number),
  profit_factor: Schema.NullOr(Schema.Number),
  sharpe: Schema.NullOr(Schema.Number),
  sortino: Schema.NullOr(Schema.Number),
  fees_paid_usd: Schema.String,
  final_usd: Schema.String,
  required_start_usd: Schema.String
})
const ComparisonView = Schema.Struct({
  strategy_id: Schema.String,
  runs: Schema.Array(ComparisonRow),
  best_pnl_run_id: Schema.NullOr(Schema.String),
  best_passing_run_id: Schema.NullOr(Schema.String)
})
export const ComparisonDoc = ComparisonView.annotations({ identifier: "StrategyComparison" })

const Horizon = Schema.Struct({
  n: Schema.Int,
  mean_net_return_pct: Schema.NullOr(Schema.Number),
  median_net_return_pct: Schema.NullOr(Schema.Number),
  win_rate: Schema.NullOr(Schema.Number)
})
const Edges = Schema.Struct({
  chain: Schema.Literal("solana"),
  snapshot: Schema.Literal("hourly", "live"),
  as_of: Schema.String,
  from: Schema.String,
  cost_pct: Schema.Number,
  min_n: Schema.Int,
  patterns: Schema.Array(
    Schema.Struct({
      pattern: Schema.String,
      signals: Schema.Int,
      priceable: Schema.Int,
      horizons: Schema.Record({ key: Schema.String, value: Horizon }),
      peak: Schema.optionalWith(Horizon, { exact: true })
    })
  ),
  omitted: Schema.Array(Schema.Struct({ pattern: Schema.String, priceable: Schema.Int }))
})
export const EdgesDoc = Edges.annotations({ identifier: "StrategyLabEdges" })

const Runners = Schema.Struct({
  chain: Schema.Literal("solana"),
  as_of: Schema.String,
  from: Schema.String,
  min_wallets: Schema.Int,
  min_multiple: Schema.Number,
  tokens: Schema.Array(
    Schema.Struct({
      asset: Schema.String,
      first_signal_id: Schema.String,
      first_signal_at: Schema.String,
      signals: Schema.Int,
      patterns: Schema.Array(Schema.String),
      wallets: Schema.Int,
      trades_after: Schema.Int,
      entry_price_sol: Schema.NullOr(Schema.String),
      peak_price_sol: Schema.NullOr(Schema.String),
      peak_at: Schema.String,
      last_price_sol: Schema.NullOr(Schema.String),
      peak_multiple: Schema.NullOr(Schema.Number),
      last_multiple: Schema.NullOr(Schema.Number)
    })
  )
})
export const RunnersDoc = Runners.annotations({ identifier: "StrategyLabRunners" })

const FirstSignals = Schema.Struct({
  chain: Schema.Literal("solana"),
  as_of: Schema.String,
  from: Schema.String,
  truncated: Schema.Boolean,
  tokens: Schema.Array(
    Schema.Struct({
      asset: Schema.String,
      signal: Schema.Struct({
        id: Schema.String,
        pattern: Schema.String,
        direction: Schema.String,
        at: Schema.String,
        wallets: Schema.Array(Schema.String),
        size_usd: Schema.NullOr(Schema.String),
        mcap_usd: Schema.NullOr(Schema.String),
        confidence: Schema.Number
      }),
      followed: Schema.Struct({
        signals_after: Schema.Int,
        patterns_after: Schema.Array(Schema.String),
        trades_after: Schema.Int,
        buy_volume_sol: Schema.String,
        sell_volume_sol: Schema.String,
        entry_price_sol: Schema.NullOr(Schema.String),
        last_price_sol: Schema.NullOr(Schema.String),
        peak_price_sol: Schema.NullOr(Schema.String),
        last_multiple: Schema.NullOr(Schema.Number),
        peak_multiple: Schema.NullOr(Schema.Number)
      })
    })
  )
})
export const FirstSignalsDoc = FirstSignals.annotations({ identifier: "StrategyLabFirstSignals" })

// Each schema describes exactly its view: assignable both ways (keys for the views with open members).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof Summary.Type>, Mutable<StrategySummary>>>()
same<Same<Mutable<typeof Run.Type>, Mutable<RunSummary>>>()
same<Same<keyof typeof StrategyDetailDoc.Type, keyof StrategyDetail>>()
same<Same<Mutable<typeof Trade.Type>, Mutable<RunTrade>>>()
same<Same<Mutable<typeof ComparisonView.Type>, Mutable<Comparison>>>()
same<Same<Mutable<typeof Edges.Type>, Mutable<EdgesReport>>>()
same<Same<Mutable<typeof Runners.Type>, Mutable<RunnersReport>>>()
same<Same<Mutable<typeof FirstSignals.Type>, Mutable<FirstSignalsReport>>>()
