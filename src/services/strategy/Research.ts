/**
 * The strategy lab's research reports over ClickHouse (spec 4.5; Solana only): `edges`,
 * `runners` and `first-signals`. Definitions (also in the report to the lead):
 *
 * Prices. A trade's price is its fee-free quote over its tokens (the `trades` table's own
 * definition of `price`, but from the raw integer columns: a buy's `quote_consumed_raw -
 * fee_raw`, a sell's `amount_out_raw + fee_raw`, over `token_volume_raw`); trades without
 * tokens or quote are ignored. The "entry" after a signal is the first trade of the token
 * strictly after the signal's millisecond (the replay engine's rule: never the trade that caused
 * it). Every ratio between two prices is computed exactly from the raw integers
 * (`q2·k1 / (k2·q1)`) in `bigint`, then rounded toward zero to a millionth; only the choice of the
 * highest-priced trade (the peak) compares the `price` float.
 *
 * `edges` (`days` 1..30, default 7; `min_n` 1..10,000, default 10; `include_peak`): for each
 * pattern, the `in`-direction signals fired in `[as_of - days, as_of)`, each bought at its entry
 * and valued at the last trade at or before `signal + h` for h in 1 h, 4 h and 24 h. A signal
 * counts for a horizon when its entry happened within the horizon and `signal + h <= as_of`.
 * Its net return is `exit / entry - 1 - 2.5%` (the 2.5% round-trip cost subtracted from the
 * return). Per pattern and horizon: `n`, mean and median net return (%, 4 decimals, toward
 * zero), win rate (net > 0). `include_peak` adds the peak: the highest trade price within 24 h
 * after the signal (matured signals only), net of the same cost. Patterns with fewer than
 * `min_n` priceable signals (an entry within 24 h) are left out (their count is still listed in
 * `omitted`). Served from an hourly snapshot by default: `as_of` is the start of the current UTC
 * hour, and the report is computed once per hour and parameter set (`snapshot=live` computes
 * it as of now, uncached).
 *
 * `runners` (`hours` 1..168, default 24; `min_wallets` 1..50, default 2; `min_multiple`
 * 1..1,000, default 2): tokens whose `in` signals in `[now - hours, now)` involve at least
 * `min_wallets` distinct wallets together, whose highest trade price after the first such signal
 * reached at least `min_multiple` times the entry after that signal. Ordered by peak multiple,
 * at most 500.
 *
 * `first-signals` (`minutes` 1..180, default 60): tokens whose first signal ever (any pattern,
 * either direction) fired in `[now - minutes, now)`, newest first, at most 500; each with that
 * signal and what followed: later signals (count, patterns), trades after it (count, buy and sell
 * SOL volume), entry, last and peak price (SOL per whole token, exact to 1e-18) and their
 * multiples of the entry.
 *
 * Bounded: each report returns at most `tokensMax` rows; the edges cache holds at most
 * `edgesCacheMax` parameter sets (cleared when full); every query reads a bounded time range.
 */
import { Clock, Effect } from "effect"
import type { ClickHouseShape } from "../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../clickhouse/ClickHouseError.js"
import { SignalPatterns } from "./Definition.js"

export const EDGE_COST_PPM = 25_000n // 2.5%
export const PPM = 1_000_000n
export const HORIZONS = [
  { name: "1h", ms: 3_600_000 },
  { name: "4h", ms: 4 * 3_600_000 },
  { name: "24h", ms: 24 * 3_600_000 }
] as const
export const tokensMax = 500
export const edgesCacheMax = 64
const HOUR_MS = 3_600_000

export interface EdgesParams {
  readonly days: number
  readonly minN: number
  readonly includePeak: boolean
  readonly live: boolean
}

export interface HorizonStats {
  readonly n: number
  readonly mean_net_return_pct: number | null
  readonly median_net_return_pct: number | null
  readonly win_rate: number | null
}

export interface PatternEdge {
  readonly pattern: string
  readonly signals: number
  readonly priceable: number
  readonly horizons: Readonly<Record<string, HorizonStats>>
  readonly peak?: HorizonStats
}

