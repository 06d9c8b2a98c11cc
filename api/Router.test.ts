/**
 * The router over real HTTP: a uWS listener on a free port with a small route table, driven by
 * Node's fetch. Covers the envelope for unknown routes, wrong methods, malformed JSON, the body
 * bound (declared and streamed), HEAD, Effect handlers and defects.
 */
import { Effect, Exit, Schema, Scope } from "effect"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiError } from "../src/domain/ApiError.js"
import { json } from "./Http.js"
import type { RouteDef } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"

const routes: ReadonlyArray<RouteDef> = [
  {
    method: "GET", path: "/items/{id}", operationId: "getItem", summary: "", tags: [], auth: "public",
    responses: {}, handler: (req) => json(200, { id: req.params[0], query: req.query })
  },
  {
    method: "POST", path: "/items", operationId: "createItem", summary: "", tags: [], auth: "public",
    body: { schema: Schema.Unknown, maxBytes: 64 }, responses: {},
    handler: (req) => Effect.succeed(json(201, { received: req.body }))
  },
  {
    method: "GET", path: "/refuse", operationId: "refuse", summary: "", tags: [], auth: "public", responses: {},
    handler: () => Effect.fail(apiError("MARKET_NOT_FOUND", "nothing here", { extra: { routing: { reason: "token_unknown" } } }))
  },
  {
    method: "GET", path: "/defect", operationId: "defect", summary: "", tags: [], auth: "public", responses: {},
    handler: () => {
      throw new Error("boom")
    }
  },
  {
    method: "GET", path: "/slow-defect", operationId: "slowDefect", summary: "", tags: [], auth: "public", responses: {},
    handler: () => Effect.die("async boom")
  }
]

let scope: Scope.CloseableScope
let server: RunningServer

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(
    serve({ name: "test", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes }).pipe(Scope.extend(scope))
  )
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const call = async (method: string, path: string, body?: string) => {
  const res = await fetch(server.url + path, { method, ...(body !== undefined ? { body, headers: { "content-type": "application/json" } } : {}) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: text === "" ? undefined : JSON.parse(text) }
}

describe("router", () => {
  it("routes with path parameters, decoded", async () => {
    const r = await call("GET", "/items/a%20b?x=1")
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ id: "a b", query: "x=1" })
  })

  it("answers unknown routes with the 404 envelope", async () => {
    const r = await call("GET", "/nope")
    expect(r.status).toBe(404)
    expect(r.json).toEqual({ success: false, error: { code: "ROUTE_NOT_FOUND", message: "No route for /nope", retryable: false } })
  })

  it("answers a known path with another method 405 and Allow", async () => {
    const r = await call("DELETE", "/items/1")
    expect(r.status).toBe(405)
    expect(r.headers.get("allow")).toBe("GET")
    expect(r.json.error.code).toBe("METHOD_NOT_ALLOWED")
  })

  it("parses a JSON body and runs an Effect handler", async () => {
    const r = await call("POST", "/items", JSON.stringify({ a: 1 }))
    expect(r.status).toBe(201)
    expect(r.json).toEqual({ received: { a: 1 } })
  })

  it("refuses malformed JSON with 400 VALIDATION_FAILED", async () => {
    const r = await call("POST", "/items", "{not json")
    expect(r.status).toBe(400)
    expect(r.json.success).toBe(false)
    expect(r.json.error.code).toBe("VALIDATION_FAILED")
    expect(r.json.error.field).toBe("body")
  })

  it("refuses a declared body over the route's bound with 413", async () => {
    const r = await call("POST", "/items", JSON.stringify({ a: "x".repeat(100) }))
    expect(r.status).toBe(413)
    expect(r.json.error.code).toBe("BODY_TOO_LARGE")
    expect(r.json.error.limitBytes).toBe(64)
  })

  it("cuts off a chunked body at the bound", async () => {
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(server.url + "/items")
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
        let data = ""
        res.on("data", (c) => (data += c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: data }))
      })
      req.on("error", reject)
      for (let i = 0; i < 10; i++) req.write("x".repeat(20))
      req.end()
    })
    expect(status).toBe(413)
    expect(JSON.parse(text).error.code).toBe("BODY_TOO_LARGE")
  })

  it("writes an ApiError's extra members into the envelope", async () => {
    const r = await call("GET", "/refuse")
    expect(r.status).toBe(404)
    expect(r.json.error).toEqual({ code: "MARKET_NOT_FOUND", message: "nothing here", retryable: false, routing: { reason: "token_unknown" } })
  })

  it("turns defects into 500 INTERNAL without leaking details", async () => {
    for (const path of ["/defect", "/slow-defect"]) {
      const r = await call("GET", path)
      expect(r.status).toBe(500)
      expect(r.json.error.code).toBe("INTERNAL")
      expect(r.text).not.toContain("boom")
    }
  })
})
