/**
 * The client behind trusted proxies over real HTTP (uWS), on both listeners: the main API's
 * `serve` and the data service's `serveData` (one thread, and two stream threads, whose apps
 * resolve the client themselves). Each server mounts a route that answers the address its handler
 * sees and a credentialed route that always refuses (401), which the failed-authentication
 * throttle counts per client (30 a minute, then 429). The test client connects from 127.0.0.1.
 */
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedTrackingData } from "../src/services/tracking/Seed.js"
import { make as makeTracking } from "../src/services/tracking/Tracking.js"
import { SignalHub } from "../src/services/signals/SignalHub.js"
import { parseProxyTrust, type ProxyTrust } from "../src/net/ProxyTrust.js"
import { DefaultFailedAuthLimits } from "./auth/FailedAuthThrottle.js"
import { serveData } from "./data/DataServer.js"
import { json } from "./Http.js"
import type { RouteDef } from "./Router.js"
import { serve } from "./Server.js"
import { behindProxies } from "./ClientAddress.js"
import * as uWS from "uws-pack"

const trustOf = (text: string): ProxyTrust => {
  const parsed = parseProxyTrust(text)
  if ("error" in parsed) throw new Error(parsed.error)
  return parsed.trust
}

const routes = (prefix: string): ReadonlyArray<RouteDef> => [
  {
    method: "GET", path: `${prefix}/whoami`, operationId: "whoami", summary: "", tags: [], auth: "public",
    responses: {}, handler: (req) => json(200, { address: req.remoteAddress })
  },
  {
    method: "GET", path: `${prefix}/secured`, operationId: "secured", summary: "", tags: [], auth: "agentKey",
    responses: {}, handler: () => json(401, { success: false, error: { code: "UNAUTHORIZED", message: "no" } })
  }
]

interface Listener {
  readonly url: string
  readonly port: number
  readonly prefix: string
}

let scope: Scope.CloseableScope
const listeners: Record<string, Listener> = {}

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const run = <A, E>(e: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(e.pipe(Scope.extend(scope), Logger.withMinimumLogLevel(LogLevel.Error)))
  const api = (name: string, trust: string) =>
    run(serve({ name, host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: routes("/api"), trustedProxies: trustOf(trust) })).then((s) => ({
      url: s.url,
      port: s.port,
      prefix: "/api"
    }))
  listeners.untrusted = await api("untrusted", "10.0.0.0/8,::1")
  listeners.trusted = await api("trusted", "127.0.0.1")
  for (const streamThreads of [1, 2]) {
    const s = await run(
      serveData({
        host: "127.0.0.1",
        port: 0,
        maxBodyBytes: 1024,
        routes: routes("/v1"),
        stream: { hub: new SignalHub({ capacity: 10 }), tracking: makeTracking(seedTrackingData()), authenticate: () => Effect.succeed(undefined) },
        streamThreads,
        trustedProxies: trustOf("127.0.0.0/8")
      })
    )
    listeners[`data${streamThreads}`] = { url: s.url, port: s.port, prefix: "/v1" }
  }
}, 120_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const get = async (l: Listener, path: string, forwardedFor?: string) => {
  const res = await fetch(`${l.url}${l.prefix}${path}`, { headers: forwardedFor !== undefined ? { "x-forwarded-for": forwardedFor } : {} })
  return { status: res.status, body: (await res.json()) as { address?: string } }
}
const whoami = async (l: Listener, forwardedFor?: string) => (await get(l, "/whoami", forwardedFor)).body.address
/** Spends a client's whole budget of refused credentials; the next refusal is 429. */
const exhaust = async (l: Listener, forwardedFor?: string) => {
  for (let i = 0; i < DefaultFailedAuthLimits.failuresPerWindow; i++) expect((await get(l, "/secured", forwardedFor)).status).toBe(401)
}

/** The status line a WebSocket upgrade of the data stream gets (a refused bearer is answered over HTTP). */
const upgradeStatus = (l: Listener, forwardedFor: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(l.port, "127.0.0.1", () =>
      socket.write(
        "GET /v1/signals/stream HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer svc_live_bad\r\nX-Forwarded-For: ${forwardedFor}\r\n\r\n`
      )
    )
    let got = ""
    socket.on("data", (chunk) => {
      got += chunk.toString("latin1")
      if (got.includes("\r\n")) {
        socket.destroy()
        resolve(got.split("\r\n")[0]!)
      }
    })
    socket.on("error", reject)
  })

describe("behindProxies", () => {
  it("with no trusted proxy is the app itself: nothing wraps a handler, nothing is read or allocated per request", () => {
    const app = uWS.App()
    expect(behindProxies(app, undefined)).toBe(app)
    expect(behindProxies(app, trustOf(""))).toBe(app)
    expect(behindProxies(app, trustOf("127.0.0.1"))).not.toBe(app)
    app.close()
  })
})

describe("TRUSTED_PROXIES: the client is the first untrusted address in X-Forwarded-For, from the right", () => {
  it("a spoofed X-Forwarded-For from a peer that is not trusted changes nothing: the peer is the client for the throttle", async () => {
    const l = listeners.untrusted!
    expect(await whoami(l, "203.0.113.7")).toBe("127.0.0.1")
    for (let i = 0; i < DefaultFailedAuthLimits.failuresPerWindow; i++) expect((await get(l, "/secured", `198.51.100.${i}`)).status).toBe(401)
    const refused = await get(l, "/secured", "192.0.2.250")
    expect(refused.status).toBe(429)
    expect((await get(l, "/secured")).status).toBe(429)
  })

  for (const name of ["trusted", "data1", "data2"] as const) {
    it(`${name}: two clients behind one trusted proxy are limited apart; a malformed header is the proxy's own client`, async () => {
      const l = listeners[name]!
      expect(await whoami(l, "6.6.6.6, 203.0.113.7")).toBe("203.0.113.7")
      expect(await whoami(l, "2001:db8::7")).toBe("2001:0db8:0000:0000:0000:0000:0000:0007")
      expect(await whoami(l, "not an address")).toBe("127.0.0.1")
      expect(await whoami(l)).toBe("127.0.0.1")

      await exhaust(l, "203.0.113.1")
      expect((await get(l, "/secured", "203.0.113.1")).status).toBe(429)
      // The same client, whatever it claims to the left of the proxy's entry.
      expect((await get(l, "/secured", "10.9.9.9, 203.0.113.1")).status).toBe(429)
      // Another client behind the same proxy keeps its own budget, and so does the proxy itself.
      expect((await get(l, "/secured", "203.0.113.2")).status).toBe(401)
      expect((await get(l, "/secured", "garbage")).status).toBe(401)
      if (name !== "trusted") {
        // The stream's upgrade reads the same client (on the stream threads too).
        expect(await upgradeStatus(l, "203.0.113.1")).toMatch(/^HTTP\/1\.1 429 /)
        expect(await upgradeStatus(l, "203.0.113.3")).toMatch(/^HTTP\/1\.1 401 /)
      }
    })
  }
})
