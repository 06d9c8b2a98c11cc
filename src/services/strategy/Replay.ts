/**
 * One strategy replay: the window's signals (`SignalHistory`), the trades that can change the
 * result (`clickhouse/queries/Replay.ts`), the simulation (`Engine.ts`). The job runner
 * (`ReplayJobs.ts`) bounds it in time; this module only checks the request's own limits again
 * (a caller that skipped `decodeReplayRequest` still cannot replay more than 14 days or 50
 * assets).
 *
 * What is read (`readTrades`): a token's trades matter only while it "needs trades" (an entry
 * signal not yet followed by a trade, an armed entry, an open position: `Engine.ts`), which
 * starts only at one of its entry signals. The replay advances in rounds over the window:
 * each round asks ClickHouse, per token that needs trades now or has an entry signal before the
 * round's horizon, for its next trades up to the horizon (16 at first, four times more each
 * time a token runs out while it still needs trades), merges them in chain order and feeds
 * them, stopping before any trade past the end of what was read of a token that needs trades.
 * Then the benchmark tokens' last trades (the benchmark's final mark). The result is the one
 * the exhaustive read (`read: "all"`) gives, exactly (the integration tests and the bench
 * compare both); `history.trades_read` counts the rows read. On the bench's 14 days over 10M
 * trades this read 46K rows instead of 2.3M (typical) and 85K instead of 4.7M (broad).
 *
 * Interruptible between rounds: a cancelled or timed-out replay stops after the ClickHouse
 * statement in flight (chDB cannot cancel one) and the round being simulated.
 */
import { Effect, Schema } from "effect"
import { ClickHouse } from "../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../clickhouse/ClickHouseError.js"
import {
  chainOrder,
  forEachReplayPage,
  historyStartMs,
  lastReplayTrades,
  readReplayRanges,
  replayPageRowsMax,
  type ReplayRange,
  type ReplayTrade
} from "../../../clickhouse/queries/Replay.js"
import { DEFAULT_CURVE_FEE_BPS } from "../../domain/CurveMath.js"
import { assetIdsMax, type ReplayRequest, replayWindowMsMax } from "./Definition.js"
import { lookbackMs, type ReplayResult, ReplaySimulation, selectCandidates } from "./Engine.js"
import type { ChainPricing, FeeModel } from "./Fill.js"
import { SignalHistory } from "./SignalHistory.js"

export class ReplayError extends Schema.TaggedError<ReplayError>()("ReplayError", {
  reason: Schema.Literal("InvalidRequest", "TooManySignals", "Unavailable", "TimedOut", "Cancelled"),
  message: Schema.String
}) {}

export interface ReplaySettings {
  readonly fees: FeeModel
  /** Per chain: decimals and the USD rate of its quote asset for the replay. */
  readonly pricing: Readonly<Record<string, ChainPricing>>
  /** Rows per ClickHouse statement (default `replayPageRowsMax`). */
  readonly pageRowsMax?: number
  /**
   * `ranges` (default): only the trades that can change the result; `all`: every trade of the
   * candidate tokens from their first signal (the reference the tests compare against).
   */
  readonly read?: "ranges" | "all"
  /** A round's horizon (ms; default `roundMsDefault`): tests shrink it to force many rounds. */
  readonly roundMs?: number
  /** Called with what the range read did (the bench prints it). */
  readonly onReadStats?: (stats: ReadStats) => void
}

/** The Max plan's platform fee (25 bps), the curve fee of the chain programs (100 bps), 1% where a venue has no reserves. */
export const defaultFees: FeeModel = { curveFeeBps: DEFAULT_CURVE_FEE_BPS, platformFeeBps: 25n, fallbackSlippageBps: 100n }

/** Solana: SOL (9 decimals), tokens 6 decimals; Hood: ETH (18), tokens 18 decimals. */
export const pricingFor = (usdMicrosPerQuoteUnit: { readonly solana: bigint; readonly hood: bigint }): Record<string, ChainPricing> => ({
  solana: { quoteDecimals: 9, tokenDecimals: 6, usdMicrosPerQuoteUnit: usdMicrosPerQuoteUnit.solana },
  hood: { quoteDecimals: 18, tokenDecimals: 18, usdMicrosPerQuoteUnit: usdMicrosPerQuoteUnit.hood }
})

