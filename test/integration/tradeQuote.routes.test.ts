/**
 * `GET /api/v1/trade/agent/quote` over real HTTP (uWS) against the real MarketIndex, its markets
 * folded by the real market step from simulated chain events priced by the program's own math:
 * every lifecycle the route meets (curve on both chains with Hood's capped refund, the Solana pool
 * after migration, completed, recovery, a Hood pool not yet known), the refusals with their codes
 * and fields, the warming answer, the keyless rate limit at its bound, the response against its
 * documented schema, and the pointers the market record (`trade`) and the market quote
 * (`MARKET_NOT_FOUND`, `tradingContinues.quoteRoute`) give to this route, followed and found true.
 * The keyed plan fee, UNAUTHORIZED and the Hood v3 pool are in test/e2e/tradeQuote.test.ts.
 */
import { Effect, Exit, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { actorKey, type MarketState, step } from "../../actors/market/MarketActor.js"
import { AGENT_QUOTE_ENDPOINT, marketRecord } from "../../actors/market/MarketRecord.js"
import { openApiDocument } from "../../api/OpenApi.js"
import { marketRoutes } from "../../api/routes/MarketRoutes.js"
import { AgentQuoteResponse, tradeQuoteRoutes } from "../../api/routes/TradeQuoteRoutes.js"
import { serve } from "../../api/Server.js"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { quotePoolBuy } from "../../src/chain/solana/program/PoolMath.js"
import { quoteBuy } from "../../src/domain/CurveMath.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"

const T0 = Date.UTC(2026, 10, 28)
let nowMs = T0
const index = new MarketIndexStore()
const states = new Map<string, MarketState | undefined>()
const apply = (events: ReadonlyArray<ChainEvent>) => {
  const changes: Array<readonly [string, MarketState | undefined]> = []
  for (const e of events) {
    const key = actorKey(e.chain, e.mint)
    const [next] = step(states.get(key), e)
    states.set(key, next)
    changes.push([key, next])
  }
  index.publish(changes)
}
const coreOf = (chain: "solana" | "hood", mint: string) => index.market(chain, mint)!

const sol = new ChainClock("solana", T0)
const hoodClock = new ChainClock("hood", T0)
const curve = new SimMarket(sol, { mint: "CurveMint111111111111111111111111111111111111".slice(0, 44) })
const graduating = new SimMarket(sol, { mint: "GradMint1111111111111111111111111111111111111".slice(0, 44) })
const pooled = new SimMarket(sol, { mint: "PoodMint1111111111111111111111111111111111111".slice(0, 44) })
const hoodCurve = new SimMarket(hoodClock, { mint: "0x" + "a1".repeat(20) })
const hoodRecovery = new SimMarket(hoodClock, { mint: "0x" + "b2".repeat(20) })
const hoodMigrated = new SimMarket(hoodClock, { mint: "0x" + "c3".repeat(20) })

const plans = resolvePlans({}, 30)
const routes = (quoteLimitPerMin: number) =>
  tradeQuoteRoutes({
    index,
    nowMs: () => nowMs,
    // Keyless requests never authenticate; the keyed path runs against the real engine (e2e).
    agentAuth: undefined as never,
    freePlan: planById(plans, "free"),
    hoodPools: null,
    creatorShares: { solana: 3_000n, hood: 3_000n },
    quoteLimitPerMin
  })

let scope: Scope.CloseableScope
let url: string
let limitedUrl: string

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const start = (name: string, r: ReturnType<typeof routes>) =>
    Effect.runPromise(serve({ name, host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: r }).pipe(Scope.extend(scope)))
  url = (await start("quote", [...routes(100_000), ...marketRoutes({ index, nowMs: () => nowMs, curveProgram: "SVCcurve11111111111111111111111111111111111", quoteLimitPerMin: 100_000 })])).url
  limitedUrl = (await start("limited", routes(3))).url
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const get = async (path: string, base = url) => {
  const res = await fetch(base + path)
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}
const q = (chain: string, mint: string, side: string, amountIn: bigint | string, extra = "") =>
  get(`${AGENT_QUOTE_ENDPOINT}?chain=${chain}&mint=${mint}&side=${side}&amountIn=${amountIn}${extra}`)

describe("the agent quote route", () => {
  it("answers QUOTE_UNAVAILABLE (503, retryable, Retry-After) while the index warms", async () => {
    const r = await q("solana", curve.mint, "buy", 1_000n)
    expect(r.status).toBe(503)
    expect(r.body.error).toMatchObject({ code: "QUOTE_UNAVAILABLE", retryable: true })
    expect(r.headers.get("retry-after")).toBe("2")
  })

  it("quotes the Solana curve with the Free plan's fee without a key; the body is the documented schema", async () => {
    apply([curve.created(), ...curve.buy("t1", 2_000_000_000n)])
    index.setWarming(false)
    const core = coreOf("solana", curve.mint)
    const amountIn = 1_000_000_000n
    const r = await q("solana", curve.mint, "buy", amountIn, "&slippageBps=50")
    expect(r.status).toBe(200)
    const expected = quoteBuy({ ...core.params, feeBps: BigInt(core.params.feeBps), crossingModel: "full-fill-surplus" }, core.curveState, amountIn)
    if (expected._tag !== "Filled") throw new Error("refused")
    expect(r.body).toMatchObject({
      success: true,
      chain: "solana",
      mint: curve.mint,
      side: "buy",
      amountIn: amountIn.toString(),
      slippageBps: 50,
      venue: "svc-curve",
      graduationVenue: "dex-solana-v2",
      crossingModel: "full-fill-surplus",
      amountOut: expected.amountOut.toString(),
      minAmountOut: ((expected.amountOut * 9_950n) / 10_000n).toString(),
      amountConsumed: amountIn.toString(),
      refund: "0",
      crossesGraduation: false,
      fees: {
        platform: { plan: "free", planFeeBps: 100, referralDiscountPct: 0, feeRaw: "10000000", asset: "quote", charged: "on_top_of_input" },
        venue: { bps: core.params.feeBps, feeRaw: expected.fee.toString(), asset: "quote" },
        creator: { feeRaw: ((expected.fee * 3_000n) / 10_000n).toString(), asset: "quote" }
      },
      totalQuoteInRaw: (amountIn + 10_000_000n).toString(),
      asOf: { position: core.lastPosition },
      expiresAt: nowMs + 30_000
    })
    expect(r.body.priceImpactBps).toBeGreaterThan(0)
    expect(() => Schema.decodeUnknownSync(AgentQuoteResponse)(r.body)).not.toThrow()
    // A sell: the platform fee comes out of the proceeds.
    const sell = await q("solana", curve.mint, "sell", 1_000_000n)
    expect(sell.status).toBe(200)
    expect(BigInt(sell.body.netQuoteOutRaw)).toBe(BigInt(sell.body.amountOut) - BigInt(sell.body.fees.platform.feeRaw))
    expect(sell.body.fees.platform.charged).toBe("from_output")
    expect(sell.body.totalQuoteInRaw).toBeUndefined()
  })

  it("quotes a Hood crossing buy capped at the threshold: refund, amountConsumed, the platform fee on what was consumed", async () => {
    apply([hoodCurve.created()])
    const amountIn = hoodCurve.params.thresholdRaw * 2n
    const r = await q("hood", hoodCurve.mint, "buy", amountIn)
    expect(r.status).toBe(200)
    const consumed = BigInt(r.body.amountConsumed)
    expect(r.body.crossesGraduation).toBe(true)
    expect(consumed + BigInt(r.body.refund)).toBe(amountIn)
    expect(BigInt(r.body.refund)).toBeGreaterThan(0n)
    expect(r.body.fees.platform.feeRaw).toBe(((consumed + 99n) / 100n).toString())
    expect(r.body.crossingModel).toBe("capped-refund")
  })

  it("quotes the Solana pool after migration at the pool's latest reserves", async () => {
    apply([pooled.created(), ...pooled.buy("t1", 1_000n * 10n ** 9n), pooled.migrated(50)])
    const core = coreOf("solana", pooled.mint)
    expect(core.lifecycle).toBe("migrated")
    const r = await q("solana", pooled.mint, "buy", 10n ** 9n)
    expect(r.status).toBe(200)
    const pool = quotePoolBuy(core.pool!, { feeBps: 50n, creatorFeeBps: 0n }, 10n ** 9n)
    if (pool._tag !== "Filled") throw new Error("refused")
    expect(r.body).toMatchObject({ venue: "dex", amountOut: pool.amountOut.toString(), fees: { venue: { bps: 50, feeRaw: pool.fee.toString() }, creator: { feeRaw: "0" } } })
    // The market record's trade block and the market quote's pointer both lead here, and it answers.
    expect(marketRecord(core, T0).trade).toEqual({ endpoint: AGENT_QUOTE_ENDPOINT, routable: true })
    const refused = await get(`/api/v1/markets/solana/${pooled.mint}/quote?side=buy&amountIn=1000000000`)
    expect(refused.status).toBe(409)
    expect(refused.body.error.tradingContinues.quoteRoute).toBe(AGENT_QUOTE_ENDPOINT)
  })

  it("MARKET_NOT_TRADABLE (409) while graduating and in recovery, with the market record's trade.reason", async () => {
    apply([graduating.created(), ...graduating.buy("t1", 1_000n * 10n ** 9n)])
    const core = coreOf("solana", graduating.mint)
    expect(core.lifecycle).toBe("completed")
    const r = await q("solana", graduating.mint, "buy", 1_000n)
    expect(r.status).toBe(409)
    expect(r.body.error).toMatchObject({
      code: "MARKET_NOT_TRADABLE",
      reason: "solana_graduating",
      tradingContinues: { venue: "dex-solana-v2", afterMigration: true, quoteRoute: AGENT_QUOTE_ENDPOINT }
    })
    expect(marketRecord(core, T0).trade).toEqual({ endpoint: AGENT_QUOTE_ENDPOINT, routable: false, reason: "solana_graduating" })

    apply([hoodRecovery.created(), ...hoodRecovery.buy("0x01", hoodRecovery.params.thresholdRaw * 2n), hoodRecovery.progress("cancelled", 3)])
    const rec = coreOf("hood", hoodRecovery.mint)
    expect(rec.lifecycle).toBe("recovery")
    const refused = await q("hood", hoodRecovery.mint, "sell", 1_000n)
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: "MARKET_NOT_TRADABLE", reason: "market_recovery", tradingContinues: null })
    expect(marketRecord(rec, T0).trade).toMatchObject({ routable: false, reason: "market_recovery" })
  })

  it("a migrated Hood market whose pool is not known yet is QUOTE_UNAVAILABLE, as is a Hood pool without a chain reader", async () => {
    apply([hoodMigrated.created(), ...hoodMigrated.buy("0x01", hoodMigrated.params.thresholdRaw * 2n), hoodMigrated.migrated(30)])
    const r = await q("hood", hoodMigrated.mint, "buy", 1_000n)
    expect(r.status).toBe(503)
    expect(r.body.error.code).toBe("QUOTE_UNAVAILABLE")
  })

  it("a mint not launched here is MARKET_NOT_FOUND naming why; the market quote's pointer for it leads to this answer", async () => {
    const unknown = "0x" + "ee".repeat(20)
    const r = await q("hood", unknown, "buy", 1_000n)
    expect(r.status).toBe(404)
    expect(r.body.error).toMatchObject({ code: "MARKET_NOT_FOUND", routing: { reason: "external_token" }, discovery: { indexed: false } })
    expect(r.body.error.message).toContain("not launched on this service")
    const market = await get(`/api/v1/markets/hood/${unknown}/quote?side=buy&amountIn=1000`)
    expect(market.body.error.routing.quoteRoute).toBe(AGENT_QUOTE_ENDPOINT)
  })

  it("refuses malformed input with VALIDATION_FAILED naming the field", async () => {
    const cases: Array<readonly [string, string]> = [
      [`?chain=tron&mint=${curve.mint}&side=buy&amountIn=1`, "chain"],
      [`?mint=${curve.mint}&side=buy&amountIn=1`, "chain"],
      [`?chain=solana&side=buy&amountIn=1`, "mint"],
      [`?chain=solana&mint=0xnothere&side=buy&amountIn=1`, "mint"],
      [`?chain=solana&mint=${curve.mint}&side=swap&amountIn=1`, "side"],
      [`?chain=solana&mint=${curve.mint}&side=buy`, "amountIn"],
      [`?chain=solana&mint=${curve.mint}&side=buy&amountIn=0`, "amountIn"],
      [`?chain=solana&mint=${curve.mint}&side=buy&amountIn=1.5`, "amountIn"],
      [`?chain=solana&mint=${curve.mint}&side=buy&amountIn=${2n ** 64n}`, "amountIn"],
      [`?chain=solana&mint=${curve.mint}&side=buy&amountIn=1`, "amountIn"], // nets nothing after the fee
      [`?chain=solana&mint=${curve.mint}&side=sell&amountIn=${10n ** 30n}`, "amountIn"], // more than was sold
      [`?chain=solana&mint=${curve.mint}&side=buy&amountIn=1000&slippageBps=10001`, "slippageBps"]
    ]
    for (const [query, field] of cases) {
      const r = await get(AGENT_QUOTE_ENDPOINT + query)
      expect(r.status, query).toBe(400)
      expect(r.body.error, query).toMatchObject({ code: "VALIDATION_FAILED", field })
    }
  })

  it("limits keyless quotes per client: the request over the bound is RATE_LIMITED with Retry-After", async () => {
    for (let i = 0; i < 3; i++) expect((await get(`${AGENT_QUOTE_ENDPOINT}?chain=solana&mint=${curve.mint}&side=buy&amountIn=1000000`, limitedUrl)).status).toBe(200)
    const r = await get(`${AGENT_QUOTE_ENDPOINT}?chain=solana&mint=${curve.mint}&side=buy&amountIn=1000000`, limitedUrl)
    expect(r.status).toBe(429)
    expect(r.body.error.code).toBe("RATE_LIMITED")
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0)
    nowMs += 120_000 // past the sliding window (the previous minute weighs on the next)
    expect((await get(`${AGENT_QUOTE_ENDPOINT}?chain=solana&mint=${curve.mint}&side=buy&amountIn=1000000`, limitedUrl)).status).toBe(200)
  })

  it("documents itself: every parameter, the optional key, the response schema and each refusal", () => {
    const doc = openApiDocument(routes(1), { title: "t", description: "d" }) as any
    const op = doc.paths[AGENT_QUOTE_ENDPOINT].get
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(["amountIn", "chain", "mint", "side", "slippageBps"])
    expect(op.security).toEqual([{}, { agentKey: [] }])
    expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "401", "403", "404", "409", "429", "503"])
    // A key is optional; one that is sent and paused is refused (reason key_paused).
    expect(op.responses["403"].content["application/json"].schema.properties.error.properties.code.enum).toEqual(["VALIDATION_FAILED"])
    expect(op.responses["200"].content["application/json"].schema.$ref).toBe("#/components/schemas/AgentQuoteResponse")
    expect(Object.keys(doc.components.schemas.AgentQuoteResponse.properties)).toEqual(expect.arrayContaining(["amountOut", "minAmountOut", "priceImpactBps", "fees", "venue", "expiresAt"]))
  })
})
