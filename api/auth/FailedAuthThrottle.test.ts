/**
 * The failed-authentication throttle (hardening issue 17, item 6): at its bound on a real
 * listener (the router counts every 401 of a credentialed route per client address and refuses
 * the address 429 before its credential is looked at, public routes untouched, the window
 * sliding it free), and its memory bound.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiError } from "../../src/domain/ApiError.js"
import { json } from "../Http.js"
import { route, type RouteDef } from "../Router.js"
import { type RunningServer, serve } from "../Server.js"
import { FailedAuthThrottle } from "./FailedAuthThrottle.js"

let lookups = 0
const routes: ReadonlyArray<RouteDef> = [
  route({
    method: "GET", path: "/private", operationId: "private", summary: "", tags: [], auth: "agentKey", responses: {}, headers: ["x-api-key"],
    authenticate: (req) => {
      lookups++
      return req.headers["x-api-key"] === "good" ? Effect.succeed("caller") : Effect.fail(apiError("UNAUTHORIZED", "bad key"))
    },
    handler: () => json(200, { ok: true })
  }),
  route({
    method: "GET", path: "/plain", operationId: "plain", summary: "", tags: [], auth: "bearer", responses: {},
    handler: () => json(401, { error: "invalid api key" })
  }),
  route({ method: "GET", path: "/public", operationId: "public", summary: "", tags: [], auth: "public", responses: {}, handler: () => json(401, { no: true }) })
]

const WINDOW_MS = 1_000
let scope: Scope.CloseableScope
let server: RunningServer

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(
    serve({ name: "throttle", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes, authFailureLimits: { failuresPerWindow: 3, windowMs: WINDOW_MS } }).pipe(Scope.extend(scope))
  )
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const get = async (path: string, key?: string) => {
  const res = await fetch(server.url + path, { headers: key === undefined ? {} : { "x-api-key": key } })
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any }
}

describe("the failed-authentication throttle", () => {
  it("refuses an address 429 after its budget of 401s, before any lookup, on every credentialed route but not public ones, until the window slides", async () => {
    // Start at the beginning of a window so the budget is not split across two.
    await new Promise((r) => setTimeout(r, WINDOW_MS - (Date.now() % WINDOW_MS) + 10))
    expect((await get("/private", "good")).status).toBe(200)
    expect((await get("/public")).status).toBe(401)
    for (let i = 0; i < 2; i++) expect((await get("/private", "bad")).status).toBe(401)
    // A plain 401 body of a credentialed route counts as well: the third failure.
    expect((await get("/plain")).status).toBe(401)
    const before = lookups
    const refused = await get("/private", "bad")
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatchObject({ code: "RATE_LIMITED", retryable: true, limitPerWindow: 3, windowSec: 1 })
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)
    // Even a good key from this address waits, and no credential is looked up meanwhile.
    expect((await get("/private", "good")).status).toBe(429)
    expect((await get("/plain")).status).toBe(429)
    expect(lookups).toBe(before)
    // Public routes are not throttled (and their 401s never counted).
    expect((await get("/public")).status).toBe(401)
    // Once the failures slide out of the window the address is served again.
    await new Promise((r) => setTimeout(r, 2 * WINDOW_MS + 50))
    expect((await get("/private", "good")).status).toBe(200)
  })

  it("tracks at most maxClients addresses, evicting the least recent (which only makes it more lenient)", () => {
    const t = new FailedAuthThrottle({ failuresPerWindow: 1, windowMs: 60_000, maxClients: 2 })
    const now = 1_000_000
    t.failed("a", now)
    t.failed("b", now)
    expect(t.refusal("a", now)?.code).toBe("RATE_LIMITED")
    expect(t.refusal("c", now)).toBeUndefined()
    expect(t.size).toBe(2)
    t.failed("c", now)
    expect(t.size).toBe(2)
    // "a" was the least recently failed: evicted, so it is no longer refused.
    expect(t.refusal("a", now)).toBeUndefined()
    expect(t.refusal("b", now)?.code).toBe("RATE_LIMITED")
    expect(t.refusal("c", now)?.code).toBe("RATE_LIMITED")
  })
})
