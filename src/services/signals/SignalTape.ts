/**
 * The signal tape (`GET /v1/signals`, spec 4.5): one filter model with two evaluators — a
 * ClickHouse WHERE clause over `signals FINAL` and an in-memory predicate over the hub — so the
 * tape reads ClickHouse and adds the hub's freshest signals (those the writer has not flushed
 * yet) with exactly the same meaning. Also the plan projection every reader applies (groups and
 * tracked-wallet ids the caller's plan may not see are removed).
 *
 * Invariants:
 * - Exact money: USD bounds are micro-USD bigints, compared in ClickHouse as Decimal(38, 6) and
 *   in memory as bigints; never floats.
 * - Order is `(ts, id)` (ascending or descending); the `after` cursor is a position in that
 *   order, so pages neither skip nor repeat while new signals arrive.
 * - Bounded: at most `limit` (≤ 200) rows answered; ClickHouse returns at most
 *   `offset + limit` (offset ≤ `TAPE_OFFSET_MAX`) rows per page; the hub's scan is its capacity.
 */
import { Effect } from "effect"
import type { Pattern, Quality, Signal } from "../../domain/Signal.js"
import { ageBucketOf } from "../../domain/Signal.js"
import type { ClickHouseShape } from "../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../clickhouse/ClickHouseError.js"
import { signalFromRow, signalSelectSql } from "../../../clickhouse/writer/SignalWriter.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { parseUsdMicros } from "../prices/Money.js"
import type { PlanId, TrackingShape } from "../tracking/Tracking.js"
import type { SignalHub } from "./SignalHub.js"

export const TAPE_LIMIT_MAX = 200
export const TAPE_LIMIT_DEFAULT = 50
export const TAPE_OFFSET_MAX = 10_000

export type AgeBucket = "<1h" | "1-24h" | ">24h"

export interface TapeFilter {
  readonly chain: ChainId
  readonly patterns?: ReadonlyArray<Pattern> | undefined
  readonly asset?: string | undefined
  /** Inclusive lower and exclusive upper bound on the signal's time (ms). */
  readonly sinceMs?: number | undefined
  readonly untilMs?: number | undefined
  readonly qualities: ReadonlyArray<Quality>
  readonly minMcapMicros?: bigint | undefined
  readonly maxMcapMicros?: bigint | undefined
  readonly minAgeMinutes?: number | undefined
  readonly maxAgeMinutes?: number | undefined
  readonly age?: AgeBucket | undefined
  readonly venues?: ReadonlyArray<string> | undefined
  readonly excludeVenues?: ReadonlyArray<string> | undefined
  readonly group?: string | undefined
}

export interface TapeCursor {
  readonly tsMs: number
  readonly id: string
}

export interface TapeQuery extends TapeFilter {
  readonly order: "asc" | "desc"
  readonly limit: number
  readonly offset: number
  /** Only signals strictly after this position in `order`. */
  readonly after?: TapeCursor | undefined
}

/** The tape's USD filters parse with the one money parser (re-exported for the tape's routes). */
export { parseUsdMicros }

const cmp = (a: TapeCursor, b: TapeCursor): number => a.tsMs - b.tsMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const cursorOf = (s: Signal): TapeCursor => ({ tsMs: s.at_ms, id: s.id })

/** The in-memory evaluator of `TapeFilter` (plus the cursor). */
export const matchesTape = (f: TapeFilter, s: Signal, after?: TapeCursor, order: "asc" | "desc" = "desc"): boolean => {
  if (s.chain !== f.chain) return false
  if (f.patterns !== undefined && !f.patterns.includes(s.pattern)) return false
  if (f.asset !== undefined && s.asset !== f.asset) return false
  if (f.sinceMs !== undefined && s.at_ms < f.sinceMs) return false
  if (f.untilMs !== undefined && s.at_ms >= f.untilMs) return false
  if (!f.qualities.includes(s.quality)) return false
  if (f.minMcapMicros !== undefined || f.maxMcapMicros !== undefined) {
    const m = s.mcap_usd === null ? undefined : parseUsdMicros(s.mcap_usd)
    if (m === undefined) return false
    if (f.minMcapMicros !== undefined && m < f.minMcapMicros) return false
    if (f.maxMcapMicros !== undefined && m > f.maxMcapMicros) return false
  }
  if (f.minAgeMinutes !== undefined && (s.age_minutes === null || s.age_minutes < f.minAgeMinutes)) return false
  if (f.maxAgeMinutes !== undefined && (s.age_minutes === null || s.age_minutes > f.maxAgeMinutes)) return false
  if (f.age !== undefined && ageBucketOf(s.age_minutes) !== f.age) return false
  if (f.venues !== undefined && (s.venue === null || !f.venues.includes(s.venue))) return false
  if (f.excludeVenues !== undefined && s.venue !== null && f.excludeVenues.includes(s.venue)) return false
  if (f.group !== undefined && !s.groups.includes(f.group)) return false
  if (after !== undefined) {
    const c = cmp(cursorOf(s), after)
    if (order === "asc" ? c <= 0 : c >= 0) return false
  }
  return true
}