/** A round's default horizon: one day of the window past the last trade fed. */
export const roundMsDefault = 86_400_000
/** Rows first read per token after an entry signal (most tokens need one; a held one asks again). */
export const firstRowsDefault = 16
/** How much more a token that ran out while still needing trades asks for next time. */
const rowsGrowth = 4

/** A point in chain order: after the trade `(t, p)`, or after all of millisecond `t` when `p` is `END`. */
interface Key {
  readonly t: number
  readonly p: string
}
const END = "\uffff"
const cmp = (a: Key, b: Key): number => a.t - b.t || (a.p === b.p ? 0 : a.p === END ? 1 : b.p === END ? -1 : a.p < b.p ? -1 : 1)
const after = (t: number): Key => ({ t, p: END })

/** A stretch read of one token: every trade in `(from, to]`, the unfed ones `buf[head..]`. */
interface Segment {
  readonly from: Key
  to: Key
  buf: Array<ReplayTrade>
  head: number
}

/** What has been read of one token: disjoint segments in chain order. */
interface TokenFeed {
  readonly chain: string
  readonly asset: string
  segs: Array<Segment>
  /** Rows asked for per read: grows when the token runs out while it needs trades. */
  rowsMax: number
}

/** The index of the segment holding `point` (`from <= point <= to`), or -1. */
const segmentAt = (f: TokenFeed, point: Key): number => {
  for (let i = f.segs.length - 1; i >= 0; i--) {
    const g = f.segs[i]!
    if (cmp(g.from, point) <= 0) return cmp(g.to, point) >= 0 ? i : -1
  }
  return -1
}

/** From segment `i`, the last of the segments that follow it without a gap. */
const runEnd = (f: TokenFeed, i: number): number => {
  while (i + 1 < f.segs.length && cmp(f.segs[i + 1]!.from, f.segs[i]!.to) === 0) i++
  return i
}

/** Whether segments `i..j` hold an unfed trade after `point`. */
const unfedAfter = (f: TokenFeed, i: number, j: number, point: Key): boolean => {
  for (let k = j; k >= i; k--) {
    const g = f.segs[k]!
    if (g.head < g.buf.length) return cmp(g.buf[g.buf.length - 1]!, point) > 0
  }
  return false
}

/** A binary min-heap (the merge of the segments' next trades, the read ends of tokens that need trades). */
class Heap<A> {
  private readonly items: Array<A> = []
  constructor(private readonly less: (a: A, b: A) => boolean) {}
  get size() {
    return this.items.length
  }
  peek(): A | undefined {
    return this.items[0]
  }
  push(a: A): void {
    const h = this.items
    h.push(a)
    let i = h.length - 1
    while (i > 0) {
      const up = (i - 1) >> 1
      if (!this.less(h[i]!, h[up]!)) break
      ;[h[i], h[up]] = [h[up]!, h[i]!]
      i = up
    }
  }
  pop(): A | undefined {
    const h = this.items
    const top = h[0]
    const last = h.pop()
    if (h.length > 0 && last !== undefined) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r
        if (m === i) break
        ;[h[i], h[m]] = [h[m]!, h[i]!]
        i = m
      }
    }
    return top
  }
}

/** What a replay's read did (for the bench). */
export interface ReadStats {
  readonly rounds: number
  readonly statements: number
  readonly rows: number
}

/**
 * The benchmark's final mark: each benchmark token's last trade in the window (the last round's
 * span first, then the rest for the few that did not trade in it), given to `sim`.
 */
const readFinalMarks = (
  sim: ReplaySimulation,
  options: { readonly fromMs: number; readonly endT: number; readonly roundMs: number }
): Effect.Effect<{ readonly statements: number; readonly rows: number }, ClickHouseError, ClickHouse> =>
  Effect.gen(function* () {
    const { endT, roundMs } = options
    let statements = 0
    let rows = 0
    let missing = sim.benchmarkTokens()
    for (const fromOf of [(t: number) => Math.max(t, endT + 1 - roundMs), (t: number) => t]) {
      if (missing.length === 0) break
      const lasts = yield* lastReplayTrades({ fromMs: options.fromMs, ranges: missing.map((b) => ({ ...b, fromT: fromOf(b.t), toT: endT })) })
      statements++
      const still: typeof missing = []
      missing.forEach((b, i) => {
        const tr = lasts[i]
        if (tr === undefined) still.push(b)
        else {
          sim.setLastTrade(tr)
          sim.countTradesRead(1)
          rows++
        }
      })
      missing = still
    }
    return { statements, rows }
  })

