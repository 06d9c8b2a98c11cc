/**
 * The strategy replay on chDB (temp dir), over trades and signals written straight into the
 * `trades` and `signals` tables: a scenario computed by hand (the arithmetic is in the
 * comments), the verdict rules, the job runner's timeout on a real replay, and the chart of a
 * real result.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger, LogLevel } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import { equityChartSvg } from "../../src/services/strategy/Chart.js"
import { decodeReplayRequest, type ReplayRequest } from "../../src/services/strategy/Definition.js"
import { defaultFees, pricingFor, runReplay } from "../../src/services/strategy/Replay.js"
import { make as makeJobs } from "../../src/services/strategy/ReplayJobs.js"
import { SignalHistory } from "../../src/services/strategy/SignalHistory.js"
import { mulberry32 } from "../../src/domain/SeededRandom.js"
import { eventuallyEffect } from "../support/eventually.js"

let dataDir = ""
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-strategy-"))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const env = () => {
  const ch = ClickHouse.layerChdb({ dataDir })
  return Layer.merge(ch, Layer.provide(SignalHistory.layerClickHouse, ch))
}
const run = <A, E>(program: Effect.Effect<A, E, ClickHouse | SignalHistory>) =>
  Effect.runPromise(Effect.provide(program, env()).pipe(Logger.withMinimumLogLevel(LogLevel.Error)))

const T = Date.UTC(2024, 2, 1) // the window starts 2024-03-01T00:00Z
const MIN = 60_000
const SOL = 1_000_000_000n // lamports
const settings = { fees: defaultFees, pricing: pricingFor({ solana: 100_000_000n, hood: 3_000_000_000n }) } // $100 a SOL

let seq = 0
const chTs = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "")
/** A buy print with no fee: fee-free quote = `quote`, tokens = `tokens`; post-trade reserves `V`, `X`. */
const trade = (mint: string, atMs: number, quote: bigint, tokens: bigint, V: bigint, X: bigint) => {
  seq++
  return {
    id: `solana:t${seq}:0`, chain: "solana", mint, venue: "curve", side: "buy", trader: "w1",
    amount_in_raw: quote, amount_out_raw: tokens, fee_raw: 0n, refund_raw: 0n, quote_consumed_raw: quote,
    quote_reserve_raw: V, token_reserve_raw: X, real_quote_raw: 0n, crosses_graduation: false,
    position: `s:${String(100_000 + seq).padStart(20, "0")}:000000:0000`, ts: chTs(atMs), signature: `sig${seq}`,
    version: 1, retracted: 0
  }
}
/** A row of the detectors' `signals` table (migration 0005, registered: the ClickHouse layer creates it). */
const signal = (id: string, pattern: string, mint: string, atMs: number, extra: Record<string, unknown> = {}) => ({
  id, pattern, chain: "solana", asset: mint, symbol: null, direction: "in", wallets: ["w1", "w2"], wallet_ids: ["tw1"], groups: ["smart"],
  wallet_groups: [["smart"], []], size_usd: "1500.5", mcap_usd: "50000", age_minutes: 30, venue: "svc-curve", confidence: 80,
  quality: "high", ts: chTs(atMs), position: `s:${String(atMs).padStart(20, "0")}`, details: "{}", ...extra
})

const request = (body: unknown): ReplayRequest => {
  const r = decodeReplayRequest(body)
  if (Either.isLeft(r)) throw new Error(`${r.left.path}: ${r.left.message}`)
  return r.right
}

const handDefinition = {
  chain: "solana",
  entry: { source: "pattern", pattern: "confluence", filters: { min_usd: 1000, groups: ["smart"] } },
  exit: { take_profit_pct: 50, stop_loss_pct: 20 },
  sizing: { usd_per_trade: "10", max_concurrent: 1 }
}

