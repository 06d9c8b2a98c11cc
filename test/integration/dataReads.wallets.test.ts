/**
 * The market-data wallet, group, social and asset reads over real HTTP (uWS) against real chDB
 * (trades inserted as the writer's rows), a real `MarketIndexStore` fed through the market
 * actor's `step`, the real Tracking lookups and the real mentions store. Expected figures are
 * worked out here from the recorded trades with bigint arithmetic; plan visibility and every
 * refusal are checked beside what is accepted.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import type { SocialMention } from "../../actors/signals/KolMention.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { walletSocialRoutes } from "../../api/data/reads/WalletSocialRoutes.js"
import { serve } from "../../api/Server.js"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import type { Trade } from "../../ingest/ChainEvent.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { makeStore } from "../../src/services/social/SocialMentions.js"
import { make as makeTracking } from "../../src/services/tracking/Tracking.js"
import { marketFeed, planBearer } from "../support/marketFeed.js"
import { checkAnswersInThisFile, withContract } from "../support/contractRoutes.js"
import { clockAt } from "../support/clock.js"

const MIN = 60_000
const DAY = 86_400_000
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0)
let nowMs = T0 + 60 * MIN
let scope: Scope.CloseableScope
let url = ""
let clickhouse: ClickHouseShape
let dataDir = ""
const index = new MarketIndexStore()
index.setWarming(false)

const addr = (prefix: string) => (prefix + "1".repeat(44)).slice(0, 44)
const MINT_A = addr("AaaMint")
const MINT_B = addr("BbbMint")
const W1 = addr("Wone") // smartmoney, public
const W2 = addr("Wtwo") // kol, pro
const W3 = addr("Wthree") // smartmoney, max
const W4 = addr("Wfour") // untracked

const tracking = makeTracking({
  wallets: [
    { id: "w1", chain: "solana", address: W1, label: "One", kind: "smartmoney", visibility: "public", groups: ["g_max", "g_pub"], kolId: null },
    { id: "w2", chain: "solana", address: W2, label: "Two", kind: "kol", visibility: "pro", groups: ["g_pro"], kolId: "kol_x" },
    { id: "w3", chain: "solana", address: W3, label: "Three", kind: "smartmoney", visibility: "max", groups: ["g_max"], kolId: null }
  ],
  groups: [
    { id: "g_pub", name: "Public", description: "p", visibility: "public", walletIds: ["w1"] },
    { id: "g_pro", name: "Pro", description: "p", visibility: "pro", walletIds: ["w2"] },
    { id: "g_max", name: "Max", description: "m", visibility: "max", walletIds: ["w1", "w3"] }
  ],
  kols: [{ id: "kol_x", handle: "kolx", name: "Kol X", weight: 20, followers: 1000, walletIds: ["w2"] }]
})
const social = makeStore(1_000, 4)

const clock = new ChainClock("solana", T0 - 3 * DAY)
const a = new SimMarket(clock, { mint: MINT_A, name: "Alpha", symbol: "ALPHA" })
const b = new SimMarket(clock, { mint: MINT_B, name: "Beta", symbol: "BETA" })

const feed = marketFeed(index, () => clickhouse)
const apply = feed.apply
const at = (ms: number) => {
  clock.nowMs = ms
}
const recorded = feed.trades

const mention = (id: string, asset: string, author: string, atMs: number): SocialMention => ({ id, chain: "solana", asset, author, text: `$${id}`, url: null, atMs })

const authenticate = planBearer

// Every answer is checked against the document of the mounted routes (issue 32).
checkAnswersInThisFile()

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-wreads-"))
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(ClickHouse.layerChdb({ dataDir }), scope))
  clickhouse = ctx.unsafeMap.get(ClickHouse.key) as ClickHouseShape
  const routes = walletSocialRoutes({
    clickhouse,
    index,
    prices: fixedPriceSource({ sol: "150", usdc: "1" }),
    tracking,
    social,
    nowMs: () => nowMs,
    authenticate
  })
  const server = await Effect.runPromise(serve({ name: "wallet-reads", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: withContract(routes) }).pipe(Effect.withClock(clockAt(() => nowMs)), Scope.extend(scope)))
  url = server.url

  at(T0 - 3 * DAY)
  await apply([a.created(), b.created()])
  at(T0 - 2 * DAY)
  await apply(b.buy(W1, 1_000_000_000n)) // W1 buys B 2 days ago (outside 1d)
  at(T0 + 10_000)
  await apply(a.buy(W1, 2_000_000_000n))
  at(T0 + 20_000)
  await apply(a.buy(W2, 1_000_000_000n))
  at(T0 + MIN)
  await apply(a.buy(W4, 500_000_000n))
  at(T0 + 2 * MIN)
  await apply(a.buy(W1, 1_000_000_000n))
  at(T0 + 150_000)
  await apply(a.buy(W3, 700_000_000n))
  at(T0 + 3 * MIN)
  const w1A = tradesOf(MINT_A, W1)
  await apply([a.sell(W1, (w1A[0]!.amountOutRaw + w1A[1]!.amountOutRaw) / 3n)])
  at(T0 + 5 * MIN)
  await apply([a.sell(W2, tradesOf(MINT_A, W2)[0]!.amountOutRaw / 2n)])
  at(T0 + 30 * MIN)
  await apply([b.sell(W1, tradesOf(MINT_B, W1)[0]!.amountOutRaw)]) // W1 closes B: nobody else traded it, so the fees make it a loss

  social.publish([
    mention("m0", MINT_A, "randomreply", T0 - 3 * DAY + 1_000),
    mention("m1", MINT_A, "kolx", T0 + 15_000),
    mention("m2", MINT_A, "lurker", T0 + 150_000),
    mention("m3", MINT_B, "KolX", T0 + 40 * MIN)
  ])
}, 120_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const get = async (p: string, plan: string | null = "max") => {
  const res = await fetch(url + p, { headers: plan === null ? {} : { authorization: `Bearer plan-${plan}` } })
  return { status: res.status, body: (await res.json()) as any }
}

function tradesOf(mint: string, trader: string) {
  return recorded.filter((t) => t.mint === mint && t.trader === trader)
}
const sum = (xs: ReadonlyArray<bigint>) => xs.reduce((s, v) => s + v, 0n)
const dec = (raw: bigint, decimals: number) => {
  const neg = raw < 0n
  const s = (neg ? -raw : raw).toString().padStart(decimals + 1, "0")
  const frac = s.slice(-decimals).replace(/0+$/, "")
  return (neg ? "-" : "") + s.slice(0, -decimals) + (frac === "" ? "" : "." + frac)
}
/** USD (micro-dollars, truncated toward zero) of lamports at $150. */
const usdMicros = (lamports: bigint) => (lamports * 150n * 10n ** 6n) / 10n ** 9n
const usd = (lamports: bigint) => dec(usdMicros(lamports), 6)
const volumeOf = (t: Trade) => (t.side === "buy" ? t.quoteConsumedRaw : t.amountOutRaw + t.feeRaw)

