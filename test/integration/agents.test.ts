/**
 * The public agent reads over real HTTP (uWS): the agent record, the copy score and the cohorts,
 * against real chDB (trades inserted as the writer's rows), PGlite with every migration through
 * the accounts harness (real TierService, profiles in `agent_profiles`), and a real
 * `MarketIndexStore` fed through the market actor's `step`. The copy score's money figures are
 * worked out here from the recorded trades with bigint arithmetic.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { agentRoutes, COPY_SCORE_LIMIT_PER_MIN } from "../../api/routes/AgentRoutes.js"
import { serve } from "../../api/Server.js"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { createAccount } from "../../src/services/accounts/Accounts.js"
import { AccountWallets } from "../../src/services/accounts/AccountWallets.js"
import { type Harness, startHarness } from "../support/accountsHarness.js"
import { TierService } from "../../src/services/accounts/TierService.js"
import { publishProfile, unpublishProfile } from "../../src/services/agents/AgentProfiles.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { marketFeed } from "../support/marketFeed.js"
import { clockAt } from "../support/clock.js"

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0)
let nowMs = T0 + 10 * DAY

const addr = (prefix: string) => (prefix + "1".repeat(44)).slice(0, 44)
const WX = addr("Wxagent")
const WV = addr("Wvagent")
const WY = addr("Wyagent")
const WZ = addr("Wzagent")
const PUMPER = addr("Pumper")

let h: Harness
let scope: Scope.CloseableScope
let clickhouse: ClickHouseShape
let dataDir = ""
let url = ""
let urlTight = ""
const index = new MarketIndexStore()
index.setWarming(false)
const clock = new ChainClock("solana", T0)
const feed = marketFeed(index, () => clickhouse)
const apply = feed.apply
const recorded = feed.trades

const ids = { x: "", v: "", y: "", z: "", xProfile: "", vProfile: "", yProfile: "", zProfile: "" }
const markets: Array<SimMarket> = []

beforeAll(async () => {
  h = await startHarness({
    perAccountWallets: (id) =>
      id === ids.x ? { solanaWallets: [WX] } : id === ids.v ? { solanaWallets: [] } : id === ids.y ? { solanaWallets: [WY] } : { solanaWallets: [] }
  })
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-agents-"))
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(ClickHouse.layerChdb({ dataDir }), scope))
  clickhouse = ctx.unsafeMap.get(ClickHouse.key) as ClickHouseShape

  const made = await h.run(
    Effect.gen(function* () {
      const mk = (handle: string) => createAccount({ handle, name: handle, plan: "free", agentEnabled: true, isAdmin: false }, nowMs)
      const x = yield* mk("agent-x")
      const v = yield* mk("agent-v")
      const y = yield* mk("agent-y")
      const z = yield* mk("agent-z")
      return { x: x.id, v: v.id, y: y.id, z: z.id }
    })
  )
  Object.assign(ids, made)
  const profiles = await h.run(
    Effect.gen(function* () {
      const xp = yield* publishProfile({ accountId: ids.x, name: "Agent X", chain: "solana", wallet: WX }, T0)
      const vp = yield* publishProfile({ accountId: ids.v, name: "Agent V", chain: "solana", wallet: WV }, T0 + 1)
      const yp = yield* publishProfile({ accountId: ids.y, name: "Agent Y", chain: "solana", wallet: WY }, T0 + 2)
      const zp = yield* publishProfile({ accountId: ids.z, name: "Agent Z", chain: "solana", wallet: WZ }, T0 + 3)
      yield* unpublishProfile(ids.z, T0 + 4)
      return { xProfile: xp.id, vProfile: vp.id, yProfile: yp.id, zProfile: zp.id }
    })
  )
  Object.assign(ids, profiles)

  const services = await h.run(Effect.all({ sql: SqlClient.SqlClient, tiers: TierService, wallets: AccountWallets }))
  const prices = fixedPriceSource({ sol: "150" })
  const common = { ...services, clickhouse, index, prices, nowMs: () => nowMs }
  const server = await Effect.runPromise(serve({ name: "agents", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: agentRoutes(common) }).pipe(Effect.withClock(clockAt(() => nowMs)), Scope.extend(scope)))
  url = server.url
  const tight = await Effect.runPromise(
    serve({ name: "agents-tight", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: agentRoutes({ ...common, limits: { cohorts: 2 } }) }).pipe(Effect.withClock(clockAt(() => nowMs)), Scope.extend(scope))
  )
  urlTight = tight.url

  // Six markets launched by X's wallet, one a day: X buys a minute after launch, a pumper buys,
  // X sells everything two hours later (a win), except on the last market (nobody pumps: a loss).
  for (let d = 0; d < 6; d++) {
    clock.nowMs = T0 + d * DAY
    const m = new SimMarket(clock, { mint: addr(`Mkt${d}x`), creator: WX })
    markets.push(m)
    await apply([m.created()])
    clock.nowMs += MIN
    await apply(m.buy(WX, 1_000_000_000n))
    if (d < 3) await apply(m.buy(WV, 100_000_000n)) // V buys early too and holds
    clock.nowMs += 30 * MIN
    if (d < 5) await apply(m.buy(PUMPER, 5_000_000_000n))
    clock.nowMs += 89 * MIN
    const held = recorded.filter((t) => t.mint === m.mint && t.trader === WX && t.side === "buy").reduce((s, t) => s + t.amountOutRaw, 0n)
    await apply([m.sell(WX, held)])
  }
  // Y: one trade on a market created by someone else.
  clock.nowMs = T0 + 7 * DAY
  const other = new SimMarket(clock, { mint: addr("Other") })
  await apply([other.created()])
  clock.nowMs += HOUR
  await apply(other.buy(WY, 10_000_000n))
}, 120_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await h?.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const get = async (base: string, p: string) => {
  const res = await fetch(base + p)
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as any }
}

/** USD micro-dollars of a signed raw SOL amount at $150, floored toward zero per token (the documented rule). */
const usdMicros = (raw: bigint) => (raw >= 0n ? (raw * 150n * 1_000_000n) / 10n ** 9n : -((-raw * 150n * 1_000_000n) / 10n ** 9n))
const usd = (micros: bigint) => {
  const neg = micros < 0n
  const a = neg ? -micros : micros
  const frac = (a % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "")
  return `${neg ? "-" : ""}${a / 1_000_000n}${frac ? `.${frac}` : ""}`
}

