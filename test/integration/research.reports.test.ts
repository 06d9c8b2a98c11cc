/**
 * The strategy lab's research reports (`edges`, `runners`, `first-signals`) on chDB over a small
 * scenario whose every number is computed by hand in the comments. Prices are fee-free quote
 * raw units over token raw units; returns are exact ratios of the raw integers, toward zero to
 * a millionth, net of the 2.5% cost.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, LogLevel, Scope, TestClock, TestContext } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { make as makeResearch, ratioPpm, solPerToken, stats } from "../../src/services/strategy/Research.js"

let dataDir = ""
let scope: Scope.CloseableScope
let ch: ClickHouseShape
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-research-"))
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(ClickHouse.layerChdb({ dataDir }), scope).pipe(Logger.withMinimumLogLevel(LogLevel.Error)))
  ch = Context.get(ctx, ClickHouse)
}, 60_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
/** Runs a report at `ms` on the TestClock (the service reads time from the Clock). */
const at = <A, E>(ms: number, e: Effect.Effect<A, E>) => Effect.runPromise(Effect.zipRight(TestClock.setTime(ms), e).pipe(Effect.provide(TestContext.TestContext)))
const MIN = 60_000
const HOUR = 3_600_000
const chTs = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "")
let seq = 0
/** A buy: `quote` paid (fee included), `fee` of it to the venue, `tokens` received. */
const buy = (mint: string, atMs: number, quote: bigint, tokens: bigint, fee = 0n) => row(mint, atMs, "buy", quote, tokens, fee, quote)
/** A sell: `tokens` in, `out` quote received after `fee`. */
const sell = (mint: string, atMs: number, tokens: bigint, out: bigint, fee: bigint) => row(mint, atMs, "sell", tokens, out, fee, 0n)
const row = (mint: string, atMs: number, side: string, amountIn: bigint, amountOut: bigint, fee: bigint, consumed: bigint) => {
  seq++
  return {
    id: `solana:r${seq}:0`, chain: "solana", mint, venue: "curve", side, trader: "w1",
    amount_in_raw: amountIn, amount_out_raw: amountOut, fee_raw: fee, refund_raw: 0n, quote_consumed_raw: consumed,
    quote_reserve_raw: 30n * 10n ** 9n, token_reserve_raw: 10n ** 15n, real_quote_raw: 0n, crosses_graduation: false,
    position: `s:${String(100_000 + seq).padStart(20, "0")}:000000:0000`, ts: chTs(atMs), signature: `sig${seq}`, version: 1, retracted: 0
  }
}
const signal = (id: string, pattern: string, mint: string, atMs: number, extra: Record<string, unknown> = {}) => ({
  id, pattern, chain: "solana", asset: mint, symbol: null, direction: "in", wallets: ["w1"], wallet_ids: [], groups: [],
  wallet_groups: [[]], size_usd: "100.5", mcap_usd: "50000", age_minutes: 30, venue: "svc-curve", confidence: 80,
  quality: "high", ts: chTs(atMs), position: `s:${String(atMs).padStart(20, "0")}`, details: "{}", ...extra
})

describe("research arithmetic", () => {
  it("ratios and statistics are exact and round toward zero", () => {
    expect(ratioPpm(3n, 1n, 4n, 1n)).toBe(1_333_333n)
    expect(ratioPpm(0n, 1n, 4n, 1n)).toBeUndefined()
    expect(stats([175_000n, 308_333n])).toEqual({ n: 2, mean_net_return_pct: 24.1666, median_net_return_pct: 24.1666, win_rate: 1 })
    expect(stats([-125_000n, 308_333n, -1n])).toEqual({ n: 3, mean_net_return_pct: 6.1110, median_net_return_pct: -0.0001, win_rate: 0.3333 })
    expect(stats([])).toEqual({ n: 0, mean_net_return_pct: null, median_net_return_pct: null, win_rate: null })
    expect(solPerToken(100n, 1n)).toBe("0.100000000000000000")
    expect(solPerToken(1n, 3n)).toBe("0.000333333333333333")
  })
})

