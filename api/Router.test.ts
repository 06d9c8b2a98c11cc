/**
 * The router over real HTTP: a uWS listener on a free port with a small route table, driven by
 * Node's fetch. Covers the envelope for unknown routes, wrong methods, malformed JSON, the body
 * bound (declared and streamed), HEAD, Effect handlers and defects.
 *
 * Then declared inputs (`route()`, `Param`s from `QueryParams.ts`), mostly by calling the mounted
 * handler directly: each parameter kind at and past each bound, missing required parameters,
 * defaults, empty and repeated values, escaped query strings (the in-place scanner against
 * `URLSearchParams`), bodies, the order guard → authenticate → decode → handler, that the
 * handler sees typed values, and the refusal envelope over HTTP.
 */
import { Effect, Exit, Schema, Scope } from "effect"
import fc from "fast-check"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import type { ChainId } from "../ingest/ChainEvent.js"
import { ApiError, apiError } from "../src/domain/ApiError.js"
import { json, type Reply, type Request } from "./Http.js"
import { chainParam, enumParam, intParam, type Param, param, scanQuery, stringParam, timeParam } from "./QueryParams.js"
import { decodedBody, route, type RouteDef } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"

const request = (o: Partial<Request> = {}): Request => ({
  method: "GET",
  path: "/",
  query: "",
  params: [],
  headers: {},
  body: undefined,
  remoteAddress: "127.0.0.1",
  ...o
})

const replyOf = (out: Reply | Effect.Effect<Reply, ApiError>): Reply => {
  if (!Effect.isEffect(out)) return out
  const exit = Effect.runSyncExit(out)
  if (exit._tag === "Success") return exit.value
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error("defect")
  return { status: failure.httpStatus, body: JSON.stringify({ error: { code: failure.code, field: failure.field, message: failure.message } }) }
}
const bodyOf = (r: Reply) => JSON.parse(String(r.body)) as Record<string, any>

const things = route({
  method: "GET",
  path: "/things/{chain}/{n}",
  operationId: "getThing",
  summary: "",
  tags: [],
  auth: "public",
  responses: {},
  pathParams: {
    chain: chainParam("chain", { required: true }),
    n: intParam("n", { min: 1, max: 9, required: true })
  },
  query: {
    limit: intParam("limit", { min: 1, max: 50, default: 10, boundsInError: true }),
    side: enumParam("side", ["buy", "sell"], { required: true }),
    mode: enumParam("mode", ["a", "b"], { default: "a" }),
    since: timeParam("since"),
    tag: stringParam("tag", { maxLength: 4 }),
    code: stringParam("code", { pattern: /^[a-z]{2}$/ }),
    only: chainParam("only", { unique: true, emptyIsValue: true })
  },
  handler: (_req, input) => {
    expectTypeOf(input.chain).toEqualTypeOf<ChainId>()
    expectTypeOf(input.n).toEqualTypeOf<number>()
    expectTypeOf(input.limit).toEqualTypeOf<number>()
    expectTypeOf(input.side).toEqualTypeOf<"buy" | "sell">()
    expectTypeOf(input.mode).toEqualTypeOf<"a" | "b">()
    expectTypeOf(input.since).toEqualTypeOf<number | undefined>()
    expectTypeOf(input.tag).toEqualTypeOf<string | undefined>()
    expectTypeOf(input.only).toEqualTypeOf<ChainId | undefined>()
    return json(200, input)
  }
})

const DeclaredBody = Schema.Struct({ name: Schema.String, n: Schema.Int.pipe(Schema.between(1, 3)) })

