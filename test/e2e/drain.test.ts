/**
 * SIGTERM drains the started binary (hardening issue 17, item 5): with requests in flight on both
 * listeners (bodies still arriving when the signal lands) and an open signal-stream WebSocket,
 * both listeners stop accepting, the requests in flight are answered, the stream socket is closed
 * with 1001 after them, and the process exits 0.
 */
import * as http from "node:http"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import { engineForFile } from "../support/engineForFile.js"

interface WsClient {
  on(event: "open", f: () => void): void
  on(event: "error", f: (e: Error) => void): void
  on(event: "close", f: (code: number) => void): void
}
const WebSocket = createRequire(import.meta.url)("ws") as new (url: string, options: { headers: Record<string, string> }) => WsClient

const started = engineForFile({ args: ["--quiet"] })

/** A POST whose body arrives in two parts, `gapMs` apart; resolves with the status and when it came. */
const slowPost = (base: string, route: string, headers: Record<string, string>, first: string, rest: string, gapMs: number) =>
  new Promise<{ status: number; at: number; body: string }>((resolve, reject) => {
    const url = new URL(base + route)
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { ...headers, "content-type": "application/json", "transfer-encoding": "chunked" } },
      (res) => {
        let body = ""
        res.on("data", (c) => (body += c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, at: Date.now(), body }))
      }
    )
    req.on("error", reject)
    req.write(first)
    setTimeout(() => req.end(rest), gapMs)
  })

describe("SIGTERM", () => {
  it("answers the requests in flight on both listeners, closes the stream with 1001 after them, and exits 0", async () => {
    const ws = new WebSocket(`${started.dataUrl.replace("http", "ws")}/v1/signals/stream`, { headers: { authorization: `Bearer ${started.credentials.agentKey}` } })
    const closed = new Promise<{ code: number; at: number }>((resolve) => ws.on("close", (code) => resolve({ code, at: Date.now() })))
    await new Promise<void>((resolve, reject) => {
      ws.on("open", resolve)
      ws.on("error", reject)
    })

    // In flight when the signal lands: bodies still arriving, finished 1.5 s after it.
    const api = slowPost(started.engine.url, "/api/v1/agent/webhooks", { authorization: "Bearer not-a-session" }, '{"url":', '"https://example.com/h"}', 2_000)
    const data = slowPost(started.dataUrl, "/v1/me/follows", { authorization: `Bearer ${started.credentials.agentKey}` }, '{"chain":"solana",', '"address":"So11111111111111111111111111111111111111112"}', 2_000)
    await new Promise((r) => setTimeout(r, 500))
    const stopping = started.engine.stop("SIGTERM", 30_000)

    const [a, d] = await Promise.all([api, data])
    // Answered by the routes (not reset): the API's refusal of the bad session, the data service's follow.
    expect(a.status, a.body).toBe(401)
    expect([200, 201], d.body).toContain(d.status)
    const ended = await closed
    expect(ended.code).toBe(1001)
    expect(ended.at).toBeGreaterThanOrEqual(Math.max(a.at, d.at))
    expect(await stopping, started.engine.output().slice(-3000)).toEqual({ code: 0, signal: null })
  }, 90_000)
})