/** W1's A position by average cost, worked out by hand: two buys, then a sell of a third. */
const w1A = () => {
  const [b1, b2, s] = tradesOf(MINT_A, W1)
  const held = b1!.amountOutRaw + b2!.amountOutRaw
  const cost = b1!.quoteConsumedRaw + b2!.quoteConsumedRaw
  const costOut = (cost * s!.amountInRaw) / held
  return { realized: s!.amountOutRaw - costOut, held: held - s!.amountInRaw, cost: cost - costOut, trades: [b1!, b2!, s!] }
}
/** W1's B round trip: bought 2 days ago, all sold 30 minutes after T0. */
const w1B = () => {
  const [buy, sell] = tradesOf(MINT_B, W1)
  return { realized: sell!.amountOutRaw - buy!.quoteConsumedRaw, buy: buy!, sell: sell! }
}

describe("auth", () => {
  it("every route refuses a missing credential with the plain 401", async () => {
    for (const p of ["/v1/wallets", "/v1/groups", "/v1/assets", "/v1/social/mentions", `/v1/market/wallet/${W1}/stats`, "/v1/market/labelled-trades"]) {
      expect(await get(p, null)).toEqual({ status: 401, body: { error: "invalid api key" } })
    }
  })
})

describe("wallets and groups by plan", () => {
  it("Free sees public, Pro public and pro, Max all; groups a plan cannot see are hidden from wallets", async () => {
    const free = await get("/v1/wallets", "free")
    expect(free.body.wallets.map((w: any) => [w.id, w.groups])).toEqual([["w1", ["g_pub"]]])
    expect((await get("/v1/wallets", "pro")).body.wallets.map((w: any) => w.id)).toEqual(["w1", "w2"])
    const max = await get("/v1/wallets", "max")
    expect(max.body.wallets.map((w: any) => [w.id, w.groups])).toEqual([
      ["w1", ["g_max", "g_pub"]],
      ["w2", ["g_pro"]],
      ["w3", ["g_max"]]
    ])
    expect(max.body.wallets[1].kol).toEqual({ id: "kol_x", handle: "kolx" })
    expect((await get("/v1/groups", "free")).body.groups.map((g: any) => g.id)).toEqual(["g_pub"])
    expect((await get("/v1/groups", "pro")).body.groups.map((g: any) => g.id)).toEqual(["g_pro", "g_pub"])
    expect((await get("/v1/groups", "max")).body.groups.map((g: any) => [g.id, g.wallets])).toEqual([
      ["g_max", 2],
      ["g_pro", 1],
      ["g_pub", 1]
    ])
  })

  it("filters, pages and refuses bad parameters", async () => {
    expect((await get("/v1/wallets?kind=kol")).body.wallets.map((w: any) => w.id)).toEqual(["w2"])
    expect((await get("/v1/wallets?group=g_max&limit=1&offset=1")).body).toMatchObject({ total: 2, wallets: [{ id: "w3" }] })
    expect((await get("/v1/wallets?chain=hood")).body).toMatchObject({ chain: "hood", total: 0, wallets: [] })
    expect((await get("/v1/wallets?group=g_max", "pro")).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "group" })
    expect((await get("/v1/wallets?limit=501")).body.error).toMatchObject({ field: "limit", limit: 500 })
    expect((await get("/v1/wallets?limit=500")).status).toBe(200)
    expect((await get("/v1/wallets?kind=whale")).body.error.field).toBe("kind")
  })

  it("one wallet or group: visible ones answer, hidden and unknown ones answer the same plain 404", async () => {
    expect((await get("/v1/wallets/w2", "pro")).body).toMatchObject({ id: "w2", kol: { handle: "kolx", name: "Kol X", followers: 1000 } })
    expect(await get("/v1/wallets/w3", "pro")).toEqual({ status: 404, body: { error: "wallet not found" } })
    expect(await get("/v1/wallets/nope", "max")).toEqual({ status: 404, body: { error: "wallet not found" } })
    const g = await get("/v1/groups/g_max", "max")
    expect(g.body.members.map((w: any) => w.id)).toEqual(["w1", "w3"])
    expect(await get("/v1/groups/g_max", "pro")).toEqual({ status: 404, body: { error: "group not found" } })
    expect((await get("/v1/groups/g_pub", "free")).body.members.map((w: any) => w.id)).toEqual(["w1"])
  })
})