const routes: ReadonlyArray<RouteDef> = [
  things,
  route({
    method: "POST", path: "/declared", operationId: "declared", summary: "", tags: [], auth: "public", responses: {},
    body: { schema: DeclaredBody }, handler: (_req, { body }) => json(201, body)
  }),
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

  it("refuses a declared parameter or body with the VALIDATION_FAILED envelope naming the field", async () => {
    const p = await call("GET", "/things/solana/10?side=buy")
    expect(p.status).toBe(400)
    expect(p.json).toEqual({ success: false, error: { code: "VALIDATION_FAILED", message: "n must be an integer from 1 to 9", field: "n", retryable: false } })
    const q = await call("GET", "/things/hood/9?side=buy&limit=51")
    expect(q.json.error).toEqual({ code: "VALIDATION_FAILED", message: "limit must be an integer from 1 to 50", field: "limit", retryable: false, minimum: 1, limit: 50 })
    const ok = await call("GET", "/things/hood/9?side=sell&tag=a%20b")
    expect(ok.status).toBe(200)
    expect(ok.json).toMatchObject({ chain: "hood", n: 9, side: "sell", tag: "a b", limit: 10, mode: "a" })
    const b = await call("POST", "/declared", JSON.stringify({ name: "x", n: 4 }))
    expect(b.status).toBe(400)
    expect(b.json.error).toMatchObject({ code: "VALIDATION_FAILED", field: "n" })
    expect((await call("POST", "/declared", JSON.stringify({ name: "x", n: 3 }))).json).toEqual({ name: "x", n: 3 })
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

const get = (params: ReadonlyArray<string>, query: string) => {
  const r = replyOf(things.handler(request({ params, query })))
  return { status: r.status, body: bodyOf(r) }
}
const ok = (query: string, params: ReadonlyArray<string> = ["solana", "5"]) => {
  const r = get(params, query)
  if (r.status !== 200) throw new Error(`${query}: ${JSON.stringify(r.body)}`)
  return r.body
}
const refused = (query: string, params: ReadonlyArray<string> = ["solana", "5"]) => {
  const r = get(params, query)
  expect(r.status, query).toBe(400)
  expect(r.body.success).toBe(false)
  expect(r.body.error.code).toBe("VALIDATION_FAILED")
  return r.body.error as { field: string; message: string; [k: string]: unknown }
}

describe("declared inputs", () => {
  it("decodes path parameters, refusing each past its bound", () => {
    expect(ok("side=buy", ["hood", "1"])).toMatchObject({ chain: "hood", n: 1 })
    expect(ok("side=buy", ["solana", "9"])).toMatchObject({ chain: "solana", n: 9 })
    expect(refused("side=buy", ["solana", "0"]).field).toBe("n")
    expect(refused("side=buy", ["solana", "10"]).field).toBe("n")
    expect(refused("side=buy", ["solana", "1.5"]).field).toBe("n")
    expect(refused("side=buy", ["ethereum", "5"])).toMatchObject({ field: "chain", message: "Unknown chain 'ethereum'; expected solana or hood" })
  })

  it("decodes integers at both bounds and refuses past them, with the bounds when declared", () => {
    expect(ok("side=buy&limit=1").limit).toBe(1)
    expect(ok("side=buy&limit=50").limit).toBe(50)
    expect(refused("side=buy&limit=0")).toMatchObject({ field: "limit", minimum: 1, limit: 50 })
    expect(refused("side=buy&limit=51")).toMatchObject({ field: "limit", message: "limit must be an integer from 1 to 50" })
    for (const bad of ["-1", "1.5", "x", "1e2", " 1", "9".repeat(16)]) expect(refused(`side=buy&limit=${encodeURIComponent(bad)}`).field).toBe("limit")
  })

  it("fills defaults and counts an empty value as absent unless declared otherwise", () => {
    expect(ok("side=buy")).toMatchObject({ limit: 10, mode: "a" })
    expect(ok("side=buy").since).toBeUndefined()
    expect(ok("side=buy&limit=&mode=")).toMatchObject({ limit: 10, mode: "a" })
    expect(refused("side=buy&only=")).toMatchObject({ field: "only", message: "Unknown chain ''; expected solana or hood" })
  })

  it("refuses a missing required parameter and a value outside an enum", () => {
    expect(refused("")).toMatchObject({ field: "side", message: "side is required" })
    expect(refused("side=")).toMatchObject({ field: "side" })
    expect(refused("side=hold")).toMatchObject({ field: "side", message: "side must be one of buy, sell" })
    expect(refused("side=buy&mode=c").field).toBe("mode")
    expect(ok("side=sell&mode=b")).toMatchObject({ side: "sell", mode: "b" })
  })

  it("decodes times, strings at their bounds and patterns", () => {
    expect(ok("side=buy&since=1700000000000").since).toBe(1_700_000_000_000)
    expect(ok("side=buy&since=2026-11-21T00:00:00Z").since).toBe(Date.UTC(2026, 10, 21))
    expect(refused("side=buy&since=yesterday").field).toBe("since")
    expect(ok("side=buy&tag=abcd").tag).toBe("abcd")
    expect(refused("side=buy&tag=abcde").field).toBe("tag")
    expect(ok("side=buy&code=ab").code).toBe("ab")
    expect(refused("side=buy&code=abc").field).toBe("code")
  })

  it("takes the first of a repeated parameter, or refuses it when declared unique", () => {
    expect(ok("side=buy&limit=5&limit=6").limit).toBe(5)
    expect(refused("side=buy&only=solana&only=hood")).toMatchObject({ field: "only", message: "only given more than once" })
    expect(refused("side=buy&only=solana&only=hood%20")).toMatchObject({ field: "only", message: "only given more than once" })
  })

  it("reports the first refusal in declaration order (path, then query)", () => {
    expect(refused("side=hold&limit=0", ["solana", "0"]).field).toBe("n")
    expect(refused("mode=c&limit=0").field).toBe("limit")
  })

  it("decodes escaped query strings as URLSearchParams does", () => {
    expect(ok("side=buy&tag=a%20b").tag).toBe("a b")
    expect(ok("side=buy&tag=a+b").tag).toBe("a b")
    expect(ok("si%64e=buy").side).toBe("buy")
    const names = ["a", "b", "ab", "c"]
    const params = names.map(() => stringParam(""))
    const piece = fc.tuple(fc.constantFrom("a", "b", "ab", "c", "d", "", "a%62"), fc.option(fc.stringMatching(/^[a-z0-9%+=]{0,4}$/), { nil: undefined }))
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const query = pieces.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join("&")
        const raws = scanQuery(query, names, params)
        const reference = new URLSearchParams(query)
        expect(raws).toEqual(names.map((n) => reference.get(n) ?? undefined))
      })
    )
  })

  it("refuses a route whose pathParams do not match its path", () => {
    const spec = { method: "GET", operationId: "x", summary: "", tags: [], auth: "public", responses: {}, handler: () => json(200, {}) } as const
    expect(() => route({ ...spec, path: "/a/{id}" })).toThrow(/pathParams/)
    expect(() => route({ ...spec, path: "/a", pathParams: { id: stringParam("", { required: true }) } })).toThrow(/pathParams/)
    expect(() => route({ ...spec, path: "/a/{id}", pathParams: { id: stringParam("", { required: true }) }, query: { id: stringParam("") } })).toThrow(/twice/)
  })

  it("lets a declaration refuse with its own code", () => {
    const r = route({
      method: "GET", path: "/agents/{id}", operationId: "agent", summary: "", tags: [], auth: "public", responses: {},
      pathParams: { id: param({ description: "", required: true, schema: { type: "string" }, decode: (raw) => (raw === "ap_1" ? raw : apiError("MARKET_NOT_FOUND", "no such agent")) }) },
      handler: (_req, { id }) => json(200, { id })
    })
    expect(replyOf(r.handler(request({ params: ["ap_1"] }))).status).toBe(200)
    const no = replyOf(r.handler(request({ params: ["x"] })))
    expect(no.status).toBe(404)
    expect(bodyOf(no).error.code).toBe("MARKET_NOT_FOUND")
  })
})

