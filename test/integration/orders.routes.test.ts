/**
 * The limit-order routes (issue 29) over real HTTP with the real key auth, tiers and PGlite:
 * Max only (TIER_REQUIRED), idempotent create on clientOrderId, field refusals, list with status
 * filter and cursor pages, read, cancel by any swap:write key of the account (never by a read
 * key, never twice), and the access change's `effects.openLimitOrders` with OPEN_ORDERS_STRANDED.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { makeStep, defaultConfig, type MarketState } from "../../actors/market/MarketActor.js"
import { orderRoutes } from "../../api/routes/OrderRoutes.js"
import * as OrderService from "../../src/services/orders/OrderService.js"
import { call, type Harness, startHarness } from "../support/accountsHarness.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"

const SOL = 1_000_000_000n

describe("limit-order routes", () => {
  let h: Harness
  let service: OrderService.OrderServiceShape | undefined
  const index = new MarketIndexStore()
  const m = new SimMarket(new ChainClock("solana"), { mint: "So1ordersRoutesMint111111111111111111111111" })
  // The routes are built with the harness's authenticators; the service needs its database, read once it started.
  const late: OrderService.OrderServiceShape = {
    create: (c, r) => service!.create(c, r),
    list: (c, q) => service!.list(c, q),
    read: (c, id) => service!.read(c, id),
    cancel: (c, id) => service!.cancel(c, id),
    openOfKey: (k) => service!.openOfKey(k)
  }

  beforeAll(async () => {
    const step = makeStep(defaultConfig)
    let state: MarketState | undefined
    for (const e of [m.created(), ...m.buy("early", SOL)]) state = step(state, e)[0]
    index.publish([[`solana:${m.mint}`, state]])
    h = await startHarness({ contract: true, extraRoutes: (api) => orderRoutes({ agentAuth: api.agentAuth, orders: late }) })
    service = await h.run(OrderService.make(index))
  }, 60_000)
  afterAll(() => h?.close())

  const issue = async (session: string, scopes: ReadonlyArray<string>) => {
    const r = await call(h.url, "POST", "/api/v1/agent/keys", { session, body: { scopes } })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { key: string; keyPrefix: string }
  }
  const limitSell = (clientOrderId: string, extra: Record<string, unknown> = {}) => ({
    clientOrderId,
    chain: "solana",
    mint: m.mint,
    side: "sell",
    type: "limit",
    amount: "1000000",
    targetPrice: "0.5",
    ...extra
  })

  it("Max only: a Pro or Free account's swap:write key is refused TIER_REQUIRED", async () => {
    for (const plan of ["free", "pro"] as const) {
      const { session } = await h.newAccount({ plan })
      const k = await issue(session, ["swap:write"])
      const r = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: k.key, body: limitSell("c1") })
      expect(r.status, JSON.stringify(r.body)).toBe(403)
      expect(r.body.error.code).toBe("TIER_REQUIRED")
    }
  })

  it("create is idempotent on clientOrderId; another request with it conflicts; fields are refused by name", async () => {
    const { session } = await h.newAccount({ plan: "max" })
    const k = await issue(session, ["swap:write"])
    const first = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: k.key, body: limitSell("c-idem") })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body).toMatchObject({ success: true, replayed: false, order: { clientOrderId: "c-idem", status: "open", type: "limit", side: "sell", targetPrice: "0.5", amountRaw: "1000000", slippageBps: 100, payer: "main" } })
    const again = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: k.key, body: limitSell("c-idem") })
    expect(again.body).toMatchObject({ replayed: true, order: { orderId: first.body.order.orderId } })
    const other = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: k.key, body: limitSell("c-idem", { targetPrice: "0.6" }) })
    expect(other.status).toBe(409)
    expect(other.body.error).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", field: "clientOrderId" })

    const refusals: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ targetPrice: 0.5 }, "targetPrice"],
      [{ targetPrice: "0" }, "targetPrice"],
      [{ targetPrice: "0.1234567890123456789" }, "targetPrice"],
      [{ type: "stop", side: "buy", targetPrice: undefined, stopPrice: "0.1" }, "side"],
      [{ type: "stop", targetPrice: undefined }, "stopPrice"],
      [{ type: "trailing_stop", targetPrice: undefined, trailBps: 10_000 }, "trailBps"],
      [{ trailBps: 100 }, "trailBps"],
      [{ amount: "0" }, "amount"],
      [{ slippageBps: 5001 }, "slippageBps"],
      [{ payer: "linked" }, "payer"],
      [{ expiresAt: "tomorrow" }, "expiresAt"],
      [{ expiresAt: new Date(Date.now() - 1000).toISOString() }, "expiresAt"],
      [{ clientOrderId: "has space" }, "clientOrderId"],
      [{ mint: "not-an-address" }, "mint"],
      [{ chain: "hood" }, "mint"]
    ]
    for (const [extra, field] of refusals) {
      const r = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: k.key, body: limitSell("c-bad", extra) })
      expect(r.status, `${JSON.stringify(extra)} ${JSON.stringify(r.body)}`).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field })
    }
    const unknown = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: k.key, body: limitSell("c-unknown", { mint: "So1noSuchMint111111111111111111111111111111" }) })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe("MARKET_NOT_FOUND")
  })

  it("list filters by status and pages with continueCursor; read; any swap:write key cancels once, a read key never", async () => {
    const { session } = await h.newAccount({ plan: "max" })
    const placer = await issue(session, ["swap:write"])
    const otherWriter = await issue(session, ["swap:write"])
    const reader = await issue(session, ["account:read"])
    const ids: Array<string> = []
    for (const c of ["p1", "p2", "p3"]) {
      const r = await call(h.url, "POST", "/api/v1/agent/orders", { apiKey: placer.key, body: limitSell(c) })
      expect(r.status).toBe(200)
      ids.push(r.body.order.orderId as string)
    }
    const trailing = await call(h.url, "POST", "/api/v1/agent/orders", {
      apiKey: placer.key,
      body: limitSell("p-trail", { type: "trailing_stop", targetPrice: undefined, trailBps: 500, expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
    })
    expect(trailing.status, JSON.stringify(trailing.body)).toBe(200)
    expect(trailing.body.order.trailWatermark).toMatch(/^0\.0000000\d+/)

    const page1 = await call(h.url, "GET", "/api/v1/agent/orders?status=open&limit=3", { apiKey: reader.key })
    expect(page1.status).toBe(200)
    expect(page1.body.orders).toHaveLength(3)
    expect(page1.body.isDone).toBe(false)
    const page2 = await call(h.url, "GET", `/api/v1/agent/orders?status=open&limit=3&cursor=${page1.body.continueCursor}`, { apiKey: reader.key })
    expect(page2.body).toMatchObject({ isDone: true, continueCursor: null })
    expect(new Set([...page1.body.orders, ...page2.body.orders].map((o: { orderId: string }) => o.orderId)).size).toBe(4)
    expect((await call(h.url, "GET", "/api/v1/agent/orders?cursor=bm9wZQ", { apiKey: reader.key })).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "cursor" })
    // One market's orders (the book's open orders of a market, as the account reads them): chain and mint.
    const market = await call(h.url, "GET", `/api/v1/agent/orders?status=open&chain=solana&mint=${m.mint}`, { apiKey: reader.key })
    expect(market.body.orders).toHaveLength(4)
    const otherMint = await call(h.url, "GET", "/api/v1/agent/orders?chain=solana&mint=So1otherMint11111111111111111111111111111111", { apiKey: reader.key })
    expect(otherMint.body.orders).toEqual([])
    expect((await call(h.url, "GET", "/api/v1/agent/orders?chain=hood", { apiKey: reader.key })).body.orders).toEqual([])
    expect((await call(h.url, "GET", `/api/v1/agent/orders?mint=${m.mint}`, { apiKey: reader.key })).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "chain" })
    expect((await call(h.url, "GET", "/api/v1/agent/orders?chain=solana&mint=nope", { apiKey: reader.key })).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "mint" })

    const read = await call(h.url, "GET", `/api/v1/agent/orders/${ids[0]}`, { apiKey: reader.key })
    expect(read.body.order).toMatchObject({ orderId: ids[0], clientOrderId: "p1", status: "open" })

    const byReader = await call(h.url, "POST", `/api/v1/agent/orders/${ids[0]}/cancel`, { apiKey: reader.key })
    expect(byReader.status).toBe(403)
    expect(byReader.body.error.code).toBe("SCOPE_MISSING")
    const cancelled = await call(h.url, "POST", `/api/v1/agent/orders/${ids[0]}/cancel`, { apiKey: otherWriter.key })
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
    expect(cancelled.body.order.status).toBe("cancelled")
    const twice = await call(h.url, "POST", `/api/v1/agent/orders/${ids[0]}/cancel`, { apiKey: otherWriter.key })
    expect(twice.status).toBe(409)
    expect(twice.body.error).toMatchObject({ code: "VALIDATION_FAILED", reason: "not_open" })
    const cancelledList = await call(h.url, "GET", "/api/v1/agent/orders?status=cancelled", { apiKey: reader.key })
    expect(cancelledList.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([ids[0]])

    // Another account sees none of them.
    const stranger = await h.newAccount({ plan: "max" })
    const strangerKey = await issue(stranger.session, ["swap:write"])
    expect((await call(h.url, "GET", `/api/v1/agent/orders/${ids[1]}`, { apiKey: strangerKey.key })).status).toBe(404)
    expect((await call(h.url, "POST", `/api/v1/agent/orders/${ids[1]}/cancel`, { apiKey: strangerKey.key })).status).toBe(404)

    // Narrowing the placing key to read: its open orders are reported and stranded, they stay open.
    const preview = await call(h.url, "PUT", `/api/v1/agent/keys/${placer.keyPrefix}/access`, { session, body: { access: "read", dryRun: true } })
    expect(preview.status, JSON.stringify(preview.body)).toBe(200)
    expect(preview.body.effects.openLimitOrders).toBe(3)
    expect(preview.body.warnings.map((w: { code: string }) => w.code)).toContain("OPEN_ORDERS_STRANDED")
    // A key with no open orders narrows without the warning.
    const quiet = await call(h.url, "PUT", `/api/v1/agent/keys/${otherWriter.keyPrefix}/access`, { session, body: { access: "read", dryRun: true } })
    expect(quiet.body.effects.openLimitOrders).toBeUndefined()
    expect(quiet.body.warnings.map((w: { code: string }) => w.code)).not.toContain("OPEN_ORDERS_STRANDED")
  })
})
