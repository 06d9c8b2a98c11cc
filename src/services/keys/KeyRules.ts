/**
 * Pure rules of agent keys (spec document 2, sections 2.1, 2.2, 4.1 and the first document's
 * limits): effective caps, per-asset spend limits (tighten-only comparison, the cap check the
 * spending rails call), `txLimit` windows, and usage roll-up windows. No I/O; time is a
 * parameter. Request bodies are decoded on the route side (`api/routes/KeyDecoders.ts`).
 */
import type { Plan, PlanId } from "../../domain/Plans.js"
import { QuotePairs, type QuoteAssetId } from "../../domain/QuotePairs.js"
import { type KeyError, keyError } from "./KeyError.js"

// ---------------------------------------------------------------------------------------------
// Caps

export interface Caps {
  readonly rateLimitPerMin: number
  readonly dailyLaunchCap: number
}

/** The legacy believer cap: a key row with this daily cap on a Free account enforces Free's. */
export const LEGACY_BELIEVER_DAILY_CAP = 20

export interface EffectiveCaps {
  readonly effective: Caps
  /** The plan that raised a cap above the key's issued value; null when the key's own caps rule. */
  readonly raisedBy: PlanId | null
}

/** The higher of the key's issued cap and the plan's, per cap (spec 2.2). */
export const effectiveCaps = (issued: Caps, plan: Plan): EffectiveCaps => {
  const issuedDaily = plan.id === "free" && issued.dailyLaunchCap === LEGACY_BELIEVER_DAILY_CAP ? plan.limits.launchesPerDay : issued.dailyLaunchCap
  const rate = Math.max(issued.rateLimitPerMin, plan.limits.requestsPerMin)
  const daily = Math.max(issuedDaily, plan.limits.launchesPerDay)
  const raised = rate > issued.rateLimitPerMin || daily > issuedDaily
  return { effective: { rateLimitPerMin: rate, dailyLaunchCap: daily }, raisedBy: raised ? plan.id : null }
}

export const planCaps = (plan: Plan): Caps => ({ rateLimitPerMin: plan.limits.requestsPerMin, dailyLaunchCap: plan.limits.launchesPerDay })

// ---------------------------------------------------------------------------------------------
// Per-asset spend limits

export const SpendAssets = ["sol", "usdc", "svc", "eth", "usdg"] as const satisfies ReadonlyArray<QuoteAssetId>
export type SpendAsset = (typeof SpendAssets)[number]

export interface SpendLimit {
  readonly asset: SpendAsset
  /** Decimal string of raw units, > 0. */
  readonly maxPerTxRaw: string
}

/** Raw amounts up to uint256 (78 digits); no sign, no leading zero, no zero. */
export const RAW_POSITIVE = /^[1-9][0-9]{0,77}$/

/**
 * True when `next` is at least as strict as `current` for every asset: each asset capped now
 * stays capped at the same or a lower value. Adding a cap tightens; removing or raising one
 * loosens. `null` is "uncapped for every asset".
 */
export const onlyTightens = (current: ReadonlyArray<SpendLimit> | null, next: ReadonlyArray<SpendLimit> | null): boolean => {
  for (const cap of current ?? []) {
    const n = next?.find((l) => l.asset === cap.asset)
    if (n === undefined || BigInt(n.maxPerTxRaw) > BigInt(cap.maxPerTxRaw)) return false
  }
  return true
}

const decimalsOf = (asset: SpendAsset): number => QuotePairs.find((p) => p.id === asset)?.decimals ?? 0

/** Raw units as a decimal number string ("1500000", 6 → "1.5"). */
export const rawToDecimal = (raw: bigint, decimals: number): string => {
  if (decimals === 0) return raw.toString()
  const s = raw.toString().padStart(decimals + 1, "0")
  const whole = s.slice(0, -decimals)
  const frac = s.slice(-decimals).replace(/0+$/, "")
  return frac === "" ? whole : `${whole}.${frac}`
}

/**
 * The check a spending rail makes before building: `attemptedRaw` (amount plus fee) against the
 * key's cap for the asset. Undefined when allowed (no cap for the asset is uncapped).
 */
export const checkSpendCap = (
  limits: ReadonlyArray<SpendLimit> | null,
  keyPrefix: string,
  asset: SpendAsset,
  attemptedRaw: bigint
): KeyError | undefined => {
  const cap = limits?.find((l) => l.asset === asset)
  if (cap === undefined || attemptedRaw <= BigInt(cap.maxPerTxRaw)) return undefined
  const d = decimalsOf(asset)
  return keyError("spend_limit_exceeded", `Amount plus fee exceeds this key's ${asset} cap`, {
    details: {
      spendLimit: {
        limitSource: "key",
        keyPrefix,
        asset,
        capDecimal: rawToDecimal(BigInt(cap.maxPerTxRaw), d),
        attemptedDecimal: rawToDecimal(attemptedRaw, d)
      }
    }
  })
}

// ---------------------------------------------------------------------------------------------
// txLimit

export const TxLimitResets = ["never", "daily", "weekly", "monthly"] as const
export type TxLimitReset = (typeof TxLimitResets)[number]

export interface TxLimit {
  readonly usdMicros: number
  readonly reset: TxLimitReset
}

const DAY_MS = 86_400_000

export const utcDayStart = (ms: number): number => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS)