describe("copy score", () => {
  it("scores a published agent from its wallet's trades, every input worked out from the trades", async () => {
    const r = await get(url, `/api/v1/markets/agents/${ids.xProfile}/copy-score`)
    expect(r.status).toBe(200)
    expect(r.headers.get("cache-control")).toBe("public, max-age=60")
    let realized = 0n
    let closedSpent = 0n
    let spent = 0n
    let wins = 0
    for (const m of markets) {
      const mine = recorded.filter((t) => t.mint === m.mint && t.trader === WX)
      const paid = mine.filter((t) => t.side === "buy").reduce((s, t) => s + t.amountInRaw - t.refundRaw, 0n)
      const got = mine.filter((t) => t.side === "sell").reduce((s, t) => s + t.amountOutRaw, 0n)
      realized += usdMicros(got - paid)
      closedSpent += usdMicros(paid)
      spent += usdMicros(paid)
      if (got > paid) wins++
    }
    expect(wins).toBe(5)
    const s = r.body.score
    expect(s).toMatchObject({ profileId: ids.xProfile, name: "Agent X", wallet: WX, chain: "solana" })
    expect(s.inputs).toEqual({
      trades: 12,
      tokensTraded: 6,
      tokensClosed: 6,
      winRateBps: 8_333,
      realizedPnlUsd: usd(realized),
      spentUsd: usd(spent),
      returnBps: Number((realized * 10_000n) / closedSpent),
      medianHoldSeconds: 119 * 60,
      earlyEntryBps: 10_000,
      avgEntryUsd: usd(spent / 6n),
      activeDays: 6,
      lastTradeAt: new Date(T0 + 5 * DAY + 120 * MIN).toISOString(),
      historyTruncated: false
    })
    expect(s.assessment.score).toBeGreaterThan(0)
    expect(s.assessment.grade).toMatch(/^[A-F]$/)
    expect(s.window).toEqual({ from: new Date(nowMs - 30 * DAY).toISOString(), to: new Date(nowMs).toISOString() })
  })

  it("is cached for 60 s: a new trade shows only after", async () => {
    const before = await get(url, `/api/v1/markets/agents/${ids.yProfile}/copy-score`)
    expect(before.body.score.inputs).toMatchObject({ trades: 1, tokensClosed: 0 })
    expect(before.body.score.assessment).toMatchObject({ score: null, label: "insufficient_history" })
    clock.nowMs = T0 + 8 * DAY
    await apply(markets[0]!.buy(WY, 10_000_000n))
    nowMs += 59_999
    expect((await get(url, `/api/v1/markets/agents/${ids.yProfile}/copy-score`)).body.score.inputs.trades).toBe(1)
    nowMs += 1
    expect((await get(url, `/api/v1/markets/agents/${ids.yProfile}/copy-score`)).body.score.inputs.trades).toBe(2)
  })

  it("MARKET_NOT_FOUND for an unknown, malformed or unpublished agent", async () => {
    for (const id of ["ap_00000000000000000000", "nope", ids.zProfile]) {
      const r = await get(url, `/api/v1/markets/agents/${id}/copy-score`)
      expect([r.status, r.body.error.code, r.body.error.reason]).toEqual([404, "MARKET_NOT_FOUND", "agent_not_found"])
    }
  })
})

