/**
 * The engine's contract with the range read (`Replay.ts`): feeding, in chain order, only the
 * trades of tokens that `needsTrades` right before them (after `advance`), then each benchmark
 * token's last trade, gives the result of feeding every trade. Random windows in memory
 * (fast-check picks the seed; a failure prints it), every exit rule and the capital limits.
 */
import * as fc from "fast-check"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { ReplayTrade } from "../../../clickhouse/queries/Replay.js"
import { decodeReplayRequest } from "./Definition.js"
import { type ReplayResult, ReplaySimulation, selectCandidates } from "./Engine.js"
import { defaultFees, pricingFor } from "./Replay.js"
import type { SignalRow } from "./SignalHistory.js"
import { mulberry32 } from "../../domain/SeededRandom.js"

const FROM = Date.UTC(2024, 2, 1)
const SPAN = 2 * 86_400_000
const SOL = 1_000_000_000n

const definitions: ReadonlyArray<unknown> = [
  { chain: "solana", entry: { source: "pattern", pattern: "large_move" }, exit: { take_profit_pct: 25, stop_loss_pct: 15, max_hold_hours: 0.5 }, sizing: { usd_per_trade: 10, max_concurrent: 3 } },
  {
    chain: "solana",
    entry: { source: "pattern", pattern: "large_move" },
    exit: { trailing: { arm_multiple: 1.1, drop_pct: 8 }, ladder: [{ at_multiple: 1.2, sell_pct: 50 }, { at_multiple: 1.4, sell_pct: 50 }], exit_on_signal: true },
    sizing: { usd_per_trade: 20, max_concurrent: 4, base_usd: 60, rules: [{ when: { min_usd: 1200 }, pct_of_equity: 30 }] }
  },
  { chain: "solana", entry: { source: "trade_signal", min_confidence: 0.5 }, exit: { max_hold_hours: 6 }, sizing: { usd_per_trade: 5, max_concurrent: 2 } }
]

const scenario = (seed: number) => {
  const rand = mulberry32(seed)
  const int = (n: number) => Math.floor(rand() * n)
  const mints = Array.from({ length: 8 }, (_, i) => `M${i}`)
  const times: Array<{ m: string; t: number }> = []
  mints.forEach((m, i) => {
    for (let k = 0, n = i === 0 ? 600 : 5 + int(60); k < n; k++) times.push({ m, t: int(SPAN) })
  })
  for (let k = 0; k < 30; k++) {
    const p = times[int(times.length)]!
    times.push({ m: mints[int(mints.length)]!, t: p.t })
  }
  times.sort((a, b) => a.t - b.t)
  const trades: Array<ReplayTrade> = times.map(({ m, t }, k) => {
    const V = BigInt(10 + int(40)) * SOL
    const X = 10n ** 15n
    const q = BigInt(1 + int(3)) * SOL
    return { c: "solana", m, t, p: String(k).padStart(8, "0"), q: q.toString(), k: ((q * X) / V).toString(), v: V.toString(), x: X.toString() }
  })
  const signals: Array<SignalRow> = Array.from({ length: 40 }, (_, k) => ({
    id: `s${k}`,
    pattern: "large_move",
    chain: "solana",
    asset: mints[int(mints.length)]!,
    tsMs: FROM + (rand() < 0.33 ? trades[int(trades.length)]!.t : int(SPAN)),
    wallets: ["w1"],
    walletIds: [],
    walletGroups: [[]],
    usdMicros: BigInt(500 + int(1500)) * 1_000_000n,
    mcapUsdMicros: 0n,
    ageMinutes: 0,
    venue: "svc-curve",
    direction: rand() < 0.2 ? ("out" as const) : ("in" as const),
    confidence: int(100) / 100,
    quality: "high",
    score1h: 0
  })).sort((a, b) => a.tsMs - b.tsMs)
  return { trades, signals }
}

const replay = (definitionBody: unknown, trades: ReadonlyArray<ReplayTrade>, signals: ReadonlyArray<SignalRow>, only: "all" | "needed"): ReplayResult => {
  const decoded = decodeReplayRequest({ definition: definitionBody, from: new Date(FROM).toISOString(), to: new Date(FROM + SPAN).toISOString() })
  if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
  const definition = decoded.right.definition
  const sim = new ReplaySimulation({
    definition,
    fromMs: FROM,
    toMs: FROM + SPAN,
    fees: defaultFees,
    pricing: pricingFor({ solana: 100_000_000n, hood: 3_000_000_000n }),
    historyStartMs: FROM
  })
  sim.addSignals(selectCandidates(signals, definition, { fromMs: FROM, toMs: FROM + SPAN }), signals)
  if (only === "all") sim.onTrades(trades)
  else {
    const last = new Map<string, ReplayTrade>()
    for (const tr of trades) {
      last.set(tr.m, tr)
      sim.advance(tr.t)
      if (sim.needsTrades(tr.c, tr.m)) sim.trade(tr)
    }
    for (const b of sim.benchmarkTokens()) sim.setLastTrade(last.get(b.asset)!)
  }
  const r = sim.finish()
  return { ...r, history: { ...r.history, trades_read: 0 } }
}

describe("ReplaySimulation fed only the trades it needs", () => {
  it("gives the result of feeding every trade", () => {
    let positions = 0
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const { trades, signals } = scenario(seed)
        for (const d of definitions) {
          const all = replay(d, trades, signals, "all")
          expect(replay(d, trades, signals, "needed")).toEqual(all)
          positions += all.trade_count
        }
      }),
      { numRuns: 40 }
    )
    expect(positions).toBeGreaterThan(100) // the windows do open positions
  })

  it("needs far fewer trades than the window holds", () => {
    const { trades, signals } = scenario(7)
    const decoded = decodeReplayRequest({ definition: definitions[0], from: new Date(FROM).toISOString(), to: new Date(FROM + SPAN).toISOString() })
    if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
    const sim = new ReplaySimulation({ definition: decoded.right.definition, fromMs: FROM, toMs: FROM + SPAN, fees: defaultFees, pricing: pricingFor({ solana: 100_000_000n, hood: 0n }) })
    sim.addSignals(selectCandidates(signals, decoded.right.definition, { fromMs: FROM, toMs: FROM + SPAN }), signals)
    let needed = 0
    for (const tr of trades) {
      sim.advance(tr.t)
      if (sim.needsTrades(tr.c, tr.m)) needed++
      sim.trade(tr)
    }
    // Some trades are needed (entries fill, positions exit), most come while the token has nothing pending.
    expect(needed).toBeGreaterThan(0)
    expect(needed).toBeLessThan(trades.length / 2)
  })
})