describe("labelled trades", () => {
  it("lists trades of the labelled wallets the plan sees, newest first, with labels", async () => {
    const kol = await get("/v1/market/labelled-trades?kind=kol", "pro")
    const w2 = tradesOf(MINT_A, W2)
    expect(kol.body.trades.map((t: any) => [t.signature, t.wallet.id, t.wallet.kol, t.side])).toEqual([
      [w2[1]!.signature, "w2", "kolx", "sell"],
      [w2[0]!.signature, "w2", "kolx", "buy"]
    ])
    expect(kol.body.trades[1]).toMatchObject({ quote: dec(w2[0]!.quoteConsumedRaw, 9), quote_usd: usd(w2[0]!.quoteConsumedRaw), amount: dec(w2[0]!.amountOutRaw, 6) })
    expect((await get("/v1/market/labelled-trades?kind=kol", "free")).body.trades).toEqual([])
    const smart = await get("/v1/market/labelled-trades?kind=smartmoney&limit=3", "max")
    const expected = recorded.filter((t) => t.trader === W1 || t.trader === W3).sort((x, y) => y.timestampMs - x.timestampMs).slice(0, 3)
    expect(smart.body.trades.map((t: any) => t.signature)).toEqual(expected.map((t) => t.signature))
    const freeSmart = await get(`/v1/market/labelled-trades?kind=smartmoney&token=${MINT_A}`, "free")
    expect(freeSmart.body.trades.map((t: any) => t.wallet.id)).toEqual(["w1", "w1", "w1"])
    expect((await get("/v1/market/labelled-trades?kind=whale")).body.error.field).toBe("kind")
    expect((await get("/v1/market/labelled-trades?chain=hood")).body.error.field).toBe("chain")
    expect((await get("/v1/market/labelled-trades?limit=201")).body.error).toMatchObject({ field: "limit", limit: 200 })
  })
})