export interface EdgesReport {
  readonly chain: "solana"
  readonly snapshot: "hourly" | "live"
  readonly as_of: string
  readonly from: string
  readonly cost_pct: number
  readonly min_n: number
  readonly patterns: ReadonlyArray<PatternEdge>
  readonly omitted: ReadonlyArray<{ readonly pattern: string; readonly priceable: number }>
}

// ---------------------------------------------------------------------------------------------
// Exact price arithmetic.

/** `(q2/k2) / (q1/k1)` in millionths, toward zero; undefined when a side is zero. */
export const ratioPpm = (q1: bigint, k1: bigint, q2: bigint, k2: bigint): bigint | undefined =>
  q1 === 0n || k1 === 0n || k2 === 0n ? undefined : (q2 * k1 * PPM) / (k2 * q1)

/** Net return of a ratio (ppm) after the cost, in ppm. */
export const netReturnPpm = (ratio: bigint): bigint => ratio - PPM - EDGE_COST_PPM

/** ppm of 1 is exactly 0.0001%: the value is already rounded (toward zero) where it was divided. */
const pctOfPpm = (ppm: bigint): number => Number(ppm) / 10_000

/** n, mean, median (toward zero, to 0.0001%) and the share above zero. */
export const stats = (values: ReadonlyArray<bigint>): HorizonStats => {
  const n = values.length
  if (n === 0) return { n: 0, mean_net_return_pct: null, median_net_return_pct: null, win_rate: null }
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const sum = sorted.reduce((a, b) => a + b, 0n)
  const mid = Math.floor(n / 2)
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2n
  const wins = sorted.filter((v) => v > 0n).length
  return {
    n,
    mean_net_return_pct: pctOfPpm(sum / BigInt(n)),
    median_net_return_pct: pctOfPpm(median),
    win_rate: Math.round((wins / n) * 10_000) / 10_000
  }
}

/** SOL per whole token (9 quote decimals, 6 token decimals), floor to 1e-18, as a decimal string. */
export const solPerToken = (q: bigint, k: bigint): string | null => {
  if (k === 0n) return null
  const v = (q * 10n ** 15n) / k
  return `${v / 10n ** 18n}.${(v % 10n ** 18n).toString().padStart(18, "0")}`
}
/** Lamports as SOL, exact. */
export const solOf = (lamports: bigint): string => `${lamports / 1_000_000_000n}.${(lamports % 1_000_000_000n).toString().padStart(9, "0")}`
const multipleOf = (ppm: bigint | undefined): number | null => (ppm === undefined ? null : Number(ppm / 100n) / 10_000)

// ---------------------------------------------------------------------------------------------
// SQL.

const FQ = "if(side = 'buy', quote_consumed_raw - least(fee_raw, quote_consumed_raw), amount_out_raw + fee_raw)"
const ms = (name: string) => `fromUnixTimestamp64Milli({${name}:Int64}, 'UTC')`
/** Trades with a price, of the signals' tokens, in (fromMs, toMs). */
const tradesCte = (assetsFrom: string) => `
  tr AS (
    SELECT mint, ts, position, id, ${FQ} AS fq, token_volume_raw AS fk, price
    FROM trades FINAL
    WHERE chain = 'solana' AND ts > ${ms("fromMs")} AND ts < ${ms("toMs")}
      AND mint IN (SELECT asset FROM ${assetsFrom}) AND token_volume_raw > 0 AND ${FQ} > 0
  )`
const at = (agg: string, value: string, key: string, cond?: string) =>
  `toString(${agg}${cond === undefined ? "" : "If"}(${value}, ${key}${cond === undefined ? "" : `, ${cond}`}))`
const K = "(tr.ts, tr.position, tr.id)"

