/**
 * The replay's range read (see `Replay.ts`'s module comment): rounds over the window, each
 * planning what is missing (`planReads`), reading it (`readPlanned`), feeding the merged trades
 * in chain order (`feedRound`) and choosing where the next round starts (`nextStart`), all over
 * one `ReadState`; then the benchmark's final mark (`readFinalMarks`).
 */
import { Effect } from "effect"
import type { ClickHouse } from "../../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../../clickhouse/ClickHouseError.js"
import {
  chainOrder,
  lastReplayTrades,
  readReplayRanges,
  replayPageRowsMax,
  type ReplayRange
} from "../../../../clickhouse/queries/Replay.js"
import type { ReplaySimulation } from "../Engine.js"
import { after, cmp, END, Heap, type Key, runEnd, type Segment, segmentAt, type TokenFeed, unfedAfter } from "./ReplayFeed.js"

/** A round's default horizon: one day of the window past the last trade fed. */
export const roundMsDefault = 86_400_000
/** Rows first read per token after an entry signal (most tokens need one; a held one asks again). */
export const firstRowsDefault = 16
/** How much more a token that ran out while still needing trades asks for next time. */
const rowsGrowth = 4

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

/** One replay's read: what is read of each token, the merge of their unfed trades, the point fed so far and the round's horizon. */
interface ReadState {
  readonly sim: ReplaySimulation
  readonly fromMs: number
  readonly pageRowsMax: number
  readonly firstRows: number
  readonly feeds: Map<string, TokenFeed>
  /** Segments with unfed trades, by their next trade. */
  readonly merge: Heap<Segment>
  readonly inMerge: Set<Segment>
  done: Key
  horizon: Key
  statements: number
  rows: number
}

type Token = { readonly chain: string; readonly asset: string }

const feedOf = (s: ReadState, chain: string, asset: string): TokenFeed => {
  const key = `${chain}:${asset}`
  let f = s.feeds.get(key)
  if (f === undefined) {
    f = { chain, asset, segs: [], rowsMax: s.firstRows }
    s.feeds.set(key, f)
  }
  return f
}

/** A token that ran out while it still needs trades asks for more next time. */
const grow = (s: ReadState, f: TokenFeed): void => {
  f.rowsMax = Math.min(s.pageRowsMax, f.rowsMax * rowsGrowth)
}

/** A round's reads: per range, the segment it extends and where it ends. */
interface ReadPlan {
  readonly ranges: Array<ReplayRange>
  readonly segs: Array<Segment>
  readonly ends: Array<Key>
}

/**
 * Step 1's plan. Fed segments ending before the first point a token is needed from are dropped;
 * then every point gets its segment; then the reads, each up to the token's next segment at
 * most, so that no trade is read twice.
 */
const planReads = (s: ReadState, points: ReadonlyArray<readonly [TokenFeed, Key]>): Effect.Effect<ReadPlan> =>
  Effect.gen(function* () {
    const horizon = s.horizon
    const plan: ReadPlan = { ranges: [], segs: [], ends: [] }
    const reading = new Set<Segment>()
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
      plan.ranges.push({ chain: f.chain, asset: f.asset, afterT: last.to.t, afterP: last.to.p === END ? "" : last.to.p, toT: end.t, rowsMax: f.rowsMax })
      plan.segs.push(last)
      plan.ends.push(end)
      reading.add(last)
    }
    return plan
  })

/** Step 1's reads: each range's rows appended to its segment, which joins the merge when it has unfed trades. */
const readPlanned = (s: ReadState, plan: ReadPlan): Effect.Effect<void, ClickHouseError, ClickHouse> =>
  Effect.gen(function* () {
    if (plan.ranges.length === 0) return
    const read = yield* readReplayRanges({ fromMs: s.fromMs, ranges: plan.ranges, pageRowsMax: s.pageRowsMax })
    const got = read.trades
    s.statements += read.statements
    for (let k = 0; k < plan.segs.length; k++) {
      const g = plan.segs[k]!
      const rowsOf = got[k]!
      s.rows += rowsOf.length
      if (g.head > 0) {
        g.buf = g.buf.slice(g.head)
        g.head = 0
      }
      for (const tr of rowsOf) g.buf.push(tr)
      const lastRow = rowsOf[rowsOf.length - 1]
      g.to = lastRow !== undefined && rowsOf.length >= plan.ranges[k]!.rowsMax ? { t: lastRow.t, p: lastRow.p } : plan.ends[k]!
      if (g.head < g.buf.length && !s.inMerge.has(g)) {
        s.merge.push(g)
        s.inMerge.add(g)
      }
    }
  })

