/**
 * The market-data read service against real chDB and a real `MarketIndexStore`, and its failures
 * on the wire through the read routes over real HTTP (uWS): a ClickHouse failure (here the
 * `trades` table dropped under a running service) is `history_unavailable`, answered as the
 * retryable 503 `FEED_UNAVAILABLE` with `Retry-After`; an unknown token is `market_not_found`
 * (naming the chain it trades on), `markets_loading` while the index warms; an unknown asset is
 * the plain 404.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { tokenReadRoutes } from "../../api/data/reads/TokenReadRoutes.js"
import { walletSocialRoutes } from "../../api/data/reads/WalletSocialRoutes.js"
import { rowOf, toApiError } from "../../api/ErrorTable.js"
import { serve } from "../../api/Server.js"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { make, type MarketDataError, type MarketDataShape } from "../../src/services/marketdata/MarketData.js"
import { makeStore } from "../../src/services/social/SocialMentions.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { seedTrackingData } from "../../src/services/tracking/Seed.js"
import { make as makeTracking } from "../../src/services/tracking/Tracking.js"
import { marketFeed, planBearer } from "../support/marketFeed.js"
import { clockAt } from "../support/clock.js"

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0)
const nowMs = T0 + 60_000
const MINT = ("SvcMint" + "1".repeat(44)).slice(0, 44)
const W1 = ("Wone" + "1".repeat(44)).slice(0, 44)

let scope: Scope.CloseableScope
let dataDir = ""
let clickhouse: ClickHouseShape
let data: MarketDataShape
let url = ""
const index = new MarketIndexStore()
index.setWarming(false)
const clock = new ChainClock("solana", T0)
const market = new SimMarket(clock, { mint: MINT, name: "Svc Dog", symbol: "SVC" })

const failure = (e: Effect.Effect<unknown, MarketDataError>) => Effect.runPromise(Effect.flip(e))
const get = async (p: string) => {
  const res = await fetch(`${url}${p}`, { headers: { authorization: "Bearer plan-max" } })
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, any> }
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-mdsvc-"))
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(ClickHouse.layerChdb({ dataDir }), scope))
  clickhouse = ctx.unsafeMap.get(ClickHouse.key) as ClickHouseShape
  const prices = fixedPriceSource({ sol: "150" })
  data = make({ clickhouse, index, prices })
  const common = { clickhouse, index, prices, nowMs: () => nowMs, authenticate: planBearer }
  const routes = [...tokenReadRoutes(common), ...walletSocialRoutes({ ...common, tracking: makeTracking(seedTrackingData()), social: makeStore(100, 4) })]
  url = (await Effect.runPromise(serve({ name: "market-data", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes }).pipe(Effect.withClock(clockAt(nowMs)), Scope.extend(scope)))).url
  await marketFeed(index, () => clickhouse).apply([market.created(), ...market.buy(W1, 1_000_000_000n)])
}, 60_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("market-data service", () => {
  it("reads history and looks tokens and assets up", async () => {
    const core = await Effect.runPromise(data.token("solana", MINT))
    expect(core.mint).toBe(MINT)
    const { positions, total } = await Effect.runPromise(data.topPositions("solana", MINT, { tokenRaw: 1n, quoteRaw: 1n }, "held", 10, true))
    expect([total, positions.map((p) => p.trader)]).toEqual([1, [W1]])
    const sol = await Effect.runPromise(data.asset("SOL"))
    expect([sol.pair.id, sol.price?.source !== undefined]).toEqual(["sol", true])
  })

  it("refuses an unknown token, naming the chain it trades on, and while the index warms", async () => {
    const other = await failure(data.token("hood", MINT))
    expect([other.reason, other.details]).toEqual(["market_not_found", { routing: { reason: "chain_mismatch", chain: "solana" } }])
    expect((await failure(data.token("solana", W1))).reason).toBe("market_not_found")
    const named = await failure(data.tokenIn("solana", W1, "mints"))
    expect([named.reason, named.field]).toEqual(["market_not_found", "mints"])
    index.setWarming(true)
    try {
      const warming = await failure(data.token("solana", W1))
      expect([warming.reason, warming.retryable]).toEqual(["markets_loading", true])
    } finally {
      index.setWarming(false)
    }
    expect((await failure(data.asset("doge"))).reason).toBe("not_found")
    expect(rowOf(await failure(data.asset("doge"))).plain).toBe(true)
  })

  it("answers an unknown asset with the plain 404 and an unknown token with MARKET_NOT_FOUND", async () => {
    expect(await get("/v1/assets/doge")).toEqual({ status: 404, retryAfter: null, body: { error: "asset not found" } })
    const unknown = await get(`/v1/market/token/${W1}/holders`)
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "MARKET_NOT_FOUND"])
  })

  // Last: it drops the table.
  it("turns a ClickHouse failure into the retryable history_unavailable, answered 503 FEED_UNAVAILABLE", async () => {
    await Effect.runPromise(clickhouse.command("DROP TABLE trades"))
    const e = await failure(data.walletHistory("solana", W1))
    expect([e.reason, e.retryable]).toEqual(["history_unavailable", true])
    const wire = toApiError(e)
    expect([wire.code, wire.httpStatus, wire.retryable, wire.headers]).toEqual(["FEED_UNAVAILABLE", 503, true, { "Retry-After": "2" }])
    for (const p of [`/v1/market/token/${MINT}/holders`, `/v1/market/wallet/${W1}/stats`]) {
      const res = await get(p)
      expect([res.status, res.retryAfter, res.body.error.code, res.body.error.retryable]).toEqual([503, "2", "FEED_UNAVAILABLE", true])
    }
  })
})