/**
 * Feeds `sim` the trades that can change its result, round by round (see the module comment).
 *
 * A round has a horizon `T` (kept until reached) and `done`, the chain-order point fed so far:
 * 1. Read: for each token that needs trades, from `done`; for each entry signal not run yet at
 *    `t_s <= T`, from after `t_s`. Where what was read from that point has no unfed trade left
 *    and ends before `T`, it is read on (up to `T` or the token's next segment), at most the
 *    token's `rowsMax` rows (a read that got all of them ends at its last row).
 * 2. Feed: the segments' unfed trades, merged in chain order. Before each trade, the signals
 *    before it would run; a token they wake must have been read from its signal past this trade,
 *    and a token that needs trades must have been read past it: otherwise the round stops here,
 *    before the signals run (that token is read on first in the next round).
 * 3. `done` is the last trade fed, or, when all was fed, `T` or the read end of the first token
 *    that still needs trades.
 * It ends when no token needs trades and no entry signal is left, or at the window end.
 */
const readTrades = (
  sim: ReplaySimulation,
  options: { readonly fromMs: number; readonly toMs: number; readonly pageRowsMax?: number | undefined; readonly roundMs?: number | undefined }
): Effect.Effect<ReadStats, ClickHouseError, ClickHouse> =>
  Effect.gen(function* () {
    const endT = options.toMs - options.fromMs - 1
    const roundMs = Math.max(1, options.roundMs ?? roundMsDefault)
    const pageRowsMax = options.pageRowsMax ?? replayPageRowsMax
    const firstRows = Math.max(1, Math.min(firstRowsDefault, pageRowsMax))
    const feeds = new Map<string, TokenFeed>()
    const feedOf = (chain: string, asset: string): TokenFeed => {
      const key = `${chain}:${asset}`
      let f = feeds.get(key)
      if (f === undefined) {
        f = { chain, asset, segs: [], rowsMax: firstRows }
        feeds.set(key, f)
      }
      return f
    }
    // Segments with unfed trades, by their next trade.
    const merge = new Heap<Segment>((a, b) => chainOrder(a.buf[a.head]!, b.buf[b.head]!) < 0)
    const inMerge = new Set<Segment>()
    let done: Key = after(-1)
    let horizon: Key = done
    let rounds = 0
    let statements = 0
    let rows = 0
    let idle = 0
    while (cmp(done, after(endT)) < 0) {
      const needing = sim.tokensNeedingTrades()
      const nextEntry = sim.nextEntryT()
      if (needing.length === 0 && nextEntry === undefined) break
      if (cmp(done, horizon) >= 0)
        horizon = after(Math.min(endT, (needing.length > 0 ? done.t : Math.max(done.t, nextEntry!)) + roundMs))
      rounds++

      // 1. Read what is missing.
      const points: Array<readonly [TokenFeed, Key]> = needing.map((n) => [feedOf(n.chain, n.asset), done] as const)
      for (const e of sim.entriesUntil(horizon.t)) points.push([feedOf(e.chain, e.asset), after(e.t)])
      const ranges: Array<ReplayRange> = []
      const rangeSegs: Array<Segment> = []
      const rangeEnds: Array<Key> = []
      const reading = new Set<Segment>()
      // Fed segments ending before the first point a token is needed from are dropped; then
      // every point gets its segment; then the reads, each up to the token's next segment at
      // most, so that no trade is read twice.
      const firstPoint = new Map<TokenFeed, Key>()
      for (const [f, point] of points) {
        const p = firstPoint.get(f)
        if (p === undefined || cmp(point, p) < 0) firstPoint.set(f, point)
      }
      for (const [f, first] of firstPoint)
        if (f.segs.some((g) => g.head >= g.buf.length && cmp(g.to, first) < 0))
          f.segs = f.segs.filter((g) => g.head < g.buf.length || cmp(g.to, first) >= 0)
      for (const [f, point] of points) {
        if (segmentAt(f, point) >= 0) continue
        const i = f.segs.findIndex((h) => cmp(h.from, point) > 0)
        f.segs.splice(i < 0 ? f.segs.length : i, 0, { from: point, to: point, buf: [], head: 0 })
      }
      for (const [f, point] of points) {
        const i = segmentAt(f, point)
        if (i < 0) return yield* Effect.dieMessage("replay: a point without its segment")
        const j = runEnd(f, i)
        const last = f.segs[j]!
        if (cmp(last.to, horizon) >= 0 || unfedAfter(f, i, j, point) || reading.has(last)) continue
        const next = f.segs[j + 1]
        if (next !== undefined && next.from.p !== END) return yield* Effect.dieMessage("replay: a segment starts inside a millisecond")
        const end = next !== undefined && cmp(next.from, horizon) < 0 ? next.from : horizon
        ranges.push({ chain: f.chain, asset: f.asset, afterT: last.to.t, afterP: last.to.p === END ? "" : last.to.p, toT: end.t, rowsMax: f.rowsMax })
        rangeSegs.push(last)
        rangeEnds.push(end)
        reading.add(last)
      }
      if (ranges.length > 0) {
        const read = yield* readReplayRanges({ fromMs: options.fromMs, ranges, pageRowsMax })
        const got = read.trades
        statements += read.statements
        for (let k = 0; k < rangeSegs.length; k++) {
          const g = rangeSegs[k]!
          const rowsOf = got[k]!
          rows += rowsOf.length
          if (g.head > 0) {
            g.buf = g.buf.slice(g.head)
            g.head = 0
          }
          for (const tr of rowsOf) g.buf.push(tr)
          const lastRow = rowsOf[rowsOf.length - 1]
          g.to = lastRow !== undefined && rowsOf.length >= ranges[k]!.rowsMax ? { t: lastRow.t, p: lastRow.p } : rangeEnds[k]!
          if (g.head < g.buf.length && !inMerge.has(g)) {
            merge.push(g)
            inMerge.add(g)
          }
        }
      }

      // 2. Feed in chain order while every token that needs trades, or starts to before the
      //    trade, has been read past it.
      const readEnds = new Heap<{ readonly f: TokenFeed; readonly to: Key }>((a, b) => cmp(a.to, b.to) < 0)
      const watch = (f: TokenFeed, point: Key): Key | undefined => {
        const i = segmentAt(f, point)
        if (i < 0) return undefined
        const to = f.segs[runEnd(f, i)]!.to
        if (cmp(to, horizon) < 0) readEnds.push({ f, to })
        return to
      }
      for (const n of needing) watch(feedOf(n.chain, n.asset), done)
      let fed = 0
      let stopped = false
      for (;;) {
        const g = merge.peek()
        if (g === undefined) break
        const tr = g.buf[g.head]!
        if (tr.t > horizon.t) break
        const waking: Array<readonly [TokenFeed, Key]> = []
        if (sim.nextSignalT() < tr.t) {
          for (const e of sim.entriesUntil(tr.t - 1)) {
            if (sim.needsTrades(e.chain, e.asset)) continue
            const f = feedOf(e.chain, e.asset)
            if (waking.some(([w]) => w === f)) continue
            const i = segmentAt(f, after(e.t))
            if (i < 0 || cmp(f.segs[runEnd(f, i)]!.to, tr) < 0) stopped = true
            else waking.push([f, after(e.t)])
          }
        }
        while (!stopped && readEnds.size > 0) {
          const r = readEnds.peek()!
          if (cmp(r.to, tr) >= 0) break
          if (sim.needsTrades(r.f.chain, r.f.asset)) {
            stopped = true
            r.f.rowsMax = Math.min(pageRowsMax, r.f.rowsMax * rowsGrowth)
          } else readEnds.pop()
        }
        if (stopped) break
        sim.advance(tr.t)
        for (const [f, point] of waking) watch(f, point)
        merge.pop()
        g.head++
        if (g.head < g.buf.length) merge.push(g)
        else {
          // Fed rows are not kept: memory holds only what is read and not yet fed.
          inMerge.delete(g)
          g.buf = []
          g.head = 0
        }
        sim.trade(tr)
        done = { t: tr.t, p: tr.p }
        fed++
      }

      // 3. Where the next round starts.
      if (!stopped) {
        let end: Key = horizon
        while (readEnds.size > 0) {
          const r = readEnds.pop()!
          if (sim.needsTrades(r.f.chain, r.f.asset)) {
            end = r.to
            r.f.rowsMax = Math.min(pageRowsMax, r.f.rowsMax * rowsGrowth)
            break
          }
        }
        if (cmp(end, done) > 0) done = end
      }
      // Each round reads a range, feeds a trade or moves `done`; guard against a bug looping forever.
      idle = fed > 0 || ranges.length > 0 ? 0 : idle + 1
      if (idle > 2) return yield* Effect.dieMessage("replay: a round made no progress")
      yield* Effect.yieldNow()
    }
    sim.countTradesRead(rows)

    const marks = yield* readFinalMarks(sim, { fromMs: options.fromMs, endT, roundMs })
    statements += marks.statements
    rows += marks.rows
    return { rounds, statements, rows }
  })