describe("cohorts", () => {
  it("ranks published agents by the documented rules; limit and truncated", async () => {
    const steady = await get(url, "/api/v1/markets/cohorts/steady")
    expect(steady.status).toBe(200)
    expect(steady.headers.get("cache-control")).toBe("public, max-age=120")
    expect(steady.body).toMatchObject({ success: true, cohort: "steady", truncated: false, members: [{ profileId: ids.xProfile, name: "Agent X", address: WX }] })
    const conviction = await get(url, "/api/v1/markets/cohorts/high_conviction")
    expect(conviction.body.members).toEqual([{ profileId: ids.xProfile, name: "Agent X", address: WX }])
    const early = await get(url, "/api/v1/markets/cohorts/early_finder")
    const expected = [ids.xProfile, ids.vProfile].sort() // equal shares: by profile id
    expect(early.body.members.map((m: { profileId: string }) => m.profileId)).toEqual(expected)
    const one = await get(url, "/api/v1/markets/cohorts/early_finder?limit=1")
    expect(one.body).toMatchObject({ truncated: true, members: [{ profileId: expected[0] }] })
    // The unpublished agent never appears.
    for (const body of [steady.body, conviction.body, early.body]) expect(JSON.stringify(body)).not.toContain(ids.zProfile)
  })

  it("refuses an unknown cohort and a limit outside 1 to 50", async () => {
    const bad = await get(url, "/api/v1/markets/cohorts/whales")
    expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, "VALIDATION_FAILED", "cohort"])
    for (const limit of ["0", "51", "x"]) {
      const r = await get(url, `/api/v1/markets/cohorts/steady?limit=${limit}`)
      expect([r.status, r.body.error.field]).toEqual([400, "limit"])
    }
    expect((await get(url, "/api/v1/markets/cohorts/steady?limit=50")).status).toBe(200)
  })

  it("limits each client per minute with Retry-After", async () => {
    expect((await get(urlTight, "/api/v1/markets/cohorts/steady")).status).toBe(200)
    expect((await get(urlTight, "/api/v1/markets/cohorts/steady")).status).toBe(200)
    const third = await get(urlTight, "/api/v1/markets/cohorts/steady")
    expect([third.status, third.body.error.code]).toEqual([429, "RATE_LIMITED"])
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("agent record", () => {
  it("by account id, handle or wallet: enabled, address, username, launches, tier, profile", async () => {
    const expected = {
      success: true,
      agent: { enabled: true, address: WX, username: "agent-x", launches: 6, launchesViaApi: 0, tier: "free", profileId: ids.xProfile }
    }
    for (const ref of [ids.x, "agent-x", "AGENT-X", WX]) {
      const r = await get(url, `/api/v1/users/${ref}/agent`)
      expect(r.status, ref).toBe(200)
      expect(r.body).toEqual(expected)
    }
    // V has no wallets on the account: its profile's wallet stands in; it launched nothing.
    expect((await get(url, `/api/v1/users/${WV}/agent`)).body.agent).toMatchObject({ address: WV, launches: 0, profileId: ids.vProfile })
    // An unpublished profile is not linked.
    expect((await get(url, `/api/v1/users/${ids.z}/agent`)).body.agent.profileId).toBeNull()
  })

  it("an unknown user is 404 with a plain error body", async () => {
    for (const ref of ["acc_nope", addr("Nobody"), "someone"]) {
      const r = await get(url, `/api/v1/users/${ref}/agent`)
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ error: "user not found" })
    }
  })

  it("copy score: 60 a minute per client, the 61st refused until Retry-After", async () => {
    expect(COPY_SCORE_LIMIT_PER_MIN).toBe(60)
    for (let i = 0; i < COPY_SCORE_LIMIT_PER_MIN; i++) expect((await get(urlTight, `/api/v1/markets/agents/${ids.xProfile}/copy-score`)).status).toBe(200)
    const over = await get(urlTight, `/api/v1/markets/agents/${ids.xProfile}/copy-score`)
    expect([over.status, over.body.error.code]).toEqual([429, "RATE_LIMITED"])
    nowMs += Number(over.headers.get("retry-after")) * 1000
    expect((await get(urlTight, `/api/v1/markets/agents/${ids.xProfile}/copy-score`)).status).toBe(200)
  })
})
