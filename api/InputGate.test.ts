/**
 * The router's input gate (hardening issue 17, item 3) on a real uWS listener: NUL and invalid
 * UTF-8 in path, query, declared headers and body strings, JSON nesting at and past its bound,
 * body bytes that are not UTF-8, and the content-type rule (JSON by default; a route declaring
 * other media types gets their bytes). Each refusal is the `VALIDATION_FAILED` envelope naming
 * the field; the handler never runs.
 */
import { Effect, Exit, Schema, Scope } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiError } from "../src/domain/ApiError.js"
import { json } from "./Http.js"
import { decodeComponent, gateJson, gateQuery, maxJsonDepth } from "./InputGate.js"
import { stringParam } from "./QueryParams.js"
import { route, type RouteDef } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"

let handled = 0
const routes: ReadonlyArray<RouteDef> = [
  route({
    method: "GET", path: "/keys/{prefix}", operationId: "key", summary: "", tags: [], auth: "public", responses: {}, headers: ["x-label"],
    pathParams: { prefix: stringParam("prefix", { required: true }) },
    query: { label: stringParam("label") },
    handler: (req, input) => {
      handled++
      return json(200, { ...input, header: req.headers["x-label"] })
    }
  }),
  route({
    method: "POST", path: "/records", operationId: "record", summary: "", tags: [], auth: "public", responses: {},
    body: { schema: Schema.Unknown },
    handler: (_req, { body }) => {
      handled++
      return Effect.succeed(json(201, { body }))
    }
  }),
  route({
    method: "POST", path: "/upload", operationId: "upload", summary: "", tags: [], auth: "public", responses: {},
    body: {
      schema: Schema.Unknown,
      accepts: ["multipart/form-data", "image/*"],
      refuseContentType: (t) => apiError("UPLOAD_INVALID", `cannot take ${t || "nothing"}`)
    },
    handler: (req, { body }) => json(200, { bytes: body instanceof Uint8Array ? body.byteLength : -1, contentType: req.contentType })
  })
]

let scope: Scope.CloseableScope
let server: RunningServer

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(serve({ name: "gate", host: "127.0.0.1", port: 0, maxBodyBytes: 8 * 1024, routes }).pipe(Scope.extend(scope)))
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const call = async (method: string, path: string, o: { body?: string | Uint8Array; contentType?: string; headers?: Record<string, string> } = {}) => {
  const headers: Record<string, string> = { ...o.headers }
  if (o.contentType !== undefined) headers["content-type"] = o.contentType
  const res = await fetch(server.url + path, { method, headers, ...(o.body !== undefined ? { body: o.body } : {}) })
  const text = await res.text()
  return { status: res.status, json: JSON.parse(text) }
}

/** Raw bytes on a socket (invalid UTF-8 that fetch would never send); the parsed JSON body of the answer. */
const rawCall = (head: Buffer): Promise<{ status: number; json: any }> =>
  new Promise((resolve, reject) => {
    let got = Buffer.alloc(0)
    const socket = net.connect(server.port, server.host, () => socket.write(head))
    socket.on("data", (c) => {
      got = Buffer.concat([got, c])
      const text = got.toString("utf8")
      const split = text.indexOf("\r\n\r\n")
      const length = /content-length: (\d+)/i.exec(text)
      if (split === -1 || length === null || Buffer.byteLength(text.slice(split + 4)) < Number(length[1])) return
      socket.destroy()
      resolve({ status: Number(text.split(" ")[1]), json: JSON.parse(text.slice(split + 4)) })
    })
    socket.on("error", reject)
  })

const refusal = (field: string) => ({ success: false, error: expect.objectContaining({ code: "VALIDATION_FAILED", field, retryable: false }) })

describe("the input gate's parts", () => {
  it("decodes components, refusing NUL and escapes that are not UTF-8, keeping malformed escapes as sent", () => {
    expect(decodeComponent("a%20b", false)).toEqual({ value: "a b" })
    expect(decodeComponent("a+b", true)).toEqual({ value: "a b" })
    expect(decodeComponent("%C3%A9", false)).toEqual({ value: "é" })
    expect(decodeComponent("%zz", false)).toEqual({ value: "%zz" })
    expect(decodeComponent("a%00b", false)).toEqual({ problem: "contains a NUL character" })
    expect(decodeComponent("%ff", false)).toEqual({ problem: "is not valid UTF-8" })
    expect(decodeComponent("%C3", false)).toEqual({ problem: "is not valid UTF-8" })
    expect(decodeComponent("a\ufffdb", false)).toEqual({ problem: "is not valid UTF-8" })
    expect(decodeComponent("%ED%A0%80", false)).toEqual({ problem: "is not valid UTF-8" })
    expect(gateQuery("a=1&b=%ff")?.field).toBe("b")
    expect(gateQuery("a=1&%ff=2")?.field).toBe("query")
    expect(gateQuery("a=%C3%A9&b=x+y")).toBeUndefined()
  })

  it("walks JSON for NUL, unpaired surrogates and depth, naming the path", () => {
    expect(gateJson({ a: [{ b: "x\u0000" }] })?.field).toBe("a[0].b")
    expect(gateJson({ "odd key": { c: "\ud800" } })?.field).toBe('["odd key"].c')
    expect(gateJson({ ["k\u0000"]: 1 })).toMatchObject({ field: "body", message: "body: a member name contains a NUL character" })
    expect(gateJson({ ok: "😀 é", n: 1, b: null })).toBeUndefined()
    const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)])
    expect(gateJson(nest(maxJsonDepth))).toBeUndefined()
    expect(gateJson(nest(maxJsonDepth + 1))).toMatchObject({ field: "body", message: `body: nested deeper than ${maxJsonDepth} levels` })
  })
})