describe("declared bodies", () => {
  const Item = Schema.Struct({ name: Schema.String, items: Schema.Array(Schema.Struct({ n: Schema.Int.pipe(Schema.between(1, 3)) })) })
  const create = route({
    method: "POST", path: "/items", operationId: "create", summary: "", tags: [], auth: "public", responses: {},
    body: { schema: Item, maxBytes: 1024 },
    handler: (_req, { body }) => {
      expectTypeOf(body).toEqualTypeOf<typeof Item.Type>()
      return Effect.succeed(json(201, { name: body.name, total: body.items.reduce((s, i) => s + i.n, 0) }))
    }
  })
  const post = (body: unknown) => replyOf(create.handler(request({ method: "POST", body })))

  it("hands the handler the decoded body and keeps the bound on the RouteDef", () => {
    const r = post({ name: "x", items: [{ n: 1 }, { n: 3 }] })
    expect(r.status).toBe(201)
    expect(bodyOf(r)).toEqual({ name: "x", total: 4 })
    expect(create.body).toEqual({ schema: Item, maxBytes: 1024 })
  })

  it("refuses a bad body with VALIDATION_FAILED naming the first problem's path", () => {
    expect(bodyOf(post({ items: [] })).error).toMatchObject({ code: "VALIDATION_FAILED", field: "name", message: "name: is required" })
    expect(bodyOf(post({ name: "x", items: [{ n: 1 }, { n: 4 }] })).error).toMatchObject({ field: "items[1].n" })
    expect(bodyOf(post({ name: 1, items: [] })).error.field).toBe("name")
    expect(bodyOf(post(undefined)).error).toMatchObject({ code: "VALIDATION_FAILED", field: "body" })
    expect(bodyOf(post([1])).error.field).toBe("body")
  })
})

