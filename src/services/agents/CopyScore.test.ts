import { describe, expect, it } from "vitest"
import type { WalletTrade } from "../../../clickhouse/queries/WalletReads.js"
import { assess, cohortRank, copyInputs, microsToUsd, type TokenContext } from "./CopyScore.js"

const DAY = 86_400_000
const MIN = 60_000
const T = Date.UTC(2026, 2, 31, 12, 0, 0)

let seq = 0
const trade = (mint: string, side: "buy" | "sell", atMs: number, quoteRaw: bigint, tokenRaw: bigint): WalletTrade => ({
  id: `t${++seq}`,
  mint,
  venue: "curve",
  side,
  trader: "W",
  tokenRaw,
  quoteRaw,
  volumeQuoteRaw: quoteRaw,
  feeRaw: 0n,
  quoteReserveRaw: 0n,
  tokenReserveRaw: 0n,
  position: String(atMs).padStart(16, "0"),
  atMs,
  signature: `s${seq}`
})

describe("copy inputs", () => {
  it("counts the window's trades on a cost basis built from older ones; null where nothing was measured", () => {
    const launchB = T - 2 * DAY
    const history = [
      trade("A", "buy", T - 35 * DAY, 100n, 1_000n), // before the window: cost basis only
      trade("C", "buy", T - 3 * DAY, 100n, 500n), // open, launch unknown
      trade("B", "buy", launchB + 5 * MIN, 200n, 1_000n), // early
      trade("B", "sell", launchB + 65 * MIN, 150n, 1_000n), // closes B at a loss of 50
      trade("A", "sell", T - DAY, 80n, 500n) // half of A: cost out 50, realized +30
    ]
    const token = (mint: string): TokenContext => ({
      usdMicros: (raw) => raw * 2n,
      launchedAtMs: mint === "B" ? launchB : mint === "A" ? T - 40 * DAY : undefined
    })
    const i = copyInputs(history, false, T, token)
    expect(i).toEqual({
      trades: 4,
      tokensTraded: 3,
      tokensClosed: 2,
      winRateBps: 5_000,
      realizedPnlUsd: "-0.00004", // (30 - 50) raw x 2 micro-dollars
      spentUsd: "0.0006", // B 200 + C 100
      returnBps: -800, // -40 / (A's 50 + B's 200) x 2
      medianHoldSeconds: 3_600,
      earlyEntryBps: 10_000, // B early; C's launch unknown; A not bought in the window
      avgEntryUsd: "0.0003",
      activeDays: 3,
      lastTradeAt: new Date(T - DAY).toISOString(),
      historyTruncated: false
    })
    expect(assess(i)).toMatchObject({ score: null, grade: null, label: "insufficient_history" })
    // A token without a USD price: the money inputs are not measured.
    const unpriced = copyInputs(history, true, T, (m) => ({ ...token(m), usdMicros: m === "C" ? undefined : token(m).usdMicros }))
    expect(unpriced).toMatchObject({ realizedPnlUsd: null, returnBps: null, spentUsd: null, avgEntryUsd: null, winRateBps: 5_000, historyTruncated: true })
    // An empty history.
    expect(copyInputs([], false, T, token)).toMatchObject({
      trades: 0,
      tokensTraded: 0,
      winRateBps: null,
      realizedPnlUsd: null,
      returnBps: null,
      medianHoldSeconds: null,
      earlyEntryBps: null,
      lastTradeAt: null
    })
  })

  it("scores and ranks by the documented integer formula", () => {
    const history: Array<WalletTrade> = []
    for (let d = 0; d < 6; d++) {
      const at = T - (6 - d) * DAY
      history.push(trade(`M${d}`, "buy", at, 100n, 1_000n))
      history.push(trade(`M${d}`, "sell", at + 60 * MIN, d === 5 ? 70n : 130n, 1_000n))
    }
    const dollars = (launchOffset: number) => (mint: string): TokenContext => ({
      usdMicros: (raw) => raw * 1_000_000n,
      launchedAtMs: history.find((t) => t.mint === mint)!.atMs - launchOffset
    })
    const i = copyInputs(history, false, T, dollars(20 * MIN))
    expect(i).toMatchObject({ tokensClosed: 6, winRateBps: 8_333, realizedPnlUsd: "120", returnBps: 2_000, activeDays: 6, avgEntryUsd: "100", earlyEntryBps: 0 })
    const a = assess(i)
    // win floor(8333 x 40 / 10000) = 33, return floor(7000 x 30 / 10000) = 21, activity 12, sample 3.
    expect(a).toMatchObject({ score: 69, grade: "B", label: "consistent" })
    expect(cohortRank("steady", i, a)).toBe(69n)
    expect(cohortRank("high_conviction", i, a)).toBe(100_000_000n)
    expect(cohortRank("early_finder", i, a)).toBeUndefined()
    const early = copyInputs(history, false, T, dollars(MIN))
    expect(cohortRank("early_finder", early, assess(early))).toBe(10_000n)
    // One cent less per entry: not high conviction; a held hour less: neither.
    const cheap = copyInputs(history, false, T, (m) => ({ ...dollars(MIN)(m), usdMicros: (raw) => raw * 999_999n }))
    expect(cohortRank("high_conviction", cheap, assess(cheap))).toBeUndefined()
    // Losing overall: labelled losing, not steady.
    const losing = history.map((t) => (t.side === "sell" ? { ...t, quoteRaw: 60n } : t))
    const li = copyInputs(losing, false, T, dollars(MIN))
    expect(assess(li).label).toBe("losing")
    expect(cohortRank("steady", li, assess(li))).toBeUndefined()
  })

  it("formats micro-dollars exactly", () => {
    expect(microsToUsd(0n)).toBe("0")
    expect(microsToUsd(1n)).toBe("0.000001")
    expect(microsToUsd(-1_500_000n)).toBe("-1.5")
    expect(microsToUsd(123_456_789_000_000n)).toBe("123456789")
  })
})
