/**
 * The market-data token reads over real HTTP (uWS) against real chDB (trades inserted as the
 * writer's rows) and a real `MarketIndexStore` fed through the market actor's `step`. Figures
 * are checked against values worked out from the trades themselves (bigint arithmetic in the
 * test), and every cap of spec 8 is tested at and past its bound.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { tokenReadRoutes } from "../../api/data/reads/TokenReadRoutes.js"
import { serve } from "../../api/Server.js"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import type { ChainEvent, Trade } from "../../ingest/ChainEvent.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { marketFeed, planBearer } from "../support/marketFeed.js"
import { checkAnswersInThisFile, withContract } from "../support/contractRoutes.js"
import { clockAt } from "../support/clock.js"

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0)
let nowMs = T0 + 60 * 60_000
let scope: Scope.CloseableScope
let url = ""
let clickhouse: ClickHouseShape
let dataDir = ""
const index = new MarketIndexStore()
index.setWarming(false)

/** base58-only padded addresses. */
const addr = (prefix: string) => (prefix + "1".repeat(44)).slice(0, 44)
const MINT_A = addr("AaaMint")
const MINT_B = addr("BbbMint")
const MINT_C = addr("CccMint")
const MINT_X = addr("XssMint")
const CREATOR_A = `creator-${MINT_A}`
const W1 = addr("Wone")
const W2 = addr("Wtwo")
const W3 = addr("Wthree")

const clock = new ChainClock("solana", T0)
const a = new SimMarket(clock, { mint: MINT_A, name: "Alpha Dog", symbol: "ALPHA" })
const b = new SimMarket(clock, { mint: MINT_B, name: "Beta Dog", symbol: "BETA" })
const c = new SimMarket(clock, { mint: MINT_C, name: "Gamma Cat", symbol: "GAM" })
const x = new SimMarket(clock, { mint: MINT_X, name: `<script>&"x"`, symbol: "XSS" })

const apply = marketFeed(index, () => clickhouse).apply

const at = (ms: number) => {
  clock.nowMs = ms
}

/** Recorded trades of the scenario, to work out expected figures. */
const recorded: Array<Trade> = []
const trade = (events: Array<ChainEvent>) => {
  for (const e of events) if (e._tag === "Trade") recorded.push(e)
  return events
}

const authenticate = planBearer

// Every answer is checked against the document of the mounted routes (issue 32).
checkAnswersInThisFile()

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-dreads-"))
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(ClickHouse.layerChdb({ dataDir }), scope))
  clickhouse = ctx.unsafeMap.get(ClickHouse.key) as ClickHouseShape
  const routes = tokenReadRoutes({
    clickhouse,
    index,
    prices: fixedPriceSource({ sol: "150" }),
    nowMs: () => nowMs,
    authenticate,
    trackedWallets: (plan) => (plan === "free" ? [{ address: W1 }] : [{ address: W1 }, { address: W2 }])
  })
  const server = await Effect.runPromise(serve({ name: "data-reads", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: withContract(routes) }).pipe(Effect.withClock(clockAt(() => nowMs)), Scope.extend(scope)))
  url = server.url

  // The scenario (times relative to T0; "now" is T0 + 60 min).
  at(T0)
  await apply([a.created(), b.created(), c.created(), x.created()])
  at(T0 + 10_000)
  await apply(trade(a.buy(CREATOR_A, 1_000_000_000n))) // creator: 1 SOL
  at(T0 + 70_000)
  await apply(trade(a.buy(W1, 2_000_000_000n))) // W1: 2 SOL
  at(T0 + 30 * 60_000)
  await apply(trade(a.buy(W2, 500_000_000n))) // W2: 0.5 SOL (in the gainers window)
  at(T0 + 45 * 60_000)
  const w1Tokens = recorded.find((t) => t.trader === W1 && t.mint === MINT_A)!.amountOutRaw
  await apply(trade([a.sell(W1, w1Tokens / 2n)])) // W1 sells half
  at(T0 + 50 * 60_000)
  await apply(trade(b.buy(W1, 80_000_000_000n))) // B: close to the 85 SOL threshold
  await apply(trade(b.buy(W3, 1_000_000_000n)))
  at(T0 + 55 * 60_000)
  await apply(trade(c.buy(W2, 90_000_000_000n))) // C crosses graduation
  await apply(trade(x.buy(W3, 1_000_000_000n)))
}, 120_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const get = async (p: string, plan: string | null = "max") => {
  const res = await fetch(url + p, { headers: plan === null ? {} : { authorization: `Bearer plan-${plan}` } })
  const text = await res.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {
    /* svg */
  }
  return { status: res.status, headers: res.headers, body, text }
}