/** Monday 00:00 UTC of the ISO week holding `ms`. */
export const isoWeekStart = (ms: number): number => {
  const day = utcDayStart(ms)
  const dow = (new Date(day).getUTCDay() + 6) % 7 // Monday = 0
  return day - dow * DAY_MS
}

export const utcMonthStart = (ms: number): number => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

const nextMonthStart = (ms: number): number => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

/** Start of the txLimit window holding `nowMs` (epoch 0 for a lifetime window). */
export const txWindowStart = (reset: TxLimitReset, nowMs: number): number =>
  reset === "daily" ? utcDayStart(nowMs) : reset === "weekly" ? isoWeekStart(nowMs) : reset === "monthly" ? utcMonthStart(nowMs) : 0

/** When the window holding `nowMs` resets; null for a lifetime (`never`) cap. */
export const txWindowResetsAt = (reset: TxLimitReset, nowMs: number): number | null =>
  reset === "daily"
    ? utcDayStart(nowMs) + DAY_MS
    : reset === "weekly"
      ? isoWeekStart(nowMs) + 7 * DAY_MS
      : reset === "monthly"
        ? nextMonthStart(nowMs)
        : null

/**
 * The build-time txLimit check: `usedUsdMicros` is what the window already holds (bookings plus
 * open reservations), `addUsdMicros` the new spend. Undefined when allowed.
 */
export const checkTxLimit = (limit: TxLimit | null, usedUsdMicros: number, addUsdMicros: number, nowMs: number): KeyError | undefined => {
  if (limit === null || usedUsdMicros + addUsdMicros <= limit.usdMicros) return undefined
  const resetsAt = txWindowResetsAt(limit.reset, nowMs)
  return keyError("tx_limit_reached", "This key's transaction limit would be exceeded", {
    retryable: resetsAt !== null,
    details: { resetsAt, txLimit: limit, usedUsdMicros }
  })
}

// ---------------------------------------------------------------------------------------------
// Usage roll-ups

/** Metering started on this UTC day; nothing earlier exists (no backfill). */
export const USAGE_SINCE = "2026-08-15"
export const USAGE_SINCE_MS = Date.UTC(2026, 7, 15)

export const isoDay = (ms: number): string => new Date(utcDayStart(ms)).toISOString().slice(0, 10)
export const dayMs = (isoDate: string): number => Date.parse(`${isoDate}T00:00:00Z`)

export interface DailyUsage {
  readonly day: string
  readonly usdMicros: number
  readonly tradeCount: number
  readonly launchCount: number
}

export interface KeyUsage {
  readonly todayUsdMicros: number
  readonly weekUsdMicros: number
  readonly monthUsdMicros: number
  readonly lifetimeUsdMicros: number
  readonly days30UsdMicros: number
  readonly tradeCount30: number
  readonly launchCount30: number
  readonly lifetimeLaunches: number
}

/** The earliest day `usageSummary` needs in `recent` (the month start or 29 days back). */
export const usageWindowFrom = (nowMs: number): string => isoDay(Math.min(utcMonthStart(nowMs), utcDayStart(nowMs) - 29 * DAY_MS))

/** Summarizes a key's daily rows: `recent` from `usageWindowFrom(now)`, lifetime sums given. */
export const usageSummary = (
  recent: ReadonlyArray<DailyUsage>,
  lifetime: { readonly usdMicros: number; readonly launches: number },
  nowMs: number
): KeyUsage => {
  const today = utcDayStart(nowMs)
  const week = isoWeekStart(nowMs)
  const month = utcMonthStart(nowMs)
  const from30 = today - 29 * DAY_MS
  let todayUsd = 0, weekUsd = 0, monthUsd = 0, d30 = 0, t30 = 0, l30 = 0
  for (const r of recent) {
    const d = dayMs(r.day)
    if (d > today) continue
    if (d === today) todayUsd += r.usdMicros
    if (d >= week) weekUsd += r.usdMicros
    if (d >= month) monthUsd += r.usdMicros
    if (d >= from30) {
      d30 += r.usdMicros
      t30 += r.tradeCount
      l30 += r.launchCount
    }
  }
  return {
    todayUsdMicros: todayUsd,
    weekUsdMicros: weekUsd,
    monthUsdMicros: monthUsd,
    lifetimeUsdMicros: lifetime.usdMicros,
    days30UsdMicros: d30,
    tradeCount30: t30,
    launchCount30: l30,
    lifetimeLaunches: lifetime.launches
  }
}

/** `days` of the usage series: clamped 1 to 90, default 30; undefined for a non-integer (the route's 400). */
export const parseUsageDays = (raw: string | null): number | undefined => {
  if (raw === null || raw === "") return 30
  if (!/^-?\d{1,6}$/.test(raw)) return undefined
  return Math.min(90, Math.max(1, Number(raw)))
}

/** Zero-filled ascending series of `days` calendar days ending today. */
export const usageSeries = (rows: ReadonlyArray<DailyUsage>, days: number, nowMs: number): ReadonlyArray<DailyUsage> => {
  const byDay = new Map(rows.map((r) => [r.day, r]))
  const today = utcDayStart(nowMs)
  const out: DailyUsage[] = []
  for (let i = days - 1; i >= 0; i--) {
    const day = isoDay(today - i * DAY_MS)
    out.push(byDay.get(day) ?? { day, usdMicros: 0, tradeCount: 0, launchCount: 0 })
  }
  return out
}
