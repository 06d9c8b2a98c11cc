/**
 * What the uWS build itself answers, through our `serve` over a raw TCP socket: the HTTP edge
 * cases the runtime move re-checks (issue "off an end-of-life runtime" and the hardening issue's
 * item 4). The old build (`@trufflesuite/uws-js-unofficial` 20.30) held these sockets ~12 s and
 * closed them without a byte; `uws-pack` answers each with a status line. Then what the router
 * answers itself (over-long targets 414, unknown methods 405) and what the build still does on its
 * own, asserted so that a future build changing it is noticed (README, "Behind a proxy"): an
 * absolute-form target gets the build's 505, a NUL in a header and a request with no header line
 * at all get no answer, and a request pipelined behind an asynchronous reply closes the connection.
 */
import { Effect, Exit, Scope } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "./Http.js"
import { maxUrlLength, type RouteDef } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"

const routes: ReadonlyArray<RouteDef> = [
  {
    method: "GET", path: "/ping", operationId: "ping", summary: "", tags: [], auth: "public",
    responses: {}, handler: () => json(200, { pong: true })
  },
  {
    method: "GET", path: "/slow", operationId: "slow", summary: "", tags: [], auth: "public",
    responses: {}, handler: () => Effect.as(Effect.sleep(20), json(200, { slow: true }))
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

/** Sends raw bytes; resolves with everything received once the socket closes or `waitMs` pass. */
const exchange = (raw: string, waitMs: number, enough: (got: string) => boolean): Promise<{ got: string; closed: boolean }> =>
  new Promise((resolve) => {
    let got = ""
    let closed = false
    const socket = net.connect(server.port, server.host, () => socket.write(raw))
    const done = () => {
      clearTimeout(deadline)
      socket.destroy()
      resolve({ got, closed })
    }
    const deadline = setTimeout(done, waitMs)
    socket.on("data", (chunk) => {
      got += chunk.toString("latin1")
      if (enough(got)) done()
    })
    socket.on("close", () => {
      closed = true
      done()
    })
    socket.on("error", done)
  })

/** The first response's status line, or "" if the socket closes or 5 s pass with none. */
const statusLineOf = async (raw: string): Promise<string> =>
  (await exchange(raw, 5_000, (got) => got.includes("\r\n"))).got.split("\r\n")[0] ?? ""

const statusLines = (got: string): Array<string> => got.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? []

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

describe("HTTP edge cases the router answers", () => {
  it("answers a request target over the bound 414 with the envelope, and one at the bound normally", async () => {
    const at = `/ping?${"a".repeat(maxUrlLength - "/ping".length)}`
    expect(await statusLineOf(`GET ${at} HTTP/1.1\r\nHost: a\r\n\r\n`)).toBe("HTTP/1.1 200 OK")
    const over = await exchange(`GET ${at}a HTTP/1.1\r\nHost: a\r\n\r\n`, 5_000, (got) => got.includes("}}"))
    expect(statusLines(over.got)).toEqual(["HTTP/1.1 414 URI Too Long"])
    expect(over.got).toContain(`"code":"URI_TOO_LONG"`)
    // The same on a path with no route.
    expect(await statusLineOf(`GET /nope?${"a".repeat(maxUrlLength)} HTTP/1.1\r\nHost: a\r\n\r\n`)).toBe("HTTP/1.1 414 URI Too Long")
    // Past the build's 4 KiB request head, uWS answers 431 itself.
    expect(await statusLineOf(`GET /ping?${"a".repeat(300_000)} HTTP/1.1\r\nHost: a\r\n\r\n`)).toMatch(/^HTTP\/1\.1 431 /)
  })

  it("answers an unknown method 405 with Allow on a known path, 404 elsewhere", async () => {
    const known = await exchange("FOO /ping HTTP/1.1\r\nHost: a\r\n\r\n", 5_000, (got) => got.includes("}}"))
    expect(statusLines(known.got)).toEqual(["HTTP/1.1 405 Method Not Allowed"])
    expect(known.got).toMatch(/\r\nAllow: GET\r\n/)
    expect(await statusLineOf("FOO /nope HTTP/1.1\r\nHost: a\r\n\r\n")).toBe("HTTP/1.1 404 Not Found")
  })

  it("answers HEAD 405 (known path) or 404 without a body, so the connection stays in step", async () => {
    const r = await exchange("HEAD /ping HTTP/1.1\r\nHost: a\r\n\r\nHEAD /nope HTTP/1.1\r\nHost: a\r\n\r\nGET /ping HTTP/1.1\r\nHost: a\r\n\r\n", 5_000, (got) => got.endsWith('{"pong":true}'))
    expect(statusLines(r.got)).toEqual(["HTTP/1.1 405 Method Not Allowed", "HTTP/1.1 404 Not Found", "HTTP/1.1 200 OK"])
    expect(r.got).not.toContain("METHOD_NOT_ALLOWED")
    expect(r.got).not.toContain("ROUTE_NOT_FOUND")
  })

  it("answers a request without Host 400 (the build does it)", async () => {
    expect(await statusLineOf("GET /ping HTTP/1.1\r\nAccept: */*\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /)
  })

  it("answers pipelined requests in order when their handlers answer synchronously", async () => {
    const r = await exchange("GET /ping HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n", 5_000, (got) => statusLines(got).length === 2 && got.endsWith("}}"))
    expect(statusLines(r.got)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found"])
  })
})

describe("what the build still does on its own (README, \"Behind a proxy\")", () => {
  it("closes a connection that pipelines a request behind an asynchronous reply, answering neither", async () => {
    const r = await exchange("GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /ping HTTP/1.1\r\nHost: a\r\n\r\n", 5_000, () => false)
    expect(r).toEqual({ got: "", closed: true })
    // The same requests one after another on one connection are both answered.
    const slow = await exchange("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", 5_000, (got) => got.endsWith("}"))
    expect(statusLines(slow.got)).toEqual(["HTTP/1.1 200 OK"])
  })

  it("answers an absolute-form target with its 505", async () => {
    expect(await statusLineOf("GET http://a/ping HTTP/1.1\r\nHost: a\r\n\r\n")).toMatch(/^HTTP\/1\.1 505 /)
  })

  it("answers nothing to a NUL in a header, or to a request with no header line at all", async () => {
    expect(await exchange("GET /ping HTTP/1.1\r\nHost: a\r\nX-A: a\0b\r\n\r\n", 1_000, () => false)).toEqual({ got: "", closed: false })
    expect(await exchange("GET /ping HTTP/1.1\r\n\r\n", 1_000, () => false)).toEqual({ got: "", closed: false })
  })
})

/** A port free now (the kernel's pick for port 0, released). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.on("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })

describe("binding its port", () => {
  it("refuses a port another listener holds (uWS shares ports by default): ServerListenError, not a silent share", async () => {
    const port = await freePort()
    const held = await Effect.runPromise(Scope.make())
    try {
      await Effect.runPromise(serve({ name: "first", host: "127.0.0.1", port, maxBodyBytes: 1024, routes }).pipe(Scope.extend(held)))
      const second = await Effect.runPromiseExit(Effect.scoped(serve({ name: "second", host: "127.0.0.1", port, maxBodyBytes: 1024, routes: [] })))
      expect(Exit.isFailure(second)).toBe(true)
      expect(String(Exit.isFailure(second) ? second.cause : "")).toContain(`cannot listen on 127.0.0.1:${port}`)
      // The first listener answers every connection (the second, had it bound, would answer some 404).
      for (let i = 0; i < 16; i++) expect((await fetch(`http://127.0.0.1:${port}/ping`)).status).toBe(200)
    } finally {
      await Effect.runPromise(Scope.close(held, Exit.void))
    }
  })
})