describe("wallet stats, activity, token breakdown, portfolio", () => {
  it("stats over 1d: volume, trades, win rate and average-cost realized P&L, exact", async () => {
    const A = w1A()
    const B = w1B()
    const r = await get(`/v1/market/wallet/${W1}/stats?period=1d`, "free")
    expect(r.status).toBe(200)
    const volume = sum([...A.trades, B.sell].map(volumeOf))
    const realized = A.realized + B.realized
    const wins = (A.realized > 0n ? 1 : 0) + (B.realized > 0n ? 1 : 0)
    expect(r.body).toMatchObject({
      period: "1d",
      label: { id: "w1", groups: ["g_pub"] },
      trades: 4,
      buys: 2,
      sells: 2,
      tokens_traded: 2,
      volume: [{ quote_asset: "sol", amount: dec(volume, 9), usd: usd(volume) }],
      volume_usd: usd(volume),
      realized_pnl: [{ quote_asset: "sol", amount: dec(realized, 9) }],
      realized_pnl_usd: usd(realized),
      tokens_closed: 2,
      wins,
      win_rate_bps: Math.floor((wins * 10_000) / 2),
      history_truncated: false
    })
    // B's round trip lost the curve fees both ways.
    expect(B.realized < 0n).toBe(true)
    const all = await get(`/v1/market/wallet/${W1}/stats?period=all`)
    expect(all.body).toMatchObject({ trades: 5, buys: 3, volume_usd: usd(volume + B.buy.quoteConsumedRaw), realized_pnl_usd: usd(realized) })
    // An untracked wallet: no label; a wallet that never traded: zeros.
    expect((await get(`/v1/market/wallet/${W4}/stats`)).body).toMatchObject({ label: null, trades: 1, tokens_closed: 0, win_rate_bps: null })
    expect((await get(`/v1/market/wallet/${addr("Nobody")}/stats`)).body).toMatchObject({ trades: 0, volume_usd: "0" })
    expect((await get(`/v1/market/wallet/${W1}/stats?period=2d`)).body.error.field).toBe("period")
    expect((await get(`/v1/market/wallet/0xabc/stats`)).body.error.field).toBe("address")
  })

  it("activity pages the wallet's trades newest first", async () => {
    const first = await get(`/v1/market/wallet/${W1}/activity?period=all&limit=2`)
    const mine = recorded.filter((t) => t.trader === W1).sort((x, y) => y.timestampMs - x.timestampMs)
    expect(first.body.trades.map((t: any) => t.signature)).toEqual(mine.slice(0, 2).map((t) => t.signature))
    expect(first.body.trades[0]).toMatchObject({ token: MINT_B, symbol: "BETA", side: "sell", quote: dec(mine[0]!.amountOutRaw, 9), volume_usd: usd(volumeOf(mine[0]!)) })
    const next = await get(`/v1/market/wallet/${W1}/activity?period=all&limit=2&before=${Date.parse(first.body.next_before)}`)
    expect(next.body.trades.map((t: any) => t.signature)).toEqual(mine.slice(2, 4).map((t) => t.signature))
    expect((await get(`/v1/market/wallet/${W1}/activity?period=1d`)).body.trades).toHaveLength(4)
    expect((await get(`/v1/market/wallet/${W1}/activity?token=${MINT_B}&period=all`)).body.trades).toHaveLength(2)
    expect((await get(`/v1/market/wallet/${W1}/activity?limit=0`)).body.error.field).toBe("limit")
  })

  it("token breakdown: per token, latest first, cost carried across the period boundary", async () => {
    const A = w1A()
    const B = w1B()
    const r = await get(`/v1/market/wallet/${W1}/token-breakdown?period=1d`)
    expect(r.body.tokens.map((t: any) => t.token)).toEqual([MINT_B, MINT_A])
    expect(r.body.tokens[0]).toMatchObject({ trades: 1, sells: 1, realized_pnl: dec(B.realized, 9), held: "0", spent: "0" })
    const core = index.market("solana", MINT_A)!
    const value = (A.held * core.curveState.virtualQuoteRaw) / core.curveState.virtualTokenRaw
    expect(r.body.tokens[1]).toMatchObject({
      trades: 3,
      buys: 2,
      realized_pnl: dec(A.realized, 9),
      realized_pnl_usd: usd(A.realized),
      held: dec(A.held, 6),
      cost_held: dec(A.cost, 9),
      value: dec(value, 9),
      unrealized_pnl: dec(value - A.cost, 9)
    })
    expect((await get(`/v1/market/wallet/${W1}/token-breakdown?period=1d&limit=1`)).body).toMatchObject({ tokens_traded: 2, tokens: [{ token: MINT_B }] })
  })

  it("portfolio: net positions valued at spot reserves", async () => {
    const A = w1A()
    const core = index.market("solana", MINT_A)!
    const value = (A.held * core.curveState.virtualQuoteRaw) / core.curveState.virtualTokenRaw
    const r = await get(`/v1/market/wallet/${W1}/portfolio`, "free")
    expect(r.body).toMatchObject({
      positions_count: 1,
      value_usd: usd(value),
      value: [{ quote_asset: "sol", amount: dec(value, 9) }],
      cost_usd: usd(A.cost),
      positions: [{ token: MINT_A, amount: dec(A.held, 6), value: dec(value, 9), cost: dec(A.cost, 9), unrealized_pnl: dec(value - A.cost, 9), unrealized_pnl_usd: usd(value - A.cost) }]
    })
  })
})

