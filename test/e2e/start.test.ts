/**
 * The started binary over real HTTP: `src/main.ts` as a child process on a free port with a temp
 * data dir. Waits for `/readyz`, checks the configuration reads (ETag, 304, the 400 envelope),
 * plans, the OpenAPI document and the 404 envelope, then SIGTERM and a clean exit. A second start
 * on the same data dir proves the embedded stores reopen.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"

let engine: Engine

beforeAll(async () => {
  engine = await startEngine()
}, 120_000)

afterAll(async () => {
  if (engine !== undefined) {
    await engine.stop("SIGKILL")
    engine.cleanup()
  }
})

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(engine.url + path, { headers })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: text === "" ? undefined : JSON.parse(text) }
}

describe("engine end to end", () => {
  it("is live and ready", async () => {
    expect((await get("/healthz")).status).toBe(200)
    const ready = await get("/readyz")
    expect(ready.status).toBe(200)
    const { ingestion, ...rest } = ready.body
    expect(rest).toEqual({ ready: true, checks: { postgres: "ok", clickhouse: "ok", bus: "ok" } })
    // Beside the checks, how far ingestion trails each chain (never a reason to be unready).
    const height = /^\d+$/
    expect(Object.keys(ingestion)).toEqual(["solana", "hood", "actorsPending"])
    for (const chain of ["solana", "hood"]) {
      expect(Object.keys(ingestion[chain])).toEqual(["published", "head"])
      expect(ingestion[chain].head).toMatch(height)
      if (ingestion[chain].published !== null) expect(ingestion[chain].published).toMatch(height) // null until the first publish
    }
    expect(ingestion.actorsPending).toBeGreaterThanOrEqual(0)
  })

  it("prints the localnet's Yellowstone and block-engine addresses on the ready line, as README says", () => {
    const line = engine.output().split("\n").find((l) => l.includes('message="curvestream ready"'))
    expect(line).toBeDefined()
    const localnet = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { grpcUrl: string; blockEngineUrl: string } }
    expect(line).toContain(` yellowstone=${localnet.solana.grpcUrl}`)
    expect(line).toContain(` blockEngine=${localnet.solana.blockEngineUrl}`)
  })

  it("serves quote pairs with a strong ETag, 304 on a match and the chain filter", async () => {
    const all = await get("/api/v1/launch/quote-pairs")
    expect(all.status).toBe(200)
    const etag = all.headers.get("etag")!
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(all.headers.get("cache-control")).toBe("public, max-age=60")
    expect(all.body.payload.matrixVersion).toBe(1)
    expect(all.body.payload.defaults).toEqual({ solana: "sol", hood: "eth" })
    expect(all.body.payload.pairs.solana.map((p: { id: string }) => p.id)).toEqual(["sol", "usdc", "svc"])
    expect(all.body.payload.pairs.hood.map((p: { id: string }) => p.id)).toEqual(["eth", "usdg"])
    expect(all.body.payload.pairs.solana[0]).toMatchObject({
      chain: "solana", id: "sol", symbol: "SOL", decimals: 9, isNative: true, supportsDevBuy: true, headlessDevBuy: true,
      tiers: { open: { thresholdRaw: "85000000000", raise: "85" } }
    })

    const again = await get("/api/v1/launch/quote-pairs", { "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(again.text).toBe("")
    expect(again.headers.get("etag")).toBe(etag)

    const hood = await get("/api/v1/launch/quote-pairs?chain=hood")
    expect(hood.status).toBe(200)
    expect(Object.keys(hood.body.payload.pairs)).toEqual(["hood"])
    expect(hood.body.payload.defaults).toEqual({ hood: "eth" })
    expect(hood.headers.get("etag")).not.toBe(etag)
    expect((await get("/api/v1/launch/quote-pairs?chain=hood", { "if-none-match": etag })).status).toBe(200)
  })

  it("refuses an unknown chain with the 400 envelope naming the field", async () => {
    const bad = await get("/api/v1/launch/quote-pairs?chain=ethereum")
    expect(bad.status).toBe(400)
    expect(bad.body).toEqual({
      success: false,
      error: { code: "VALIDATION_FAILED", message: "Unknown chain 'ethereum'; expected solana or hood", field: "chain", retryable: false }
    })
  })

  it("serves presets with ETag, max-age=60 and 304", async () => {
    const presets = await get("/api/v1/launch/presets")
    expect(presets.status).toBe(200)
    expect(presets.headers.get("cache-control")).toBe("public, max-age=60")
    expect(presets.body.payload.presets).toHaveLength(6)
    expect(presets.body.payload.matrixVersion).toBe(1)
    const etag = presets.headers.get("etag")!
    const weak = await get("/api/v1/launch/presets", { "if-none-match": `W/${etag}` })
    expect(weak.status).toBe(304)
    expect(weak.text).toBe("")
  })

  it("serves the plan table", async () => {
    const plans = await get("/api/v1/agent/plans")
    expect(plans.status).toBe(200)
    expect(plans.body.plans.map((p: { id: string }) => p.id)).toEqual(["free", "pro", "max"])
    for (const plan of plans.body.plans) {
      expect(Object.keys(plan).sort()).toEqual(["capabilities", "feeBps", "id", "limits", "name", "perpFeeBps", "price", "promoMaxDays"])
    }
  })

  it("serves an OpenAPI 3.1 document describing every public route", async () => {
    const doc = await get("/api/v1/openapi.json")
    expect(doc.status).toBe(200)
    expect(doc.body.openapi).toBe("3.1.0")
    expect(doc.body.info.version).toBe("1.0.0")
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/api/v1/launch/quote-pairs", "/api/v1/launch/presets", "/api/v1/agent/plans", "/api/v1/openapi.json"])
    )
    const qp = doc.body.paths["/api/v1/launch/quote-pairs"].get
    expect(qp.parameters[0]).toMatchObject({ name: "chain", in: "query" })
    expect(qp.responses["200"].content["application/json"].schema).toBeDefined()
  })

  it("answers unknown routes with the 404 envelope", async () => {
    const r = await get("/api/v1/nothing-here")
    expect(r.status).toBe(404)
    expect(r.body.success).toBe(false)
    expect(r.body.error.code).toBe("ROUTE_NOT_FOUND")
  })

  it("exits cleanly on SIGTERM and starts again on the same data dir", async () => {
    const { code, signal } = await engine.stop("SIGTERM")
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(engine.output()).toContain("api server closed")

    const second = await startEngine({ dataDir: engine.dataDir })
    try {
      expect((await fetch(second.url + "/readyz")).status).toBe(200)
    } finally {
      const stopped = await second.stop("SIGINT")
      expect(stopped).toEqual({ code: 0, signal: null })
    }
  }, 120_000)
})