const edgesSql = `
WITH sig AS (
    SELECT id, toString(pattern) AS pattern, asset, ts FROM signals FINAL
    WHERE chain = 'solana' AND direction = 'in' AND ts >= ${ms("fromMs")} AND ts < ${ms("asOfMs")}
  ),
  ${tradesCte("sig")}
SELECT sig.id AS id, any(sig.pattern) AS pattern, toString(toUnixTimestamp64Milli(sig.ts)) AS ts_ms,
  toString(toUnixTimestamp64Milli(min(tr.ts))) AS entry_ms,
  ${at("argMin", "tr.fq", K)} AS eq, ${at("argMin", "tr.fk", K)} AS ek,
  ${HORIZONS.map(
    (h, i) =>
      `${at("argMax", "tr.fq", K, `tr.ts <= sig.ts + toIntervalMillisecond(${h.ms})`)} AS q${i}, ${at("argMax", "tr.fk", K, `tr.ts <= sig.ts + toIntervalMillisecond(${h.ms})`)} AS k${i}`
  ).join(",\n  ")},
  ${at("argMax", "tr.fq", "(tr.price, tr.ts, tr.position, tr.id)")} AS pq, ${at("argMax", "tr.fk", "(tr.price, tr.ts, tr.position, tr.id)")} AS pk
FROM sig INNER JOIN tr ON tr.mint = sig.asset
WHERE tr.ts > sig.ts AND tr.ts <= sig.ts + INTERVAL 24 HOUR
GROUP BY sig.id, sig.ts`

const signalCountsSql = `
SELECT toString(pattern) AS pattern, count() AS n FROM signals FINAL
WHERE chain = 'solana' AND direction = 'in' AND ts >= ${ms("fromMs")} AND ts < ${ms("asOfMs")}
GROUP BY pattern`

interface EdgeRow {
  readonly id: string
  readonly pattern: string
  readonly ts_ms: string
  readonly entry_ms: string
  readonly eq: string
  readonly ek: string
  readonly pq: string
  readonly pk: string
  readonly [k: string]: string
}

export interface ResearchOptions {
  readonly clickhouse: ClickHouseShape
}

export interface ResearchShape {
  readonly edges: (p: EdgesParams) => Effect.Effect<EdgesReport, ClickHouseError>
  readonly runners: (p: { readonly hours: number; readonly minWallets: number; readonly minMultiple: number }) => Effect.Effect<RunnersReport, ClickHouseError>
  readonly firstSignals: (p: { readonly minutes: number }) => Effect.Effect<FirstSignalsReport, ClickHouseError>
}

/** Builds the edges report from the rows (pure; exported for tests of the arithmetic). */
export const edgesFromRows = (
  rows: ReadonlyArray<EdgeRow>,
  counts: ReadonlyArray<{ readonly pattern: string; readonly n: number | string }>,
  p: { readonly asOfMs: number; readonly fromMs: number; readonly minN: number; readonly includePeak: boolean; readonly live: boolean }
): EdgesReport => {
  const by = new Map<string, { priceable: number; h: Array<Array<bigint>>; peak: Array<bigint> }>()
  for (const r of rows) {
    const e = by.get(r.pattern) ?? { priceable: 0, h: HORIZONS.map(() => []), peak: [] }
    by.set(r.pattern, e)
    e.priceable++
    const ts = Number(r.ts_ms)
    const entryMs = Number(r.entry_ms)
    const eq = BigInt(r.eq)
    const ek = BigInt(r.ek)
    HORIZONS.forEach((h, i) => {
      if (ts + h.ms > p.asOfMs || entryMs > ts + h.ms) return
      const ratio = ratioPpm(eq, ek, BigInt(r[`q${i}`]!), BigInt(r[`k${i}`]!))
      if (ratio !== undefined) e.h[i]!.push(netReturnPpm(ratio))
    })
    if (ts + HORIZONS[2].ms <= p.asOfMs) {
      const ratio = ratioPpm(eq, ek, BigInt(r.pq), BigInt(r.pk))
      if (ratio !== undefined) e.peak.push(netReturnPpm(ratio))
    }
  }
  const signals = new Map(counts.map((c) => [c.pattern, Number(c.n)]))
  const patterns: Array<PatternEdge> = []
  const omitted: Array<{ pattern: string; priceable: number }> = []
  for (const pattern of SignalPatterns) {
    const e = by.get(pattern)
    const priceable = e?.priceable ?? 0
    if ((signals.get(pattern) ?? 0) === 0 && priceable === 0) continue
    if (priceable < p.minN || e === undefined) {
      omitted.push({ pattern, priceable })
      continue
    }
    patterns.push({
      pattern,
      signals: signals.get(pattern) ?? priceable,
      priceable,
      horizons: Object.fromEntries(HORIZONS.map((h, i) => [h.name, stats(e.h[i]!)])),
      ...(p.includePeak ? { peak: stats(e.peak) } : {})
    })
  }
  return {
    chain: "solana",
    snapshot: p.live ? "live" : "hourly",
    as_of: new Date(p.asOfMs).toISOString(),
    from: new Date(p.fromMs).toISOString(),
    cost_pct: 2.5,
    min_n: p.minN,
    patterns,
    omitted
  }
}