describe("book legs (Max)", () => {
  it("refuses Free and Pro with the plain 403", async () => {
    expect(await get(`/v1/market/wallet/${W1}/book-legs`, "free")).toEqual({ status: 403, body: { error: "requires Max" } })
    expect(await get(`/v1/market/wallet/${W1}/book-legs`, "pro")).toEqual({ status: 403, body: { error: "requires Max" } })
  })

  it("pairs each trade with opposite-side trades by others on the token within the window", async () => {
    const r = await get(`/v1/market/wallet/${W1}/book-legs`)
    expect(r.status).toBe(200)
    const mine = recorded.filter((t) => t.trader === W1)
    const pairs = mine.flatMap((m) =>
      recorded.filter((o) => o.trader !== W1 && o.mint === m.mint && o.side !== m.side && Math.abs(o.timestampMs - m.timestampMs) <= 10 * MIN).map((o) => ({ m, o }))
    )
    expect(r.body.pairs).toBe(pairs.length)
    const counts = new Map<string, number>()
    for (const p of pairs) counts.set(p.o.trader, (counts.get(p.o.trader) ?? 0) + 1)
    expect(r.body.counterparties.map((c: any) => [c.wallet, c.legs])).toEqual(
      [...counts].sort(([wa, x], [wb, y]) => y - x || (wa < wb ? -1 : 1))
    )
    const w2 = r.body.counterparties.find((c: any) => c.wallet === W2)
    const w2Volume = sum(pairs.filter((p) => p.o.trader === W2).map((p) => volumeOf(p.o)))
    expect(w2).toMatchObject({ label: { id: "w2" }, volume_usd: usd(w2Volume) })
    // A 1-minute window keeps only legs that close together: W1's second buy (2:00) and W2's sell (5:00) are 3 minutes apart.
    const narrow = await get(`/v1/market/wallet/${W1}/book-legs?window_minutes=1`)
    expect(narrow.body.pairs).toBe(pairs.filter((p) => Math.abs(p.o.timestampMs - p.m.timestampMs) <= MIN).length)
    expect((await get(`/v1/market/wallet/${W1}/book-legs?days=91`)).body.error).toMatchObject({ field: "days", limit: 90 })
    expect((await get(`/v1/market/wallet/${W1}/book-legs?days=90`)).status).toBe(200)
  })
})

