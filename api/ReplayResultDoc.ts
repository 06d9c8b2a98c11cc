/**
 * A strategy replay's result as the OpenAPI documents show it (issue 32 item 1): the strategy lab's
 * replay job (`GET /v1/strategy-lab/replay/{job_id}`) and a strategy's last backtest run carry the
 * engine's `ReplayResult` (`src/services/strategy/Engine.ts`), a closed object here. The type check
 * at the end keeps the schema and the engine's type the same shape.
 */
import { Schema } from "effect"
import { CloseReasons, type ReplayResult, SkipReasons } from "../src/services/strategy/Engine.js"

const CloseReason = Schema.Literal(...(CloseReasons as [ReplayResult["trades"][number]["close_reason"], ...Array<ReplayResult["trades"][number]["close_reason"]>]))
const counts = <K extends string>(keys: ReadonlyArray<K>) => Schema.Struct(Object.fromEntries(keys.map((k) => [k, Schema.Int])) as { [P in K]: typeof Schema.Int })

/** A replayed trade's members (a strategy run's stored trade adds its run's ids, `StrategyResponses.ts`). */
export const ReplayTradeFields = {
  asset: Schema.String,
  chain: Schema.String,
  signal_id: Schema.String,
  entry_at: Schema.String,
  entry_price_usd: Schema.String,
  entry_usd: Schema.String,
  tokens_raw: Schema.String,
  exit_at: Schema.String,
  exit_price_usd: Schema.String,
  exit_usd: Schema.String,
  pnl_usd: Schema.String,
  pnl_pct: Schema.Number,
  close_reason: CloseReason,
  legs: Schema.Array(Schema.Struct({ reason: CloseReason, at: Schema.String, price_usd: Schema.String, tokens_raw: Schema.String, usd: Schema.String }))
}
const ReplayTrade = Schema.Struct(ReplayTradeFields)

/** Every member of the result but `trades` (a strategy run stores its trades apart). */
export const ReplaySummaryFields = {
  verdict: Schema.Literal("pass", "fail", "insufficient"),
  verdict_reason: Schema.String,
  from: Schema.String,
  to: Schema.String,
  trade_count: Schema.Int,
  pnl_usd: Schema.String,
  max_drawdown_pct: Schema.Number,
  required_start_usd: Schema.String,
  start_usd: Schema.String,
  final_usd: Schema.String,
  peak_capital_at_risk_usd: Schema.String,
  skips: counts(SkipReasons),
  trades_truncated: Schema.Boolean,
  universe: Schema.Struct({ candidates: Schema.Int, priceable: Schema.Int, tokens: Schema.Int }),
  win_rate: Schema.NullOr(Schema.Number),
  profit_factor: Schema.NullOr(Schema.Number),
  expectancy_usd: Schema.NullOr(Schema.String),
  sharpe: Schema.NullOr(Schema.Number),
  sortino: Schema.NullOr(Schema.Number),
  fees_paid_usd: Schema.String,
  fees: Schema.Struct({ curve_usd: Schema.String, platform_usd: Schema.String }),
  slippage_usd: Schema.String,
  exit_reasons: counts(CloseReasons),
  per_token: Schema.Array(Schema.Struct({ asset: Schema.String, chain: Schema.String, trades: Schema.Int, wins: Schema.Int, pnl_usd: Schema.String })),
  per_token_truncated: Schema.Boolean,
  benchmark: Schema.Struct({
    kind: Schema.Literal("buy_and_hold"),
    tokens: Schema.Int,
    invested_usd: Schema.String,
    final_usd: Schema.String,
    pnl_usd: Schema.String,
    return_pct: Schema.NullOr(Schema.Number)
  }),
  equity: Schema.Array(Schema.Struct({ at: Schema.String, t_ms: Schema.Number, equity_usd: Schema.String, drawdown_pct: Schema.Number })),
  history: Schema.Struct({ trades_read: Schema.Int, history_start: Schema.NullOr(Schema.String) }),
  fill_model: Schema.String
}

export const ReplayResultDoc = Schema.Struct({ ...ReplaySummaryFields, trades: Schema.Array(ReplayTrade) }).annotations({
  identifier: "ReplayResult",
  description: "A strategy replay's result: verdict, P&L, risk and trade statistics, the trades (bounded; trades_truncated), the equity curve"
})

export const ReplaySummaryDoc = Schema.Struct(ReplaySummaryFields).annotations({
  identifier: "ReplaySummary",
  description: "A replay's result without its trades"
})

// The schema describes exactly the engine's type: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof ReplayResultDoc.Type>, Mutable<ReplayResult>>>()