describe("research reports on chDB", () => {
  it("edges: forward returns per pattern and horizon, net of 2.5%, from an hourly snapshot", async () => {
    let now = Date.UTC(2024, 4, 10, 12, 30)
    const asOf = Date.UTC(2024, 4, 10, 12, 0)
    const research = makeResearch({ clickhouse: ch })
    const S1 = asOf - 30 * HOUR
    const S2 = asOf - 28 * HOUR
    const S3 = asOf - 2 * HOUR
    await run(ch.insert("trades", [
      // E1 (signal S1). The trade in the signal's own millisecond is never the entry.
      buy("E1", S1, 5000n, 10n),
      buy("E1", S1 + MIN, 1000n, 10n), // entry: 100 per raw token
      buy("E1", S1 + 30 * MIN, 1200n, 10n), // 1 h exit: 1.2 -> +20% - 2.5% = 17.5%
      buy("E1", S1 + 2 * HOUR, 1500n, 10n), // 4 h exit and the peak: 1.5 -> 47.5%
      buy("E1", S1 + 5 * HOUR, 900n, 10n), // 24 h exit: 0.9 -> -12.5%
      buy("E1", S1 + 25 * HOUR, 5000n, 10n), // after 24 h: not read
      // E2 (signal S2): entry 3 per raw token (the buy's fee is not part of the price: (3+1-1)/1).
      buy("E2", S2 + 10 * MIN, 4n, 1n, 1n),
      buy("E2", S2 + 20 * MIN, 4n, 1n), // 4/3 -> 1,333,333 ppm -> 333,333 - 25,000 = 308,333 ppm
      // A sell: 2 tokens for 7 after a fee of 1: fee-free 8 / 2 = 4 per raw token, 4/3 again.
      sell("E2", S2 + 3 * HOUR, 2n, 7n, 1n),
      // E3 (signal S3, 2 h before as_of): only the 1 h horizon has matured.
      buy("E3", S3 + MIN, 10n, 1n),
      buy("E3", S3 + 50 * MIN, 11n, 1n), // 1.1 -> 7.5%
      buy("E3", S3 + 90 * MIN, 100n, 1n), // after 1 h
      // D1 (deployer signal): priceable, but deployer has 1 signal < min_n 2.
      buy("D1", S1 + MIN, 10n, 1n),
      buy("D1", S1 + 2 * MIN, 20n, 1n)
    ]))
    await run(ch.insert("signals", [
      signal("e1", "large_move", "E1", S1),
      signal("e2", "large_move", "E2", S2),
      signal("e3", "large_move", "E3", S3),
      signal("e4", "large_move", "E4", S3), // no trade after it: counted, not priceable
      signal("e5", "large_move", "E1", S1 + 10 * MIN, { direction: "out" }), // out: not an entry
      signal("e6", "large_move", "E3", asOf + 5 * MIN), // after as_of: not in the snapshot
      signal("e7", "large_move", "E1", asOf - 8 * 86_400_000), // before the 7 days
      signal("d1", "deployer", "D1", S1)
    ]))
    const r = await at(now, research.edges({ days: 7, minN: 2, includePeak: true, live: false }))
    expect(r.as_of).toBe(new Date(asOf).toISOString())
    expect(r.snapshot).toBe("hourly")
    expect(r.omitted).toEqual([{ pattern: "deployer", priceable: 1 }])
    expect(r.patterns).toHaveLength(1)
    const lm = r.patterns[0]!
    expect(lm.pattern).toBe("large_move")
    expect(lm.signals).toBe(4) // e1-e4
    expect(lm.priceable).toBe(3)
    // 1 h: 175,000, 308,333, 75,000 -> mean 558,333 / 3 = 186,111; median 175,000
    expect(lm.horizons["1h"]).toEqual({ n: 3, mean_net_return_pct: 18.6111, median_net_return_pct: 17.5, win_rate: 1 })
    // 4 h: 475,000 and 308,333 -> 391,666.5 toward zero
    expect(lm.horizons["4h"]).toEqual({ n: 2, mean_net_return_pct: 39.1666, median_net_return_pct: 39.1666, win_rate: 1 })
    // 24 h: -125,000 and 308,333 -> 91,666
    expect(lm.horizons["24h"]).toEqual({ n: 2, mean_net_return_pct: 9.1666, median_net_return_pct: 9.1666, win_rate: 0.5 })
    // Peak within 24 h: E1 1.5 (475,000), E2 4/3 (308,333)
    expect(lm.peak).toEqual({ n: 2, mean_net_return_pct: 39.1666, median_net_return_pct: 39.1666, win_rate: 1 })

    // The same hour answers the snapshot even after new data; live sees it; the next hour recomputes.
    await run(ch.insert("signals", [signal("d2", "deployer", "D1", S1 + 30 * MIN)]))
    await run(ch.insert("trades", [buy("D1", S1 + 31 * MIN, 30n, 1n)]))
    const again = await at(now, research.edges({ days: 7, minN: 2, includePeak: true, live: false }))
    expect(again).toEqual(r)
    const live = await at(now, research.edges({ days: 7, minN: 2, includePeak: false, live: true }))
    expect(live.snapshot).toBe("live")
    expect(live.patterns.map((x) => x.pattern)).toEqual(["deployer", "large_move"])
    expect(live.patterns[0]!.peak).toBeUndefined()
    now += HOUR
    const next = await at(now, research.edges({ days: 7, minN: 2, includePeak: true, live: false }))
    expect(next.as_of).toBe(new Date(asOf + HOUR).toISOString())
    // deployer: d1 entry 10 (D1 +1 min), 1 h exit 30 (d2's trade at +31 min) -> 3x -> +200% - 2.5% = 1,975,000 ppm;
    // d2 entry 30 (+31 min), exit 30 -> -25,000 ppm; mean (1,975,000 - 25,000) / 2 = 975,000 ppm = 97.5%
    expect(next.patterns[0]!.horizons["1h"]).toEqual({ n: 2, mean_net_return_pct: 97.5, median_net_return_pct: 97.5, win_rate: 0.5 })
  })

  it("runners: tokens whose signals had enough wallets and whose price reached the multiple", async () => {
    const now = Date.UTC(2024, 5, 1, 12, 0)
    const research = makeResearch({ clickhouse: ch })
    const S = now - 5 * HOUR
    await run(ch.insert("signals", [
      signal("r1a", "confluence", "R1", S, { wallets: ["w1", "w2"], wallet_groups: [[], []] }),
      signal("r1b", "large_move", "R1", S + HOUR, { wallets: ["w2", "w3"], wallet_groups: [[], []] }),
      signal("r2", "confluence", "R2", S, { wallets: ["w1"] }), // one wallet
      signal("r3", "confluence", "R3", S, { wallets: ["w1", "w4"], wallet_groups: [[], []] }), // ran only 1.5x
      signal("r4", "confluence", "R4", now - 30 * HOUR, { wallets: ["w1", "w4"], wallet_groups: [[], []] }) // before the 24 h
    ]))
    await run(ch.insert("trades", [
      buy("R1", S + MIN, 100n, 1n), // entry 100 lamports per raw token = 0.1 SOL per token
      buy("R1", S + 2 * HOUR, 350n, 1n), // peak 3.5x
      buy("R1", S + 3 * HOUR, 250n, 1n), // last 2.5x
      buy("R2", S + MIN, 100n, 1n),
      buy("R2", S + 2 * MIN, 900n, 1n),
      buy("R3", S + MIN, 100n, 1n),
      buy("R3", S + 2 * MIN, 150n, 1n),
      buy("R4", now - 29 * HOUR, 100n, 1n),
      buy("R4", now - 2 * HOUR, 900n, 1n)
    ]))
    const r = await at(now, research.runners({ hours: 24, minWallets: 2, minMultiple: 2 }))
    expect(r.tokens).toEqual([
      {
        asset: "R1", first_signal_id: "r1a", first_signal_at: new Date(S).toISOString(), signals: 2, patterns: ["confluence", "large_move"],
        wallets: 3, trades_after: 3, entry_price_sol: "0.100000000000000000", peak_price_sol: "0.350000000000000000",
        peak_at: new Date(S + 2 * HOUR).toISOString(), last_price_sol: "0.250000000000000000", peak_multiple: 3.5, last_multiple: 2.5
      }
    ])
    const loose = await at(now, research.runners({ hours: 24, minWallets: 1, minMultiple: 1 }))
    expect(loose.tokens.map((t) => [t.asset, t.peak_multiple])).toEqual([["R2", 9], ["R1", 3.5], ["R3", 1.5]])
  })

  it("first-signals: tokens first signalled in the window, and what followed", async () => {
    const now = Date.UTC(2024, 6, 1, 12, 0)
    const research = makeResearch({ clickhouse: ch })
    await run(ch.insert("signals", [
      signal("f1", "new_ticker", "F1", now - 30 * MIN, { size_usd: null, wallets: ["w9"] }),
      signal("f1b", "large_move", "F1", now - 20 * MIN),
      signal("f1c", "confluence", "F1", now - 10 * MIN, { direction: "out" }),
      signal("f2old", "deployer", "F2", now - 2 * HOUR), // F2 was signalled before: not a first signal
      signal("f2", "large_move", "F2", now - 15 * MIN),
      signal("f3", "large_move", "F3", now - 90 * MIN), // first signal before the 60 minutes
      signal("f4", "deployer", "F4", now - 5 * MIN) // no trade after it
    ]))
    await run(ch.insert("trades", [
      buy("F1", now - 40 * MIN, 9_000_000_000n, 1_000_000n), // before the signal: not read
      buy("F1", now - 25 * MIN, 2_000_000_000n, 1_000_000n), // entry: 2 SOL per token
      sell("F1", now - 15 * MIN, 500_000n, 1_400_000_000n, 100_000_000n), // fee-free 1.5 SOL for 0.5 token: 3 SOL per token (peak)
      buy("F1", now - 5 * MIN, 2_500_000_000n, 1_000_000n) // last: 2.5 SOL per token
    ]))
    const r = await at(now, research.firstSignals({ minutes: 60 }))
    expect(r.truncated).toBe(false)
    expect(r.tokens.map((t) => t.asset)).toEqual(["F4", "F1"])
    expect(r.tokens[0]!.followed).toMatchObject({ signals_after: 0, trades_after: 0, entry_price_sol: null, buy_volume_sol: "0.000000000" })
    expect(r.tokens[1]).toEqual({
      asset: "F1",
      signal: { id: "f1", pattern: "new_ticker", direction: "in", at: new Date(now - 30 * MIN).toISOString(), wallets: ["w9"], size_usd: null, mcap_usd: "50000", confidence: 80 },
      followed: {
        signals_after: 2, patterns_after: ["confluence", "large_move"], trades_after: 3,
        buy_volume_sol: "4.500000000", sell_volume_sol: "1.500000000",
        entry_price_sol: "2.000000000000000000", last_price_sol: "2.500000000000000000", peak_price_sol: "3.000000000000000000",
        last_multiple: 1.25, peak_multiple: 1.5
      }
    })
  })
})