export interface Runner {
  readonly asset: string
  readonly first_signal_id: string
  readonly first_signal_at: string
  readonly signals: number
  readonly patterns: ReadonlyArray<string>
  readonly wallets: number
  readonly trades_after: number
  readonly entry_price_sol: string | null
  readonly peak_price_sol: string | null
  readonly peak_at: string
  readonly last_price_sol: string | null
  readonly peak_multiple: number | null
  readonly last_multiple: number | null
}
export interface RunnersReport {
  readonly chain: "solana"
  readonly as_of: string
  readonly from: string
  readonly min_wallets: number
  readonly min_multiple: number
  readonly tokens: ReadonlyArray<Runner>
}

const runnersSql = `
WITH sig AS (
    SELECT asset, min(ts) AS first_ts, argMin(id, (ts, id)) AS first_id, count() AS n,
      arraySort(groupUniqArray(toString(pattern))) AS patterns, length(groupUniqArrayArray(wallets)) AS wallets
    FROM signals FINAL
    WHERE chain = 'solana' AND direction = 'in' AND ts >= ${ms("fromMs")} AND ts < ${ms("toMs")}
    GROUP BY asset HAVING wallets >= {minWallets:UInt32}
  ),
  ${tradesCte("sig")}
SELECT sig.asset AS asset, any(sig.first_id) AS first_id, toString(toUnixTimestamp64Milli(any(sig.first_ts))) AS first_ms,
  any(sig.n) AS n, any(sig.patterns) AS patterns, any(sig.wallets) AS wallets, count() AS trades,
  ${at("argMin", "tr.fq", K)} AS eq, ${at("argMin", "tr.fk", K)} AS ek,
  ${at("argMax", "tr.fq", "(tr.price, tr.ts, tr.position, tr.id)")} AS pq, ${at("argMax", "tr.fk", "(tr.price, tr.ts, tr.position, tr.id)")} AS pk,
  toString(toUnixTimestamp64Milli(argMax(tr.ts, (tr.price, tr.ts, tr.position, tr.id)))) AS peak_ms,
  ${at("argMax", "tr.fq", K)} AS lq, ${at("argMax", "tr.fk", K)} AS lk
FROM sig INNER JOIN tr ON tr.mint = sig.asset
WHERE tr.ts > sig.first_ts
GROUP BY sig.asset`

export interface FirstSignal {
  readonly asset: string
  readonly signal: {
    readonly id: string
    readonly pattern: string
    readonly direction: string
    readonly at: string
    readonly wallets: ReadonlyArray<string>
    readonly size_usd: string | null
    readonly mcap_usd: string | null
    readonly confidence: number
  }
  readonly followed: {
    readonly signals_after: number
    readonly patterns_after: ReadonlyArray<string>
    readonly trades_after: number
    readonly buy_volume_sol: string
    readonly sell_volume_sol: string
    readonly entry_price_sol: string | null
    readonly last_price_sol: string | null
    readonly peak_price_sol: string | null
    readonly last_multiple: number | null
    readonly peak_multiple: number | null
  }
}
export interface FirstSignalsReport {
  readonly chain: "solana"
  readonly as_of: string
  readonly from: string
  readonly tokens: ReadonlyArray<FirstSignal>
  readonly truncated: boolean
}

