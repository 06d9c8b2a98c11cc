/**
 * The copy score of a published agent (spec launch-and-market-reads 2.9, section 4): what its
 * wallet's last 30 days of trades say about copying it, and the cohort rules built on the same
 * inputs. Pure: the caller reads the trades (ClickHouse) and the prices; nothing here does I/O.
 *
 * Inputs (null = not measured, never a made-up zero):
 * - `trades`, `tokensTraded`: trades and distinct tokens in the window.
 * - `tokensClosed`, `winRateBps`: tokens with a sell in the window, and the share of those whose
 *   realized P&L (average cost, the same replay as the wallet stats read) is positive.
 * - `realizedPnlUsd`, `spentUsd`, `returnBps`: realized P&L and buy spend in USD micro-dollars
 *   (each token's quote asset at today's price); `returnBps` = realized / spent on closed tokens.
 *   Null when a traded token's quote asset has no price.
 * - `medianHoldSeconds`: per closed token, first buy to last sell in the window; the median.
 * - `earlyEntryBps`: of the tokens the wallet first bought in the window whose launch time is
 *   known, the share bought within `EARLY_ENTRY_MS` (10 minutes) of launch.
 * - `avgEntryUsd`: buy spend per token bought.
 * - `activeDays`: distinct UTC days with a trade. `lastTradeAt`: the newest trade (ISO).
 * - `historyTruncated`: the read hit its bound (20,000 trades); older cost basis unknown.
 *
 * Assessment (integers, no floats): `score` 0-100 = win rate (40) + return (30; -50% or worse
 * 0, +50% or better 30, linear between) + activity (20; 2 per active day up to 10) + sample (10;
 * one per two closed tokens up to 20). Fewer than `MIN_CLOSED_FOR_SCORE` closed tokens, or no
 * return measured: `score` null and label `insufficient_history`. Grade A ≥ 80, B ≥ 65, C ≥ 50,
 * D ≥ 35, else F. Label `losing` when realized P&L is negative, else `consistent` from 65, else
 * `mixed`.
 */
import type { WalletTrade } from "../../../clickhouse/queries/WalletReads.js"

export const COPY_WINDOW_MS = 30 * 86_400_000
export const EARLY_ENTRY_MS = 10 * 60_000
export const MIN_CLOSED_FOR_SCORE = 5
const DAY_MS = 86_400_000

/** What the score needs to know of a token the wallet traded. */
export interface TokenContext {
  /** Raw quote units → USD micro-dollars (floored); undefined without a price. */
  readonly usdMicros: ((quoteRaw: bigint) => bigint) | undefined
  /** When the token launched (ms), if this engine knows the market. */
  readonly launchedAtMs: number | undefined
}

export interface CopyInputs {
  readonly trades: number
  readonly tokensTraded: number
  readonly tokensClosed: number
  readonly winRateBps: number | null
  readonly realizedPnlUsd: string | null
  readonly spentUsd: string | null
  readonly returnBps: number | null
  readonly medianHoldSeconds: number | null
  readonly earlyEntryBps: number | null
  readonly avgEntryUsd: string | null
  readonly activeDays: number
  readonly lastTradeAt: string | null
  readonly historyTruncated: boolean
}

export type CopyGrade = "A" | "B" | "C" | "D" | "F"
export type CopyLabel = "consistent" | "mixed" | "losing" | "insufficient_history"

export interface CopyAssessment {
  readonly score: number | null
  readonly grade: CopyGrade | null
  readonly label: CopyLabel
  /** Why, in a sentence each (what counted and what was missing). */
  readonly notes: ReadonlyArray<string>
}

interface TokenBook {
  heldRaw: bigint
  costRaw: bigint
  realizedRaw: bigint
  spentRaw: bigint
  closedSpentRaw: bigint
  closed: boolean
  bought: boolean
  firstBuyMs: number
  lastSellMs: number
}

/** Micro-dollars as a decimal string (up to 6 places, trailing zeros dropped). */
export const microsToUsd = (micros: bigint): string => {
  const neg = micros < 0n
  const abs = neg ? -micros : micros
  const whole = abs / 1_000_000n
  const frac = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "")
  return `${neg ? "-" : ""}${whole}${frac === "" ? "" : `.${frac}`}`
}

