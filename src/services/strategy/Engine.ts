/**
 * The replay engine: a pure, single-pass simulation of a strategy definition over a window's
 * signals and trades (both in time order), producing the replay result of spec 2.7.
 *
 * How a replay runs (the fill prices themselves: `Fill.ts`):
 * - Candidates: the window's signals that pass the entry (`selectCandidates`). A candidate is
 *   "priceable" when a trade of its token follows it inside the window.
 * - Entry: at the candidate's time the stake is decided (sizing rules, `max_usd`, the cash of
 *   `base_usd`) and the token is armed; the position is filled after the first trade of the
 *   token strictly AFTER the signal (never the trade that caused it: a trade in the signal's
 *   own millisecond is skipped). One position per token; `max_concurrent` counts armed and
 *   open positions.
 * - Exits, checked on each later trade of the token, against the position's entry price
 *   (quote sent to the venue / tokens received, curve fee and slippage included) and the
 *   trade's fee-free price, compared exactly (cross-multiplied `bigint`s):
 *   `stop_loss_pct` (price <= entry x (1 - sl)), `take_profit_pct` (>= entry x (1 + tp)),
 *   `trailing` (armed once price >= entry x arm_multiple, then exits when price <= the peak
 *   since arming x (1 - drop)), `ladder` (each step sells sell_pct of the initial tokens once
 *   price >= entry x at_multiple). A price exit crossed on trade k fills after trade k+1.
 *   `max_hold_hours` fills after the first trade at or after the deadline; `exit_on_signal`
 *   fills after the first trade strictly after an `out` signal on the token. When several
 *   trigger on one trade: a pending fill first, then time, then stop loss, take profit,
 *   trailing, ladder. Positions still open at the window end are sold on the token's last
 *   trade (`end_of_window`).
 * - Capital: cash starts at `base_usd` (entries it cannot cover are skipped) or, without it, at
 *   zero and may go negative: `required_start_usd` is the smallest start that never goes
 *   negative. Equity = start + realized P&L + open positions marked at their last trade's
 *   marginal price (no fees), sampled hourly and at every exit; `max_drawdown_pct` is the
 *   largest fall from a running peak of that series.
 * - Money is exact (micro-USD `bigint`); floats only for ratios derived from it (win rate,
 *   profit factor, Sharpe and Sortino of per-trade returns, not annualized).
 * - Bounded: trades returned <= `tradesReturnedMax` (the first by entry), per-token rows
 *   <= `perTokenMax`, equity points <= one per hour of the window + 2.
 */
import type { ReplayTrade } from "../../../clickhouse/queries/Replay.js"
import { BPS } from "../../domain/CurveMath.js"
import { type EntryFilters, formatUsd, type SizingRule, type StrategyDefinition } from "./Definition.js"
import {
  buy,
  type ChainPricing,
  type FeeModel,
  type FillBook,
  formatScaled18,
  markUsdMicros,
  priceable as bookPriceable,
  quoteToUsdMicros,
  sell,
  usdPerToken18
} from "./Fill.js"
import type { SignalRow } from "./SignalHistory.js"

export const tradesReturnedMax = 2_000
export const perTokenMax = 500
export const markIntervalMs = 3_600_000
/** A backtest passes with at least this many trades (spec 3.6)... */
export const passTradesMin = 5
/** ...and at most this drawdown, in bps (20%). */
export const passDrawdownBpsMax = 2_000n
/** How far before the window signals are read for conviction and KOL-mention windows. */
export const lookbackMs = 1_440 * 60_000

export type CloseReason = "take_profit" | "stop_loss" | "trailing" | "ladder" | "max_hold" | "exit_signal" | "end_of_window"
export const CloseReasons: ReadonlyArray<CloseReason> = [
  "take_profit",
  "stop_loss",
  "trailing",
  "ladder",
  "max_hold",
  "exit_signal",
  "end_of_window"
]
export type SkipReason = "already_open" | "max_concurrent" | "insufficient_capital" | "no_trade_after_signal" | "zero_fill"
export const SkipReasons: ReadonlyArray<SkipReason> = [
  "already_open",
  "max_concurrent",
  "insufficient_capital",
  "no_trade_after_signal",
  "zero_fill"
]

export interface EngineConfig {
  readonly definition: StrategyDefinition
  readonly fromMs: number
  readonly toMs: number
  readonly fees: FeeModel
  readonly pricing: Readonly<Record<string, ChainPricing>>
  /** Stored history starts at (ms), or undefined when none is stored: drives `insufficient`. */
  readonly historyStartMs?: number | undefined
}

// ---------------------------------------------------------------------------------------------
// Entry selection (pure over signals).

const etHourFormat = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "numeric", hourCycle: "h23" })
const etHourCache = new Map<number, number>()
/** The US Eastern hour (0..23, daylight saving applied) of an instant. */
export const hourEt = (ms: number): number => {
  const key = Math.floor(ms / 3_600_000)
  let h = etHourCache.get(key)
  if (h === undefined) {
    h = Number(etHourFormat.format(new Date(key * 3_600_000))) % 24
    if (etHourCache.size > 10_000) etHourCache.clear()
    etHourCache.set(key, h)
  }
  return h
}

const scoreOk = (value: number, min4: bigint) => value * 10_000 >= Number(min4)