const firstSignalsSql = `
WITH w AS (
    SELECT DISTINCT asset FROM signals FINAL WHERE chain = 'solana' AND ts >= ${ms("fromMs")} AND ts < ${ms("toMs")}
  )
SELECT asset, argMin(id, (ts, id)) AS sig_id, argMin(toString(pattern), (ts, id)) AS sig_pattern, argMin(toString(direction), (ts, id)) AS sig_direction,
  toString(toUnixTimestamp64Milli(min(ts))) AS first_ms, argMin(wallets, (ts, id)) AS sig_wallets,
  argMin(if(isNull(size_usd), '', toString(size_usd)), (ts, id)) AS sig_size, argMin(if(isNull(mcap_usd), '', toString(mcap_usd)), (ts, id)) AS sig_mcap,
  argMin(confidence, (ts, id)) AS sig_confidence, count() - 1 AS after,
  arraySort(arrayDistinct(arrayPopFront(arrayMap(x -> x.3, arraySort(groupArray((ts, id, toString(pattern)))))))) AS patterns_after
FROM signals FINAL
WHERE chain = 'solana' AND asset IN (SELECT asset FROM w) AND ts < ${ms("toMs")}
GROUP BY asset HAVING min(ts) >= ${ms("fromMs")}
ORDER BY min(ts) DESC, asset
LIMIT {limit:UInt32}`

const followSql = `
WITH f AS (
    SELECT a.1 AS asset, fromUnixTimestamp64Milli(a.2, 'UTC') AS first_ts
    FROM (SELECT arrayJoin(arrayZip({assets:Array(String)}, {firstMs:Array(Int64)})) AS a)
  ),
  tr AS (
    SELECT mint, ts, position, id, side, quote_volume_raw, ${FQ} AS fq, token_volume_raw AS fk, price
    FROM trades FINAL
    WHERE chain = 'solana' AND ts > ${ms("fromMs")} AND ts < ${ms("toMs")} AND mint IN {assets:Array(String)}
      AND token_volume_raw > 0 AND ${FQ} > 0
  )
SELECT f.asset AS asset, count() AS trades,
  toString(sumIf(tr.quote_volume_raw, tr.side = 'buy')) AS buy_q, toString(sumIf(tr.quote_volume_raw, tr.side = 'sell')) AS sell_q,
  ${at("argMin", "tr.fq", K)} AS eq, ${at("argMin", "tr.fk", K)} AS ek,
  ${at("argMax", "tr.fq", "(tr.price, tr.ts, tr.position, tr.id)")} AS pq, ${at("argMax", "tr.fk", "(tr.price, tr.ts, tr.position, tr.id)")} AS pk,
  ${at("argMax", "tr.fq", K)} AS lq, ${at("argMax", "tr.fk", K)} AS lk
FROM f INNER JOIN tr ON tr.mint = f.asset
WHERE tr.ts > f.first_ts
GROUP BY f.asset`

type Row = Record<string, string>

