/**
 * What the uWS build itself answers, through our `serve` over a raw TCP socket: the HTTP edge
 * cases the runtime move re-checks (issue "off an end-of-life runtime" and the hardening issue's
 * item 4). The old build (`@trufflesuite/uws-js-unofficial` 20.30) held these sockets ~12 s and
 * closed them without a byte; `uws-pack` answers each with a status line. What the router itself
 * must still answer (no Host, absolute-form targets, long URLs, pipelining behind an asynchronous
 * reply) belongs to the hardening issue and is not asserted here.
 */
import { Effect, Exit, Scope } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "./Http.js"
import type { RouteDef } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"

const routes: ReadonlyArray<RouteDef> = [
  {
    method: "GET", path: "/ping", operationId: "ping", summary: "", tags: [], auth: "public",
    responses: {}, handler: () => json(200, { pong: true })
  }
]

let scope: Scope.CloseableScope
let server: RunningServer

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(serve({ name: "test", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes }).pipe(Scope.extend(scope)))
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** Sends raw bytes and resolves with the first response's status line, or "" if the socket closes or 5 s pass with none. */
const statusLineOf = (raw: string): Promise<string> =>
  new Promise((resolve) => {
    let got = ""
    const socket = net.connect(server.port, server.host, () => socket.write(raw))
    const done = () => {
      clearTimeout(deadline)
      socket.destroy()
      resolve(got.split("\r\n")[0] ?? "")
    }
    const deadline = setTimeout(done, 5_000)
    socket.on("data", (chunk) => {
      got += chunk.toString("latin1")
      if (got.includes("\r\n")) done()
    })
    socket.on("close", done)
    socket.on("error", done)
  })

describe("the uWS build's answers to HTTP edge cases", () => {
  it("answers a well-formed HTTP/1.1 request (the control)", async () => {
    expect(await statusLineOf("GET /ping HTTP/1.1\r\nHost: a\r\n\r\n")).toBe("HTTP/1.1 200 OK")
  })

  it("answers HTTP/1.0 (what nginx sends upstream by default) with 505, not silence", async () => {
    expect(await statusLineOf("GET /ping HTTP/1.0\r\n\r\n")).toMatch(/^HTTP\/1\.1 505 /)
  })

  it("answers more headers than the build's limit with 431, not silence", async () => {
    const headers = Array.from({ length: 120 }, (_, i) => `X-H${i}: v\r\n`).join("")
    expect(await statusLineOf(`GET /ping HTTP/1.1\r\nHost: a\r\n${headers}\r\n`)).toMatch(/^HTTP\/1\.1 431 /)
  })

  it("answers an oversized header block with 431, not silence", async () => {
    expect(await statusLineOf(`GET /ping HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 431 /)
  })
})