const tradesOf = (mint: string, trader: string) => recorded.filter((t) => t.mint === mint && t.trader === trader)
const sum = (xs: ReadonlyArray<bigint>) => xs.reduce((s, v) => s + v, 0n)
/** Decimal string of raw units (test's own formatter). */
const dec = (raw: bigint, decimals: number) => {
  const neg = raw < 0n
  const s = (neg ? -raw : raw).toString().padStart(decimals + 1, "0")
  const frac = s.slice(-decimals).replace(/0+$/, "")
  return (neg ? "-" : "") + s.slice(0, -decimals) + (frac === "" ? "" : "." + frac)
}

describe("data token reads: auth and lookup", () => {
  it("refuses a missing credential with the plain 401, and unknown tokens with 404", async () => {
    expect(await get(`/v1/market/token/${MINT_A}`, null)).toMatchObject({ status: 401, body: { error: "invalid api key" } })
    const unknown = await get(`/v1/market/token/${addr("Zzz")}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe("MARKET_NOT_FOUND")
    expect((await get(`/v1/market/token/not-an-address`)).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "address" })
    expect((await get(`/v1/market/token/${MINT_A}?chain=eth`)).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "chain" })
  })
})

describe("market data and safety", () => {
  it("serves the record's figures with exact USD and safety facts from the trades", async () => {
    const r = await get(`/v1/market/token/${MINT_A}`, "free")
    expect(r.status).toBe(200)
    const core = index.market("solana", MINT_A)!
    const volume = sum(recorded.filter((t) => t.mint === MINT_A).map((t) => (t.side === "buy" ? t.quoteConsumedRaw : t.amountOutRaw + t.feeRaw)))
    expect(r.body.token).toMatchObject({ chain: "solana", address: MINT_A, symbol: "ALPHA", quote_asset: "sol", lifecycle: "trading", trades_total: 4 })
    expect(r.body.token.volume_total).toBe(dec(volume, 9))
    // USD: 150 per SOL, exact to the micro-dollar.
    expect(r.body.token.liquidity_usd).toBe(dec((core.curveState.realQuoteRaw * 150n * 10n ** 6n) / 10n ** 9n, 6))
    const creatorHeld = tradesOf(MINT_A, CREATOR_A)[0]!.amountOutRaw
    expect(r.body.safety).toMatchObject({ launched_here: true, holders: 3, creator_held_bps: Number((creatorHeld * 10_000n) / core.params.supplyRaw) })
    expect(r.body.safety.flags).not.toContain("creator_sold")
  })
})

describe("OHLCV history", () => {
  it("defaults to 1h over 30 days and summarizes exactly", async () => {
    const r = await get(`/v1/market/token/${MINT_A}/history`)
    expect(r.status).toBe(200)
    expect(r.body.interval).toBe("1h")
    expect(Date.parse(r.body.to) - Date.parse(r.body.from)).toBeGreaterThanOrEqual(30 * 86_400_000)
    expect(r.body.candles).toHaveLength(1)
    const aTrades = recorded.filter((t) => t.mint === MINT_A)
    const volume = sum(aTrades.map((t) => (t.side === "buy" ? t.quoteConsumedRaw : t.amountOutRaw + t.feeRaw)))
    expect(r.body.summary).toMatchObject({ trades: 4, buys: 3, sells: 1, volume: dec(volume, 9), volume_usd: dec((volume * 150n * 10n ** 6n) / 10n ** 9n, 6) })
    // 1 minute candles: one per traded minute (0:10, 1:10, 30:00, 45:00).
    const m1 = await get(`/v1/market/token/${MINT_A}/history?interval=1m&from=${T0}&to=${nowMs}`)
    expect(m1.body.candles.map((c: any) => Date.parse(c.t) - T0)).toEqual([0, 60_000, 30 * 60_000, 45 * 60_000])
    // Prices in SOL per whole token: the first buy's fee-free price times 10^(6-9).
    const first = aTrades[0]!
    expect(m1.body.candles[0].open).toBeCloseTo((Number(first.quoteConsumedRaw - first.feeRaw) / Number(first.amountOutRaw)) * 1e-3, 15)
    expect(m1.body.summary.close).toBeLessThan(m1.body.summary.high)
    const d1 = await get(`/v1/market/token/${MINT_A}/history?interval=1D`)
    expect(d1.body).toMatchObject({ interval: "1D", summary: { trades: 4 } })
  })

  it("refuses bad intervals, inverted ranges and ranges over 50,000 candles", async () => {
    expect((await get(`/v1/market/token/${MINT_A}/history?interval=2h`)).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "interval" })
    expect((await get(`/v1/market/token/${MINT_A}/history?from=${nowMs}&to=${nowMs - 1}`)).body.error.field).toBe("from")
    // 30 days of 1m candles (43,200) is allowed; 40 days (57,600) is not.
    expect((await get(`/v1/market/token/${MINT_A}/history?interval=1m`)).status).toBe(200)
    const over = await get(`/v1/market/token/${MINT_A}/history?interval=1m&from=${nowMs - 40 * 86_400_000}`)
    expect(over.status).toBe(400)
    expect(over.body.error).toMatchObject({ field: "interval", limit: 50_000 })
  })

  it("draws an escaped, bounded SVG chart", async () => {
    const r = await get(`/v1/market/token/${MINT_X}/chart.svg?interval=1m&width=400&height=300`)
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toContain("image/svg+xml")
    expect(r.text.startsWith("<svg")).toBe(true)
    expect(r.text).toContain("&lt;script&gt;&amp;&quot;x&quot;")
    expect(r.text).not.toContain("<script>")
    expect(r.text).toContain('width="400"')
    const svgA = await get(`/v1/market/token/${MINT_A}/chart.svg?interval=1m&from=${T0}`)
    expect((svgA.text.match(/<rect /g) ?? []).length).toBe(1 + 4 * 2) // background + 4 bodies + 4 volume bars
    expect((await get(`/v1/market/token/${MINT_A}/chart.svg?width=5000`)).body.error.field).toBe("width")
    expect((await get(`/v1/market/token/${MINT_A}/chart.svg?interval=1m&from=${nowMs - 501 * 60_000}`)).body.error).toMatchObject({ field: "interval", limit: 500 })
  })
})

describe("prices", () => {
  it("prices up to 60 tokens and lists the unknown ones; 61 is refused", async () => {
    const r = await get(`/v1/market/prices?addresses=${MINT_A},${MINT_B},${addr("Nope")}`)
    expect(r.status).toBe(200)
    expect(r.body.prices.map((p: any) => p.address)).toEqual([MINT_A, MINT_B])
    expect(r.body.missing).toEqual([addr("Nope")])
    const core = index.market("solana", MINT_A)!
    // USD per whole token = vQ * 10^6 * 150 * 10^18 / (vT * 10^9), floored.
    const expected = (core.curveState.virtualQuoteRaw * 10n ** 6n * 150n * 10n ** 18n) / (core.curveState.virtualTokenRaw * 10n ** 9n)
    expect(r.body.prices[0].price_usd).toBe(dec(expected, 18))
    const sixty = Array.from({ length: 60 }, (_, i) => addr(`P${"abcdefghijk"[i % 11]}${"mnpqrs"[Math.floor(i / 11)]}`))
    expect((await get(`/v1/market/prices?addresses=${sixty.join(",")}`)).status).toBe(200)
    const over = await get(`/v1/market/prices?addresses=${[...sixty, MINT_A].join(",")}`)
    expect(over.status).toBe(400)
    expect(over.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "addresses", limit: 60 })
  })
})

describe("top traders, holders, wallet P&L", () => {
  it("ranks traders by P&L worked out from their trades", async () => {
    const core = index.market("solana", MINT_A)!
    const vq = core.curveState.virtualQuoteRaw
    const vt = core.curveState.virtualTokenRaw
    const pnlOf = (w: string) => {
      const ts = tradesOf(MINT_A, w)
      const bought = sum(ts.filter((t) => t.side === "buy").map((t) => t.amountOutRaw))
      const sold = sum(ts.filter((t) => t.side === "sell").map((t) => t.amountInRaw))
      const spent = sum(ts.filter((t) => t.side === "buy").map((t) => t.quoteConsumedRaw))
      const received = sum(ts.filter((t) => t.side === "sell").map((t) => t.amountOutRaw))
      return received + ((bought - sold) * vq) / vt - spent
    }
    const r = await get(`/v1/market/token/${MINT_A}/top-traders`)
    expect(r.status).toBe(200)
    expect(r.body.traders).toBe(3)
    const expected = [CREATOR_A, W1, W2].map((w) => ({ w, pnl: pnlOf(w) })).sort((p, q) => (q.pnl > p.pnl ? 1 : q.pnl < p.pnl ? -1 : 0))
    expect(r.body.rows.map((row: any) => [row.wallet, row.pnl])).toEqual(expected.map((e) => [e.w, dec(e.pnl, 9)]))
    expect((await get(`/v1/market/token/${MINT_A}/top-traders?limit=101`)).body.error.field).toBe("limit")
    expect((await get(`/v1/market/token/${MINT_A}/top-traders?sort=luck`)).body.error.field).toBe("sort")
  })

  it("lists holders by net position and their share of supply", async () => {
    const r = await get(`/v1/market/token/${MINT_A}/holders?limit=2`)
    expect(r.body.holders).toBe(3)
    expect(r.body.rows).toHaveLength(2)
    const w1 = tradesOf(MINT_A, W1)
    const w1Held = w1[0]!.amountOutRaw - w1[1]!.amountInRaw
    const creatorHeld = tradesOf(MINT_A, CREATOR_A)[0]!.amountOutRaw
    expect(r.body.rows[0]).toMatchObject({ wallet: w1Held > creatorHeld ? W1 : CREATOR_A, is_creator: w1Held <= creatorHeld })
    const all = await get(`/v1/market/token/${MINT_A}/holders`)
    expect(all.body.rows.find((h: any) => h.wallet === W1).amount).toBe(dec(w1Held, 6))
    expect((await get(`/v1/market/token/${MINT_A}/holders?limit=201`)).status).toBe(400)
  })

  it("splits P&L into realized (average cost) and unrealized for up to 50 wallets", async () => {
    const r = await get(`/v1/market/token/${MINT_A}/wallet-pnl?wallets=${W1},${W3},${W1}`)
    expect(r.status).toBe(200)
    expect(r.body.wallets).toHaveLength(2)
    expect(r.body.wallets[1]).toEqual({ wallet: W3, traded: false })
    const [buy, sell] = tradesOf(MINT_A, W1)
    const costSold = (buy!.quoteConsumedRaw * sell!.amountInRaw) / buy!.amountOutRaw
    const row = r.body.wallets[0]
    expect(row).toMatchObject({ wallet: W1, traded: true, spent: "2", spent_usd: "300", realized_pnl: dec(sell!.amountOutRaw - costSold, 9) })
    // realized + unrealized = pnl, to the lamport.
    const raw = (d: string) => {
      const neg = d.startsWith("-")
      const [w = "0", f = ""] = (neg ? d.slice(1) : d).split(".")
      const v = BigInt(w) * 10n ** 9n + BigInt((f + "000000000").slice(0, 9))
      return neg ? -v : v
    }
    expect(raw(row.realized_pnl) + raw(row.unrealized_pnl)).toBe(raw(row.pnl))
    const fifty = Array.from({ length: 50 }, (_, i) => addr(`Wx${"abcdefghij"[i % 10]}${"mnpqr"[Math.floor(i / 10)]}`))
    expect((await get(`/v1/market/token/${MINT_A}/wallet-pnl?wallets=${fifty.join(",")}`)).status).toBe(200)
    const over = await get(`/v1/market/token/${MINT_A}/wallet-pnl?wallets=${[...fifty, W1].join(",")}`)
    expect(over.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "wallets", limit: 50 })
    expect((await get(`/v1/market/token/${MINT_A}/wallet-pnl`)).body.error.field).toBe("wallets")
  })
})

describe("search, gainers, activity, metas", () => {
  it("finds tokens by address, symbol and name prefix", async () => {
    expect((await get(`/v1/market/token-search?q=${MINT_B}`)).body.results[0]).toMatchObject({ address: MINT_B, match: "address" })
    expect((await get(`/v1/market/token-search?q=$alpha`)).body.results[0]).toMatchObject({ address: MINT_A, match: "symbol" })
    const dog = await get(`/v1/market/token-search?q=Dog`)
    expect(dog.body.results.map((r: any) => r.address).sort()).toEqual([MINT_A, MINT_B].sort())
    expect((await get(`/v1/market/token-search?q=`)).body.error.field).toBe("q")
    expect((await get(`/v1/market/token-search?q=${"a".repeat(65)}`)).body.error.field).toBe("q")
  })

  it("ranks Solana gainers over the window and refuses hood", async () => {
    const r = await get(`/v1/market/gainers?window=1h`)
    expect(r.status).toBe(200)
    // A moved up from its first buy; B and C rose within the window too; X traded once (no move).
    const addresses = r.body.gainers.map((g: any) => g.address)
    expect(addresses).toContain(MINT_A)
    expect(addresses).not.toContain(MINT_X)
    for (const g of r.body.gainers) expect(g.change_pct).toBeGreaterThan(0)
    // 5m window: only the last 5 minutes (C and X traded at +55 min, each once): nothing moved.
    expect((await get(`/v1/market/gainers?window=5m`)).body.gainers.map((g: any) => g.address)).not.toContain(MINT_A)
    expect((await get(`/v1/market/gainers?chain=hood`)).body.error.field).toBe("chain")
  })

  it("activity counts the tracked wallets the plan sees", async () => {
    const free = await get(`/v1/market/activity`, "free")
    expect(free.body.tokens.map((t: any) => [t.address, t.wallets])).toEqual([
      [MINT_A, 1],
      [MINT_B, 1]
    ])
    const max = await get(`/v1/market/activity`, "max")
    expect(max.body.tokens[0]).toMatchObject({ address: MINT_A, wallets: 2, trades: 3 })
  })

  it("metas group recent launches by shared words", async () => {
    const r = await get(`/v1/market/metas`)
    expect(r.body.metas[0]).toMatchObject({ meta: "dog", tokens: 2 })
  })
})

describe("cohort overlap", () => {
  it("counts shared holders of 2 to 5 tokens and refuses other counts", async () => {
    const r = await get(`/v1/market/cohort-overlap?mints=${MINT_A},${MINT_B}`)
    expect(r.status).toBe(200)
    expect(r.body.cohorts).toEqual([
      { address: MINT_A, wallets: 3 },
      { address: MINT_B, wallets: 2 }
    ])
    expect(r.body.pairs).toEqual([{ a: MINT_A, b: MINT_B, shared: 1, overlap_bps: Math.floor(10_000 / 4) }])
    expect(r.body.wallets).toEqual([{ wallet: W1, mints: [MINT_A, MINT_B].sort() }])
    expect((await get(`/v1/market/cohort-overlap?mints=${MINT_A}`)).body.error).toMatchObject({ field: "mints", minimum: 2 })
    expect((await get(`/v1/market/cohort-overlap?mints=${MINT_A},${MINT_A}`)).body.error.field).toBe("mints")
    const six = [MINT_A, MINT_B, MINT_C, MINT_X, addr("Q1"), addr("Q2")]
    expect((await get(`/v1/market/cohort-overlap?mints=${six.join(",")}`)).body.error).toMatchObject({ field: "mints", limit: 5 })
    expect((await get(`/v1/market/cohort-overlap?mints=${MINT_A},${addr("Q1")}`)).status).toBe(404)
  })
})

describe("launch overview, venues, profile, final stretch", () => {
  it("launch overview is cached for 60 s", async () => {
    const first = await get(`/v1/market/token/${MINT_A}/launch-overview`)
    expect(first.status).toBe(200)
    const devBuy = tradesOf(MINT_A, CREATOR_A)[0]!
    expect(first.body).toMatchObject({ trades: 4, traders: 3, holders: 3, early_buyers: 1, dev_buy: { spent: "1", spent_usd: "150", bought: dec(devBuy.amountOutRaw, 6) } })
    at(T0 + 59 * 60_000)
    await apply(trade(a.buy(W3, 100_000_000n)))
    nowMs += 30_000
    const cached = await get(`/v1/market/token/${MINT_A}/launch-overview`)
    expect(cached.body.trades).toBe(4)
    expect(cached.headers.get("age")).toBe("30")
    nowMs += 31_000
    const fresh = await get(`/v1/market/token/${MINT_A}/launch-overview`)
    expect(fresh.body.trades).toBe(5)
  })

  it("venues and profile", async () => {
    const v = await get(`/v1/market/token/${MINT_A}/venues`)
    expect(v.body).toMatchObject({ current: "svc-curve", venues: [{ venue: "svc-curve", active: true, trades: 5 }] })
    const p = await get(`/v1/market/token/${MINT_A}/profile`)
    expect(p.body).toMatchObject({ symbol: "ALPHA", supply: "1000000000", quote_asset: "sol", creator: { address: CREATOR_A, launches: 1 } })
  })

  it("final stretch: closest curves and graduations of the last 10 minutes", async () => {
    const r = await get(`/v1/launches/final-stretch`)
    expect(r.status).toBe(200)
    expect(r.body.curve[0].address).toBe(MINT_B)
    expect(r.body.curve.map((t: any) => t.address)).not.toContain(MINT_C)
    expect(r.body.graduated.map((t: any) => t.address)).toEqual([MINT_C])
    nowMs += 10 * 60_000
    expect((await get(`/v1/launches/final-stretch`)).body.graduated).toEqual([])
    expect((await get(`/v1/launches/final-stretch?limit=0`)).body.error.field).toBe("limit")
  })
})
