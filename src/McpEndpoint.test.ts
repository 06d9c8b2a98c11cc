/**
 * The MCP endpoint on a real uWS listener (`serve` with `mount`), with the SDK's own client over
 * streamable HTTP: the agent key is checked at the door (none or an unknown one is the 401
 * envelope with `UNAUTHORIZED`), the tools call the listener's routes in process with that key (a
 * success is the route's answer; the route's own refusal, here its scope rule, is a tool error
 * carrying the code), a session belongs to its key, and the bounds hold: sessions per key and in
 * all (the least recently used closed, its client answered 404), idle sessions closed by the
 * sweep, a body over the listener's bound refused 413, no GET stream (405), and a request that
 * opens no session leaves none. A request under way counts in the listener's drain.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../actors/MarketIndex.js"
import { documentInfo } from "../clients/typescript/documents.js"
import { apiError } from "./domain/ApiError.js"
import { DefaultDevBuyCeilings } from "./domain/Economics.js"
import { NOT_OPENAPI_PATHS } from "../test/support/contract.js"
import { eventually } from "../test/support/eventually.js"
import type { AgentAuth } from "../api/auth/AgentKeyAuth.js"
import { MCP_PATH, type McpEndpoint, mountMcp } from "./McpEndpoint.js"
import { launchConfigRoutes } from "../api/routes/LaunchConfigRoutes.js"
import { marketRoutes } from "../api/routes/MarketRoutes.js"
import { withOpenApi } from "../api/routes/OpenApiRoute.js"
import { tradeRoutes } from "../api/routes/TradeRoutes.js"
import type { RequestsInFlight } from "../api/Router.js"
import { serve } from "../api/Server.js"

const KEY_A = "svc_live_aaaaaaaa_key"
const KEY_B = "svc_live_bbbbbbbb_key"
const BODY_MAX = 16 * 1024
const IDLE_MS = 60_000
let now = 1_000_000
let scope: Scope.CloseableScope
let url: string
let endpoint: McpEndpoint
let requests: RequestsInFlight
/** The key each route call arrived with, as the trade route's key check saw it. */
const routeKeys: Array<string | undefined> = []

// The door verifies A and B; the trade route's key check refuses A's missing scope, as the real check does.
const agentAuth: AgentAuth = {
  verify: (token) =>
    token === KEY_A || token === KEY_B
      ? Effect.succeed({ key: { id: token === KEY_A ? "key_a" : "key_b", scopes: ["launch:write"] } } as never)
      : Effect.fail(apiError("UNAUTHORIZED", "Missing, malformed, unknown or revoked API key")),
  authenticate: (headers) => {
    routeKeys.push(headers["x-api-key"])
    return Effect.fail(apiError("SCOPE_MISSING", "This key lacks the swap:write scope", { extra: { scope: "swap:write" } }))
  }
}

beforeAll(async () => {
  scope = Effect.runSync(Scope.make())
  const routes = withOpenApi(
    [
      ...launchConfigRoutes(DefaultDevBuyCeilings),
      ...marketRoutes({ index: new MarketIndexStore(), nowMs: () => Date.now(), curveProgram: "SVCcurve11111111111111111111111111111111111" }),
      ...tradeRoutes({ agentAuth, trades: undefined as never, transactions: undefined as never })
    ],
    documentInfo
  )
  const server = await Effect.runPromise(
    Scope.extend(
      serve({
        name: "mcp-endpoint-test",
        host: "127.0.0.1",
        port: 0,
        maxBodyBytes: BODY_MAX,
        routes,
        mount: (app, authFailures, inFlight) => {
          requests = inFlight
          return Effect.map(
            mountMcp(app, { agentAuth, routes, maxBodyBytes: BODY_MAX, sessionsPerKey: 2, sessionsMax: 3, idleMs: IDLE_MS, sweepMs: 100, nowMs: () => now }, authFailures, inFlight),
            (e) => {
              endpoint = e
            }
          )
        }
      }),
      scope
    )
  )
  url = `${server.url}${MCP_PATH}`
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const connect = async (key: string): Promise<Client> => {
  const client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { "x-api-key": key } } }))
  return client
}

const post = (headers: Record<string, string>, body: string) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body })