/** The ClickHouse evaluator: a WHERE clause and its parameters. */
export const tapeWhere = (f: TapeFilter, after?: TapeCursor, order: "asc" | "desc" = "desc"): { readonly sql: string; readonly params: Record<string, unknown> } => {
  const parts: Array<string> = ["chain = {chain:String}", "toString(quality) IN {qualities:Array(String)}"]
  const params: Record<string, unknown> = { chain: f.chain, qualities: [...f.qualities] }
  if (f.patterns !== undefined) {
    parts.push("toString(pattern) IN {patterns:Array(String)}")
    params.patterns = [...f.patterns]
  }
  if (f.asset !== undefined) {
    parts.push("asset = {asset:String}")
    params.asset = f.asset
  }
  if (f.sinceMs !== undefined) {
    parts.push("ts >= fromUnixTimestamp64Milli({sinceMs:Int64}, 'UTC')")
    params.sinceMs = f.sinceMs
  }
  if (f.untilMs !== undefined) {
    parts.push("ts < fromUnixTimestamp64Milli({untilMs:Int64}, 'UTC')")
    params.untilMs = f.untilMs
  }
  if (f.minMcapMicros !== undefined) {
    parts.push("mcap_usd IS NOT NULL AND mcap_usd >= toDecimal128({minMcap:String}, 6)")
    params.minMcap = formatMicros(f.minMcapMicros)
  }
  if (f.maxMcapMicros !== undefined) {
    parts.push("mcap_usd IS NOT NULL AND mcap_usd <= toDecimal128({maxMcap:String}, 6)")
    params.maxMcap = formatMicros(f.maxMcapMicros)
  }
  if (f.minAgeMinutes !== undefined) {
    parts.push("age_minutes IS NOT NULL AND age_minutes >= {minAge:UInt32}")
    params.minAge = f.minAgeMinutes
  }
  if (f.maxAgeMinutes !== undefined) {
    parts.push("age_minutes IS NOT NULL AND age_minutes <= {maxAge:UInt32}")
    params.maxAge = f.maxAgeMinutes
  }
  if (f.age !== undefined) {
    parts.push(
      f.age === "<1h"
        ? "age_minutes IS NOT NULL AND age_minutes < 60"
        : f.age === "1-24h"
          ? "age_minutes IS NOT NULL AND age_minutes >= 60 AND age_minutes <= 1440"
          : "age_minutes IS NOT NULL AND age_minutes > 1440"
    )
  }
  if (f.venues !== undefined) {
    parts.push("venue IS NOT NULL AND venue IN {venues:Array(String)}")
    params.venues = [...f.venues]
  }
  if (f.excludeVenues !== undefined) {
    parts.push("(venue IS NULL OR venue NOT IN {excludeVenues:Array(String)})")
    params.excludeVenues = [...f.excludeVenues]
  }
  if (f.group !== undefined) {
    parts.push("has(groups, {group:String})")
    params.group = f.group
  }
  if (after !== undefined) {
    parts.push(`(ts, id) ${order === "asc" ? ">" : "<"} (fromUnixTimestamp64Milli({afterMs:Int64}, 'UTC'), {afterId:String})`)
    params.afterMs = after.tsMs
    params.afterId = after.id
  }
  return { sql: parts.map((p) => `(${p})`).join(" AND "), params }
}

const formatMicros = (m: bigint): string => `${m / 1_000_000n}.${(m % 1_000_000n).toString().padStart(6, "0")}`

const sortTape = (order: "asc" | "desc") => (a: Signal, b: Signal) => (order === "asc" ? cmp(cursorOf(a), cursorOf(b)) : cmp(cursorOf(b), cursorOf(a)))

export interface TapePage {
  readonly signals: ReadonlyArray<Signal>
  /** The id to pass as `after` for the next page; null when this page is the last. */
  readonly next_after: string | null
}

/** Where a signal id sits in the tape order (hub first, then ClickHouse); undefined when unknown. */
export const resolveCursor = (ch: ClickHouseShape, hub: SignalHub, id: string): Effect.Effect<TapeCursor | undefined, ClickHouseError> => {
  const held = hub.newest(hub.options.capacity, (s) => s.id === id)[0]
  if (held !== undefined) return Effect.succeed(cursorOf(held))
  return Effect.map(
    ch.query<{ ts_ms: string }>("SELECT toString(toUnixTimestamp64Milli(ts)) AS ts_ms FROM signals WHERE id = {id:String} LIMIT 1", { id }),
    (rows) => (rows[0] === undefined ? undefined : { tsMs: Number(rows[0].ts_ms), id })
  )
}