export const make = (options: ResearchOptions): ResearchShape => {
  const { clickhouse: ch } = options
  const cache = new Map<string, { readonly asOfMs: number; readonly report: EdgesReport }>()

  const computeEdges = (p: EdgesParams, asOfMs: number) =>
    Effect.gen(function* () {
      const fromMs = asOfMs - p.days * 86_400_000
      const params = { fromMs, asOfMs, toMs: asOfMs }
      const [rows, counts] = yield* Effect.all([
        ch.query<EdgeRow>(edgesSql, params),
        ch.query<{ pattern: string; n: string }>(signalCountsSql, params)
      ])
      return edgesFromRows(rows, counts, { asOfMs, fromMs, minN: p.minN, includePeak: p.includePeak, live: p.live })
    })

  return {
    edges: (p) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (p.live) return yield* computeEdges(p, now)
        const asOfMs = Math.floor(now / HOUR_MS) * HOUR_MS
        const key = `${p.days}:${p.minN}:${p.includePeak}`
        const hit = cache.get(key)
        if (hit !== undefined && hit.asOfMs === asOfMs) return hit.report
        const report = yield* computeEdges(p, asOfMs)
        if (cache.size >= edgesCacheMax) cache.clear()
        cache.set(key, { asOfMs, report })
        return report
      }).pipe(Effect.withSpan("Research.edges")),

    runners: (p) =>
      Effect.gen(function* () {
        const toMs = yield* Clock.currentTimeMillis
        const fromMs = toMs - p.hours * HOUR_MS
        const rows = yield* ch.query<Row>(runnersSql, { fromMs, toMs, minWallets: p.minWallets })
        const minPpm = BigInt(Math.round(p.minMultiple * 10_000)) * 100n
        const tokens: Array<Runner & { readonly ppm: bigint }> = []
        for (const r of rows) {
          const [eq, ek, pq, pk, lq, lk] = [r.eq, r.ek, r.pq, r.pk, r.lq, r.lk].map((x) => BigInt(x ?? "0")) as [bigint, bigint, bigint, bigint, bigint, bigint]
          const peak = ratioPpm(eq, ek, pq, pk)
          if (peak === undefined || peak < minPpm) continue
          tokens.push({
            ppm: peak,
            asset: r.asset!,
            first_signal_id: r.first_id!,
            first_signal_at: new Date(Number(r.first_ms)).toISOString(),
            signals: Number(r.n),
            patterns: r.patterns as unknown as ReadonlyArray<string>,
            wallets: Number(r.wallets),
            trades_after: Number(r.trades),
            entry_price_sol: solPerToken(eq, ek),
            peak_price_sol: solPerToken(pq, pk),
            peak_at: new Date(Number(r.peak_ms)).toISOString(),
            last_price_sol: solPerToken(lq, lk),
            peak_multiple: multipleOf(peak),
            last_multiple: multipleOf(ratioPpm(eq, ek, lq, lk))
          })
        }
        tokens.sort((a, b) => (a.ppm > b.ppm ? -1 : a.ppm < b.ppm ? 1 : a.asset < b.asset ? -1 : 1))
        return {
          chain: "solana" as const,
          as_of: new Date(toMs).toISOString(),
          from: new Date(fromMs).toISOString(),
          min_wallets: p.minWallets,
          min_multiple: p.minMultiple,
          tokens: tokens.slice(0, tokensMax).map(({ ppm: _ppm, ...t }) => t)
        }
      }).pipe(Effect.withSpan("Research.runners")),

    firstSignals: (p) =>
      Effect.gen(function* () {
        const toMs = yield* Clock.currentTimeMillis
        const fromMs = toMs - p.minutes * 60_000
        const firsts = yield* ch.query<Record<string, unknown>>(firstSignalsSql, { fromMs, toMs, limit: tokensMax + 1 })
        const shown = firsts.slice(0, tokensMax)
        const follow =
          shown.length === 0
            ? []
            : yield* ch.query<Row>(followSql, {
                fromMs,
                toMs,
                assets: shown.map((f) => String(f.asset)),
                firstMs: shown.map((f) => Number(f.first_ms))
              })
        const byAsset = new Map(follow.map((r) => [r.asset!, r]))
        return {
          chain: "solana" as const,
          as_of: new Date(toMs).toISOString(),
          from: new Date(fromMs).toISOString(),
          truncated: firsts.length > tokensMax,
          tokens: shown.map((f): FirstSignal => {
            const t = byAsset.get(String(f.asset))
            const [eq, ek, pq, pk, lq, lk] = [t?.eq, t?.ek, t?.pq, t?.pk, t?.lq, t?.lk].map((x) => BigInt(x ?? "0")) as [bigint, bigint, bigint, bigint, bigint, bigint]
            return {
              asset: String(f.asset),
              signal: {
                id: String(f.sig_id),
                pattern: String(f.sig_pattern),
                direction: String(f.sig_direction),
                at: new Date(Number(f.first_ms)).toISOString(),
                wallets: f.sig_wallets as ReadonlyArray<string>,
                size_usd: f.sig_size === "" ? null : String(f.sig_size),
                mcap_usd: f.sig_mcap === "" ? null : String(f.sig_mcap),
                confidence: Number(f.sig_confidence)
              },
              followed: {
                signals_after: Number(f.after),
                patterns_after: f.patterns_after as ReadonlyArray<string>,
                trades_after: t === undefined ? 0 : Number(t.trades),
                buy_volume_sol: solOf(BigInt(t?.buy_q ?? "0")),
                sell_volume_sol: solOf(BigInt(t?.sell_q ?? "0")),
                entry_price_sol: t === undefined ? null : solPerToken(eq, ek),
                last_price_sol: t === undefined ? null : solPerToken(lq, lk),
                peak_price_sol: t === undefined ? null : solPerToken(pq, pk),
                last_multiple: t === undefined ? null : multipleOf(ratioPpm(eq, ek, lq, lk)),
                peak_multiple: t === undefined ? null : multipleOf(ratioPpm(eq, ek, pq, pk))
              }
            }
          })
        }
      }).pipe(Effect.withSpan("Research.firstSignals"))
  }
}