describe("the MCP endpoint on the main listener", () => {
  it("is the path the e2e contract check leaves to MCP", () => {
    expect(NOT_OPENAPI_PATHS).toContain(MCP_PATH)
  })

  it("refuses a missing or unknown key at the door with the 401 envelope", async () => {
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
    for (const headers of [{}, { "x-api-key": "svc_live_unknown" }, { authorization: "Bearer svc_live_unknown" }]) {
      const res = await post(headers, initialize)
      expect(res.status).toBe(401)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED")
    }
    await expect(connect("svc_live_unknown")).rejects.toThrow(/UNAUTHORIZED/)
    expect(endpoint.sessions()).toBe(0)
  })

  it("calls the routes in process with the session's key: answers, and refusals as tool errors with the code", async () => {
    const client = await connect(KEY_A)
    try {
      const pairs = await client.callTool({ name: "quote_pairs", arguments: {} })
      expect(pairs.isError).toBeFalsy()
      expect(JSON.stringify(pairs.structuredContent)).toContain("solana")
      const warming = await client.callTool({ name: "market", arguments: { chain: "solana", mint: "So11111111111111111111111111111111111111112" } })
      expect(warming.structuredContent).toMatchObject({ status: 503, code: "FEED_UNAVAILABLE", retryable: true })
      const before = routeKeys.length
      const trade = await client.callTool({ name: "trade", arguments: { clientTradeId: "t-1", chain: "solana", mint: "So11111111111111111111111111111111111111112", side: "buy", amountIn: "1000" } })
      expect(trade.isError).toBe(true)
      expect(trade.structuredContent).toMatchObject({ status: 403, code: "SCOPE_MISSING", scope: "swap:write" })
      expect(routeKeys.slice(before)).toEqual([KEY_A])
      // The served document, as a resource.
      const doc = JSON.parse(((await client.readResource({ uri: "curvestream://openapi/main.json" })).contents[0] as { text: string }).text)
      expect(Object.keys(doc.paths)).toContain("/api/v1/trade/agent/submit")
      // DELETE ends the session, its server with it.
      const open = endpoint.sessions()
      await (client.transport as StreamableHTTPClientTransport).terminateSession()
      expect(endpoint.sessions()).toBe(open - 1)
    } finally {
      await client.close()
    }
  })

  it("keeps a session to its key, and within its bounds", async () => {
    const a1 = await connect(KEY_A)
    const sessionA1 = (a1.transport as StreamableHTTPClientTransport).sessionId!
    // Another key presenting A's session is told there is none.
    const hijack = await post({ "x-api-key": KEY_B, "mcp-session-id": sessionA1, "mcp-protocol-version": "2025-06-18" }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }))
    expect(hijack.status).toBe(404)
    expect((await a1.listTools()).tools.length).toBeGreaterThan(0)

    const a2 = await connect(KEY_A)
    now += 1
    await a2.listTools()
    // A third session of A closes A's least recently used (a1): its client is answered 404.
    const a3 = await connect(KEY_A)
    await expect(a1.listTools()).rejects.toThrow(/Session not found/)
    expect((await a2.listTools()).tools.length).toBeGreaterThan(0)
    // B's sessions fill the listener's bound (3): the least recently used of all goes.
    const b1 = await connect(KEY_B)
    expect(endpoint.sessions()).toBe(3)
    const b2 = await connect(KEY_B)
    expect(endpoint.sessions()).toBe(3)
    await expect(a3.listTools()).rejects.toThrow(/Session not found/)
    // Idle sessions are closed by the sweep.
    now += IDLE_MS + 1
    await eventually(async () => (endpoint.sessions() === 0 ? true : undefined), { what: "idle sessions closed", deadlineMs: 30_000, intervalMs: 50 })
    await expect(b2.listTools()).rejects.toThrow(/Session not found/)
    for (const c of [a1, a2, a3, b1, b2]) await c.close().catch(() => undefined)
  }, 180_000)

  it("bounds the body, has no GET stream, and leaves nothing for a request that opens no session", async () => {
    const big = await post({ "x-api-key": KEY_A }, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { pad: "x".repeat(BODY_MAX) } }))
    expect(big.status).toBe(413)
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe("BODY_TOO_LARGE")
    // Streamed without a length: cut off at the bound.
    const streamed = new ReadableStream<Uint8Array>({
      start: (c) => {
        c.enqueue(new TextEncoder().encode(`{"pad":"${"x".repeat(BODY_MAX)}"}`))
        c.close()
      }
    })
    const chunked = await fetch(url, { method: "POST", headers: { "x-api-key": KEY_A, "content-type": "application/json" }, body: streamed, duplex: "half" } as RequestInit)
    expect(chunked.status).toBe(413)
    const get = await fetch(url, { headers: { "x-api-key": KEY_A, accept: "text/event-stream" } })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST, DELETE")
    expect(((await get.json()) as { error: { code: string } }).error.code).toBe("METHOD_NOT_ALLOWED")
    const sessions = endpoint.sessions()
    const notInitialize = await post({ "x-api-key": KEY_A }, JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }))
    expect(notInitialize.status).toBe(400)
    expect(endpoint.sessions()).toBe(sessions)
  })
  // Last: the drain it starts stays on for the listener.
  it("counts a request under way in the listener's drain: the drain waits for its answer, which closes the connection", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" })
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1")
    let got = ""
    socket.on("data", (c) => (got += c.toString("latin1")))
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()))
    await new Promise<void>((resolve) => socket.on("connect", () => resolve()))
    // The headers and half the body: the request is read, not yet answered.
    socket.write(
      `POST ${MCP_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${KEY_A}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`
    )
    await eventually(() => requests.size() === 1, { what: "the request to count as in flight", deadlineMs: 10_000 })
    let drained = false
    const drain = Effect.runPromise(requests.drain).then(() => (drained = true))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(drained).toBe(false)
    socket.write(body.slice(10))
    await drain
    await closed
    expect(got.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request")
    expect(got.toLowerCase()).toContain("connection: close")
    expect(requests.size()).toBe(0)
  })
})