const passesFilters = (s: SignalRow, f: EntryFilters | undefined, kolCount: (s: SignalRow, withinMs: number) => number): boolean => {
  if (f === undefined) return true
  if (f.min_usd !== undefined && s.usdMicros < f.min_usd) return false
  if (f.min_mcap_usd !== undefined && s.mcapUsdMicros < f.min_mcap_usd) return false
  if (f.max_mcap_usd !== undefined && s.mcapUsdMicros > f.max_mcap_usd) return false
  if (f.min_age_minutes !== undefined && s.ageMinutes < f.min_age_minutes) return false
  if (f.max_age_minutes !== undefined && s.ageMinutes > f.max_age_minutes) return false
  if (f.direction !== undefined && s.direction !== f.direction) return false
  if (f.venues !== undefined && !f.venues.includes(s.venue)) return false
  if (f.exclude_venues !== undefined && f.exclude_venues.includes(s.venue)) return false
  // `wallet_ids` names tracked wallets (their ids); a bare address matches too.
  if (f.wallet_ids !== undefined && !s.walletIds.some((w) => f.wallet_ids!.includes(w)) && !s.wallets.some((w) => f.wallet_ids!.includes(w))) return false
  const groupsOf = (i: number) => s.walletGroups[i] ?? []
  if (f.groups !== undefined && !s.wallets.some((_, i) => groupsOf(i).some((g) => f.groups!.includes(g)))) return false
  if (f.groups_all !== undefined && !f.groups_all.every((g) => s.wallets.some((_, i) => groupsOf(i).includes(g)))) return false
  if (f.min_group_wallets !== undefined) {
    const named = [...(f.groups ?? []), ...(f.groups_all ?? [])]
    const inGroup = s.wallets.filter((_, i) => (named.length === 0 ? groupsOf(i).length > 0 : groupsOf(i).some((g) => named.includes(g))))
    if (inGroup.length < f.min_group_wallets) return false
  }
  if (f.hours_et !== undefined && !f.hours_et.includes(hourEt(s.tsMs))) return false
  if (f.min_score_1h !== undefined && s.score1h * 100 < Number(f.min_score_1h)) return false
  if (f.kol_mentions !== undefined && kolCount(s, f.kol_mentions.within_minutes * 60_000) < f.kol_mentions.min_mentions) return false
  return true
}

export interface Candidate {
  readonly signal: SignalRow
}

/**
 * The entry triggers among `signals` (sorted by time, read from `fromMs - lookbackMs` so
 * windows that reach before the replay are whole): only signals inside `[fromMs, toMs)` of
 * the definition's chain(s) and the requested assets trigger.
 */