/** One page of the tape: ClickHouse rows merged with the hub's unflushed ones, deduplicated by id. */
export const readTape = (ch: ClickHouseShape, hub: SignalHub, q: TapeQuery): Effect.Effect<TapePage, ClickHouseError> =>
  Effect.gen(function* () {
    const where = tapeWhere(q, q.after, q.order)
    const dir = q.order === "asc" ? "ASC" : "DESC"
    // The filter runs on the raw columns in the inner query (the outer SELECT aliases the decimals as strings).
    const rows = yield* ch.query(
      `SELECT ${signalSelectSql} FROM (SELECT * FROM signals FINAL WHERE ${where.sql} ORDER BY ts ${dir}, id ${dir} LIMIT {take:UInt32}) ORDER BY ts ${dir}, id ${dir}`,
      {
      ...where.params,
        take: q.offset + q.limit
      }
    )
    const byId = new Map<string, Signal>()
    for (const r of rows) {
      const s = signalFromRow(r)
      byId.set(s.id, s)
    }
    for (const s of hub.newest(hub.options.capacity, (s) => matchesTape(q, s, q.after, q.order))) if (!byId.has(s.id)) byId.set(s.id, s)
    const page = [...byId.values()].sort(sortTape(q.order)).slice(q.offset, q.offset + q.limit)
    return { signals: page, next_after: page.length === q.limit ? page[page.length - 1]!.id : null }
  }).pipe(Effect.withSpan("SignalTape.read"))

export interface TokenGroup {
  readonly chain: string
  readonly asset: string
  readonly symbol: string | null
  readonly signal_count: number
  readonly patterns: ReadonlyArray<string>
  readonly first_at: string
  readonly last_at: string
  readonly max_confidence: number
  readonly latest: Signal
}

/** `group_by=token`: one entry per token (newest activity first for `desc`), from ClickHouse. */
export const readTapeByToken = (ch: ClickHouseShape, q: TapeQuery): Effect.Effect<ReadonlyArray<TokenGroup>, ClickHouseError> =>
  Effect.gen(function* () {
    const where = tapeWhere(q, q.after, q.order)
    const dir = q.order === "asc" ? "ASC" : "DESC"
    const groups = yield* ch.query<{
      chain: string
      asset: string
      signal_count: string | number
      patterns: ReadonlyArray<string>
      first_ms: string
      last_ms: string
      max_confidence: string | number
      latest_id: string
    }>(
      `SELECT chain, asset, count() AS signal_count, groupUniqArray(toString(pattern)) AS patterns,
        toString(toUnixTimestamp64Milli(min(ts))) AS first_ms, toString(toUnixTimestamp64Milli(max(ts))) AS last_ms,
        max(confidence) AS max_confidence, argMax(id, (ts, id)) AS latest_id
      FROM signals FINAL WHERE ${where.sql}
      GROUP BY chain, asset ORDER BY max(ts) ${dir}, asset ${dir} LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
      { ...where.params, limit: q.limit, offset: q.offset }
    )
    if (groups.length === 0) return []
    const latestRows = yield* ch.query(`SELECT ${signalSelectSql} FROM signals FINAL WHERE id IN {ids:Array(String)}`, { ids: groups.map((g) => g.latest_id) })
    const latest = new Map(latestRows.map((r) => signalFromRow(r)).map((s) => [s.id, s]))
    return groups.flatMap((g): Array<TokenGroup> => {
      const s = latest.get(g.latest_id)
      if (s === undefined) return []
      return [
        {
          chain: g.chain,
          asset: g.asset,
          symbol: s.symbol,
          signal_count: Number(g.signal_count),
          patterns: [...g.patterns].sort(),
          first_at: new Date(Number(g.first_ms)).toISOString(),
          last_at: new Date(Number(g.last_ms)).toISOString(),
          max_confidence: Number(g.max_confidence),
          latest: s
        }
      ]
    })
  }).pipe(Effect.withSpan("SignalTape.readByToken"))

/**
 * What a plan may see of a signal: groups of a visibility the plan lacks, tracked-wallet ids of
 * wallets it may not see, and an intra_book `details.group` it may not see are removed.
 */
export const projectForPlan = (tracking: TrackingShape, plan: PlanId, s: Signal): Signal => {
  if (plan === "max") return s
  const groups = s.groups.filter((g) => tracking.group(plan, g) !== undefined)
  const walletIds = s.wallet_ids.filter((id) => tracking.wallet(plan, id) !== undefined)
  const hiddenDetail = typeof s.details.group === "string" && tracking.group(plan, s.details.group) === undefined
  if (groups.length === s.groups.length && walletIds.length === s.wallet_ids.length && !hiddenDetail) return s
  let details = s.details
  if (hiddenDetail) {
    const { group: _hidden, ...rest } = s.details
    details = rest
  }
  return { ...s, groups, wallet_ids: walletIds, details }
}
