/**
 * A listener's graceful drain (hardening issue 17, item 5) on a real uWS listener: closing the
 * scope stops accepting at once, answers every request in flight (handlers still running, bodies
 * still arriving), closes keep-alive connections after their reply, and gives up on what is still
 * running after the bound, closing those connections.
 */
import { Deferred, Effect, Exit, Schema, Scope } from "effect"
import * as http from "node:http"
import * as net from "node:net"
import { describe, expect, it } from "vitest"
import { json } from "./Http.js"
import type { RouteDef } from "./Router.js"
import { serve } from "./Server.js"

const start = async (drainMs: number) => {
  const release = Effect.runSync(Deferred.make<void>())
  let started = 0
  const routes: ReadonlyArray<RouteDef> = [
    {
      method: "GET", path: "/slow", operationId: "slow", summary: "", tags: [], auth: "public", responses: {},
      handler: () => {
        started++
        return Effect.as(Deferred.await(release), json(200, { slow: true }))
      }
    },
    {
      method: "GET", path: "/never", operationId: "never", summary: "", tags: [], auth: "public", responses: {},
      handler: () => Effect.never
    },
    {
      method: "POST", path: "/echo", operationId: "echo", summary: "", tags: [], auth: "public", responses: {},
      body: { schema: Schema.Unknown }, handler: (req) => json(200, { got: req.body })
    },
    { method: "GET", path: "/ping", operationId: "ping", summary: "", tags: [], auth: "public", responses: {}, handler: () => json(200, { pong: true }) }
  ]
  const scope = await Effect.runPromise(Scope.make())
  const server = await Effect.runPromise(serve({ name: "drain", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes, drainMs }).pipe(Scope.extend(scope)))
  return {
    server,
    started: () => started,
    release: () => Effect.runSync(Deferred.succeed(release, undefined)),
    /** Closes the scope; resolves with the milliseconds it took. */
    close: async () => {
      const t0 = Date.now()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      return Date.now() - t0
    }
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

const get = (port: number, path: string): Promise<{ status: number; connection: string | undefined; body: string }> =>
  new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, agent }, (res) => {
      let body = ""
      res.on("data", (c) => (body += c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }))
    })
    req.on("error", reject)
    req.end()
  })

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(cond()).toBe(true)
}

describe("draining a listener", () => {
  it("answers every request in flight, refuses new connections at once, and closes kept-alive connections after their reply", async () => {
    const s = await start(10_000)
    // A kept-alive connection from before the drain (HTTP/1.1: kept unless a reply says close).
    expect((await get(s.server.port, "/ping")).connection).toBeUndefined()
    const inFlight = Array.from({ length: 20 }, () => get(s.server.port, "/slow"))
    await until(() => s.started() === 20)
    // A request whose body is still arriving is in flight too.
    const slowBody = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: s.server.port, path: "/echo", method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
        let body = ""
        res.on("data", (c) => (body += c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on("error", reject)
      req.write('{"a":')
      setTimeout(() => req.end("1}"), 300)
    })
    await new Promise((r) => setTimeout(r, 50))
    const closing = s.close()
    await new Promise((r) => setTimeout(r, 50))
    // No new connection once the drain began.
    const refused = await new Promise<string>((resolve) => {
      const c = net.connect(s.server.port, "127.0.0.1")
      c.on("connect", () => {
        c.destroy()
        resolve("connected")
      })
      c.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"))
    })
    expect(refused).toBe("ECONNREFUSED")
    expect(await slowBody).toEqual({ status: 200, body: '{"got":{"a":1}}' })
    await new Promise((r) => setTimeout(r, 100))
    s.release()
    const answers = await Promise.all(inFlight)
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
    // Replies written while draining close their connection.
    expect(answers.every((a) => a.connection === "close")).toBe(true)
    const took = await closing
    expect(took).toBeGreaterThanOrEqual(300)
    expect(took).toBeLessThan(5_000)
  })

  it("gives up on requests still running after the bound, closing their connections", async () => {
    const s = await start(300)
    const stuck = get(s.server.port, "/never").then(
      () => "answered",
      (e: NodeJS.ErrnoException) => e.code ?? "error"
    )
    await new Promise((r) => setTimeout(r, 50))
    const took = await s.close()
    expect(took).toBeGreaterThanOrEqual(300)
    expect(took).toBeLessThan(3_000)
    expect(await stuck).toBe("ECONNRESET")
  })

  it("closes at once when nothing is in flight", async () => {
    const s = await start(10_000)
    expect((await get(s.server.port, "/ping")).status).toBe(200)
    expect(await s.close()).toBeLessThan(1_000)
  })
})
