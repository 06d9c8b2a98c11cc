/**
 * The spec 2.9 market record for every lifecycle and migration status, both chains; price, market
 * cap and windowed statistics worked by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { ChainClock, coreOf, SimMarket } from "../../test/support/marketSim.js"
import { FIVE_MINUTES_MS, HOUR_MS } from "./internal/tradeWindows.js"
import { feedRow, marketRecord, priceOf } from "./MarketRecord.js"

const SOL = 1_000_000_000n
const ETH = 10n ** 18n


const record = (events: ReadonlyArray<ChainEvent>, asOfMs?: number) => {
  const core = coreOf(events)
  return marketRecord(core, asOfMs ?? core.lastEventAtMs)
}

describe("MarketRecord", () => {
  it("a trading Solana curve: every spec 2.9 field", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Rec", mode: "exclusive" })
    const r = record([m.created()])
    expect(r).toMatchObject({
      chain: "solana",
      mint: "So1Rec",
      lifecycle: "trading",
      buysOpen: true,
      sellsOpen: true,
      curveAddress: "curve-So1Rec",
      poolAddress: null,
      quoteMint: "So11111111111111111111111111111111111111112",
      feeBps: 100,
      graduationVenue: "dex-solana-v2",
      tier: "exclusive",
      crossingModel: "full-fill-surplus",
      candleLaunched: true,
      launchpad: "curvestream",
      venue: "svc-curve",
      trade: { endpoint: "/api/v1/trade/agent/quote", routable: true },
      decimals: 6,
      quoteDecimals: 9,
      metadata: { name: "Token So1Rec", symbol: "TKN", image: "https://img.example/So1Rec.png", socials: null },
      migration: { status: "not_started", reserveRaw: "0", thresholdRaw: "85000000000", progressBps: 0 },
      creator: "creator-So1Rec",
      progressBps: 0,
      // V/X in SOL per whole token: 30e9·10^6·10^18 / (995e12·10^9), floored at 18 digits
      price: "0.000000030150753768",
      // floor(V·supply/X) lamports = the tier's published startFdv (docs/decisions.md: 30.150753768 SOL)
      marketCap: "30.150753768",
      volume24h: "0",
      tradesTotal: 0,
      lastTradeAt: null
    })
    expect(r.trade).not.toHaveProperty("reason")
    expect(r).not.toHaveProperty("recovery")
  })

  it("price and market cap are exact integer math on the reserves", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Price" })
    const core = coreOf([m.created(), ...m.buy("a", 3n * SOL)])
    const { virtualQuoteRaw: q, virtualTokenRaw: t } = core.curveState
    const scaled = (q * 10n ** 6n * 10n ** 18n) / (t * 10n ** 9n)
    const expected = `0.${scaled.toString().padStart(18, "0")}`.replace(/0+$/, "")
    expect(priceOf(core)).toBe(expected)
    const mcapRaw = (q * core.params.supplyRaw) / t
    expect(marketRecord(core, core.lastEventAtMs).marketCap).toBe(`${mcapRaw / SOL}.${(mcapRaw % SOL).toString().padStart(9, "0")}`.replace(/\.?0+$/, ""))
  })

  it("completed on Solana: closed both ways, not routable (solana_graduating), no venue; then in_progress and delayed", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Done" })
    const events = [m.created(), ...m.buy("w", 100n * SOL)]
    expect(record(events)).toMatchObject({
      lifecycle: "completed",
      buysOpen: false,
      sellsOpen: false,
      venue: null,
      trade: { routable: false, reason: "solana_graduating" },
      migration: { status: "not_started" },
      progressBps: 10_000,
      feeBps: 100
    })
    expect(record(events).migration).not.toHaveProperty("reserveRaw")
    const next = m.clock.nowMs + 120_000
    events.push(m.progress("in_progress", 2, next))
    expect(record(events).migration).toEqual({ status: "in_progress", attempts: 2, nextAttemptAt: new Date(next).toISOString() })
    events.push(m.progress("delayed", 9))
    expect(record(events)).toMatchObject({ trade: { routable: false, reason: "migration_delayed" }, migration: { status: "delayed", attempts: 9 } })
  })

  it("migrated on Solana: pool address, the pool's fee (150 for an exp curve with a 1% creator fee), venue dex, migratedAt", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Pool", mode: "exp-a" })
    const events = [m.created(), ...m.buy("w", 100n * SOL), m.migrated(150)]
    const r = record(events)
    expect(r).toMatchObject({
      lifecycle: "migrated",
      buysOpen: true,
      sellsOpen: true,
      poolAddress: "pool-So1Pool",
      feeBps: 150,
      venue: "dex",
      tier: null,
      mode: "exp-a",
      trade: { routable: true },
      migration: { status: "completed", migratedAt: new Date(m.clock.nowMs).toISOString() }
    })
    // The price now comes from the pool: Q/T.
    const core = coreOf(events)
    expect(priceOf(core)).toBe(priceOf({ ...core, lifecycle: "trading", curveState: { ...core.curveState, virtualQuoteRaw: m.pool!.quoteRaw, virtualTokenRaw: m.pool!.tokenRaw } }))
  })

  it("Hood: capped-refund model, pool address always null, hood-dex after migration", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xrec" })
    const trading = record([m.created()])
    expect(trading).toMatchObject({ crossingModel: "capped-refund", graduationVenue: "dex-evm-v4", venue: "svc-curve", decimals: 18, quoteDecimals: 18 })
    // Hood trading carries no reserve/threshold/progress in the migration block (spec: Solana only).
    expect(trading.migration).toEqual({ status: "not_started" })
    const events = [m.created(), ...m.buy("w", 10n * ETH)]
    expect(record(events).trade).toEqual({ endpoint: "/api/v1/trade/agent/quote", routable: false, reason: "hood_graduating" })
    events.push(m.migrated(30))
    expect(record(events)).toMatchObject({ lifecycle: "migrated", poolAddress: null, venue: "hood-dex", feeBps: 30 })
  })

  it("Hood recovery: both closed, market_recovery, cancelled with gaveUpAt, recovery block", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xrecovery" })
    const events = [m.created(), ...m.buy("w", 10n * ETH), m.progress("in_progress", 4, m.clock.nowMs + 1000), m.progress("cancelled", 4)]
    const r = record(events)
    expect(r).toMatchObject({
      lifecycle: "recovery",
      buysOpen: false,
      sellsOpen: false,
      venue: null,
      trade: { routable: false, reason: "market_recovery" },
      migration: { status: "cancelled", attempts: 4, nextAttemptAt: null, gaveUpAt: new Date(m.clock.nowMs).toISOString() },
      recovery: { curve: "curve-0xrecovery", quoteToken: "0x0000000000000000000000000000000000000000", method: "claimRecovery(uint256)", requiresApprovalTo: "curve-0xrecovery" }
    })
  })

  it("statistics: 1h from five-minute slots, 24h from hour slots, as of the chain clock", () => {
    const clock = new ChainClock("solana", Date.UTC(2025, 0, 1))
    const m = new SimMarket(clock, { mint: "So1Stats" })
    const events: Array<ChainEvent> = [m.created()]
    events.push(...m.buy("a", SOL)) // t0
    clock.advance(2 * HOUR_MS)
    events.push(...m.buy("b", SOL), m.sell("b", 1_000_000n)) // t0 + 2h
    const core = coreOf(events)
    const sellVolume = (events[events.length - 1] as Extract<ChainEvent, { _tag: "Trade" }>).amountOutRaw + (events[events.length - 1] as Extract<ChainEvent, { _tag: "Trade" }>).feeRaw
    const now = marketRecord(core, clock.nowMs)
    expect(now).toMatchObject({ trades1h: 2, trades24h: 3, buys24h: 2, sells24h: 1, tradesTotal: 3 })
    expect(BigInt(Math.round(Number(now.volume1h) * 1e9))).toBe(SOL + sellVolume)
    expect(now.volume24h).toBe(now.volumeTotal)
    // 23 hours later the first trade's hour has left the 24h window; the hour window is empty.
    const later = marketRecord(core, Date.UTC(2025, 0, 1) + 25 * HOUR_MS)
    expect(later).toMatchObject({ trades1h: 0, volume1h: "0", trades24h: 2, tradesTotal: 3 })
    expect(later.statsAsOf).toBe(new Date(Math.floor((Date.UTC(2025, 0, 1) + 25 * HOUR_MS) / FIVE_MINUTES_MS) * FIVE_MINUTES_MS).toISOString())
  })

  it("the feed row carries the spec 2.9 feed fields", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xrow", name: "Row", symbol: "ROW" })
    const core = coreOf([m.created(), ...m.buy("a", ETH / 10n)])
    expect(feedRow(core, core.lastEventAtMs)).toMatchObject({
      chain: "hood",
      address: "0xrow",
      name: "Row",
      symbol: "ROW",
      image: "https://img.example/0xrow.png",
      isAgent: false,
      trades1h: 1,
      lifecycle: "trading",
      migratedAt: null
    })
  })
})