describe("hand-written body decoders and closed queries", () => {
  const Wire = Schema.Struct({ label: Schema.String })
  const labelled = route({
    method: "POST", path: "/l", operationId: "l", summary: "", tags: [], auth: "public", responses: {},
    body: decodedBody({
      schema: Wire,
      maxBytes: 64,
      decode: (b) =>
        typeof b === "object" && b !== null && typeof (b as { label?: unknown }).label === "string"
          ? (b as { label: string }).label.trim().length
          : apiError("VALIDATION_FAILED", "label must be a string", { field: "label" })
    }),
    handler: (_req, { body }) => {
      expectTypeOf(body).toEqualTypeOf<number>()
      return json(200, { length: body })
    }
  })
  const closed = route({
    method: "GET", path: "/c", operationId: "c", summary: "", tags: [], auth: "public", responses: {},
    query: { limit: intParam("", { min: 1, max: 2, default: 1 }) },
    closedQuery: true,
    handler: (_req, { limit }) => json(200, { limit })
  })

  it("runs the declared decoder before the handler and documents the wire schema", () => {
    expect(bodyOf(replyOf(labelled.handler(request({ method: "POST", body: { label: " ab " } }))))).toEqual({ length: 2 })
    expect(bodyOf(replyOf(labelled.handler(request({ method: "POST", body: { label: 3 } })))).error).toMatchObject({ code: "VALIDATION_FAILED", field: "label" })
    expect(labelled.body).toEqual({ schema: Wire, maxBytes: 64 })
  })

  it("refuses an undeclared query parameter before decoding the declared ones, and accepts the declared", () => {
    expect(bodyOf(replyOf(closed.handler(request({ query: "limit=2" }))))).toEqual({ limit: 2 })
    expect(bodyOf(replyOf(closed.handler(request({ query: "" }))))).toEqual({ limit: 1 })
    const refused = bodyOf(replyOf(closed.handler(request({ query: "limit=9&extra=1" })))).error
    expect(refused).toMatchObject({ code: "VALIDATION_FAILED", field: "extra" })
    expect(refused.message).toBe("Unknown parameter 'extra'; expected limit")
    expect(bodyOf(replyOf(closed.handler(request({ query: "limit=9" })))).error.field).toBe("limit")
  })
})

