/**
 * The started binary's market-data listener (`CURVESTREAM_DATA_PORT`): the embedded mode's local
 * Max key reads the tape and opens the stream; the simulation's trades and the simulated social
 * source make the detectors emit real signals, which reach the stream live and then the tape
 * (ClickHouse). A missing key is the plain 401.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"
import { dataClient, type DataOperations, engineClient } from "../../clients/typescript/index.js"
import { eventually } from "../support/eventually.js"
import { answered } from "../support/typedReads.js"

interface WsClient {
  on(event: "message", f: (data: Buffer) => void): void
  on(event: "open", f: () => void): void
  on(event: "error", f: (e: Error) => void): void
  on(event: "close", f: () => void): void
  close(): void
}
const WebSocket = createRequire(import.meta.url)("ws") as new (url: string, options: { headers: Record<string, string> }) => WsClient

let engine: Engine
let dataUrl = ""
let key = ""

beforeAll(async () => {
  engine = await startEngine()
  dataUrl = engine.dataUrl
  key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
}, 120_000)

afterAll(async () => {
  if (engine !== undefined) {
    await engine.stop("SIGKILL")
    engine.cleanup()
  }
})

/** The market-data service through the typed client, with the local key (or none). */
const data = (auth = true) => dataClient({ baseUrl: dataUrl, ...(auth ? { apiKey: key } : {}) })
type TapeQuery = NonNullable<DataOperations["listSignals"]["parameters"]["query"]>
const tape = async (query: TapeQuery, auth = true) => answered(await data(auth).GET("/v1/signals", { params: { query } }))

