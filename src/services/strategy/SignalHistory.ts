/**
 * The replay's entry triggers: stored signals over a time window, read through one small
 * interface (`SignalHistory.range`) so the replay does not depend on how detectors produce
 * them. The ClickHouse implementation reads the `signals` table whose columns are
 * `signalsTableDdl` below (the detectors' migration must provide at least these columns with
 * these names and types; the test setup creates the table from this DDL).
 *
 * Invariants:
 * - Rows come back in `(ts, id)` order, each signal once (`FINAL`), inside `[fromMs, toMs)`.
 * - Bounded: at most `signalsPerReplayMax` rows per range; more is a `TooMany` failure, never
 *   a silent cut (a replay over a truncated signal stream would be a wrong backtest).
 * - USD sizes and market caps are exact micro-USD `bigint`s (Decimal(38, 6) in ClickHouse);
 *   `confidence` (0..1) and `score1h` (0..100) are scores, floats.
 */
import { Context, Data, Effect, Layer } from "effect"
import { ClickHouse } from "../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../clickhouse/ClickHouseError.js"
import { parseUsdMicros } from "./Definition.js"

export interface SignalRow {
  readonly id: string
  readonly pattern: string
  readonly chain: string
  /** The token (mint / token address). */
  readonly asset: string
  readonly tsMs: number
  readonly wallets: ReadonlyArray<string>
  /** Parallel to `wallets`: the tracked-wallet groups each wallet belongs to. */
  readonly walletGroups: ReadonlyArray<ReadonlyArray<string>>
  readonly usdMicros: bigint
  readonly mcapUsdMicros: bigint
  /** The token's age when the signal fired. */
  readonly ageMinutes: number
  readonly venue: string
  /** `in`: wallets buying into the token; `out`: selling out of it. */
  readonly direction: "in" | "out"
  /** 0..1 */
  readonly confidence: number
  readonly quality: string
  /** The token's 1-hour score, 0..100. */
  readonly score1h: number
}

export interface SignalWindow {
  readonly fromMs: number
  readonly toMs: number
}

export interface SignalFilter {
  /** Chains to read (`solana`, `hood`). */
  readonly chains: ReadonlyArray<string>
  /** Only these patterns (all when absent). */
  readonly patterns?: ReadonlyArray<string> | undefined
  /** Only these assets (all when absent). */
  readonly assets?: ReadonlyArray<string> | undefined
}

export class SignalHistoryError extends Data.TaggedError("SignalHistoryError")<{
  readonly reason: "TooMany" | "Unavailable"
  readonly message: string
  readonly cause?: unknown
}> {}

export interface SignalHistoryShape {
  readonly range: (window: SignalWindow, filter: SignalFilter) => Effect.Effect<ReadonlyArray<SignalRow>, SignalHistoryError>
}

export class SignalHistory extends Context.Tag("curvestream/strategy/SignalHistory")<SignalHistory, SignalHistoryShape>() {
  /** Over the ClickHouse `signals` table. */
  static readonly layerClickHouse: Layer.Layer<SignalHistory, never, ClickHouse> = Layer.effect(
    SignalHistory,
    Effect.map(ClickHouse, (ch) => makeClickHouseSignalHistory(ch))
  )
  /** Over a fixed list (research tools and unit tests of the engine). */
  static layerFromRows = (rows: ReadonlyArray<SignalRow>): Layer.Layer<SignalHistory> =>
    Layer.succeed(SignalHistory, {
      range: (w, f) => Effect.succeed(rows.filter((r) => r.tsMs >= w.fromMs && r.tsMs < w.toMs && matchesFilter(r, f)).sort(bySignalOrder))
    })
}

/** Most signals one replay reads. */
export const signalsPerReplayMax = 200_000

/** The columns the replay reads (a detector migration may add more). */
export const signalsTableDdl = `CREATE TABLE IF NOT EXISTS signals (
  id String,
  pattern LowCardinality(String),
  chain LowCardinality(String),
  asset String,
  ts DateTime64(3, 'UTC'),
  wallets Array(String),
  wallet_groups Array(Array(String)),
  usd_size Decimal(38, 6),
  mcap_usd Decimal(38, 6),
  age_minutes UInt32,
  venue LowCardinality(String),
  direction Enum8('in' = 1, 'out' = 2),
  confidence Float64,
  quality LowCardinality(String),
  score_1h Float64
) ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (chain, ts, id)`