export const runReplay = (request: ReplayRequest, settings: ReplaySettings) =>
  Effect.gen(function* () {
    if (request.to <= request.from || request.to - request.from > replayWindowMsMax)
      return yield* new ReplayError({ reason: "InvalidRequest", message: "to: must be after from and at most 14 days after it" })
    if (request.asset_ids !== undefined && request.asset_ids.length > assetIdsMax)
      return yield* new ReplayError({ reason: "InvalidRequest", message: `asset_ids: must hold 1 to ${assetIdsMax} assets` })
    const definition = request.definition
    const chains = definition.chain === "any" ? ["solana", "hood"] : [definition.chain]
    const unavailable = (e: { readonly message: string }) => new ReplayError({ reason: "Unavailable", message: e.message })

    const signals = yield* (yield* SignalHistory)
      .range(
        { fromMs: request.from - lookbackMs, toMs: request.to },
        { chains, ...(request.asset_ids !== undefined ? { assets: request.asset_ids } : {}) }
      )
      .pipe(
        Effect.mapError((e) =>
          e.reason === "TooMany" ? new ReplayError({ reason: "TooManySignals", message: e.message }) : unavailable(e)
        )
      )
    const candidates = selectCandidates(signals, definition, { fromMs: request.from, toMs: request.to, assets: request.asset_ids })
    const history = yield* historyStartMs(chains).pipe(Effect.mapError(unavailable))
    const sim = new ReplaySimulation({
      definition,
      fromMs: request.from,
      toMs: request.to,
      fees: settings.fees,
      pricing: settings.pricing,
      historyStartMs: history
    })
    sim.addSignals(candidates, signals)
    if (settings.read === "all") {
      // One time-ordered read over every chain: capital and max_concurrent couple the chains. A
      // mint string read for one chain may match a token of the other; the engine ignores those.
      const starts = new Map<string, number>()
      for (const a of sim.assetsToRead()) starts.set(a.asset, Math.min(starts.get(a.asset) ?? a.startMs, a.startMs))
      yield* forEachReplayPage(
        {
          chains,
          fromMs: request.from,
          toMs: request.to,
          assets: [...starts].map(([asset, startMs]) => ({ asset, startMs })),
          ...(settings.pageRowsMax !== undefined ? { pageRowsMax: settings.pageRowsMax } : {})
        },
        (page) => Effect.zipRight(Effect.sync(() => sim.onTrades(page)), Effect.yieldNow())
      ).pipe(Effect.mapError(unavailable))
    } else {
      const stats = yield* readTrades(sim, {
        fromMs: request.from,
        toMs: request.to,
        pageRowsMax: settings.pageRowsMax,
        roundMs: settings.roundMs
      }).pipe(Effect.mapError(unavailable))
      settings.onReadStats?.(stats)
    }
    return sim.finish() satisfies ReplayResult
  }).pipe(Effect.withSpan("Strategy.replay"))

export type RunReplay = (request: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError, ClickHouse | SignalHistory>