describe("strategy replay on chDB", () => {
  it("matches a scenario computed by hand", async () => {
    await run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const V30 = 30n * SOL
        const X = 10n ** 15n
        yield* ch.insert("trades", [
          trade("OLD", T - 86_400_000, SOL, 10n ** 14n, V30, X), // history reaches before the window
          // Token A. a0 is in the signal's own millisecond (the trade that caused it): never an entry.
          trade("A", T + 10 * MIN, SOL, 10n ** 14n, 1n * SOL, X),
          trade("A", T + 11 * MIN, 3n * SOL, 10n ** 14n, V30, X), // a1: the entry fills on these reserves
          trade("A", T + 20 * MIN, 5n * SOL, 10n ** 14n, 40n * SOL, X), // a2: price 5e-5 crosses take profit
          trade("A", T + 21 * MIN, 4n * SOL, 10n ** 14n, 45n * SOL, 666_666_666_666_667n), // a3: the exit fills here
          // Token B.
          trade("B", T + 31 * MIN, 3n * SOL, 10n ** 14n, V30, X), // b1: entry (same reserves as a1)
          trade("B", T + 40 * MIN, 2n * SOL, 10n ** 14n, 25n * SOL, X), // b2: price 2e-5 crosses stop loss
          trade("B", T + 41 * MIN, 2n * SOL, 10n ** 14n, 24n * SOL, 1_250_000_000_000_000n), // b3: the exit fills here
          trade("D", T + 61 * MIN, 3n * SOL, 10n ** 14n, V30, X)
        ])
        yield* ch.insert("signals", [
          signal("s1", "confluence", "A", T + 10 * MIN),
          signal("s2", "confluence", "B", T + 15 * MIN), // A is open and max_concurrent is 1: skipped
          signal("s3", "confluence", "B", T + 30 * MIN),
          signal("s4", "confluence", "C", T + 50 * MIN), // C never trades again: no_trade_after_signal
          signal("s5", "deployer", "D", T + 60 * MIN), // another pattern: not a candidate
          signal("s6", "confluence", "D", T + 60 * MIN, { size_usd: "999.99" }), // under min_usd
          signal("s7", "confluence", "D", T + 60 * MIN, { wallet_groups: [[], []] }), // no wallet in "smart"
          signal("s8", "confluence", "D", T + 60 * MIN, { size_usd: null }) // no USD price: min_usd never met
        ])
        const r = yield* runReplay(
          request({ definition: handDefinition, from: new Date(T).toISOString(), to: new Date(T + 86_400_000).toISOString() }),
          settings
        )

        // Entry (A and B alike), stake $10 = 10,000,000 micro-USD at $100/SOL:
        //   platform fee = ceil(10,000,000 * 25 / 10,000) = 25,000 micro-USD
        //   quote in = floor(9,975,000 * 1e9 / 1e8) = 99,750,000 lamports
        //   curve fee = ceil(99,750,000 * 100 / 10,000) = 997,500; net = 98,752,500
        //   tokens = floor(1e15 * 98,752,500 / (30e9 + 98,752,500)) = 3,280,949,933,057
        //   slippage = 98,752,500 - floor(3,280,949,933,057 * 30e9 / 1e15) = 98,752,500 - 98,428,497 = 324,003 lamports
        //   entry price = 99,750,000 / 3,280,949,933,057 lamports per raw token
        //     = $0.000003040278030303 per token (x 1e8 micro-USD/SOL x 1e6 token decimals / 1e9)
        // A, on a2 (5e9 / 1e14 = 5e-5 per raw): 5e-5 >= 1.5 x 3.0403e-5 = 4.56e-5 -> take profit, fills on a3:
        //   gross = floor(45e9 * 3,280,949,933,057 / (666,666,666,666,667 + 3,280,949,933,057)) = 220,379,539
        //   curve fee = ceil(220,379,539 / 100) = 2,203,796; USD = floor(218,175,743 / 10) = 21,817,574 micro
        //   platform fee = ceil(21,817,574 * 25 / 10,000) = 54,544; proceeds = 21,763,030 -> P&L +11,763,030
        //   slippage = floor(3,280,949,933,057 * 45e9 / 666,666,666,666,667) - 220,379,539 = 1,084,581 lamports
        // B, on b2 (2e-5 <= 0.8 x 3.0403e-5 = 2.43e-5) -> stop loss, fills on b3:
        //   gross = floor(24e9 * 3,280,949,933,057 / (1.25e15 + 3,280,949,933,057)) = 62,829,326
        //   curve fee = 628,294; USD = floor(62,201,032 / 10) = 6,220,103; platform = ceil(6,220,103 * 0.0025) = 15,551
        //   proceeds = 6,204,552 -> P&L -3,795,448
        //   slippage = 164,912 lamports
        expect(r.trade_count).toBe(2)
        expect(r.trades.map((t) => [t.asset, t.close_reason, t.pnl_usd])).toEqual([
          ["A", "take_profit", "11.763030"],
          ["B", "stop_loss", "-3.795448"]
        ])
        const a = r.trades[0]!
        expect(a.entry_at).toBe(new Date(T + 11 * MIN).toISOString()) // a1, never a0
        expect(a.exit_at).toBe(new Date(T + 21 * MIN).toISOString()) // a3, the trade after the crossing one
        expect(a.entry_usd).toBe("10.000000")
        expect(a.exit_usd).toBe("21.763030")
        expect(a.tokens_raw).toBe("3280949933057")
        expect(a.entry_price_usd).toBe("0.000003040278030303")
        // exit price = gross / tokens = 220,379,539 / 3,280,949,933,057 -> $0.000006716943065164
        expect(a.exit_price_usd).toBe("0.000006716943065164")
        expect(r.pnl_usd).toBe("7.967582") // 11,763,030 - 3,795,448
        // Fees: curve = 2 x floor(997,500 / 10) + floor(2,203,796 / 10) + floor(628,294 / 10)
        //   = 199,500 + 220,379 + 62,829 = 482,708; platform = 2 x 25,000 + 54,544 + 15,551 = 120,095
        expect(r.fees).toEqual({ curve_usd: "0.482708", platform_usd: "0.120095" })
        expect(r.fees_paid_usd).toBe("0.602803")
        // Slippage: 2 x floor(324,003 / 10) + floor(1,084,581 / 10) + floor(164,912 / 10) = 64,800 + 108,458 + 16,491
        expect(r.slippage_usd).toBe("0.189749")
        // Cash never falls below -$10 (one position at a time; A returned more than it cost).
        expect(r.required_start_usd).toBe("10.000000")
        expect(r.final_usd).toBe("17.967582")
        expect(r.peak_capital_at_risk_usd).toBe("10.000000")
        // Drawdown: peak 21.763030 after A, then 17.967582 after B: 3,795,448 / 21,763,030 = 17.43%
        expect(r.max_drawdown_pct).toBe(17.43)
        expect(r.skips).toEqual({ already_open: 0, max_concurrent: 1, insufficient_capital: 0, no_trade_after_signal: 1, zero_fill: 0 })
        // s1, s2, s3, s4 pass the entry; s1-s3 have a later trade of their token.
        expect(r.universe).toEqual({ candidates: 4, priceable: 3, tokens: 3 })
        expect(r.exit_reasons.take_profit).toBe(1)
        expect(r.exit_reasons.stop_loss).toBe(1)
        expect(r.win_rate).toBe(0.5)
        // 11,763,030 / 3,795,448 = 3.0992
        expect(r.profit_factor).toBe(3.0992)
        expect(r.expectancy_usd).toBe("3.983791")
        // Returns 1.176303 and -0.3795448: mean 0.39837910, sample sd 1.10015027 -> 0.3621;
        // downside deviation sqrt(0.3795448^2 / 2) = 0.26837909 -> Sortino 1.4844
        expect(r.sharpe).toBe(0.3621)
        expect(r.sortino).toBe(1.4844)
        // Benchmark: A bought after s1 (a1), B after s2 (b1), each $10 and held to their last trades (a3, b3):
        // the same fills as the strategy's, so 21.763030 + 6.204552 = 27.967582 for $20 (+39.83%).
        expect(r.benchmark).toEqual({
          kind: "buy_and_hold", tokens: 2, invested_usd: "20.000000", final_usd: "27.967582", pnl_usd: "7.967582", return_pct: 39.83
        })
        expect(r.per_token.map((t) => [t.asset, t.pnl_usd])).toEqual([["A", "11.763030"], ["B", "-3.795448"]])
        // Fewer than 5 priceable entry signals: too little history to judge.
        expect(r.verdict).toBe("insufficient")
        // Hourly equity: 24 marks + the end; the first before any trade, the last at the realized end.
        expect(r.equity).toHaveLength(25)
        expect(r.equity[0]!.equity_usd).toBe("10.000000")
        expect(r.equity[24]!.equity_usd).toBe("17.967582")
        expect(r.equity[1]!.drawdown_pct).toBe(17.43)
        const svg = equityChartSvg({ title: "hand <scenario> & co", equity: r.equity, maxDrawdownPct: r.max_drawdown_pct, pnlUsd: r.pnl_usd })
        expect(svg).toContain("hand &lt;scenario&gt; &amp; co")
      })
    )
  })

  it("reads the detectors' table: confidence 0..100 as 0..1, NULLs as 0 or empty, wallet ids and per-wallet groups", async () => {
    await run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const at = T + 5 * 86_400_000
        yield* ch.insert("signals", [
          signal("m1", "kol_mention", "M", at, { size_usd: null, mcap_usd: null, age_minutes: null, venue: null, confidence: 55, quality: "medium", wallets: [], wallet_ids: [], wallet_groups: [] }),
          signal("m2", "large_move", "M", at + 1, { direction: "out", size_usd: "12.345678", mcap_usd: "123456789012345678.5" })
        ])
        const rows = yield* (yield* SignalHistory).range({ fromMs: at, toMs: at + MIN }, { chains: ["solana"] })
        expect(rows.map((r) => r.id)).toEqual(["m1", "m2"])
        expect(rows[0]).toMatchObject({ pattern: "kol_mention", usdMicros: 0n, mcapUsdMicros: 0n, ageMinutes: 0, venue: "", confidence: 0.55, quality: "medium", score1h: 0, walletIds: [], walletGroups: [] })
        expect(rows[1]).toMatchObject({
          direction: "out", usdMicros: 12_345_678n, mcapUsdMicros: 123_456_789_012_345_678_500_000n, confidence: 0.8, venue: "svc-curve",
          wallets: ["w1", "w2"], walletIds: ["tw1"], walletGroups: [["smart"], []], tsMs: at + 1
        })
        const only = yield* (yield* SignalHistory).range({ fromMs: at, toMs: at + MIN }, { chains: ["solana"], patterns: ["large_move"] })
        expect(only.map((r) => r.id)).toEqual(["m2"])
      })
    )
  })

  it("selects entries by tracked wallet id and by min_confidence on the 0..1 scale", async () => {
    await run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const at = T + 6 * 86_400_000
        const X = 10n ** 15n
        yield* ch.insert("trades", [
          trade("W1", at + MIN, 3n * SOL, 10n ** 14n, 30n * SOL, X),
          trade("W2", at + 2 * MIN, 3n * SOL, 10n ** 14n, 30n * SOL, X)
        ])
        yield* ch.insert("signals", [
          signal("t1", "confluence", "W1", at, { confidence: 90, wallet_ids: ["tw9"] }),
          signal("t2", "confluence", "W2", at + MIN, { confidence: 60, wallet_ids: ["tw1"] })
        ])
        const window = { from: new Date(at).toISOString(), to: new Date(at + 86_400_000).toISOString() }
        const byWallet = yield* runReplay(
          request({ ...window, definition: { ...handDefinition, entry: { source: "pattern", pattern: "confluence", filters: { wallet_ids: ["tw9"] } } } }),
          settings
        )
        expect(byWallet.trades.map((t) => t.asset)).toEqual(["W1"])
        const confident = yield* runReplay(
          request({ ...window, definition: { ...handDefinition, entry: { source: "trade_signal", min_confidence: 0.75 } } }),
          settings
        )
        expect(confident.universe.candidates).toBe(1)
        expect(confident.trades.map((t) => t.asset)).toEqual(["W1"])
        const lower = yield* runReplay(
          request({ ...window, definition: { ...handDefinition, entry: { source: "trade_signal", min_confidence: 0.6 } } }),
          settings
        )
        expect(lower.universe.candidates).toBe(2)
      })
    )
  })

  it("passes with 5 trades under 20% drawdown, fails over it, and restricts to asset_ids", async () => {
    await run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const X = 10n ** 15n
        const start = T + 2 * 86_400_000
        const rows = []
        const sigs = []
        // Five tokens, each: signal, entry trade, then a trade at +60% (take profit), then the fill trade.
        for (let i = 0; i < 5; i++) {
          const at = start + i * 60 * MIN
          sigs.push(signal(`p${i}`, "large_move", `P${i}`, at))
          rows.push(trade(`P${i}`, at + MIN, 3n * SOL, 10n ** 14n, 30n * SOL, X))
          rows.push(trade(`P${i}`, at + 2 * MIN, 6n * SOL, 10n ** 14n, 60n * SOL, X))
          rows.push(trade(`P${i}`, at + 3 * MIN, 6n * SOL, 10n ** 14n, 60n * SOL, X))
        }
        yield* ch.insert("trades", rows)
        yield* ch.insert("signals", sigs)
        const def = { ...handDefinition, entry: { source: "pattern", pattern: "large_move" }, sizing: { usd_per_trade: 10, max_concurrent: 2 } }
        const body = { definition: def, from: new Date(start).toISOString(), to: new Date(start + 86_400_000).toISOString() }
        const r = yield* runReplay(request(body), settings)
        expect(r.trade_count).toBe(5)
        expect(r.max_drawdown_pct).toBe(0)
        expect(r.verdict).toBe("pass")
        const only = yield* runReplay(request({ ...body, asset_ids: ["P1", "P3"] }), settings)
        expect(only.trades.map((t) => t.asset)).toEqual(["P1", "P3"])
        expect(only.verdict).toBe("insufficient")
        // The same 5 tokens with a crash instead: stop loss on each, drawdown far over 20%.
        const crash = []
        const crashSigs = []
        const day = start + 86_400_000
        for (let i = 0; i < 5; i++) {
          const at = day + i * 60 * MIN
          crashSigs.push(signal(`c${i}`, "large_move", `Q${i}`, at))
          crash.push(trade(`Q${i}`, at + MIN, 3n * SOL, 10n ** 14n, 30n * SOL, X))
          crash.push(trade(`Q${i}`, at + 2 * MIN, 1n * SOL, 10n ** 14n, 10n * SOL, X))
          crash.push(trade(`Q${i}`, at + 3 * MIN, 1n * SOL, 10n ** 14n, 10n * SOL, X))
        }
        yield* ch.insert("trades", crash)
        yield* ch.insert("signals", crashSigs)
        const bad = yield* runReplay(
          request({ ...body, from: new Date(day).toISOString(), to: new Date(day + 86_400_000).toISOString() }),
          settings
        )
        expect(bad.trade_count).toBe(5)
        expect(bad.exit_reasons.stop_loss).toBe(5)
        expect(bad.max_drawdown_pct).toBeGreaterThan(20)
        expect(bad.verdict).toBe("fail")
        expect(bad.verdict_reason).toBe("drawdown over 20%")
      })
    )
  })

  it("bounds each statement's rows (2 here: more statements, pages halved) with the same result", async () => {
    await run(
      Effect.gen(function* () {
        const body = { definition: handDefinition, from: new Date(T).toISOString(), to: new Date(T + 86_400_000).toISOString() }
        const whole = yield* runReplay(request(body), settings)
        const paged = yield* runReplay(request(body), { ...settings, pageRowsMax: 2 })
        expect(paged).toEqual(whole)
        const all = yield* runReplay(request(body), { ...settings, read: "all" })
        const allPaged = yield* runReplay(request(body), { ...settings, read: "all", pageRowsMax: 2 })
        expect(allPaged).toEqual(all)
      })
    )
  })

  // The range read (what replays use) must give exactly the exhaustive read's result. Random
  // windows (seeded: a failure names its seed) with what the read must get right: copies of a
  // trade and retracted or re-included trades (FINAL), several trades in one millisecond on one
  // or several tokens (chain order by position), signals in a trade's own millisecond, tokens
  // with many trades (ranges that run out and grow) and with none after a signal; every exit
  // rule, capital limits, and tiny pages and short rounds beside the defaults.
  it("reads only the trades that matter, with the exhaustive read's result on random windows", async () => {
    const definitions: ReadonlyArray<unknown> = [
      { ...handDefinition, entry: { source: "pattern", pattern: "large_move" }, exit: { take_profit_pct: 25, stop_loss_pct: 15, max_hold_hours: 0.5 }, sizing: { usd_per_trade: 10, max_concurrent: 3 } },
      {
        chain: "solana",
        entry: { source: "pattern", pattern: "large_move" },
        exit: { trailing: { arm_multiple: 1.1, drop_pct: 8 }, ladder: [{ at_multiple: 1.2, sell_pct: 50 }, { at_multiple: 1.4, sell_pct: 50 }], exit_on_signal: true },
        sizing: { usd_per_trade: 20, max_concurrent: 4, base_usd: 60, rules: [{ when: { min_usd: 1200 }, pct_of_equity: 30 }] }
      },
      { chain: "solana", entry: { source: "trade_signal", min_confidence: 0.5 }, exit: { max_hold_hours: 6 }, sizing: { usd_per_trade: 5, max_concurrent: 2 } },
      { chain: "solana", entry: { source: "pattern", pattern: "large_move" }, exit: { exit_on_signal: true, stop_loss_pct: 40 }, sizing: { usd_per_trade: 5, max_concurrent: 6 } }
    ]
    await run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        for (const seed of [11, 23]) {
          const rand = mulberry32(seed)
          const int = (n: number) => Math.floor(rand() * n)
          const start = T + (20 + seed) * 86_400_000 // clear of the other tests' data
          const span = 2 * 86_400_000
          const mints = Array.from({ length: 10 }, (_, i) => `R${seed}_${i}`)
          // Trade times: token 0 is hot, 9 trades rarely; some land in one millisecond.
          const prints: Array<{ mint: string; at: number }> = []
          mints.forEach((mint, i) => {
            const n = i === 0 ? 1_500 : i === 9 ? 3 : 20 + int(150)
            for (let k = 0; k < n; k++) prints.push({ mint, at: start + int(span) })
          })
          for (let k = 0; k < 80; k++) {
            const p = prints[int(prints.length)]!
            prints.push({ mint: rand() < 0.5 ? p.mint : mints[int(mints.length)]!, at: p.at })
          }
          prints.sort((a, b) => a.at - b.at)
          const rows: Array<Record<string, unknown>> = []
          prints.forEach((p, k) => {
            const V = BigInt(10 + int(40)) * SOL
            const X = 10n ** 15n
            const quote = BigInt(1 + int(3)) * SOL
            const row = {
              ...trade(p.mint, p.at, quote, (quote * X) / V, V, X),
              id: `solana:r${seed}_${k}:0`,
              position: `s:${String(seed * 1_000_000 + k).padStart(20, "0")}:000000:0000`
            }
            rows.push(row)
            const fate = rand()
            if (fate < 0.05) rows.push({ ...row }) // a redelivered copy
            else if (fate < 0.1) rows.push({ ...row, version: 2, retracted: 1 }) // retracted
            else if (fate < 0.13) rows.push({ ...row, version: 2, retracted: 1 }, { ...row, version: 3, retracted: 0 }) // re-included
          })
          yield* ch.insert("trades", rows)
          const sigs: Array<Record<string, unknown>> = []
          for (let k = 0; k < 60; k++) {
            const mint = mints[int(mints.length)]!
            // A third of the signals fire in a trade's own millisecond.
            const at = rand() < 0.33 ? prints[int(prints.length)]!.at : start + int(span)
            sigs.push(
              signal(`r${seed}_${k}`, "large_move", mint, at, {
                direction: rand() < 0.2 ? "out" : "in",
                size_usd: String(500 + int(1500)),
                confidence: int(100)
              })
            )
          }
          yield* ch.insert("signals", sigs)

          const window = { from: new Date(start).toISOString(), to: new Date(start + span).toISOString() }
          for (const [d, definition] of definitions.entries()) {
            const body = request({ ...window, definition })
            const all = yield* runReplay(body, { ...settings, read: "all" })
            const asRead = (r: typeof all) => ({ ...r, history: { ...r.history, trades_read: 0 } })
            for (const options of [{}, { pageRowsMax: 5, roundMs: 3 * 3_600_000 }, { roundMs: 3_600_000 }]) {
              const ranged = yield* runReplay(body, { ...settings, ...options })
              expect(asRead(ranged), `seed ${seed}, definition ${d}, ${JSON.stringify(options)}`).toEqual(asRead(all))
              expect(ranged.history.trades_read).toBeLessThan(all.history.trades_read)
            }
            if (d === 0) expect(all.trade_count).toBeGreaterThan(5) // not a vacuous comparison
          }
        }
      })
    )
  }, 120_000)

  it("a job stops itself at its time limit (failed, timed_out)", async () => {
    await run(
      Effect.scoped(
        Effect.gen(function* () {
          const ctx = yield* Effect.context<ClickHouse | SignalHistory>()
          // A real replay, made slow by the ClickHouse statement it waits on (a sleep in SQL).
          const ch = yield* ClickHouse
          const jobs = yield* makeJobs({
            timeoutMs: 50,
            run: (req) =>
              Effect.zipRight(
                Effect.orDie(ch.command("SELECT sleepEachRow(0.1) FROM numbers(5) FORMAT Null")),
                Effect.provide(runReplay(req, settings), ctx)
              )
          })
          const body = { definition: handDefinition, from: new Date(T).toISOString(), to: new Date(T + 86_400_000).toISOString() }
          const { job_id } = yield* jobs.submit("acct", request(body))
          const job = yield* eventuallyEffect(Effect.map(jobs.get("acct", job_id), (j) => (j.status === "queued" || j.status === "running" ? undefined : j)), {
            what: "the limited replay to end",
            deadlineMs: 10_000,
            intervalMs: 20
          })
          expect(job.status).toBe("failed")
          expect(job.error?.code).toBe("timed_out")
          // Without the limit the same replay finishes.
          const quick = yield* makeJobs({ run: (req) => Effect.provide(runReplay(req, settings), ctx) })
          const second = yield* quick.submit("acct", request(body))
          const done = yield* eventuallyEffect(Effect.map(quick.get("acct", second.job_id), (j) => (j.status === "queued" || j.status === "running" ? undefined : j)), {
            what: "the unlimited replay to end",
            deadlineMs: 10_000,
            intervalMs: 20
          })
          expect(done.status).toBe("done")
          expect(done.result?.trade_count).toBe(2)
        })
      )
    )
  })
})
