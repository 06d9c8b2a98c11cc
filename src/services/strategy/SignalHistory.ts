/**
 * The replay's entry triggers: stored signals over a time window, read through one small
 * interface (`SignalHistory.range`) so the replay does not depend on how detectors produce
 * them. The ClickHouse implementation reads the detectors' `signals` table (migration 0005,
 * written by `clickhouse/writer/SignalWriter.ts`) and maps its columns to the replay's view:
 *
 * | `SignalRow` | `signals` column | mapping |
 * |---|---|---|
 * | `usdMicros` | `size_usd Nullable(Decimal(38, 6))` | exact micro-USD; NULL (no USD price) → 0, so a `min_usd` filter is never met |
 * | `mcapUsdMicros` | `mcap_usd Nullable(Decimal(38, 6))` | exact; NULL (unknown) → 0 |
 * | `ageMinutes` | `age_minutes Nullable(UInt32)` | NULL (creation not seen) → 0 |
 * | `venue` | `venue Nullable(String)` | NULL → `""` |
 * | `confidence` | `confidence UInt8` (0..100) | ÷ 100 → 0..1 (the definition's `min_confidence` scale) |
 * | `walletGroups` | `wallet_groups Array(Array(String))` | parallel to `wallets` (the writer fills it from the tracking data) |
 * | `walletIds` | `wallet_ids Array(String)` | tracked-wallet ids (the definition's `wallet_ids`) |
 * | `score1h` | — | the detectors compute no 1-hour score: always 0, so `min_score_1h` above 0 never passes |
 *
 * Invariants:
 * - Rows come back in `(ts, id)` order, each signal once (`FINAL`), inside `[fromMs, toMs)`.
 * - Bounded: at most `signalsPerReplayMax` rows per range; more is a `TooMany` failure, never
 *   a silent cut (a replay over a truncated signal stream would be a wrong backtest).
 * - USD sizes and market caps are exact micro-USD `bigint`s; `confidence` (0..1) and `score1h`
 *   (0..100) are scores, floats.
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
  /** Tracked-wallet ids among `wallets` (sorted). */
  readonly walletIds: ReadonlyArray<string>
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
  /** The token's 1-hour score, 0..100 (not computed by the detectors: 0 from ClickHouse). */
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

export const bySignalOrder = (a: SignalRow, b: SignalRow): number => a.tsMs - b.tsMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const matchesFilter = (r: SignalRow, f: SignalFilter): boolean =>
  f.chains.includes(r.chain) &&
  (f.patterns === undefined || f.patterns.includes(r.pattern)) &&
  (f.assets === undefined || f.assets.includes(r.asset))

const rangeSql = (f: SignalFilter) => `
SELECT id, toString(pattern) AS pattern, chain, asset, toString(toUnixTimestamp64Milli(ts)) AS ts_ms, wallets, wallet_ids, wallet_groups,
  if(isNull(size_usd), '0', toString(size_usd)) AS usd, if(isNull(mcap_usd), '0', toString(mcap_usd)) AS mcap,
  ifNull(age_minutes, 0) AS age_minutes, ifNull(venue, '') AS venue, toString(direction) AS direction,
  confidence, toString(quality) AS quality
FROM signals FINAL
WHERE chain IN {chains:Array(String)}
  AND ts >= fromUnixTimestamp64Milli({fromMs:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({toMs:Int64}, 'UTC')
  ${f.patterns !== undefined ? "AND toString(pattern) IN {patterns:Array(String)}" : ""}
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
  readonly wallet_ids: ReadonlyArray<string>
  readonly wallet_groups: ReadonlyArray<ReadonlyArray<string>>
  readonly usd: string
  readonly mcap: string
  readonly age_minutes: number | string
  readonly venue: string
  readonly direction: string
  readonly confidence: number | string
  readonly quality: string
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
  walletIds: r.wallet_ids,
  walletGroups: r.wallet_groups,
  usdMicros: micros(r.usd, "size_usd"),
  mcapUsdMicros: micros(r.mcap, "mcap_usd"),
  ageMinutes: Number(r.age_minutes),
  venue: r.venue,
  direction: r.direction === "out" ? "out" : "in",
  confidence: Number(r.confidence) / 100,
  quality: r.quality,
  score1h: 0
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
