/**
 * The market read routes over real HTTP against the real pipeline: events published to the
 * embedded bus, applied by the market actors (PGlite checkpoints), read from the MarketIndex by
 * the uWS routes. Covers what the Solana e2e test cannot reach cheaply: feed deltas with
 * `since_seq` and their reset, the query grammar, `chain_mismatch` routing, Hood's capped-refund
 * quote, the quote rate limit and the warming answer.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as MarketActors from "../../actors/MarketActors.js"
import { MarketIndex, type MarketIndexShape } from "../../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { marketRoutes, QUOTE_LIMIT_PER_MIN } from "../../api/routes/MarketRoutes.js"
import { serve } from "../../api/Server.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import * as Database from "../../src/db/Database.js"
import { quoteBuy } from "../../src/domain/CurveMath.js"
import { eventually } from "../support/eventually.js"
import { checkAnswersInThisFile, withContract } from "../support/contractRoutes.js"

let scope: Scope.CloseableScope
let url: string
let index: MarketIndexShape
let publish: (events: ReadonlyArray<ChainEvent>) => Promise<void>
let nowMs = Date.UTC(2026, 10, 21)

const solanaClock = new ChainClock("solana", Date.UTC(2026, 10, 21))
const hoodClock = new ChainClock("hood", Date.UTC(2026, 10, 21))
const a = new SimMarket(solanaClock, { mint: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".slice(0, 43), name: "Alpha", symbol: "ALP" })
const b = new SimMarket(solanaClock, { mint: "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", name: "Beta", symbol: "BET" })
const h = new SimMarket(hoodClock, { mint: "0x" + "ab".repeat(20), name: "Hood", symbol: "HOD" })

// Every answer is checked against the document of the mounted routes (issue 32).
checkAnswersInThisFile()

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const layer = MarketActors.layer({ shards: 2, checkpointIntervalMs: 20 }).pipe(
    Layer.provideMerge(Layer.mergeAll(EmbeddedBus.layer({ dir: undefined, partitions: 4 }), Database.layerTest))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  index = context.unsafeMap.get(MarketIndex.key) as MarketIndexShape
  const bus = context.unsafeMap.get(Bus.key) as Bus["Type"]
  publish = (events) =>
    Effect.runPromise(Effect.asVoid(bus.publish(Topics.chainEvents, events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) })))))
  const server = await Effect.runPromise(
    serve({ name: "reads", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: withContract(marketRoutes({ index, nowMs: () => nowMs, curveProgram: "SVCcurve11111111111111111111111111111111111" })) }).pipe(
      Scope.extend(scope)
    )
  )
  url = server.url
}, 60_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url + path, { headers })
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

describe("market reads through the pipeline", () => {
  it("answers 503 while warming, then serves markets", async () => {
    await eventually(() => (index.warming() ? undefined : true), { what: "warming to end", deadlineMs: 10_000, intervalMs: 10 })
    await publish([a.created(), b.created(), h.created()])
    await eventually(() => (index.size() === 3 ? true : undefined), { what: "markets", deadlineMs: 10_000, intervalMs: 10 })
    const r = await get(`/api/v1/markets/solana/${a.mint}`)
    expect(r.status).toBe(200)
    expect(r.body.market.mint).toBe(a.mint)
  })

  it("routes a mint asked on the wrong chain to the right one", async () => {
    const r = await get(`/api/v1/markets/hood/${"0x" + "cd".repeat(20)}`)
    expect(r.body.error).toMatchObject({ code: "MARKET_NOT_FOUND", routing: { reason: "token_unknown" }, discovery: { indexed: false } })
    const upper = await get(`/api/v1/markets/hood/${h.mint.toUpperCase().replace("0X", "0x")}`)
    expect(upper.status).toBe(200) // Hood addresses compare lower-case
  })

  it("quotes a Hood crossing buy with refund and quoteConsumed, capped at the threshold", async () => {
    const amountIn = h.params.thresholdRaw * 2n
    const expected = quoteBuy(h.params, h.curve, amountIn)
    if (expected._tag !== "Filled") throw new Error("refused")
    const r = await get(`/api/v1/markets/hood/${h.mint}/quote?side=buy&amountIn=${amountIn}&slippageBps=0`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ crossingModel: "capped-refund", side: "buy", amountIn: amountIn.toString(), slippageBps: 0 })
    expect(r.body.quote).toEqual({
      amountOut: expected.amountOut.toString(),
      fee: expected.fee.toString(),
      minAmountOut: expected.amountOut.toString(),
      crossesGraduation: true,
      refund: expected.refund.toString(),
      quoteConsumed: expected.quoteConsumed.toString()
    })
    expect(BigInt(r.body.quote.refund) + BigInt(r.body.quote.quoteConsumed)).toBe(amountIn)
  })

  it("refuses bad quote parameters naming the field", async () => {
    const q = (s: string) => get(`/api/v1/markets/solana/${a.mint}/quote?${s}`).then((r) => r.body.error?.field)
    expect(await q("side=hold&amountIn=1")).toBe("side")
    expect(await q("side=buy&amountIn=1.5")).toBe("amountIn")
    expect(await q("side=buy&amountIn=0")).toBe("amountIn")
    expect(await q(`side=buy&amountIn=${2n ** 64n}`)).toBe("amountIn")
    expect(await q("side=buy&amountIn=1000&slippageBps=10001")).toBe("slippageBps")
    expect(await q("side=sell&amountIn=1000")).toBe("amountIn") // nothing sold yet
  })

  it("serves feed deltas with since_seq, filters and a reset when the cursor is unknown", async () => {
    const first = await get("/api/v1/markets/feed?bucket=new&chain=solana")
    expect(first.body.reset).toBe(true)
    expect(first.body.tokens.map((t: { address: string }) => t.address).sort()).toEqual([a.mint, b.mint].sort())
    const cursor = first.body.cursor as number

    await publish(a.buy("trader1", 2n * 10n ** 9n))
    await eventually(() => (index.market("solana", a.mint)!.stats.tradesTotal === 1 ? true : undefined), { what: "the trade", deadlineMs: 10_000, intervalMs: 10 })
    const delta = await get(`/api/v1/markets/feed?bucket=new&chain=solana&since_seq=${cursor}`)
    expect(delta.body.reset).toBe(false)
    expect(delta.body.tokens.map((t: { address: string }) => t.address)).toEqual([a.mint])
    expect(delta.body.cursor).toBeGreaterThan(cursor)

    const filtered = await get(`/api/v1/markets/feed?bucket=new&chain=solana&since_seq=${cursor}&where=tradesTotal=0`)
    expect(filtered.body.tokens).toEqual([])
    expect(filtered.body.removed).toEqual([a.mint]) // it changed and no longer matches

    const projected = await get("/api/v1/markets/feed?bucket=new&chain=solana&fields=tradesTotal&sort=-tradesTotal&limit=1")
    expect(projected.body.tokens).toEqual([{ chain: "solana", address: a.mint, tradesTotal: 1 }])
    expect(projected.body.matched).toBe(2)

    const future = await get(`/api/v1/markets/feed?bucket=new&since_seq=${10 ** 9}`)
    expect(future.body.reset).toBe(true)
  })

  it("limits quotes to 120 a minute per client with Retry-After", async () => {
    const path = `/api/v1/markets/solana/${b.mint}/quote?side=buy&amountIn=1000000`
    let refused: Awaited<ReturnType<typeof get>> | undefined
    for (let i = 0; i < QUOTE_LIMIT_PER_MIN + 5 && refused === undefined; i++) {
      const r = await get(path)
      if (r.status === 429) refused = r
    }
    expect(refused).toBeDefined()
    expect(refused!.body.error.code).toBe("RATE_LIMITED")
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    nowMs += 120_000 // two windows later the client is fresh
    expect((await get(path)).status).toBe(200)
  })
})
