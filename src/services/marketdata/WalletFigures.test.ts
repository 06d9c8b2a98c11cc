/**
 * A wallet's figures from its ledgers: the period's statistics (counts, closed tokens, wins, win
 * rate, totals per quote asset, tokens with no known quote asset), the portfolio (held positions
 * valued at spot, largest USD value first, unpriced last) and the tokens traded in the period.
 */
import { describe, expect, it } from "@effect/vitest"
import { QuotePairs } from "../../domain/QuotePairs.js"
import { newMarket } from "../../../test/support/marketCores.js"
import type { UsdPrice } from "../prices/PriceSource.js"
import { type LedgerTrade, replayLedgers, spotValueRaw } from "./AverageCost.js"
import { tradedInPeriod, type TradedToken, walletPortfolio, walletStats, winRateBps } from "./WalletFigures.js"

const sol = QuotePairs.find((p) => p.id === "sol")!
const usdc = QuotePairs.find((p) => p.id === "usdc")!
const solUsd: UsdPrice = { asset: "sol", usdRaw: 150n, scale: 0, asOfMs: 0, source: "test" }
const SOL = 1_000_000_000n

const { core: solCore } = newMarket("solana", { mint: "So1Fig" })
const tokens: Record<string, TradedToken> = {
  W: { core: solCore, pair: sol, price: solUsd },
  L: { core: solCore, pair: sol, price: solUsd },
  U: { core: solCore, pair: usdc, price: null },
  X: { core: undefined, pair: undefined, price: null }
}
const tokenOf = (mint: string) => tokens[mint]!

const t = (mint: string, side: "buy" | "sell", tokenRaw: bigint, quoteRaw: bigint, atMs: number): LedgerTrade => ({ mint, side, tokenRaw, quoteRaw, volumeQuoteRaw: quoteRaw, atMs })

describe("walletStats", () => {
  const trades = [
    t("W", "buy", 100n, 1n * SOL, 1),
    t("W", "sell", 50n, 1n * SOL, 2), // win: 0.5 SOL
    t("L", "buy", 100n, 2n * SOL, 3),
    t("L", "sell", 100n, 1n * SOL, 4), // loss: -1 SOL
    t("U", "buy", 10n, 5_000_000n, 5),
    t("X", "buy", 10n, 7n, 6),
    t("X", "sell", 10n, 9n, 7)
  ]

  it("counts trades, closed tokens and wins, and totals per quote asset", () => {
    const s = walletStats(replayLedgers(trades, undefined), tokenOf)
    expect(s).toMatchObject({ trades: 7, buys: 4, sells: 3, tokensTraded: 4, tokensClosed: 3, wins: 2, unknownTokens: 1 })
    // Volume: SOL 5 (W 2 + L 3); USDC 5. X has no quote asset: left out.
    expect(s.volume.byQuote().map((e) => [e.pair.id, e.raw])).toEqual([
      ["sol", 5n * SOL],
      ["usdc", 5_000_000n]
    ])
    // USDC is unpriced and non-zero: no USD sum.
    expect(s.volume.usdMicros()).toBeNull()
    // Realized: W +0.5, L -1 (SOL); X realized 2 but has no quote asset.
    expect(s.realized.byQuote().map((e) => [e.pair.id, e.raw])).toEqual([["sol", -SOL / 2n]])
    expect(s.realized.usdMicros()).toBe(-75_000_000n)
  })

  it("counts only the period's tokens", () => {
    const s = walletStats(replayLedgers(trades, 4), tokenOf)
    expect(s).toMatchObject({ trades: 4, buys: 2, sells: 2, tokensTraded: 3, tokensClosed: 2, wins: 1 })
  })
})

describe("winRateBps", () => {
  it("is floored, and null when nothing closed", () => {
    expect(winRateBps(1, 3)).toBe(3_333)
    expect(winRateBps(0, 0)).toBeNull()
    expect(winRateBps(2, 2)).toBe(10_000)
  })
})

describe("walletPortfolio", () => {
  it("values what is held at spot, the largest USD value first and unpriced last", () => {
    const ledgers = replayLedgers([t("W", "buy", 10n * SOL, SOL, 1), t("L", "buy", 20n * SOL, SOL, 2), t("U", "buy", 5n, 1n, 3), t("X", "buy", 5n, 1n, 4), t("W", "buy", 1n, 1n, 5)], undefined)
    ledgers.set("Z", { ...ledgers.get("W")!, heldRaw: 0n, costRaw: 0n })
    const p = walletPortfolio(ledgers, (m) => tokens[m] ?? tokens.W!)
    expect(p.holdings.map((h) => h.mint)).toEqual(["L", "W", "U", "X"])
    expect(p.holdings[0]!.valueRaw).toBe(spotValueRaw(solCore, 20n * SOL))
    expect(p.cost.byQuote().map((e) => [e.pair.id, e.raw])).toEqual([
      ["sol", 2n * SOL + 1n],
      ["usdc", 1n]
    ])
    expect(p.value.byQuote()[0]!.raw).toBe(spotValueRaw(solCore, 20n * SOL) + spotValueRaw(solCore, 10n * SOL + 1n))
  })
})

describe("tradedInPeriod", () => {
  it("lists the period's tokens, the latest traded first, ties by address", () => {
    const ledgers = replayLedgers([t("B", "buy", 1n, 1n, 1), t("A", "buy", 1n, 1n, 5), t("C", "buy", 1n, 1n, 5), t("D", "buy", 1n, 1n, 9), t("B", "sell", 1n, 1n, 3)], 2)
    expect(tradedInPeriod(ledgers).map(([m]) => m)).toEqual(["D", "A", "C", "B"])
  })
})