/** The read ends (before the horizon) of the tokens watched in a round, earliest first. */
type ReadEnds = Heap<{ readonly f: TokenFeed; readonly to: Key }>

/**
 * Step 2: feeds in chain order while every token that needs trades, or starts to before the
 * trade, has been read past it; `stopped` when one has not.
 */
const feedRound = (s: ReadState, needing: ReadonlyArray<Token>): { readonly fed: number; readonly stopped: boolean; readonly readEnds: ReadEnds } => {
  const { sim, merge, horizon } = s
  const readEnds: ReadEnds = new Heap((a, b) => cmp(a.to, b.to) < 0)
  const watch = (f: TokenFeed, point: Key): Key | undefined => {
    const i = segmentAt(f, point)
    if (i < 0) return undefined
    const to = f.segs[runEnd(f, i)]!.to
    if (cmp(to, horizon) < 0) readEnds.push({ f, to })
    return to
  }
  for (const n of needing) watch(feedOf(s, n.chain, n.asset), s.done)
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
        const f = feedOf(s, e.chain, e.asset)
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
        grow(s, r.f)
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
      s.inMerge.delete(g)
      g.buf = []
      g.head = 0
    }
    sim.trade(tr)
    s.done = { t: tr.t, p: tr.p }
    fed++
  }
  return { fed, stopped, readEnds }
}

/** Step 3, when all was fed: the next round starts at the horizon or at the read end of the first token that still needs trades. */
const nextStart = (s: ReadState, readEnds: ReadEnds): void => {
  let end: Key = s.horizon
  while (readEnds.size > 0) {
    const r = readEnds.pop()!
    if (s.sim.needsTrades(r.f.chain, r.f.asset)) {
      end = r.to
      grow(s, r.f)
      break
    }
  }
  if (cmp(end, s.done) > 0) s.done = end
}

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
export const readTrades = (
  sim: ReplaySimulation,
  options: { readonly fromMs: number; readonly toMs: number; readonly pageRowsMax?: number | undefined; readonly roundMs?: number | undefined }
): Effect.Effect<ReadStats, ClickHouseError, ClickHouse> =>
  Effect.gen(function* () {
    const endT = options.toMs - options.fromMs - 1
    const roundMs = Math.max(1, options.roundMs ?? roundMsDefault)
    const pageRowsMax = options.pageRowsMax ?? replayPageRowsMax
    const s: ReadState = {
      sim,
      fromMs: options.fromMs,
      pageRowsMax,
      firstRows: Math.max(1, Math.min(firstRowsDefault, pageRowsMax)),
      feeds: new Map(),
      merge: new Heap<Segment>((a, b) => chainOrder(a.buf[a.head]!, b.buf[b.head]!) < 0),
      inMerge: new Set(),
      done: after(-1),
      horizon: after(-1),
      statements: 0,
      rows: 0
    }
    let rounds = 0
    let idle = 0
    while (cmp(s.done, after(endT)) < 0) {
      const needing = sim.tokensNeedingTrades()
      const nextEntry = sim.nextEntryT()
      if (needing.length === 0 && nextEntry === undefined) break
      if (cmp(s.done, s.horizon) >= 0)
        s.horizon = after(Math.min(endT, (needing.length > 0 ? s.done.t : Math.max(s.done.t, nextEntry!)) + roundMs))
      rounds++

      // 1. Read what is missing.
      const points: Array<readonly [TokenFeed, Key]> = needing.map((n) => [feedOf(s, n.chain, n.asset), s.done] as const)
      for (const e of sim.entriesUntil(s.horizon.t)) points.push([feedOf(s, e.chain, e.asset), after(e.t)])
      const plan = yield* planReads(s, points)
      yield* readPlanned(s, plan)

      // 2. Feed in chain order.
      const round = feedRound(s, needing)

      // 3. Where the next round starts.
      if (!round.stopped) nextStart(s, round.readEnds)
      // Each round reads a range, feeds a trade or moves `done`; guard against a bug looping forever.
      idle = round.fed > 0 || plan.ranges.length > 0 ? 0 : idle + 1
      if (idle > 2) return yield* Effect.dieMessage("replay: a round made no progress")
      yield* Effect.yieldNow()
    }
    sim.countTradesRead(s.rows)

    const marks = yield* readFinalMarks(sim, { fromMs: options.fromMs, endT, roundMs })
    return { rounds, statements: s.statements + marks.statements, rows: s.rows + marks.rows }
  })