describe("social", () => {
  it("mentions newest first, with KOL labels; kol=true keeps KOL authors", async () => {
    const r = await get("/v1/social/mentions")
    expect(r.body.mentions.map((m: any) => m.id)).toEqual(["m3", "m2", "m1", "m0"])
    expect(r.body.mentions[0]).toMatchObject({ symbol: "BETA", kol: { id: "kol_x", handle: "kolx" } })
    expect((await get("/v1/social/mentions?kol=true")).body.mentions.map((m: any) => m.id)).toEqual(["m3", "m1"])
    expect((await get(`/v1/social/mentions?token=${MINT_A}&limit=2`)).body.mentions.map((m: any) => m.id)).toEqual(["m2", "m1"])
    expect((await get("/v1/social/mentions?limit=201")).body.error).toMatchObject({ field: "limit", limit: 200 })
  })

  it("mention marks carry the price in force at each mention (null before the first trade)", async () => {
    const r = await get(`/v1/social/mention-marks?token=${MINT_A}`)
    expect(r.status).toBe(200)
    expect(r.body.marks.map((m: any) => m.id)).toEqual(["m0", "m1", "m2"])
    expect(r.body.marks[0]).toMatchObject({ price: null, price_usd: null, price_at: null })
    const priceOf = (t: Trade) => dec((t.quoteReserveRaw * 10n ** 6n * 10n ** 18n) / (t.tokenReserveRaw * 10n ** 9n), 18)
    const usdPriceOf = (t: Trade) => dec((t.quoteReserveRaw * 10n ** 6n * 150n * 10n ** 18n) / (t.tokenReserveRaw * 10n ** 9n), 18)
    const w1Buy = tradesOf(MINT_A, W1)[0]!
    const w3Buy = tradesOf(MINT_A, W3)[0]! // at the same millisecond as m2: it counts
    expect(r.body.marks[1]).toMatchObject({ price: priceOf(w1Buy), price_usd: usdPriceOf(w1Buy), price_at: new Date(w1Buy.timestampMs).toISOString() })
    expect(r.body.marks[2]).toMatchObject({ price: priceOf(w3Buy), price_at: new Date(w3Buy.timestampMs).toISOString() })
    expect((await get(`/v1/social/mention-marks?token=${MINT_A}&days=1`)).body.marks.map((m: any) => m.id)).toEqual(["m1", "m2"])
    expect((await get(`/v1/social/mention-marks`)).body.error.field).toBe("token")
    expect((await get(`/v1/social/mention-marks?token=${addr("Zzz")}`)).body.error.code).toBe("MARKET_NOT_FOUND")
    expect((await get(`/v1/social/mention-marks?token=${MINT_A}&days=31`)).body.error).toMatchObject({ field: "days", limit: 30 })
  })

  it("trending ranks by mentions then volume over the window", async () => {
    const r = await get("/v1/social/mentions/trending?window=24h")
    const since = nowMs - DAY
    const volA = sum(recorded.filter((t) => t.mint === MINT_A && t.timestampMs >= since).map(volumeOf))
    const volB = sum(recorded.filter((t) => t.mint === MINT_B && t.timestampMs >= since).map(volumeOf))
    expect(r.body.tokens).toEqual([
      expect.objectContaining({ token: MINT_A, mentions: 2, kol_mentions: 1, authors: 2, volume: dec(volA, 9), volume_usd: usd(volA), trades: 7 }),
      expect.objectContaining({ token: MINT_B, mentions: 1, kol_mentions: 1, volume: dec(volB, 9), trades: 1 })
    ])
    // The last hour (from T0): m1, m2 and m3 are inside, m0 (3 days old) never is.
    const hour = await get("/v1/social/mentions/trending?window=1h")
    expect(hour.body.tokens.map((t: any) => [t.token, t.mentions])).toEqual([
      [MINT_A, 2],
      [MINT_B, 1]
    ])
    expect((await get("/v1/social/mentions/trending?window=2h")).body.error.field).toBe("window")
    expect((await get("/v1/social/mentions/trending?limit=101")).body.error).toMatchObject({ field: "limit", limit: 100 })
  })
})

describe("assets", () => {
  it("lists the quote assets with their USD prices; one by id; unknown is a plain 404", async () => {
    const r = await get("/v1/assets", "free")
    expect(r.body.assets.map((x: any) => [x.id, x.chain, x.decimals, x.price_usd])).toEqual([
      ["sol", "solana", 9, "150"],
      ["usdc", "solana", 6, "1"],
      ["svc", "solana", 6, null],
      ["eth", "hood", 18, null],
      ["usdg", "hood", 6, null]
    ])
    expect((await get("/v1/assets/SOL")).body).toMatchObject({ id: "sol", symbol: "SOL", price_usd: "150", price_source: "localnet-fixed" })
    expect(await get("/v1/assets/doge")).toEqual({ status: 404, body: { error: "asset not found" } })
  })
})