describe("order of checks", () => {
  const calls: Array<string> = []
  const guarded = route({
    method: "GET", path: "/g", operationId: "g", summary: "", tags: [], auth: "bearer", responses: {},
    query: { limit: intParam("", { min: 1, max: 2, default: 1 }) },
    guard: (req) => (calls.push("guard"), req.headers["x-limited"] === "1" ? json(429, { limited: true }) : undefined),
    authenticate: (req) => {
      calls.push("authenticate")
      const who = req.headers.authorization
      return who === "plain" ? Effect.fail(json(401, { error: "invalid api key" })) : who === undefined ? Effect.fail(apiError("UNAUTHORIZED", "no key")) : Effect.succeed({ accountId: who })
    },
    handler: (_req, { limit }, caller) => {
      expectTypeOf(caller).toEqualTypeOf<{ accountId: string }>()
      calls.push("handler")
      return json(200, { limit, accountId: caller.accountId })
    }
  })
  const call = (headers: Record<string, string>, query: string) => {
    calls.length = 0
    return replyOf(guarded.handler(request({ headers, query })))
  }

  it("runs the guard, then authentication, then decoding, then the handler", () => {
    expect(call({ "x-limited": "1", authorization: "a" }, "limit=9").status).toBe(429)
    expect(calls).toEqual(["guard"])
    expect(call({}, "limit=9").status).toBe(401)
    expect(calls).toEqual(["guard", "authenticate"])
    const plain = call({ authorization: "plain" }, "limit=9")
    expect([plain.status, bodyOf(plain)]).toEqual([401, { error: "invalid api key" }])
    expect(call({ authorization: "acct" }, "limit=9").status).toBe(400)
    expect(calls).toEqual(["guard", "authenticate"])
    const r = call({ authorization: "acct" }, "limit=2")
    expect(bodyOf(r)).toEqual({ limit: 2, accountId: "acct" })
    expect(calls).toEqual(["guard", "authenticate", "handler"])
  })

  it("hands a body decoder the caller authentication answered, and decodes the body once, before the handler", () => {
    const seen: Array<unknown> = []
    const keyed = route({
      method: "POST", path: "/k", operationId: "k", summary: "", tags: [], auth: "bearer", responses: {},
      authenticate: (req) => Effect.succeed({ environment: req.headers.authorization ?? "production" }),
      body: decodedBody({
        schema: Schema.Struct({ visibility: Schema.String }),
        decode: (body: unknown, caller: { environment: string }) => {
          seen.push(["decode", caller.environment])
          const visibility = (body as { visibility?: unknown }).visibility
          return caller.environment === "test" && visibility !== "test" ? apiError("VALIDATION_FAILED", "a test key launches only with visibility test", { field: "visibility" }) : { visibility: String(visibility) }
        }
      }),
      handler: (_req, { body }, caller) => {
        expectTypeOf(body).toEqualTypeOf<{ visibility: string }>()
        seen.push(["handler", body.visibility, caller.environment])
        return json(200, body)
      }
    })
    const refused = replyOf(keyed.handler(request({ method: "POST", headers: { authorization: "test" }, body: { visibility: "production" } })))
    expect([refused.status, bodyOf(refused).error.field]).toEqual([400, "visibility"])
    expect(seen).toEqual([["decode", "test"]])
    seen.length = 0
    expect(bodyOf(replyOf(keyed.handler(request({ method: "POST", body: { visibility: "production" } }))))).toEqual({ visibility: "production" })
    expect(seen).toEqual([["decode", "production"], ["handler", "production", "production"]])
  })

  it("names the first refusal of a Schema body by its path, arrays and nested members as the spec writes them", () => {
    const Buys = Schema.Struct({
      clientLaunchId: Schema.String,
      firstBuys: Schema.Array(Schema.Struct({ payer: Schema.Struct({ type: Schema.Literal("main", "linked") }), amountRaw: Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*$/)) }))
    })
    const buys = route({ method: "POST", path: "/b", operationId: "b", summary: "", tags: [], auth: "public", responses: {}, body: { schema: Buys }, handler: (_req, { body }) => json(200, body) })
    const fieldOf = (body: unknown) => bodyOf(replyOf(buys.handler(request({ method: "POST", body })))).error?.field
    const ok = { payer: { type: "main" }, amountRaw: "1" }
    expect(fieldOf({ clientLaunchId: "a", firstBuys: [ok, { payer: { type: "main" }, amountRaw: "01" }] })).toBe("firstBuys[1].amountRaw")
    expect(fieldOf({ clientLaunchId: "a", firstBuys: [{ payer: { type: "x" }, amountRaw: "01" }] })).toBe("firstBuys[0].payer.type")
    // Two problems: the first in declaration order is named.
    expect(fieldOf({ firstBuys: [{ payer: {}, amountRaw: 1 }] })).toBe("clientLaunchId")
    expect(fieldOf({ clientLaunchId: "a" })).toBe("firstBuys")
    expect(fieldOf("x")).toBe("body")
    expect(bodyOf(replyOf(buys.handler(request({ method: "POST", body: { clientLaunchId: "a", firstBuys: [ok] } }))))).toEqual({ clientLaunchId: "a", firstBuys: [ok] })
  })

  it("calls a route with nothing declared at once, synchronously", () => {
    const reply = json(200, { ok: true })
    const plain = route({ method: "GET", path: "/p", operationId: "p", summary: "", tags: [], auth: "public", responses: {}, handler: () => reply })
    expect(plain.handler(request())).toBe(reply)
    expect(plain.inputs).toEqual({ path: {}, query: {} })
  })

  it("stays synchronous with parameters and no authentication (the hot read path)", () => {
    const out = things.handler(request({ params: ["solana", "1"], query: "side=buy" }))
    expect(Effect.isEffect(out)).toBe(false)
  })
})

/** Every kind's decoder is a `Param`; the type of a declaration is what the handler sees. */
expectTypeOf(intParam("", { min: 0, max: 1 })).toEqualTypeOf<Param<number | undefined>>()
expectTypeOf(enumParam("", ["x", "y"], { default: "x" })).toEqualTypeOf<Param<"x" | "y">>()
expectTypeOf(ApiError).not.toBeAny()