export const bySignalOrder = (a: SignalRow, b: SignalRow): number => a.tsMs - b.tsMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const matchesFilter = (r: SignalRow, f: SignalFilter): boolean =>
  f.chains.includes(r.chain) &&
  (f.patterns === undefined || f.patterns.includes(r.pattern)) &&
  (f.assets === undefined || f.assets.includes(r.asset))

const rangeSql = (f: SignalFilter) => `
SELECT id, pattern, chain, asset, toString(toUnixTimestamp64Milli(ts)) AS ts_ms, wallets, wallet_groups,
  toString(usd_size) AS usd, toString(mcap_usd) AS mcap, age_minutes, venue, toString(direction) AS direction,
  confidence, quality, score_1h
FROM signals FINAL
WHERE chain IN {chains:Array(String)}
  AND ts >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')
  ${f.patterns !== undefined ? "AND pattern IN {patterns:Array(String)}" : ""}
  ${f.assets !== undefined ? "AND asset IN {assets:Array(String)}" : ""}
ORDER BY ts, id
LIMIT {limit:UInt32}`

interface RawSignal {
  readonly id: string
  readonly pattern: string
  readonly chain: string
  readonly asset: string
  readonly ts_ms: string
  readonly wallets: ReadonlyArray<string>
  readonly wallet_groups: ReadonlyArray<ReadonlyArray<string>>
  readonly usd: string
  readonly mcap: string
  readonly age_minutes: number
  readonly venue: string
  readonly direction: string
  readonly confidence: number
  readonly quality: string
  readonly score_1h: number
}

/** Decimal(38, 6) text to micro-USD (negative sizes are not signals: refused as a defect of the row). */
const micros = (text: string, what: string): bigint => {
  const v = parseUsdMicros(text)
  if (v !== undefined) return v
  // ClickHouse prints large decimals without the 13-digit bound parseUsdMicros applies to input.
  const m = /^([0-9]+)(?:\.([0-9]{1,6}))?$/.exec(text)
  if (m === null) throw new Error(`signal ${what} is not a decimal: ${text}`)
  return BigInt(m[1]!) * 1_000_000n + BigInt(((m[2] ?? "") + "000000").slice(0, 6))
}

const toSignal = (r: RawSignal): SignalRow => ({
  id: r.id,
  pattern: r.pattern,
  chain: r.chain,
  asset: r.asset,
  tsMs: Number(r.ts_ms),
  wallets: r.wallets,
  walletGroups: r.wallet_groups,
  usdMicros: micros(r.usd, "usd_size"),
  mcapUsdMicros: micros(r.mcap, "mcap_usd"),
  ageMinutes: Number(r.age_minutes),
  venue: r.venue,
  direction: r.direction === "out" ? "out" : "in",
  confidence: Number(r.confidence),
  quality: r.quality,
  score1h: Number(r.score_1h)
})

export const makeClickHouseSignalHistory = (ch: typeof ClickHouse.Service): SignalHistoryShape => ({
  range: (window, filter) =>
    Effect.gen(function* () {
      const rows = yield* ch
        .query<RawSignal>(rangeSql(filter), {
          chains: [...filter.chains],
          fromMs: window.fromMs,
          toMs: window.toMs,
          limit: signalsPerReplayMax + 1,
          ...(filter.patterns !== undefined ? { patterns: [...filter.patterns] } : {}),
          ...(filter.assets !== undefined ? { assets: [...filter.assets] } : {})
        })
        .pipe(
          Effect.mapError(
            (e: ClickHouseError) => new SignalHistoryError({ reason: "Unavailable", message: `reading signals: ${e.message}`, cause: e })
          )
        )
      if (rows.length > signalsPerReplayMax) {
        return yield* new SignalHistoryError({
          reason: "TooMany",
          message: `more than ${signalsPerReplayMax} signals in the window; narrow the window, the chain or the assets`
        })
      }
      return yield* Effect.try({
        try: () => rows.map(toSignal),
        catch: (cause) => new SignalHistoryError({ reason: "Unavailable", message: `reading signals: ${String(cause)}`, cause })
      })
    }).pipe(Effect.withSpan("SignalHistory.range"))
})
