/**
 * CORS on a listener with a `CorsPolicy` (the market-data listener, called by the web page on the
 * main port): the page's origin gets its preflight and `Access-Control-Allow-Origin` on every
 * answer, refusals included; any other origin gets neither, so the browser keeps the answer from
 * its script. A listener without a policy answers no preflight.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "./Http.js"
import { corsOrigin, route } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"
import { bearerFromProtocols } from "./data/SignalStream.js"

const routes = [
  route({ method: "GET", path: "/v1/thing", operationId: "thing", summary: "thing", tags: [], auth: "public", responses: {}, handler: () => json(200, { ok: true }) }),
  route({ method: "GET", path: "/v1/refused", operationId: "refused", summary: "refused", tags: [], auth: "public", responses: {}, handler: () => json(401, { error: "invalid api key" }) })
]
const policy = { pagePort: 8080, origins: ["https://page.example"] }
let scope: Scope.CloseableScope
let withCors: RunningServer
let without: RunningServer

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  withCors = await Effect.runPromise(serve({ name: "cors", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes, cors: policy }).pipe(Scope.extend(scope)))
  without = await Effect.runPromise(serve({ name: "plain", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes }).pipe(Scope.extend(scope)))
})

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const preflight = (url: string, origin: string) =>
  fetch(url, { method: "OPTIONS", headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" } })

describe("CORS for the web page", () => {
  it("admits the page's origins: the configured ones, and the request's own host on the page's port", () => {
    expect(corsOrigin(policy, "https://page.example", "127.0.0.1:8081")).toBe("https://page.example")
    expect(corsOrigin(policy, "http://127.0.0.1:8080", "127.0.0.1:8081")).toBe("http://127.0.0.1:8080")
    expect(corsOrigin(policy, "http://localhost:8080", "localhost:8081")).toBe("http://localhost:8080")
    expect(corsOrigin(policy, "http://[::1]:8080", "[::1]:8081")).toBe("http://[::1]:8080")
    // Another port, another host than the one asked, no origin at all.
    expect(corsOrigin(policy, "http://127.0.0.1:9999", "127.0.0.1:8081")).toBeUndefined()
    expect(corsOrigin(policy, "http://evil.example:8080", "127.0.0.1:8081")).toBeUndefined()
    expect(corsOrigin(policy, "http://localhost:8080", "127.0.0.1:8081")).toBeUndefined()
    expect(corsOrigin(policy, "", "127.0.0.1:8081")).toBeUndefined()
    expect(corsOrigin(policy, "null", "127.0.0.1:8081")).toBeUndefined()
  })

  it("answers an admitted origin's preflight on a route's path, and no other", async () => {
    const host = new URL(withCors.url).hostname
    const ok = await preflight(`${withCors.url}/v1/thing`, `http://${host}:8080`)
    expect(ok.status).toBe(204)
    expect(ok.headers.get("access-control-allow-origin")).toBe(`http://${host}:8080`)
    expect(ok.headers.get("access-control-allow-headers")).toContain("authorization")
    expect(ok.headers.get("access-control-allow-methods")).toContain("GET")
    expect(ok.headers.get("vary")).toBe("Origin")
    const foreign = await preflight(`${withCors.url}/v1/thing`, "http://evil.example:8080")
    expect(foreign.status).toBe(404)
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull()
    const plain = await preflight(`${without.url}/v1/thing`, `http://${host}:8080`)
    expect(plain.headers.get("access-control-allow-origin")).toBeNull()
    expect(plain.status).toBe(405)
  })

  it("marks every answer to an admitted origin, refusals and 404s included, and nothing else", async () => {
    const origin = "https://page.example"
    for (const p of ["/v1/thing", "/v1/refused", "/v1/none"]) {
      const res = await fetch(`${withCors.url}${p}`, { headers: { origin } })
      expect(res.headers.get("access-control-allow-origin"), p).toBe(p === "/v1/none" ? null : origin)
    }
    const foreign = await fetch(`${withCors.url}/v1/thing`, { headers: { origin: "http://evil.example" } })
    expect(foreign.status).toBe(200)
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull()
    const plain = await fetch(`${without.url}/v1/thing`, { headers: { origin } })
    expect(plain.headers.get("access-control-allow-origin")).toBeNull()
  })
})

describe("the stream's bearer as a browser subprotocol", () => {
  it("takes bearer.<key> beside curvestream.v1 and answers curvestream.v1 alone", () => {
    expect(bearerFromProtocols("curvestream.v1, bearer.svc_live_abc")).toEqual({ authorization: "Bearer svc_live_abc", protocol: "curvestream.v1" })
    expect(bearerFromProtocols("bearer.svc_live_abc,curvestream.v1")).toEqual({ authorization: "Bearer svc_live_abc", protocol: "curvestream.v1" })
  })

  it("ignores a key without the page's protocol, an empty key, and no protocols", () => {
    expect(bearerFromProtocols("bearer.svc_live_abc")).toBeUndefined()
    expect(bearerFromProtocols("curvestream.v1, bearer.")).toBeUndefined()
    expect(bearerFromProtocols("")).toBeUndefined()
  })
})