describe("the input gate on a real listener", () => {
  it("answers clean input (the control)", async () => {
    const r = await call("GET", "/keys/ab%C3%A9?label=x%20y", { headers: { "x-label": "z" } })
    expect(r).toEqual({ status: 200, json: { prefix: "abé", label: "x y", header: "z" } })
  })

  it("refuses NUL and invalid UTF-8 in a path parameter, naming it", async () => {
    const before = handled
    expect(await call("GET", "/keys/a%00b")).toEqual({ status: 400, json: refusal("prefix") })
    expect(await call("GET", "/keys/a%ffb")).toEqual({ status: 400, json: refusal("prefix") })
    const raw = await rawCall(Buffer.concat([Buffer.from("GET /keys/a"), Buffer.from([0xff]), Buffer.from(" HTTP/1.1\r\nHost: a\r\n\r\n")]))
    expect(raw).toEqual({ status: 400, json: refusal("prefix") })
    expect(handled).toBe(before)
  })

  it("refuses NUL and invalid UTF-8 in a query value, naming the parameter", async () => {
    expect(await call("GET", "/keys/a?label=x%00")).toEqual({ status: 400, json: refusal("label") })
    expect(await call("GET", "/keys/a?label=%C3")).toEqual({ status: 400, json: refusal("label") })
    // Undeclared parameters too: nothing past the router sees the string, but the query is refused whole.
    expect(await call("GET", "/keys/a?other=%00")).toEqual({ status: 400, json: refusal("other") })
    const raw = await rawCall(Buffer.concat([Buffer.from("GET /keys/a?label="), Buffer.from([0xc3, 0x28]), Buffer.from(" HTTP/1.1\r\nHost: a\r\n\r\n")]))
    expect(raw).toEqual({ status: 400, json: refusal("label") })
  })

  it("sees a declared header cut at its first byte outside ASCII (uWS does it), so no header carries a string the gate would refuse", async () => {
    const bad = await rawCall(Buffer.concat([Buffer.from("GET /keys/a HTTP/1.1\r\nHost: a\r\nX-Label: a"), Buffer.from([0xff]), Buffer.from("\r\n\r\n")]))
    expect(bad).toEqual({ status: 200, json: { prefix: "a", header: "a" } })
    const good = await rawCall(Buffer.from("GET /keys/a HTTP/1.1\r\nHost: a\r\nX-Label: caf\u00e9\r\n\r\n", "utf8"))
    expect(good).toEqual({ status: 200, json: { prefix: "a", header: "caf" } })
  })

  it("refuses NUL and unpaired surrogates in body strings and keys, naming the path", async () => {
    const before = handled
    const post = (body: string) => call("POST", "/records", { body, contentType: "application/json" })
    expect(await post('{"name":"a\\u0000b"}')).toEqual({ status: 400, json: refusal("name") })
    expect(await post('{"items":[{"label":"\\ud800"}]}')).toEqual({ status: 400, json: refusal("items[0].label") })
    expect(await post('{"a\\u0000":1}')).toEqual({ status: 400, json: refusal("body") })
    expect(handled).toBe(before)
    expect(await post('{"name":"a b 😀"}')).toEqual({ status: 201, json: { body: { name: "a b 😀" } } })
  })

  it("refuses body bytes that are not UTF-8", async () => {
    const r = await call("POST", "/records", { body: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), contentType: "application/json" })
    expect(r).toEqual({ status: 400, json: refusal("body") })
    expect(r.json.error.message).toBe("body: is not valid UTF-8")
  })

  it("takes JSON nesting at the bound and refuses one level deeper, and thousands of levels", async () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
    expect((await call("POST", "/records", { body: nested(maxJsonDepth), contentType: "application/json" })).status).toBe(201)
    expect(await call("POST", "/records", { body: nested(maxJsonDepth + 1), contentType: "application/json" })).toEqual({ status: 400, json: refusal("body") })
    expect(await call("POST", "/records", { body: nested(4000), contentType: "application/json" })).toEqual({ status: 400, json: refusal("body") })
  })

  it("requires a JSON content type on a JSON route with a body, and none without one", async () => {
    const body = JSON.stringify({ a: 1 })
    expect((await call("POST", "/records", { body, contentType: "application/json; charset=utf-8" })).status).toBe(201)
    expect((await call("POST", "/records", { body, contentType: "Application/JSON" })).status).toBe(201)
    const plain = await call("POST", "/records", { body, contentType: "text/plain" })
    expect(plain).toEqual({ status: 400, json: refusal("content-type") })
    expect(plain.json.error.message).toBe("Content-Type text/plain is not accepted; send application/json")
    expect(await call("POST", "/records", { body, contentType: "application/x-www-form-urlencoded" })).toEqual({ status: 400, json: refusal("content-type") })
    const missing = await rawCall(Buffer.from(`POST /records HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`))
    expect(missing).toEqual({ status: 400, json: refusal("content-type") })
    // An empty body needs no content type.
    expect(await rawCall(Buffer.from("POST /records HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"))).toEqual({ status: 201, json: {} })
  })

  it("hands a route that declares other media types their bytes, and answers others with its own refusal", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00])
    expect(await call("POST", "/upload", { body: png, contentType: "image/png" })).toEqual({ status: 200, json: { bytes: 6, contentType: "image/png" } })
    const form = await call("POST", "/upload", { body: "--x\r\n", contentType: "multipart/form-data; boundary=x" })
    expect(form.json).toEqual({ bytes: 5, contentType: "multipart/form-data; boundary=x" })
    const json = await call("POST", "/upload", { body: "{}", contentType: "application/json" })
    expect(json).toEqual({ status: 400, json: { success: false, error: expect.objectContaining({ code: "UPLOAD_INVALID", message: "cannot take application/json" }) } })
  })
})
