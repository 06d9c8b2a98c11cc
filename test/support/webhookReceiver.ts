/**
 * Test support: a webhook receiver on 127.0.0.1 (plain HTTP, or HTTPS with a given certificate)
 * that keeps every request it gets (raw body bytes included) and answers what the test scripts:
 * a status, a status with headers, or `hang` (never answer). Also a manual `Clock` for driving the
 * delivery worker's time by hand.
 */
import { Clock, Duration, Effect } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { eventually } from "./eventually.js"

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
  /** TLS server name the client sent (HTTPS receivers). */
  readonly servername: string | undefined
  readonly remoteAddress: string | undefined
}

export type ReceiverAnswer = number | "hang" | { readonly status: number; readonly headers: Readonly<Record<string, string>> }

export interface Receiver {
  readonly port: number
  readonly url: string
  readonly requests: ReadonlyArray<ReceivedRequest>
  /** Requests being handled right now (answered or not), and the most seen at once. */
  readonly inFlight: () => number
  readonly maxInFlight: () => number
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs` (real time). */
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<void>
  readonly close: () => Promise<void>
}

export const startReceiver = (
  answer: (req: ReceivedRequest, index: number) => ReceiverAnswer,
  options: { readonly tls?: { readonly cert: string; readonly key: string }; readonly answerDelayMs?: number } = {}
): Promise<Receiver> =>
  new Promise((resolve, reject) => {
    const requests: ReceivedRequest[] = []
    const waiters = new Set<() => void>()
    let inFlight = 0
    let maxInFlight = 0
    const sockets = new Set<import("node:net").Socket>()
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      const chunks: Buffer[] = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const tlsSocket = req.socket as import("node:tls").TLSSocket
        const received: ReceivedRequest = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(chunks),
          servername: typeof tlsSocket.servername === "string" ? tlsSocket.servername : undefined,
          remoteAddress: req.socket.remoteAddress
        }
        const index = requests.length
        requests.push(received)
        for (const w of waiters) w()
        const a = answer(received, index)
        if (a === "hang") return
        const reply = () => {
          inFlight--
          if (typeof a === "number") res.writeHead(a, { "content-type": "text/plain" }).end("ok")
          else res.writeHead(a.status, a.headers).end()
        }
        if (options.answerDelayMs !== undefined) setTimeout(reply, options.answerDelayMs)
        else reply()
      })
    }
    const server = options.tls !== undefined ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler)
    server.on("connection", (s) => {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        port,
        url: `${options.tls !== undefined ? "https" : "http"}://127.0.0.1:${port}`,
        requests,
        inFlight: () => inFlight,
        maxInFlight: () => maxInFlight,
        waitFor: (count, timeoutMs = 10_000) =>
          new Promise<void>((ok, fail) => {
            if (requests.length >= count) return ok()
            const timer = setTimeout(() => {
              waiters.delete(check)
              fail(new Error(`receiver: ${requests.length} of ${count} requests after ${timeoutMs} ms`))
            }, timeoutMs)
            const check = () => {
              if (requests.length >= count) {
                clearTimeout(timer)
                waiters.delete(check)
                ok()
              }
            }
            waiters.add(check)
          }),
        close: () =>
          new Promise<void>((ok) => {
            for (const s of sockets) s.destroy()
            server.close(() => ok())
          })
      })
    })
  })

/**
 * A `Clock` whose time moves only when the test sets it. `sleep` ignores the duration and yields
 * for a couple of real milliseconds (so a polling loop keeps polling), counting each call: a test
 * that waits for the count to grow by two knows a whole poll ran after its last time change.
 */
export class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  sleeps = 0
  constructor(public nowMs: number) {}
  unsafeCurrentTimeMillis(): number {
    return this.nowMs
  }
  get currentTimeMillis(): Effect.Effect<number> {
    return Effect.sync(() => this.nowMs)
  }
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.nowMs) * 1_000_000n
  }
  get currentTimeNanos(): Effect.Effect<bigint> {
    return Effect.sync(() => this.unsafeCurrentTimeNanos())
  }
  sleep(_duration: Duration.Duration): Effect.Effect<void> {
    return Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          this.sleeps++
          setTimeout(resolve, 2)
        })
    )
  }
  /** Resolves once `polls` more sleeps have started (real-time deadline). */
  async polls(polls: number, timeoutMs = 10_000): Promise<void> {
    const target = this.sleeps + polls
    await eventually(() => this.sleeps >= target, { what: `the worker to poll ${polls} times`, deadlineMs: timeoutMs, intervalMs: 2 })
  }
}
