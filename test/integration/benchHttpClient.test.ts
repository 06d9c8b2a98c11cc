/**
 * The benches' `fetch` (bench/httpClient.ts): the typed client's requests go over the keep-alive
 * agent with its socket bound (one socket per request in flight), method, path, query, headers and
 * body as sent, the answer's status, headers and body as received.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { benchEngine, expectData, expectError, httpClient } from "../../bench/httpClient.js"

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

describe("bench httpClient fetch", () => {
  const seen: Seen[] = []
  const sockets = new Set<unknown>()
  let server: http.Server
  let base: string

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      sockets.add(req.socket)
      const chunks: Buffer[] = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
        if (req.url?.startsWith("/api/v1/launch/headless/jobs/")) {
          res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ success: false, error: { code: "JOB_NOT_FOUND", message: "no job" } }))
          return
        }
        if (req.url === "/not-modified") {
          res.writeHead(304, { etag: '"e1"' }).end()
          return
        }
        // A little later, so requests overlap and the agent's socket bound is what limits them.
        setTimeout(() => res.writeHead(200, { "content-type": "application/json", "x-echo": "yes" }).end(JSON.stringify({ ok: true, url: req.url })), 5)
      })
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })

  it("sends the typed client's request as built and returns the answer as received", async () => {
    const client = httpClient(base, 2)
    try {
      const api = benchEngine(base, client, "key-1")
      const body = { clientLaunchId: "c-1", name: "N", symbol: "S", imageUrl: "https://example.com/i.png" }
      const r = await api.POST("/api/v1/launch/headless/dry-run", { body, headers: { "x-forwarded-for": "10.0.0.1" } })
      expect(r.response.status).toBe(200)
      expect(r.response.headers.get("x-echo")).toBe("yes")
      expect(expectData("dry run", r, 200)).toEqual({ ok: true, url: "/api/v1/launch/headless/dry-run" })
      const last = seen.at(-1)!
      expect(last.method).toBe("POST")
      expect(last.headers["x-api-key"]).toBe("key-1")
      expect(last.headers["x-forwarded-for"]).toBe("10.0.0.1")
      expect(last.headers["content-type"]).toBe("application/json")
      expect(Number(last.headers["content-length"])).toBe(Buffer.byteLength(last.body))
      expect(JSON.parse(last.body)).toEqual(body)

      const q = await benchEngine(base, client).GET("/api/v1/trade/agent/quote", { params: { query: { chain: "solana", mint: "M", side: "buy", amountIn: "5", slippageBps: 300 } } })
      expect(expectData("quote", q, 200)).toEqual({ ok: true, url: "/api/v1/trade/agent/quote?chain=solana&mint=M&side=buy&amountIn=5&slippageBps=300" })
      expect(seen.at(-1)!.headers["x-api-key"]).toBeUndefined()

      const job = await api.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId: "none-1" } } })
      expect(expectError("job", job, 404).error.code).toBe("JOB_NOT_FOUND")
      expect(() => expectData("job", job, 200)).toThrow("job: expected 200, got 404")

      const nm = await client.fetch(`${base}/not-modified`)
      expect(nm.status).toBe(304)
      expect(nm.headers.get("etag")).toBe('"e1"')

      // Its agent serves the one listener it was made for.
      await expect(client.fetch("http://127.0.0.1:9/api/v1/launch/presets")).rejects.toThrow("is not")
    } finally {
      client.close()
    }
  })

  it("holds at most maxSockets sockets, reused across requests in flight", async () => {
    sockets.clear()
    const client = httpClient(base, 2)
    try {
      const api = benchEngine(base, client)
      const answers = await Promise.all(Array.from({ length: 12 }, () => api.GET("/api/v1/launch/presets")))
      expect(answers.map((a) => a.response.status)).toEqual(Array.from({ length: 12 }, () => 200))
      expect(sockets.size).toBe(2)
    } finally {
      client.close()
    }
  })
})
