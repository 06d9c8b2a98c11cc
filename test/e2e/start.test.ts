/**
 * The started binary over real HTTP: `src/main.ts` as a child process on a free port with a temp
 * data dir. Waits for `/readyz`, checks the configuration reads (ETag, 304, the 400 envelope),
 * plans, the OpenAPI document and the 404 envelope, then SIGTERM and a clean exit. A second start
 * on the same data dir proves the embedded stores reopen.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { engineClient } from "../../clients/typescript/index.js"
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

/** The typed client of the started engine, no key (every read here is public). */
const client = () => engineClient({ baseUrl: engine.url })
const ifNoneMatch = (etag: string) => ({ headers: { "if-none-match": etag } })

describe("engine end to end", () => {
  it("is live and ready", async () => {
    expect((await client().GET("/healthz")).response.status).toBe(200)
    const ready = await client().GET("/readyz")
    expect(ready.response.status).toBe(200)
    const { ingestion: reported, ...rest } = ready.data!
    const ingestion = reported!
    expect(rest).toEqual({ ready: true, checks: { postgres: "ok", clickhouse: "ok", bus: "ok" } })
    // Beside the checks, how far ingestion trails each chain (never a reason to be unready).
    const height = /^\d+$/
    expect(Object.keys(ingestion)).toEqual(["solana", "hood", "actorsPending"])
    for (const chain of ["solana", "hood"] as const) {
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
    const all = await client().GET("/api/v1/launch/quote-pairs")
    expect(all.response.status).toBe(200)
    const etag = all.response.headers.get("etag")!
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(all.response.headers.get("cache-control")).toBe("public, max-age=60")
    const payload = all.data!.payload
    expect(payload.matrixVersion).toBe(1)
    expect(payload.defaults).toEqual({ solana: "sol", hood: "eth" })
    expect(payload.pairs.solana?.map((p) => p.id)).toEqual(["sol", "usdc", "svc"])
    expect(payload.pairs.hood?.map((p) => p.id)).toEqual(["eth", "usdg"])
    expect(payload.pairs.solana?.[0]).toMatchObject({
      chain: "solana", id: "sol", symbol: "SOL", decimals: 9, isNative: true, supportsDevBuy: true, headlessDevBuy: true,
      tiers: { open: { thresholdRaw: "85000000000", raise: "85" } }
    })

    const again = await client().GET("/api/v1/launch/quote-pairs", ifNoneMatch(etag))
    expect(again.response.status).toBe(304)
    expect(again.error ?? "").toBe("") // not a 2xx: the client hands an empty body over as the error text
    expect(again.response.headers.get("etag")).toBe(etag)

    const hood = await client().GET("/api/v1/launch/quote-pairs", { params: { query: { chain: "hood" } } })
    expect(hood.response.status).toBe(200)
    expect(Object.keys(hood.data!.payload.pairs)).toEqual(["hood"])
    expect(hood.data!.payload.defaults).toEqual({ hood: "eth" })
    expect(hood.response.headers.get("etag")).not.toBe(etag)
    expect((await client().GET("/api/v1/launch/quote-pairs", { params: { query: { chain: "hood" } }, ...ifNoneMatch(etag) })).response.status).toBe(200)
  })

  it("refuses an unknown chain with the 400 envelope naming the field", async () => {
    // Not a chain the document allows: the client is told so at compile time, the engine at run time.
    const bad = await client().GET("/api/v1/launch/quote-pairs", { params: { query: { chain: "ethereum" as "solana" } } })
    expect(bad.response.status).toBe(400)
    expect(bad.error).toEqual({
      success: false,
      error: { code: "VALIDATION_FAILED", message: "Unknown chain 'ethereum'; expected solana or hood", field: "chain", retryable: false }
    })
  })

  it("serves presets with ETag, max-age=60 and 304", async () => {
    const presets = await client().GET("/api/v1/launch/presets")
    expect(presets.response.status).toBe(200)
    expect(presets.response.headers.get("cache-control")).toBe("public, max-age=60")
    expect(presets.data!.payload.presets).toHaveLength(6)
    expect(presets.data!.payload.matrixVersion).toBe(1)
    const etag = presets.response.headers.get("etag")!
    const weak = await client().GET("/api/v1/launch/presets", ifNoneMatch(`W/${etag}`))
    expect(weak.response.status).toBe(304)
    expect(weak.error ?? "").toBe("")
  })

  it("serves the plan table", async () => {
    const plans = await client().GET("/api/v1/agent/plans")
    expect(plans.response.status).toBe(200)
    expect(plans.data!.plans.map((p) => p.id)).toEqual(["free", "pro", "max"])
    for (const plan of plans.data!.plans) {
      expect(Object.keys(plan).sort()).toEqual(["capabilities", "feeBps", "id", "limits", "name", "perpFeeBps", "price", "promoMaxDays"])
    }
  })

  it("serves an OpenAPI 3.1 document describing every public route", async () => {
    // The document itself is read as JSON, not through the types it generates.
    const doc = await client().GET("/api/v1/openapi.json", { parseAs: "json" })
    expect(doc.response.status).toBe(200)
    const body = doc.data as unknown as { openapi: string; info: { version: string }; paths: Record<string, any> }
    expect(body.openapi).toBe("3.1.0")
    expect(body.info.version).toBe("1.0.0")
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining(["/api/v1/launch/quote-pairs", "/api/v1/launch/presets", "/api/v1/agent/plans", "/api/v1/openapi.json"])
    )
    const qp = body.paths["/api/v1/launch/quote-pairs"].get
    expect(qp.parameters[0]).toMatchObject({ name: "chain", in: "query" })
    expect(qp.responses["200"].content["application/json"].schema).toBeDefined()
  })

  it("answers unknown routes with the 404 envelope", async () => {
    // A path no document lists: the client's types refuse it, so it is named through a cast.
    const r = await client().GET("/api/v1/nothing-here" as "/healthz")
    expect(r.response.status).toBe(404)
    expect(r.error).toMatchObject({ success: false, error: { code: "ROUTE_NOT_FOUND" } })
  })

  it("exits cleanly on SIGTERM and starts again on the same data dir", async () => {
    const { code, signal } = await engine.stop("SIGTERM")
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(engine.output()).toContain("api server closed")

    const second = await startEngine({ dataDir: engine.dataDir })
    try {
      expect((await engineClient({ baseUrl: second.url }).GET("/readyz")).response.status).toBe(200)
    } finally {
      const stopped = await second.stop("SIGINT")
      expect(stopped).toEqual({ code: 0, signal: null })
    }
  }, 120_000)
})