export const selectCandidates = (
  signals: ReadonlyArray<SignalRow>,
  definition: StrategyDefinition,
  window: { readonly fromMs: number; readonly toMs: number; readonly assets?: ReadonlyArray<string> | undefined }
): ReadonlyArray<Candidate> => {
  const chains = definition.chain === "any" ? ["solana", "hood"] : [definition.chain]
  const assets = window.assets === undefined ? undefined : new Set(window.assets)
  const kolByAsset = new Map<string, Array<number>>()
  for (const s of signals) {
    if (s.pattern !== "kol_mention") continue
    const key = `${s.chain}:${s.asset}`
    const list = kolByAsset.get(key) ?? []
    list.push(s.tsMs)
    kolByAsset.set(key, list)
  }
  const kolCount = (s: SignalRow, withinMs: number) => {
    const list = kolByAsset.get(`${s.chain}:${s.asset}`)
    if (list === undefined) return 0
    let n = 0
    for (const t of list) if (t <= s.tsMs && t >= s.tsMs - withinMs) n++
    return n
  }
  const inScope = (s: SignalRow) => chains.includes(s.chain) && (assets === undefined || assets.has(s.asset))
  const inWindow = (s: SignalRow) => s.tsMs >= window.fromMs && s.tsMs < window.toMs
  const entry = definition.entry
  const out: Array<Candidate> = []
  switch (entry.source) {
    case "pattern":
      for (const s of signals)
        if (inScope(s) && inWindow(s) && s.pattern === entry.pattern && passesFilters(s, entry.filters, kolCount)) out.push({ signal: s })
      return out
    case "trade_signal":
      for (const s of signals)
        if (inScope(s) && inWindow(s) && scoreOk(s.confidence, entry.min_confidence) && passesFilters(s, entry.filters, kolCount))
          out.push({ signal: s })
      return out
    case "conviction": {
      // N qualifying signals on one token within the window; the Nth triggers, then the count restarts.
      const windowMs = entry.window_minutes * 60_000
      const recent = new Map<string, Array<number>>()
      for (const s of signals) {
        if (!inScope(s)) continue
        if (entry.patterns !== undefined && !entry.patterns.includes(s.pattern as never)) continue
        if (!passesFilters(s, entry.filters, kolCount)) continue
        const key = `${s.chain}:${s.asset}`
        const list = (recent.get(key) ?? []).filter((t) => t > s.tsMs - windowMs)
        list.push(s.tsMs)
        if (list.length >= entry.min_signals && inWindow(s)) {
          out.push({ signal: s })
          recent.set(key, [])
        } else recent.set(key, list)
      }
      return out
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The simulation.

interface Leg {
  readonly reason: CloseReason
  readonly atMs: number
  readonly tokensRaw: bigint
  readonly grossRaw: bigint
  readonly proceedsUsdMicros: bigint
}

interface Position {
  readonly seq: number
  readonly chain: string
  readonly asset: string
  readonly signalId: string
  readonly entryMs: number
  /** Offset (ms from window start) of the fill trade: exits look at later trades only. */
  readonly entryT: number
  readonly stakeUsdMicros: bigint
  readonly quoteInRaw: bigint
  readonly tokensInitial: bigint
  tokensLeft: bigint
  /** Armed trailing peak (price = q/k); undefined until armed. */
  peakQ: bigint | undefined
  peakK: bigint
  ladderNext: number
  /** A fill waiting for the next trade: full exit (reason) or ladder steps (tokens). */
  pending: { readonly reason: CloseReason; readonly tokensRaw: bigint; readonly afterT: number } | undefined
  readonly legs: Array<Leg>
}

interface Armed {
  readonly signal: SignalRow
  readonly t: number
  readonly stakeUsdMicros: bigint
}

interface AssetState {
  readonly chain: string
  readonly asset: string
  last: ReplayTrade | undefined
  /** Candidate signals not yet followed by a trade. */
  unresolved: number
  armed: Armed | undefined
  position: Position | undefined
  benchmark: { readonly stakeUsdMicros: bigint; readonly tokensRaw: bigint; readonly t: number } | undefined
  benchmarkArmedT: number | undefined
  /** Signal-exit requests (offsets) waiting for a position's next trade. */
  exitSignalT: number | undefined
}

export interface ReplayTradeRecord {
  readonly asset: string
  readonly chain: string
  readonly signal_id: string
  readonly entry_at: string
  readonly entry_price_usd: string
  readonly entry_usd: string
  readonly tokens_raw: string
  readonly exit_at: string
  readonly exit_price_usd: string
  readonly exit_usd: string
  readonly pnl_usd: string
  readonly pnl_pct: number
  readonly close_reason: CloseReason
  readonly legs: ReadonlyArray<{
    readonly reason: CloseReason
    readonly at: string
    readonly price_usd: string
    readonly tokens_raw: string
    readonly usd: string
  }>
}

export interface EquityPoint {
  readonly at: string
  readonly t_ms: number
  readonly equity_usd: string
  readonly drawdown_pct: number
}

export interface ReplayResult {
  readonly verdict: "pass" | "fail" | "insufficient"
  readonly verdict_reason: string
  readonly from: string
  readonly to: string
  readonly trade_count: number
  readonly pnl_usd: string
  readonly max_drawdown_pct: number
  readonly required_start_usd: string
  readonly start_usd: string
  readonly final_usd: string
  readonly peak_capital_at_risk_usd: string
  readonly skips: Readonly<Record<SkipReason, number>>
  readonly trades: ReadonlyArray<ReplayTradeRecord>
  readonly trades_truncated: boolean
  readonly universe: { readonly candidates: number; readonly priceable: number; readonly tokens: number }
  readonly win_rate: number | null
  readonly profit_factor: number | null
  readonly expectancy_usd: string | null
  readonly sharpe: number | null
  readonly sortino: number | null
  readonly fees_paid_usd: string
  readonly fees: { readonly curve_usd: string; readonly platform_usd: string }
  readonly slippage_usd: string
  readonly exit_reasons: Readonly<Record<CloseReason, number>>
  readonly per_token: ReadonlyArray<{ readonly asset: string; readonly chain: string; readonly trades: number; readonly wins: number; readonly pnl_usd: string }>
  readonly per_token_truncated: boolean
  readonly benchmark: {
    readonly kind: "buy_and_hold"
    readonly tokens: number
    readonly invested_usd: string
    readonly final_usd: string
    readonly pnl_usd: string
    readonly return_pct: number | null
  }
  readonly equity: ReadonlyArray<EquityPoint>
  readonly history: { readonly trades_read: number; readonly history_start: string | null }
  readonly fill_model: string
}

export const FILL_MODEL =
  "Entries fill right after the first trade of the token strictly after the signal; price exits fill after the trade following the crossing trade; fills use that trade's post-trade reserves (constant product, price impact counted) with the curve fee and the platform fee; USD at one rate per chain for the whole replay."

/** A trade of the token can change the result: see `ReplaySimulation.needsTrades`. */
const needs = (s: AssetState): boolean =>
  s.unresolved > 0 || s.armed !== undefined || s.position !== undefined || s.benchmarkArmedT !== undefined

const bpsOf = (num: bigint, den: bigint): bigint => (den === 0n ? 0n : (num * BPS) / den)
const pctFromBps = (bps: bigint): number => Number(bps) / 100
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Runs a replay incrementally: `addSignals` once, then either `onTrades` per page (every trade of
 * the candidate tokens) or `advance` + `trade` for the trades that matter, then `finish` once.
 */
export class ReplaySimulation {
  private readonly def: StrategyDefinition
  private readonly cfg: EngineConfig
  private readonly states = new Map<string, AssetState>()
  /** Entry candidates and exit signals as one time-ordered agenda. */
  private agenda: Array<{ readonly t: number; readonly kind: "entry" | "exit"; readonly signal: SignalRow }> = []
  private agendaNext = 0
  private nextMarkT = 0
  private readonly holdMs: number | undefined
  // Accounting.
  private cash = 0n
  private reserved = 0n
  private minCash = 0n
  private realized = 0n
  private atRisk = 0n
  private peakAtRisk = 0n
  private openCount = 0
  private seq = 0
  private lastExitT = 0
  private tradesRead = 0
  private candidates = 0
  private priceableCount = 0
  private readonly skips: Record<SkipReason, number> = { already_open: 0, max_concurrent: 0, insufficient_capital: 0, no_trade_after_signal: 0, zero_fill: 0 }
  private readonly exitReasons: Record<CloseReason, number> = {
    take_profit: 0, stop_loss: 0, trailing: 0, ladder: 0, max_hold: 0, exit_signal: 0, end_of_window: 0
  }
  private curveFeesUsd = 0n
  private platformFeesUsd = 0n
  private slippageUsd = 0n
  private readonly closed: Array<ReplayTradeRecord> = []
  private closedCount = 0
  private wins = 0
  private grossWin = 0n
  private grossLoss = 0n
  private readonly returns: Array<number> = []
  private readonly perToken = new Map<string, { asset: string; chain: string; trades: number; wins: number; pnl: bigint }>()
  /** P&L series (realized + marks) at hourly marks; drawdown is computed over these and exits. */
  private readonly series: Array<{ t: number; pnl: bigint }> = []
  private readonly exitPoints: Array<{ t: number; pnl: bigint }> = []
  private readonly open = new Set<AssetState>()

  constructor(cfg: EngineConfig) {
    this.cfg = cfg
    this.def = cfg.definition
    this.cash = this.def.sizing.base_usd ?? 0n
    this.holdMs = this.def.exit.max_hold_hours === undefined ? undefined : Number(this.def.exit.max_hold_hours) * 36_000
  }

  /** The window's candidates, plus every signal (for `exit_on_signal`). Call once, before trades. */
  addSignals(candidates: ReadonlyArray<Candidate>, signals: ReadonlyArray<SignalRow>): void {
    const agenda: Array<{ t: number; kind: "entry" | "exit"; signal: SignalRow }> = []
    for (const c of candidates) agenda.push({ t: c.signal.tsMs - this.cfg.fromMs, kind: "entry", signal: c.signal })
    if (this.def.exit.exit_on_signal === true) {
      for (const s of signals)
        if (s.direction === "out" && s.tsMs >= this.cfg.fromMs && s.tsMs < this.cfg.toMs)
          agenda.push({ t: s.tsMs - this.cfg.fromMs, kind: "exit", signal: s })
    }
    // Stable by time; at one instant exits before entries (a held token is not re-entered on the same signal burst).
    agenda.sort((a, b) => a.t - b.t || (a.kind === b.kind ? 0 : a.kind === "exit" ? -1 : 1))
    this.agenda = agenda
    this.candidates = candidates.length
    for (const c of candidates) this.state(c.signal.chain, c.signal.asset)
  }

  /** The tokens to read trades for, each from its first candidate signal. */
  assetsToRead(): ReadonlyArray<{ readonly chain: string; readonly asset: string; readonly startMs: number }> {
    const first = new Map<string, { chain: string; asset: string; startMs: number }>()
    for (const a of this.agenda) {
      if (a.kind !== "entry") continue
      const key = `${a.signal.chain}:${a.signal.asset}`
      if (!first.has(key)) first.set(key, { chain: a.signal.chain, asset: a.signal.asset, startMs: a.signal.tsMs })
    }
    return [...first.values()]
  }

  private state(chain: string, asset: string): AssetState {
    const key = `${chain}:${asset}`
    let s = this.states.get(key)
    if (s === undefined) {
      s = { chain, asset, last: undefined, unresolved: 0, armed: undefined, position: undefined, benchmark: undefined, benchmarkArmedT: undefined, exitSignalT: undefined }
      this.states.set(key, s)
    }
    return s
  }

  private pricing(chain: string): ChainPricing {
    const p = this.cfg.pricing[chain]
    if (p === undefined) throw new Error(`no pricing for chain ${chain}`)
    return p
  }

  /** Feeds one page of trades (every trade of the read tokens, chain order, continuing the previous page). */
  onTrades(page: ReadonlyArray<ReplayTrade>): void {
    for (let i = 0; i < page.length; i++) {
      const tr = page[i]!
      this.tradesRead++
      this.advance(tr.t)
      this.trade(tr)
    }
  }

  // -------------------------------------------------------------------------------------------
  // Feeding only the trades that matter (`Replay.ts` reads per-token ranges). A token "needs
  // trades" while a trade of it can change the result: an entry signal not yet followed by a
  // trade (priceable count, benchmark, armed entry) or an open position. Any other trade only
  // moves the token's `last`, which is read for open positions (fed to the end anyway) and for
  // the benchmark's final mark (`setLastTrade`). Interest starts only at an entry signal (the
  // agenda, run by `advance`), so a driver that feeds, in chain order, every trade of each token
  // from its waking signal while it needs trades gets the result of feeding every trade.

  /** Runs the signals before `t` and the hourly marks up to `t`: call before feeding a trade at `t`. */
  advance(t: number): void {
    this.runAgendaBefore(t)
    this.marksUntil(t)
  }

  /** Feeds one trade, after `advance(tr.t)`; trades come in chain order. */
  trade(tr: ReplayTrade): void {
    const s = this.states.get(`${tr.c}:${tr.m}`)
    if (s !== undefined) this.onTrade(s, tr)
  }

  /** Adds to `history.trades_read` (a driver that reads ranges counts the rows it read). */
  countTradesRead(n: number): void {
    this.tradesRead += n
  }

  /** Whether a trade of the token can change the result now (see above). */
  needsTrades(chain: string, asset: string): boolean {
    const s = this.states.get(`${chain}:${asset}`)
    return s !== undefined && needs(s)
  }

  /** The tokens that need trades now. */
  tokensNeedingTrades(): Array<{ readonly chain: string; readonly asset: string }> {
    const out: Array<{ chain: string; asset: string }> = []
    for (const s of this.states.values()) if (needs(s)) out.push({ chain: s.chain, asset: s.asset })
    return out
  }

  /** Entry signals not run yet with offset <= `t`, in time order. */
  entriesUntil(t: number): Array<{ readonly chain: string; readonly asset: string; readonly t: number }> {
    const out: Array<{ chain: string; asset: string; t: number }> = []
    for (let i = this.agendaNext; i < this.agenda.length && this.agenda[i]!.t <= t; i++) {
      const a = this.agenda[i]!
      if (a.kind === "entry") out.push({ chain: a.signal.chain, asset: a.signal.asset, t: a.t })
    }
    return out
  }

  /** The offset of the next signal (entry or exit) not run yet, or +Infinity. */
  nextSignalT(): number {
    return this.agenda[this.agendaNext]?.t ?? Number.POSITIVE_INFINITY
  }

  /** The offset of the next entry signal not run yet. */
  nextEntryT(): number | undefined {
    for (let i = this.agendaNext; i < this.agenda.length; i++) if (this.agenda[i]!.kind === "entry") return this.agenda[i]!.t
    return undefined
  }

  /** Tokens holding a benchmark position, with the offset of its fill: `finish` marks them on their last trade. */
  benchmarkTokens(): Array<{ readonly chain: string; readonly asset: string; readonly t: number }> {
    const out: Array<{ chain: string; asset: string; t: number }> = []
    for (const s of this.states.values()) if (s.benchmark !== undefined) out.push({ chain: s.chain, asset: s.asset, t: s.benchmark.t })
    return out
  }

  /** Sets the token's last trade of the window (call before `finish` for each of `benchmarkTokens`). */
  setLastTrade(tr: ReplayTrade): void {
    const s = this.states.get(`${tr.c}:${tr.m}`)
    if (s !== undefined && (s.last === undefined || tr.t >= s.last.t)) s.last = tr
  }

  private runAgendaBefore(t: number): void {
    while (this.agendaNext < this.agenda.length && this.agenda[this.agendaNext]!.t < t) {
      const item = this.agenda[this.agendaNext++]!
      if (item.kind === "entry") this.onEntrySignal(item.signal, item.t)
      else this.onExitSignal(item.signal, item.t)
    }
  }

  private onEntrySignal(signal: SignalRow, t: number): void {
    const s = this.state(signal.chain, signal.asset)
    s.unresolved++
    if (s.benchmarkArmedT === undefined && s.benchmark === undefined) s.benchmarkArmedT = t
    if (s.armed !== undefined || s.position !== undefined) {
      this.skips.already_open++
      return
    }
    if (this.openCount >= this.def.sizing.max_concurrent) {
      this.skips.max_concurrent++
      return
    }
    const stake = this.stakeFor(signal)
    if (this.def.sizing.base_usd !== undefined && stake > this.cash - this.reserved) {
      this.skips.insufficient_capital++
      return
    }
    s.armed = { signal, t, stakeUsdMicros: stake }
    this.reserved += stake
    this.openCount++
  }

  private onExitSignal(signal: SignalRow, t: number): void {
    const s = this.states.get(`${signal.chain}:${signal.asset}`)
    if (s?.position === undefined || s.position.pending !== undefined) return
    if (signal.tsMs - this.cfg.fromMs < s.position.entryT) return
    s.position.pending = { reason: "exit_signal", tokensRaw: s.position.tokensLeft, afterT: t }
  }

  private ruleMatches(rule: SizingRule, s: SignalRow): boolean {
    const w = rule.when
    if (w === undefined) return true
    if (w.pattern !== undefined && s.pattern !== w.pattern) return false
    if (w.min_confidence !== undefined && !scoreOk(s.confidence, w.min_confidence)) return false
    if (w.min_usd !== undefined && s.usdMicros < w.min_usd) return false
    if (w.min_mcap_usd !== undefined && s.mcapUsdMicros < w.min_mcap_usd) return false
    if (w.max_mcap_usd !== undefined && s.mcapUsdMicros > w.max_mcap_usd) return false
    return true
  }

  /** usd_per_trade, or the first matching rule (usd | pct_of_equity of base + realized | multiplier), capped at max_usd. */
  private stakeFor(signal: SignalRow): bigint {
    const sizing = this.def.sizing
    let stake = sizing.usd_per_trade
    const rule = sizing.rules?.find((r) => this.ruleMatches(r, signal))
    if (rule !== undefined) {
      if (rule.usd !== undefined) stake = rule.usd
      else if (rule.pct_of_equity !== undefined) {
        const equity = (sizing.base_usd ?? 0n) + this.realized
        stake = equity > 0n ? (equity * rule.pct_of_equity) / BPS : 0n
      } else if (rule.multiplier !== undefined) stake = (sizing.usd_per_trade * rule.multiplier) / 10_000n
    }
    if (sizing.max_usd !== undefined && stake > sizing.max_usd) stake = sizing.max_usd
    return stake
  }

  private book(tr: ReplayTrade): FillBook {
    return { quoteRaw: BigInt(tr.q), tokenRaw: BigInt(tr.k), reserveQuoteRaw: BigInt(tr.v), reserveTokenRaw: BigInt(tr.x) }
  }

  private onTrade(s: AssetState, tr: ReplayTrade): void {
    if (s.unresolved > 0) {
      this.priceableCount += s.unresolved
      s.unresolved = 0
    }
    // Buy-and-hold benchmark: the token's first candidate, filled like an entry, sold at the end.
    if (s.benchmarkArmedT !== undefined && tr.t > s.benchmarkArmedT) {
      const book = this.book(tr)
      if (bookPriceable(book)) {
        const f = buy(this.def.sizing.usd_per_trade, book, this.pricing(s.chain), this.cfg.fees)
        if (f.tokensRaw > 0n) s.benchmark = { stakeUsdMicros: this.def.sizing.usd_per_trade, tokensRaw: f.tokensRaw, t: tr.t }
      }
      s.benchmarkArmedT = undefined
    }
    const p = s.position
    if (p !== undefined && tr.t > p.entryT) this.checkExits(s, p, tr)
    if (s.armed !== undefined && tr.t > s.armed.t) this.fillEntry(s, s.armed, tr)
    s.last = tr
  }

  private fillEntry(s: AssetState, armed: Armed, tr: ReplayTrade): void {
    s.armed = undefined
    this.reserved -= armed.stakeUsdMicros
    const pricing = this.pricing(s.chain)
    const book = this.book(tr)
    const f = buy(armed.stakeUsdMicros, book, pricing, this.cfg.fees)
    if (f.tokensRaw === 0n) {
      this.skips.zero_fill++
      this.openCount--
      return
    }
    this.cash -= armed.stakeUsdMicros
    if (this.cash < this.minCash) this.minCash = this.cash
    this.atRisk += armed.stakeUsdMicros
    if (this.atRisk > this.peakAtRisk) this.peakAtRisk = this.atRisk
    this.platformFeesUsd += f.platformFeeUsdMicros
    this.curveFeesUsd += quoteToUsdMicros(f.curveFeeRaw, pricing)
    this.slippageUsd += quoteToUsdMicros(f.slippageRaw, pricing)
    s.position = {
      seq: this.seq++,
      chain: s.chain,
      asset: s.asset,
      signalId: armed.signal.id,
      entryMs: this.cfg.fromMs + tr.t,
      entryT: tr.t,
      stakeUsdMicros: armed.stakeUsdMicros,
      quoteInRaw: f.quoteInRaw,
      tokensInitial: f.tokensRaw,
      tokensLeft: f.tokensRaw,
      peakQ: undefined,
      peakK: 1n,
      ladderNext: 0,
      pending: undefined,
      legs: []
    }
    this.open.add(s)
  }

  private checkExits(s: AssetState, p: Position, tr: ReplayTrade): void {
    if (p.pending !== undefined && tr.t > p.pending.afterT) {
      const { reason, tokensRaw } = p.pending
      p.pending = undefined
      this.fillExit(s, p, tr, reason, tokensRaw)
      if (s.position === undefined) return
    }
    const ex = this.def.exit
    if (this.holdMs !== undefined && tr.t >= p.entryT + this.holdMs) {
      this.fillExit(s, p, tr, "max_hold", p.tokensLeft)
      return
    }
    if (p.pending !== undefined) return
    const q = BigInt(tr.q)
    const k = BigInt(tr.k)
    if (k === 0n || q === 0n) return
    // price vs entry x (m / den): q·tokensInitial·den  ?  k·quoteIn·m
    const lhs = q * p.tokensInitial
    const rhs = k * p.quoteInRaw
    // A price exit fills on the NEXT trade of the token, even one in the same millisecond.
    const afterT = tr.t - 1
    if (ex.stop_loss_pct !== undefined && lhs * BPS <= rhs * (BPS - ex.stop_loss_pct)) {
      p.pending = { reason: "stop_loss", tokensRaw: p.tokensLeft, afterT }
      return
    }
    if (ex.take_profit_pct !== undefined && lhs * BPS >= rhs * (BPS + ex.take_profit_pct)) {
      p.pending = { reason: "take_profit", tokensRaw: p.tokensLeft, afterT }
      return
    }
    if (ex.trailing !== undefined) {
      if (p.peakQ === undefined) {
        if (lhs * 10_000n >= rhs * ex.trailing.arm_multiple) {
          p.peakQ = q
          p.peakK = k
        }
      } else {
        if (q * p.peakK > p.peakQ * k) {
          p.peakQ = q
          p.peakK = k
        } else if (q * p.peakK * BPS <= p.peakQ * k * (BPS - ex.trailing.drop_pct)) {
          p.pending = { reason: "trailing", tokensRaw: p.tokensLeft, afterT }
          return
        }
      }
    }
    if (ex.ladder !== undefined && p.ladderNext < ex.ladder.length) {
      let pct = 0n
      while (p.ladderNext < ex.ladder.length && lhs * 10_000n >= rhs * ex.ladder[p.ladderNext]!.at_multiple) {
        pct += ex.ladder[p.ladderNext]!.sell_pct
        p.ladderNext++
      }
      if (pct > 0n) {
        // The last step sells whatever is left (rounding dust included) when the steps add up to 100%.
        const all = p.ladderNext === ex.ladder.length && ex.ladder.reduce((a, st) => a + st.sell_pct, 0n) === BPS
        const tokens = all ? p.tokensLeft : (p.tokensInitial * pct) / BPS
        p.pending = { reason: "ladder", tokensRaw: tokens > p.tokensLeft ? p.tokensLeft : tokens, afterT }
      }
    }
  }

  private fillExit(s: AssetState, p: Position, tr: ReplayTrade, reason: CloseReason, tokensRaw: bigint): void {
    const pricing = this.pricing(s.chain)
    const f = sell(tokensRaw, this.book(tr), pricing, this.cfg.fees)
    this.platformFeesUsd += f.platformFeeUsdMicros
    this.curveFeesUsd += quoteToUsdMicros(f.curveFeeRaw, pricing)
    this.slippageUsd += quoteToUsdMicros(f.slippageRaw, pricing)
    this.cash += f.proceedsUsdMicros
    p.tokensLeft -= tokensRaw
    p.legs.push({ reason, atMs: this.cfg.fromMs + tr.t, tokensRaw, grossRaw: f.grossRaw, proceedsUsdMicros: f.proceedsUsdMicros })
    if (p.tokensLeft > 0n) {
      this.exitPoints.push({ t: tr.t, pnl: this.pnlNow() })
      return
    }
    this.lastExitT = tr.t
    this.close(s, p)
  }

  private close(s: AssetState, p: Position): void {
    s.position = undefined
    this.open.delete(s)
    this.openCount--
    this.atRisk -= p.stakeUsdMicros
    const proceeds = p.legs.reduce((a, l) => a + l.proceedsUsdMicros, 0n)
    const pnl = proceeds - p.stakeUsdMicros
    this.realized += pnl
    const reason = p.legs[p.legs.length - 1]?.reason ?? "end_of_window"
    this.exitReasons[reason]++
    this.closedCount++
    if (pnl > 0n) {
      this.wins++
      this.grossWin += pnl
    } else if (pnl < 0n) this.grossLoss -= pnl
    this.returns.push(p.stakeUsdMicros === 0n ? 0 : Number(pnl) / Number(p.stakeUsdMicros))
    const key = `${p.chain}:${p.asset}`
    const tok = this.perToken.get(key) ?? { asset: p.asset, chain: p.chain, trades: 0, wins: 0, pnl: 0n }
    tok.trades++
    if (pnl > 0n) tok.wins++
    tok.pnl += pnl
    this.perToken.set(key, tok)
    this.exitPoints.push({ t: this.lastExitT, pnl: this.pnlNow() })
    if (p.seq < tradesReturnedMax) this.closed.push(this.record(p, proceeds, pnl, reason))
  }

  private record(p: Position, proceeds: bigint, pnl: bigint, reason: CloseReason): ReplayTradeRecord {
    const pricing = this.pricing(p.chain)
    const gross = p.legs.reduce((a, l) => a + l.grossRaw, 0n)
    const last = p.legs[p.legs.length - 1]
    return {
      asset: p.asset,
      chain: p.chain,
      signal_id: p.signalId,
      entry_at: iso(p.entryMs),
      entry_price_usd: formatScaled18(usdPerToken18(p.quoteInRaw, p.tokensInitial, pricing)),
      entry_usd: formatUsd(p.stakeUsdMicros),
      tokens_raw: p.tokensInitial.toString(),
      exit_at: iso(last?.atMs ?? p.entryMs),
      exit_price_usd: formatScaled18(usdPerToken18(gross, p.tokensInitial, pricing)),
      exit_usd: formatUsd(proceeds),
      pnl_usd: formatUsd(pnl),
      pnl_pct: pctFromBps(bpsOf(pnl, p.stakeUsdMicros)),
      close_reason: reason,
      legs: p.legs.map((l) => ({
        reason: l.reason,
        at: iso(l.atMs),
        price_usd: formatScaled18(usdPerToken18(l.grossRaw, l.tokensRaw, pricing)),
        tokens_raw: l.tokensRaw.toString(),
        usd: formatUsd(l.proceedsUsdMicros)
      }))
    }
  }

  /** Realized P&L plus open positions marked at their last trade (no fees). */
  private pnlNow(): bigint {
    let pnl = this.realized
    for (const s of this.open) {
      const p = s.position
      if (p === undefined || s.last === undefined) continue
      const proceeds = p.legs.reduce((a, l) => a + l.proceedsUsdMicros, 0n)
      pnl += proceeds + markUsdMicros(p.tokensLeft, this.book(s.last), this.pricing(s.chain)) - p.stakeUsdMicros
    }
    return pnl
  }

  private marksUntil(t: number): void {
    while (this.nextMarkT <= t && this.nextMarkT < this.cfg.toMs - this.cfg.fromMs) {
      this.series.push({ t: this.nextMarkT, pnl: this.openCount === 0 ? this.realized : this.pnlNow() })
      this.nextMarkT += markIntervalMs
    }
  }

  /** Closes what is open at the window end and builds the result. */
  finish(): ReplayResult {
    const endT = this.cfg.toMs - this.cfg.fromMs
    this.runAgendaBefore(Number.POSITIVE_INFINITY)
    this.marksUntil(endT - 1)
    for (const s of this.states.values()) {
      if (s.armed !== undefined) {
        this.skips.no_trade_after_signal++
        this.reserved -= s.armed.stakeUsdMicros
        this.openCount--
        s.armed = undefined
      }
      const p = s.position
      if (p !== undefined && s.last !== undefined) {
        p.pending = undefined
        this.fillExit(s, p, s.last, "end_of_window", p.tokensLeft)
      }
    }
    this.series.push({ t: endT, pnl: this.realized })
    return this.result()
  }

  private result(): ReplayResult {
    const def = this.def
    const requiredStart = -this.minCash > 0n ? -this.minCash : 0n
    const start = def.sizing.base_usd ?? requiredStart
    // Drawdown over hourly marks and every exit, from a running peak of equity.
    let peak = start
    let maxDdBps = 0n
    const dd = (pnl: bigint) => {
      const equity = start + pnl
      if (equity > peak) peak = equity
      const bps = peak > 0n ? bpsOf(peak - equity, peak) : 0n
      if (bps > maxDdBps) maxDdBps = bps
      return bps
    }
    // Exit points and hourly marks, merged in time order (a mark before an exit of the same instant).
    const equity: Array<EquityPoint> = []
    let e = 0
    for (const pt of this.series) {
      while (e < this.exitPoints.length && this.exitPoints[e]!.t < pt.t) dd(this.exitPoints[e++]!.pnl)
      const bps = dd(pt.pnl)
      equity.push({ at: iso(this.cfg.fromMs + pt.t), t_ms: this.cfg.fromMs + pt.t, equity_usd: formatUsd(start + pt.pnl), drawdown_pct: pctFromBps(bps) })
    }
    while (e < this.exitPoints.length) dd(this.exitPoints[e++]!.pnl)
    const n = this.closedCount
    const mean = n === 0 ? 0 : this.returns.reduce((a, r) => a + r, 0) / n
    const variance = n < 2 ? 0 : this.returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1)
    const downside = n === 0 ? 0 : Math.sqrt(this.returns.reduce((a, r) => a + (r < 0 ? r * r : 0), 0) / n)
    const round = (x: number) => Math.round(x * 10_000) / 10_000
    // Benchmark.
    let benchTokens = 0
    let benchIn = 0n
    let benchOut = 0n
    for (const s of this.states.values()) {
      if (s.benchmark === undefined || s.last === undefined) continue
      benchTokens++
      benchIn += s.benchmark.stakeUsdMicros
      benchOut += sell(s.benchmark.tokensRaw, this.book(s.last), this.pricing(s.chain), this.cfg.fees).proceedsUsdMicros
    }
    const perToken = [...this.perToken.values()].sort((a, b) => (a.pnl > b.pnl ? -1 : a.pnl < b.pnl ? 1 : a.asset < b.asset ? -1 : 1))
    const history = this.cfg.historyStartMs
    const covered = history !== undefined && history <= this.cfg.fromMs
    const verdict: ReplayResult["verdict"] = !covered || this.priceableCount < passTradesMin
      ? "insufficient"
      : n >= passTradesMin && maxDdBps <= passDrawdownBpsMax
        ? "pass"
        : "fail"
    const verdictReason =
      verdict === "insufficient"
        ? !covered
          ? "stored trade history does not reach back to the window start"
          : `fewer than ${passTradesMin} priceable entry signals in the window`
        : verdict === "pass"
          ? `at least ${passTradesMin} trades and at most 20% drawdown`
          : n < passTradesMin
            ? `fewer than ${passTradesMin} trades`
            : "drawdown over 20%"
    return {
      verdict,
      verdict_reason: verdictReason,
      from: iso(this.cfg.fromMs),
      to: iso(this.cfg.toMs),
      trade_count: n,
      pnl_usd: formatUsd(this.realized),
      max_drawdown_pct: pctFromBps(maxDdBps),
      required_start_usd: formatUsd(requiredStart),
      start_usd: formatUsd(start),
      final_usd: formatUsd(start + this.realized),
      peak_capital_at_risk_usd: formatUsd(this.peakAtRisk),
      skips: { ...this.skips },
      trades: [...this.closed].sort((a, b) => (a.entry_at < b.entry_at ? -1 : a.entry_at > b.entry_at ? 1 : 0)),
      trades_truncated: n > tradesReturnedMax,
      universe: { candidates: this.candidates, priceable: this.priceableCount, tokens: this.states.size },
      win_rate: n === 0 ? null : round(this.wins / n),
      profit_factor: this.grossLoss === 0n ? null : round(Number(this.grossWin) / Number(this.grossLoss)),
      expectancy_usd: n === 0 ? null : formatUsd(this.realized / BigInt(n)),
      sharpe: n < 2 || variance === 0 ? null : round(mean / Math.sqrt(variance)),
      sortino: downside === 0 ? null : round(mean / downside),
      fees_paid_usd: formatUsd(this.curveFeesUsd + this.platformFeesUsd),
      fees: { curve_usd: formatUsd(this.curveFeesUsd), platform_usd: formatUsd(this.platformFeesUsd) },
      slippage_usd: formatUsd(this.slippageUsd),
      exit_reasons: { ...this.exitReasons },
      per_token: perToken.slice(0, perTokenMax).map((t) => ({ asset: t.asset, chain: t.chain, trades: t.trades, wins: t.wins, pnl_usd: formatUsd(t.pnl) })),
      per_token_truncated: perToken.length > perTokenMax,
      benchmark: {
        kind: "buy_and_hold",
        tokens: benchTokens,
        invested_usd: formatUsd(benchIn),
        final_usd: formatUsd(benchOut),
        pnl_usd: formatUsd(benchOut - benchIn),
        return_pct: benchIn === 0n ? null : pctFromBps(bpsOf(benchOut - benchIn, benchIn))
      },
      equity,
      history: { trades_read: this.tradesRead, history_start: history === undefined ? null : iso(history) },
      fill_model: FILL_MODEL
    }
  }
}