const median = (xs: Array<number>): number | null => {
  if (xs.length === 0) return null
  xs.sort((a, b) => a - b)
  const mid = xs.length >> 1
  return xs.length % 2 === 1 ? xs[mid]! : Math.floor((xs[mid - 1]! + xs[mid]!) / 2)
}

/**
 * The inputs from a wallet's trades (oldest first). Trades before `nowMs - COPY_WINDOW_MS` only
 * build the cost basis; the window's figures count the trades inside it.
 */
export const copyInputs = (
  history: ReadonlyArray<WalletTrade>,
  truncated: boolean,
  nowMs: number,
  token: (mint: string) => TokenContext
): CopyInputs => {
  const sinceMs = nowMs - COPY_WINDOW_MS
  const books = new Map<string, TokenBook>()
  const days = new Set<number>()
  let trades = 0
  let lastMs = -1
  for (const t of history) {
    let b = books.get(t.mint)
    if (b === undefined) {
      b = { heldRaw: 0n, costRaw: 0n, realizedRaw: 0n, spentRaw: 0n, closedSpentRaw: 0n, closed: false, bought: false, firstBuyMs: -1, lastSellMs: -1 }
      books.set(t.mint, b)
    }
    const inWindow = t.atMs >= sinceMs && t.atMs <= nowMs
    if (t.side === "buy") {
      b.heldRaw += t.tokenRaw
      b.costRaw += t.quoteRaw
    } else {
      const matched = t.tokenRaw < b.heldRaw ? t.tokenRaw : b.heldRaw
      const costOut = b.heldRaw === 0n ? 0n : (b.costRaw * matched) / b.heldRaw
      b.costRaw -= costOut
      b.heldRaw -= matched
      if (inWindow) {
        b.realizedRaw += t.quoteRaw - costOut
        b.closedSpentRaw += costOut
        b.closed = true
        b.lastSellMs = t.atMs
      }
    }
    if (!inWindow) continue
    trades++
    days.add(Math.floor(t.atMs / DAY_MS))
    lastMs = Math.max(lastMs, t.atMs)
    if (t.side === "buy") {
      b.spentRaw += t.quoteRaw
      if (!b.bought) b.firstBuyMs = t.atMs
      b.bought = true
    }
  }

  let tokensTraded = 0
  let closed = 0
  let wins = 0
  let priced = true
  let realized = 0n
  let closedSpent = 0n
  let spent = 0n
  let bought = 0
  let early = 0
  let earlyKnown = 0
  const holds: Array<number> = []
  for (const [mint, b] of books) {
    if (!b.bought && !b.closed) continue
    tokensTraded++
    const ctx = token(mint)
    if (b.bought) {
      bought++
      if (ctx.usdMicros === undefined) priced = false
      else spent += ctx.usdMicros(b.spentRaw)
      if (ctx.launchedAtMs !== undefined) {
        earlyKnown++
        if (b.firstBuyMs - ctx.launchedAtMs <= EARLY_ENTRY_MS) early++
      }
    }
    if (b.closed) {
      closed++
      if (b.realizedRaw > 0n) wins++
      if (ctx.usdMicros === undefined) priced = false
      else {
        // Floor toward minus infinity for losses as well: the conversion is linear.
        realized += b.realizedRaw >= 0n ? ctx.usdMicros(b.realizedRaw) : -ctx.usdMicros(-b.realizedRaw)
        closedSpent += ctx.usdMicros(b.closedSpentRaw)
      }
      if (b.bought) holds.push(Math.floor((b.lastSellMs - b.firstBuyMs) / 1000))
    }
  }
  return {
    trades,
    tokensTraded,
    tokensClosed: closed,
    winRateBps: closed === 0 ? null : Math.floor((wins * 10_000) / closed),
    realizedPnlUsd: closed === 0 || !priced ? null : microsToUsd(realized),
    spentUsd: bought === 0 || !priced ? null : microsToUsd(spent),
    returnBps: closed === 0 || !priced || closedSpent === 0n ? null : Number((realized * 10_000n) / closedSpent),
    medianHoldSeconds: median(holds),
    earlyEntryBps: earlyKnown === 0 ? null : Math.floor((early * 10_000) / earlyKnown),
    avgEntryUsd: bought === 0 || !priced ? null : microsToUsd(spent / BigInt(bought)),
    activeDays: days.size,
    lastTradeAt: lastMs < 0 ? null : new Date(lastMs).toISOString(),
    historyTruncated: truncated
  }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

export const assess = (i: CopyInputs): CopyAssessment => {
  const notes: Array<string> = []
  if (i.historyTruncated) notes.push("Only the newest 20,000 trades were read; older cost basis is unknown.")
  if (i.tokensClosed < MIN_CLOSED_FOR_SCORE) {
    notes.push(`${i.tokensClosed} token(s) closed in 30 days; a score needs at least ${MIN_CLOSED_FOR_SCORE}.`)
    return { score: null, grade: null, label: "insufficient_history", notes }
  }
  if (i.returnBps === null || i.winRateBps === null) {
    notes.push("A traded token's quote asset has no USD price, so the return is not measured.")
    return { score: null, grade: null, label: "insufficient_history", notes }
  }
  const win = Math.floor((i.winRateBps * 40) / 10_000)
  const ret = Math.floor((clamp(i.returnBps, -5_000, 5_000) + 5_000) * 30 / 10_000)
  const activity = Math.min(i.activeDays, 10) * 2
  const sample = Math.floor(Math.min(i.tokensClosed, 20) / 2)
  const score = win + ret + activity + sample
  notes.push(`win rate ${win}/40, return ${ret}/30, activity ${activity}/20, sample ${sample}/10.`)
  const grade: CopyGrade = score >= 80 ? "A" : score >= 65 ? "B" : score >= 50 ? "C" : score >= 35 ? "D" : "F"
  const realizedNegative = i.realizedPnlUsd !== null && i.realizedPnlUsd.startsWith("-")
  const label: CopyLabel = realizedNegative ? "losing" : score >= 65 ? "consistent" : "mixed"
  return { score, grade, label, notes }
}

export const Cohorts = ["steady", "high_conviction", "early_finder"] as const
export type Cohort = (typeof Cohorts)[number]

/** USD decimal → micro-dollars (the inverse of `microsToUsd`). */
const usdMicros = (usd: string): bigint => {
  const neg = usd.startsWith("-")
  const [w = "0", f = ""] = (neg ? usd.slice(1) : usd).split(".")
  const v = BigInt(w) * 1_000_000n + BigInt((f + "000000").slice(0, 6))
  return neg ? -v : v
}

/**
 * Cohort rules over the copy inputs, each with its ranking key (higher first):
 * - `steady`: at least 5 closed tokens, win rate ≥ 55%, positive realized P&L, active on at least
 *   3 days; ranked by score.
 * - `high_conviction`: at least 3 closed tokens, median hold ≥ 30 minutes, average entry ≥ $100;
 *   ranked by average entry.
 * - `early_finder`: at least 3 tokens traded and, of those bought whose launch time is known,
 *   ≥ 50% bought within 10 minutes of launch; ranked by that share.
 * Undefined when the agent is not a member.
 */
export const cohortRank = (cohort: Cohort, i: CopyInputs, a: CopyAssessment): bigint | undefined => {
  switch (cohort) {
    case "steady":
      return i.tokensClosed >= 5 && (i.winRateBps ?? 0) >= 5_500 && i.realizedPnlUsd !== null && usdMicros(i.realizedPnlUsd) > 0n && i.activeDays >= 3
        ? BigInt(a.score ?? 0)
        : undefined
    case "high_conviction":
      return i.tokensClosed >= 3 && (i.medianHoldSeconds ?? 0) >= 1_800 && i.avgEntryUsd !== null && usdMicros(i.avgEntryUsd) >= 100_000_000n
        ? usdMicros(i.avgEntryUsd)
        : undefined
    case "early_finder":
      return i.tokensTraded >= 3 && i.earlyEntryBps !== null && i.earlyEntryBps >= 5_000 ? BigInt(i.earlyEntryBps) : undefined
  }
}
