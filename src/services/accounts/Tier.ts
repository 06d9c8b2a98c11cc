/**
 * Which plan an account is on right now (spec 2.2): Max by subscription or by a grant with an
 * expiry (admin, promo, trial, team); Pro by subscription or by holding or staking the platform
 * token, read live; otherwise Free. Display order max > pro > free. There is no believer tier,
 * and grace is 0 while three plans are served (`AGENT_TIER_GRACE_MS` is reported, not read).
 * Pure: balances and time are inputs.
 */
import type { PlanId } from "../../domain/Plans.js"
import { rawToDecimal } from "../keys/KeyRules.js"

/** Decimals of the platform token (asset `svc`) and its staked receipt. */
export const PLATFORM_TOKEN_DECIMALS = 6

export interface TierThresholds {
  /** Whole platform-token units (`AGENT_TIER_PRO_MIN_STAKED_CNDL`). */
  readonly minStakedCndl: number
  /** Whole platform-token units (`AGENT_TIER_PRO_MIN_HELD_CNDL`). */
  readonly minHeldCndl: number
  /** `AGENT_TIER_GRACE_MS`: reported only; not read while three plans are served. */
  readonly graceMs: number
}

export const DefaultTierThresholds: TierThresholds = { minStakedCndl: 500_000, minHeldCndl: 1_000_000, graceMs: 172_800_000 }

export type MaxSource = "subscription" | "trial" | "team" | "promo"

export interface Entitlements {
  readonly plan: PlanId
  readonly planExpiresAtMs: number | null
  readonly maxGrantExpiresAtMs: number | null
  readonly maxGrantSource: MaxSource | null
}

export interface Holdings {
  readonly stakedRaw: bigint
  readonly heldRaw: bigint
}

const rank: Record<PlanId, number> = { free: 0, pro: 1, max: 2 }
export const tierAtLeast = (tier: PlanId, min: PlanId): boolean => rank[tier] >= rank[min]

const live = (expiresAtMs: number | null, nowMs: number) => expiresAtMs === null || expiresAtMs > nowMs

/** The tier entitlements alone prove (no chain read). */
export const paidTier = (e: Entitlements, nowMs: number): PlanId => {
  if ((e.plan === "max" && live(e.planExpiresAtMs, nowMs)) || (e.maxGrantExpiresAtMs !== null && e.maxGrantExpiresAtMs > nowMs)) return "max"
  if (e.plan === "pro" && live(e.planExpiresAtMs, nowMs)) return "pro"
  return "free"
}

const unit = 10n ** BigInt(PLATFORM_TOKEN_DECIMALS)

export const proByHolding = (h: Holdings, t: TierThresholds): boolean =>
  h.stakedRaw >= BigInt(t.minStakedCndl) * unit || h.heldRaw >= BigInt(t.minHeldCndl) * unit

/** Holdings count only when entitlements alone leave the account on Free. */
export const needsHoldings = (e: Entitlements, nowMs: number): boolean => paidTier(e, nowMs) === "free"

export const resolveTier = (e: Entitlements, holdings: Holdings | undefined, t: TierThresholds, nowMs: number): PlanId => {
  const paid = paidTier(e, nowMs)
  if (paid !== "free") return paid
  return holdings !== undefined && proByHolding(holdings, t) ? "pro" : "free"
}

export interface MaxStatus {
  /** Null unless currently Max; also null when the current Max never expires. */
  readonly maxTierExpiresAt: number | null
  readonly maxExpired: boolean
  readonly maxExpiredAt?: number
  readonly maxExpiredSource?: MaxSource
}

export const maxStatus = (e: Entitlements, nowMs: number): MaxStatus => {
  const sub = e.plan === "max" ? e.planExpiresAtMs : undefined // undefined: no Max subscription
  const subLive = sub !== undefined && live(sub, nowMs)
  const grantLive = e.maxGrantExpiresAtMs !== null && e.maxGrantExpiresAtMs > nowMs
  if (subLive || grantLive) {
    const expiries = [subLive ? sub : undefined, grantLive ? e.maxGrantExpiresAtMs : undefined].filter((x) => x !== undefined)
    return { maxTierExpiresAt: expiries.includes(null) ? null : Math.max(...(expiries as number[])), maxExpired: false }
  }
  const ended: Array<{ at: number; source: MaxSource }> = []
  if (sub !== undefined && sub !== null) ended.push({ at: sub, source: "subscription" })
  if (e.maxGrantExpiresAtMs !== null) ended.push({ at: e.maxGrantExpiresAtMs, source: e.maxGrantSource ?? "team" })
  const last = ended.sort((a, b) => b.at - a.at)[0]
  return last === undefined
    ? { maxTierExpiresAt: null, maxExpired: false }
    : { maxTierExpiresAt: null, maxExpired: true, maxExpiredAt: last.at, maxExpiredSource: last.source }
}

/** Whole-token decimal string of a raw platform-token amount. */
export const cndl = (raw: bigint): string => rawToDecimal(raw, PLATFORM_TOKEN_DECIMALS)