describe("market-data service end to end", () => {
  it("answers the tape with the local Max key and refuses a missing key", async () => {
    expect(await tape({}, false)).toEqual({ status: 401, body: { error: "invalid api key" } })
    const r = await tape({ quality: "all" })
    expect(r.status).toBe(200)
    expect(Array.isArray(r.body.signals)).toBe(true)
  })

  it("streams the simulation's signals live, and the tape serves them", async () => {
    const messages: Array<{ type: string; signals?: Array<{ id: string }>; signal?: { id: string; pattern: string } }> = []
    const ws = new WebSocket(`${dataUrl.replace("http", "ws")}/v1/signals/stream?quality=all`, { headers: { authorization: `Bearer ${key}` } })
    ws.on("message", (d) => messages.push(JSON.parse(d.toString())))
    await new Promise<void>((resolve, reject) => {
      ws.on("open", resolve)
      ws.on("error", reject)
    })
    const seen = () => [...(messages[0]?.signals ?? []), ...messages.slice(1).flatMap((m) => (m.signal === undefined ? [] : [m.signal]))]
    const first = await eventually(() => seen()[0], {
      what: "a first signal on the stream",
      deadlineMs: 150_000,
      intervalMs: 250,
      detail: () => engine.output().slice(-4000)
    })
    expect(messages[0]?.type).toBe("snapshot")
    expect(first, engine.output().slice(-4000)).toBeDefined()
    // The writer flushes within a second; the tape reads ClickHouse (and the hub).
    const found = await eventually(async () => (await tape({ quality: "all", limit: 200 })).body.signals.some((s: { id: string }) => s.id === first.id), {
      what: "the signal on the tape",
      deadlineMs: 10_000,
      intervalMs: 250
    })
    expect(found).toBe(true)
    ws.close()
  }, 180_000)

  it("serves the token reads with the real bearer: search finds a simulated launch, its market data and history follow", async () => {
    expect((await data(false).GET("/v1/market/token-search", { params: { query: { q: "wif" } } })).response.status).toBe(401)
    const address = await eventually(
      async () => {
        const r = await data().GET("/v1/market/metas", { params: { query: {} } })
        expect(r.response.status).toBe(200)
        const search = answered(await data().GET("/v1/market/prices", { params: { query: { addresses: "So11111111111111111111111111111111111111112" } } })).body as Record<string, unknown>
        expect(search).toBeDefined()
        const body = answered(await data().GET("/v1/launches/final-stretch", { params: { query: {} } })).body as Record<string, unknown>
        expect(body).toBeDefined()
        const feed = answered(
          await engineClient({ baseUrl: engine.url }).GET("/api/v1/markets/feed", { params: { query: { bucket: "new", chain: "solana", limit: 1, fields: "name" } } })
        ).body as { tokens: Array<{ address: string }> }
        return feed.tokens[0]?.address
      },
      { what: "a simulated launch in the new feed", deadlineMs: 60_000, intervalMs: 500, detail: () => engine.output().slice(-2000) }
    )
    expect(address, engine.output().slice(-2000)).toBeDefined()
    const market = await data().GET("/v1/market/token/{address}", { params: { path: { address: address! } } })
    expect(market.response.status).toBe(200)
    const history = await data().GET("/v1/market/token/{address}/history", { params: { path: { address: address! }, query: { interval: "1m" } } })
    expect(history.response.status).toBe(200)
  }, 180_000)

  it("publishes the simulation's agents: agent record, copy score and cohorts answer on the main service", async () => {
    const main = engineClient({ baseUrl: engine.url })
    const agentOf = async (idOrWallet: string) => answered(await main.GET("/api/v1/users/{idOrWallet}/agent", { params: { path: { idOrWallet } } }))
    // The simulation launches with its traders' keys (a launch every ~15 s by one of ten), so
    // one of the seeded agents soon has launches; records are cached 30 s.
    const handles = ["sim-early-eagle", "sim-sniper-sam", "sim-dip-buyer", "sim-whale-one", "sim-deep-pockets"]
    let probes = 0
    const record = await eventually(
      async () => {
        const r = await agentOf(handles[probes++ % handles.length]!)
        return r.body.agent?.launches > 0 ? r : undefined
      },
      { what: "a seeded agent with launches", deadlineMs: 60_000, intervalMs: 250, detail: () => engine.output().slice(-2000) }
    )
    expect(record.status).toBe(200)
    expect(record.body.agent).toMatchObject({ enabled: true, launchesViaApi: 0, tier: "free" })
    expect(handles).toContain(record.body.agent.username)
    expect(record.body.agent.launches, engine.output().slice(-2000)).toBeGreaterThan(0)
    const profileId = record.body.agent.profileId as string
    expect(profileId).toMatch(/^ap_[0-9a-f]{20}$/)
    const score = answered(await main.GET("/api/v1/markets/agents/{profileId}/copy-score", { params: { path: { profileId } } }))
    expect(score.status).toBe(200)
    expect(score.body.score).toMatchObject({ profileId, wallet: record.body.agent.address, chain: "solana" })
    for (const cohort of ["steady", "high_conviction", "early_finder"]) {
      const r = answered(await main.GET("/api/v1/markets/cohorts/{cohort}", { params: { path: { cohort: cohort as "steady" }, query: { limit: 50 } } }))
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ success: true, cohort, truncated: false })
    }
    expect((await agentOf("nobody-here")).status).toBe(404)
  }, 150_000)

  it("describes the market-data routes in its own OpenAPI document", async () => {
    const res = await fetch(`${dataUrl}/v1/openapi.json`)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { security?: unknown }>> }
    expect(doc.openapi).toBe("3.1.0")
    // Every HTTP route of spec 4.5 (the stream is a WebSocket, named in the description).
    const token = "/v1/market/token/{address}"
    const wallet = "/v1/market/wallet/{address}"
    const replay = "/v1/strategy-lab/replay"
    const spec: Array<[string, string]> = [
      ["get", "/v1/signals"],
      ...["", "/history", "/top-traders", "/venues", "/holders", "/profile", "/launch-overview", "/wallet-pnl"].map((s): [string, string] => ["get", token + s]),
      ...["token-search", "gainers", "metas", "activity", "prices", "cohort-overlap", "labelled-trades"].map((s): [string, string] => ["get", `/v1/market/${s}`]),
      ["get", "/v1/launches/final-stretch"],
      ...["mentions", "mention-marks", "mentions/trending"].map((s): [string, string] => ["get", `/v1/social/${s}`]),
      ...["/v1/wallets", "/v1/wallets/{id}", "/v1/groups", "/v1/groups/{id}"].map((p): [string, string] => ["get", p]),
      ...["/stats", "/activity", "/token-breakdown", "/portfolio", "/book-legs"].map((s): [string, string] => ["get", wallet + s]),
      ["get", "/v1/me/follows"], ["post", "/v1/me/follows"], ["delete", "/v1/me/follows/{id}"],
      ["get", "/v1/me/rules"], ["post", "/v1/me/rules"], ["get", "/v1/me/signals"],
      ["get", "/v1/me/groups"], ["post", "/v1/me/groups"], ["delete", "/v1/me/groups"],
      ["post", "/v1/me/groups/{id}/wallets"], ["delete", "/v1/me/groups/{id}/wallets"],
      ["post", replay], ["get", `${replay}/{job_id}`], ["post", `${replay}/{job_id}/cancel`], ["get", `${replay}/{job_id}/chart.svg`],
      ["post", "/v1/strategies"], ["post", "/v1/strategies/{id}/versions"],
      ...["/v1/strategies", "/v1/strategies/{id}", "/v1/strategies/{id}/trades", "/v1/strategies/{id}/comparison", "/v1/strategy-runs", "/v1/trades"].map(
        (p): [string, string] => ["get", p]
      ),
      ...["edges", "runners", "first-signals"].map((s): [string, string] => ["get", `/v1/strategy-lab/${s}`]),
      ["get", "/v1/assets"], ["get", "/v1/assets/{id}"],
      ["get", "/v1/openapi.json"]
    ]
    const missing = spec.filter(([m, p]) => doc.paths[p]?.[m] === undefined).map(([m, p]) => `${m.toUpperCase()} ${p}`)
    expect(missing).toEqual([])
    expect(doc.paths["/v1/signals"]!.get!.security).toEqual([{ bearer: [] }])
  })
})
