/**
 * The stream's pub/sub fan-out over a real uWS app and real `ws` clients: one topic per distinct
 * (plan, filter), both ways of publishing (`app.publish` when the stream is given the app, and
 * through an open socket when it is not, including when that socket goes away), per-plan
 * projection across topics, the slow-client bound when uWS writes the sockets itself, and bursts
 * (one hub batch) as raw subscribers read them: order, uWS's per-socket queue bound, a socket gone mid-burst.
 * Auth here is a table of bearer tokens (the real data bearer is covered in
 * test/integration/data.stream.test.ts).
 */
import * as uWS from "uws-pack"
import { Deferred, Effect, Exit, Runtime, Scope } from "effect"
import { createRequire } from "node:module"
import * as net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { buildSignal, type Pattern, type Signal } from "../../src/domain/Signal.js"
import type { ChainId } from "../../ingest/ChainEvent.js"
import { SignalHub } from "../../src/services/signals/SignalHub.js"
import type { AgentKey } from "../../src/services/keys/KeyRepository.js"
import { seedTrackingData } from "../../src/services/tracking/Seed.js"
import { make as makeTracking, type PlanId } from "../../src/services/tracking/Tracking.js"
import type { DataPrincipal } from "../auth/DataBearerAuth.js"
import {
  CLOSE_GOING_AWAY,
  CLOSE_SLOW_CLIENT,
  CLOSE_TOO_MANY_STREAMS,
  makeSignalStream,
  parseStreamFilter,
  type SignalStream,
  type SignalStreamOptions,
  type SignalStreamStats,
  STREAM_PATH,
  type StreamFilter,
  topicOf
} from "./SignalStream.js"
import { eventually } from "../../test/support/eventually.js"
import { json } from "../Http.js"
import type { RouteDef } from "../Router.js"
import { startThreadedStream, type ThreadedStreamStats } from "./ThreadedStream.js"

interface WsClient {
  on(event: "message", f: (data: Buffer) => void): void
  on(event: "close", f: (code: number, reason: Buffer) => void): void
  on(event: "open", f: () => void): void
  on(event: "error", f: (e: Error) => void): void
  close(): void
  pause(): void
  resume(): void
}
const WebSocket = createRequire(import.meta.url)("ws") as new (url: string, options: { headers: Record<string, string> }) => WsClient

const tracking = makeTracking(seedTrackingData())
const insider = seedTrackingData().wallets.find((w) => w.id === "sol_dev7")! // grp_insiders: visible on Max only

const principal = (accountId: string, tier: PlanId): DataPrincipal => ({ accountId, tier, key: { id: `key_${accountId}`, accountId } as AgentKey })
const TOKENS: Record<string, DataPrincipal> = {
  "Bearer free-a": principal("acct_free_a", "free"),
  "Bearer free-b": principal("acct_free_b", "free"),
  "Bearer max-a": principal("acct_max_a", "max")
}

interface Served {
  readonly url: string
  readonly hub: SignalHub
  readonly stream: Pick<SignalStream, "stats" | "close">
  readonly close: () => void | Promise<void>
}

const running: Array<Served> = []
afterEach(async () => {
  for (const s of running.splice(0)) await s.close()
})

const listenOn = (app: uWS.TemplatedApp) =>
  new Promise<uWS.us_listen_socket>((resolve, reject) => app.listen("127.0.0.1", 0, (s) => (s === false ? reject(new Error("cannot listen")) : resolve(s))))

/** A uWS app with only the stream mounted; `withApp` hands the app to the stream (its `app.publish` path). */
const serve = async (
  withApp: boolean,
  options: Partial<SignalStreamOptions> = {},
  authenticate: (headers: Readonly<Record<string, string>>) => Effect.Effect<DataPrincipal | undefined> = (headers) =>
    Effect.succeed(TOKENS[headers.authorization ?? ""])
): Promise<Served> => {
  const hub = new SignalHub({ capacity: 1_000 })
  const app = uWS.App()
  const stream = makeSignalStream(
    {
      hub,
      tracking,
      authenticate,
      runtime: Runtime.defaultRuntime,
      ...(withApp ? { app } : {})
    },
    options
  )
  app.ws(STREAM_PATH, stream.behavior)
  const socket = await listenOn(app)
  const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket)
  const served: Served = {
    url: `ws://127.0.0.1:${port}${STREAM_PATH}`,
    hub,
    stream,
    close: () => {
      uWS.us_listen_socket_close(socket)
      stream.close()
      app.close()
    }
  }
  running.push(served)
  return served
}

const connect = (served: Served, token: string, query = "") => {
  const ws = new WebSocket(`${served.url}${query}`, { headers: { authorization: `Bearer ${token}` } })
  const messages: Array<{ type: string; signals?: Array<Signal>; signal?: Signal }> = []
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })))
  const opened = new Promise<void>((resolve, reject) => {
    ws.on("open", resolve)
    ws.on("error", reject)
  })
  ws.on("message", (d) => messages.push(JSON.parse(d.toString())))
  return { ws, messages, closed, opened }
}

let seq = 0
const sig = (o: { pattern?: Pattern; chain?: ChainId; confidence?: number; insider?: boolean; details?: Signal["details"] } = {}): Signal => {
  seq++
  const wallets = o.insider === true ? [insider] : []
  return buildSignal({
    pattern: o.pattern ?? "large_move",
    chain: o.chain ?? "solana",
    asset: `Mint${seq}`,
    symbol: `S${seq}`,
    direction: "in",
    wallets: wallets.map((w) => w.address),
    walletIds: wallets.map((w) => w.id),
    groups: wallets.flatMap((w) => w.groups),
    sizeUsdMicros: 1_500_000_000n,
    mcapUsdMicros: 50_000_000_000n,
    createdAtMs: 1_735_689_600_000,
    venue: "svc-curve",
    confidence: o.confidence ?? 80,
    atMs: 1_735_689_600_000 + seq * 1000,
    position: `s:${String(seq).padStart(20, "0")}`,
    triggerIds: [`t${seq}`],
    details: o.details ?? { n: seq }
  })
}

const filter = (query: string): StreamFilter => {
  const f = parseStreamFilter(query)
  if (!("chain" in f)) throw new Error(`bad query ${query}`)
  return f
}

describe("the upgrade", () => {
  it("answers a WebSocket version other than 13 with 426 and the version it speaks, before any auth; 13 upgrades", async () => {
    const served = await serve(true)
    const { port } = new URL(served.url.replace("ws:", "http:"))
    const head = (version: string) =>
      new Promise<string>((resolve) => {
        let got = ""
        const socket = net.connect(Number(port), "127.0.0.1", () =>
          socket.write(
            `GET ${STREAM_PATH} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer free-a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: ${version}\r\n\r\n`
          )
        )
        socket.on("data", (c) => {
          got += c.toString()
          if (got.includes("\r\n\r\n")) {
            socket.destroy()
            resolve(got)
          }
        })
        socket.on("close", () => resolve(got))
      })
    for (const version of ["8", "12", "14", ""]) {
      const answer = await head(version)
      expect(answer.split("\r\n")[0], version).toBe("HTTP/1.1 426 Upgrade Required")
      expect(answer).toMatch(/\r\nSec-WebSocket-Version: 13\r\n/)
    }
    expect((await head("13")).split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols")
  })

  it("an upgrade whose auth finishes while uWS parses another connection's upgrade request leaves both sockets whole", async () => {
    // A's auth waits on a gate that B's auth opens. B's auth runs in the microtasks uWS drains inside its parse of B's
    // request, so A's auth completes there too: the case a loaded machine produced (one socket cut without a close frame).
    const gate = Effect.runSync(Deferred.make<DataPrincipal>())
    let gatedAsked = false
    const served = await serve(true, {}, (headers) => {
      if (headers.authorization === "Bearer gated") {
        gatedAsked = true
        return Deferred.await(gate)
      }
      if (headers.authorization === "Bearer opener") {
        return Effect.zipRight(Deferred.succeed(gate, principal("acct_gated", "free")), Effect.as(Effect.sleep("30 millis"), principal("acct_opener", "free")))
      }
      return Effect.succeed(undefined)
    })
    const gated = connect(served, "gated")
    await eventually(() => (gatedAsked ? true : undefined), { what: "A's request parsed, its auth waiting", deadlineMs: 5_000, intervalMs: 2 })
    const opener = connect(served, "opener")
    await Promise.all([gated.opened, opener.opened])
    await eventually(() => gated.messages.length >= 1 && opener.messages.length >= 1, { what: "both snapshots", deadlineMs: 5_000, intervalMs: 5 })
    await eventually(() => (served.stream.stats().open === 2 ? true : undefined), {
      what: "the server to count both",
      deadlineMs: 5_000,
      intervalMs: 5,
      detail: () => JSON.stringify(served.stream.stats())
    })
    const s = sig()
    served.hub.publish([s])
    await eventually(() => gated.messages.length >= 2 && opener.messages.length >= 2, { what: "the signal on both", deadlineMs: 5_000, intervalMs: 5 })
    expect([gated.messages[1]!.signal!.id, opener.messages[1]!.signal!.id]).toEqual([s.id, s.id])
    gated.ws.close()
    opener.ws.close()
    expect([(await gated.closed).code, (await opener.closed).code]).toEqual([1005, 1005])
  })
})

describe("topicOf", () => {
  it("one topic per (plan, filter), whatever order or repeats the query used", () => {
    expect(topicOf("free", filter("event_kind=deployer,large_move"))).toBe(topicOf("free", filter("event_kind=large_move,deployer,large_move")))
    expect(topicOf("free", filter(""))).toBe(topicOf("free", filter("chain=solana&quality=curated")))
    // Different plan, chain, kinds or quality: different topics.
    const all = new Set(
      [topicOf("free", filter("")), topicOf("pro", filter("")), topicOf("free", filter("chain=hood")), topicOf("free", filter("event_kind=large_move")), topicOf("free", filter("quality=all")), topicOf("free", filter("quality=high"))]
    )
    expect(all.size).toBe(6)
  })
})

/** How a case checks the stream's counters: at once (one thread), or once the threads' reports arrived. */
type Check = (served: Served, want: Partial<SignalStreamStats>) => void | Promise<void>
const checkNow: Check = (served, want) => {
  expect(served.stream.stats()).toMatchObject(want)
}

/** A paused client is dropped with 4013 after a prefix of the stream; `opened` runs once both clients have their snapshots. */
const slowClientDropped = async (served: Served, check: Check, opened?: (served: Served) => Promise<void>) => {
    const slow = connect(served, "free-a")
    const healthy = connect(served, "free-b")
    await Promise.all([slow.opened, healthy.opened])
    await eventually(() => slow.messages.length >= 1 && healthy.messages.length >= 1, { what: "snapshots", deadlineMs: 5_000, intervalMs: 5 })
    await opened?.(served)
    slow.ws.pause()
    const filler = Array.from({ length: 100 }, (_, i) => `padding-${i}-${"x".repeat(40)}`)
    let published = 0
    while (served.stream.stats().droppedSlow === 0 && published < 20_000) {
      served.hub.publish([sig({ details: { filler } })])
      published++
      if (published % 100 === 0) await new Promise((r) => setTimeout(r, 5)) // lets uWS write and the kernel buffers fill
    }
    await check(served, { droppedSlow: 1, open: 1, topics: 1 })
    const after = sig()
    served.hub.publish([after])
    published++
    await eventually(() => healthy.messages.length >= 1 + published, { what: "the healthy client's signals", deadlineMs: 20_000, intervalMs: 5 })
    expect(healthy.messages.at(-1)!.signal!.id).toBe(after.id)
    slow.ws.resume()
    const closed = await slow.closed
    expect(closed.code).toBe(CLOSE_SLOW_CLIENT)
    expect(closed.reason).toContain("slow client")
    const got = slow.messages.slice(1).map((m) => m.signal!.id)
    expect(got.length).toBeLessThan(published)
    expect(got).toEqual(healthy.messages.slice(1, 1 + got.length).map((m) => m.signal!.id))
    healthy.ws.close()
    await healthy.closed
}

/** One hub batch past half of uWS's headroom: the paused client is closed with 4013 before anything is skipped. */
const bigBatchChecked = async (served: Served, check: Check) => {
    const slow = connect(served, "free-a")
    await slow.opened
    await eventually(() => slow.messages.length >= 1, { what: "snapshot", deadlineMs: 5_000, intervalMs: 5 })
    slow.ws.pause()
    // ~24 MiB in one hub batch (past uWS's ceiling of maxBufferedBytes + 16 MiB if nothing checked in between).
    const filler = ["y".repeat(8 * 1024)]
    const batch = Array.from({ length: 3_000 }, () => sig({ details: { filler } }))
    served.hub.publish(batch)
    await check(served, { droppedSlow: 1 })
    slow.ws.resume()
    const closed = await slow.closed
    expect(closed.code).toBe(CLOSE_SLOW_CLIENT)
    const got = slow.messages.slice(1).map((m) => m.signal!.id)
    expect(got).toEqual(batch.slice(0, got.length).map((s) => s.id))
}

describe.each([
  ["app.publish", true],
  ["publishing through an open socket", false]
] as const)("fan-out by topic (%s)", (_name, withApp) => {
  it("sockets with the same plan and filter share a topic; each gets its snapshot, then its signals once and in order, projected for its plan", async () => {
    const served = await serve(withApp)
    const before = [sig(), sig({ chain: "hood" })]
    served.hub.publish(before)
    const a = connect(served, "free-a")
    const b = connect(served, "free-b", "?event_kind=large_move,dormancy")
    const c = connect(served, "free-b", "?event_kind=dormancy,large_move&quality=curated") // the same filter as b, written differently
    const max = connect(served, "max-a")
    const hood = connect(served, "free-a", "?chain=hood")
    const clients = [a, b, c, max, hood]
    await Promise.all(clients.map((x) => x.opened))
    await eventually(() => clients.every((x) => x.messages.length >= 1), { what: "snapshots", deadlineMs: 5_000, intervalMs: 5 })
    expect(served.stream.stats()).toMatchObject({ open: 5, topics: 4 })
    expect(a.messages[0]!.signals!.map((s) => s.id)).toEqual([before[0]!.id])
    expect(hood.messages[0]!.signals!.map((s) => s.id)).toEqual([before[1]!.id])

    const live = [sig({ insider: true }), sig({ pattern: "deployer" }), sig({ chain: "hood" }), sig({ confidence: 5 }), sig({ pattern: "dormancy" })]
    for (const s of live) served.hub.publish([s])
    const expected = (x: (typeof clients)[number], ids: ReadonlyArray<Signal>) =>
      eventually(() => x.messages.length >= 1 + ids.length, { what: "live signals", deadlineMs: 5_000, intervalMs: 5 }).then(() => expect(x.messages.slice(1).map((m) => m.signal!.id)).toEqual(ids.map((s) => s.id)))
    await expected(a, [live[0]!, live[1]!, live[4]!])
    await expected(b, [live[0]!, live[4]!])
    await expected(c, [live[0]!, live[4]!])
    await expected(max, [live[0]!, live[1]!, live[4]!])
    await expected(hood, [live[2]!])
    // The Max socket sees the insider group; a Free socket gets the same signal without it.
    expect(max.messages[1]!.signal!.groups).toEqual(["grp_insiders"])
    expect(a.messages[1]!.signal!.groups).toEqual([])
    expect(a.messages[1]!.signal!.wallets).toEqual([insider.address])

    // Closing sockets (the first opened too, which the socket path publishes through) leaves the rest served; an emptied topic goes.
    a.ws.close()
    b.ws.close()
    await Promise.all([a.closed, b.closed])
    expect(served.stream.stats()).toMatchObject({ open: 3, topics: 3 })
    hood.ws.close()
    await hood.closed
    expect(served.stream.stats()).toMatchObject({ open: 2, topics: 2 })
    const later = sig({ pattern: "dormancy" })
    served.hub.publish([later])
    await expected(c, [live[0]!, live[4]!, later])
    await expected(max, [live[0]!, live[1]!, live[4]!, later])
    for (const x of [c, max]) x.ws.close()
    await Promise.all([c.closed, max.closed])
    expect(served.stream.stats()).toMatchObject({ open: 0, topics: 0 })
  })

  it("drops a client that stops reading (4013): it has had a prefix of the stream, never a gap, and the others go on", async () => {
    await slowClientDropped(await serve(withApp, { maxBufferedBytes: 64 * 1024 }), checkNow)
  }, 60_000)

  it("a batch larger than half of uWS's headroom is checked before it is all queued: the paused client is closed with 4013, never skipped", async () => {
    await bigBatchChecked(await serve(withApp, { maxBufferedBytes: 64 * 1024 }), checkNow)
  }, 60_000)
})

/** A data route read on the stream threads and answered on the main thread. */
const whoami: RouteDef = {
  method: "GET",
  path: "/v1/whoami/{name}",
  operationId: "whoami",
  summary: "test route",
  tags: [],
  auth: "bearer",
  headers: ["authorization"],
  responses: {},
  handler: (req) =>
    TOKENS[req.headers.authorization ?? ""] === undefined
      ? json(401, { error: "invalid api key" })
      : json(200, { name: req.params[0], account: TOKENS[req.headers.authorization!]!.accountId, query: req.query })
}

/** The listener hands every connection to one of `threads` stream threads (`ThreadedStream.ts`). */
const serveThreaded = async (threads: number, options: Partial<SignalStreamOptions> = {}) => {
  const hub = new SignalHub({ capacity: 1_000 })
  const app = uWS.App()
  const scope = Effect.runSync(Scope.make())
  const stream = await Effect.runPromise(
    Scope.extend(
      startThreadedStream(
        { hub, tracking, authenticate: (headers) => Effect.succeed(TOKENS[headers.authorization ?? ""]), runtime: Runtime.defaultRuntime },
        { app, threads, routes: [whoami], maxBodyBytes: 1024, options }
      ),
      scope
    )
  )
  const socket = await listenOn(app)
  const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket)
  const served = {
    url: `ws://127.0.0.1:${port}${STREAM_PATH}`,
    http: `http://127.0.0.1:${port}`,
    hub,
    stream: stream as { stats: () => ThreadedStreamStats; close: () => void },
    close: async () => {
      uWS.us_listen_socket_close(socket)
      stream.close()
      app.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
  running.push(served)
  return served
}

const statsReach = (served: { stream: { stats: () => SignalStreamStats } }, want: Partial<ThreadedStreamStats>): Promise<void> =>
  eventually(() => (Object.entries(want).every(([k, v]) => JSON.stringify((served.stream.stats() as Partial<ThreadedStreamStats>)[k as keyof ThreadedStreamStats]) === JSON.stringify(v)) ? true : undefined), {
    what: `stats ${JSON.stringify(want)}`,
    deadlineMs: 10_000,
    intervalMs: 5,
    detail: () => JSON.stringify(served.stream.stats())
  }).then(() => undefined)

const checkEventually: Check = statsReach

describe("served from two threads (DATA_STREAM_THREADS=2)", () => {
  it("spreads sockets over both threads; each gets its snapshot, then its signals once and in order, projected for its plan; the data routes answer on the same port", async () => {
    const served = await serveThreaded(2)
    const before = [sig(), sig({ chain: "hood" })]
    served.hub.publish(before)
    const clients = [connect(served, "free-a"), connect(served, "free-b"), connect(served, "max-a"), connect(served, "free-a", "?chain=hood")]
    await Promise.all(clients.map((x) => x.opened))
    await eventually(() => clients.every((x) => x.messages.length >= 1), { what: "snapshots", deadlineMs: 5_000, intervalMs: 5 })
    await statsReach(served, { open: 4, topics: 3, openByThread: [2, 2] })
    expect(clients[0]!.messages[0]!.signals!.map((s) => s.id)).toEqual([before[0]!.id])
    expect(clients[3]!.messages[0]!.signals!.map((s) => s.id)).toEqual([before[1]!.id])

    const live = [sig({ insider: true }), sig({ chain: "hood" }), sig({ confidence: 5 }), sig({ pattern: "dormancy" })]
    for (const s of live) served.hub.publish([s])
    const expected = async (x: (typeof clients)[number], ids: ReadonlyArray<Signal>) => {
      await eventually(() => x.messages.length >= 1 + ids.length, { what: "live signals", deadlineMs: 5_000, intervalMs: 5 })
      expect(x.messages.slice(1).map((m) => m.signal!.id)).toEqual(ids.map((s) => s.id))
    }
    await expected(clients[0]!, [live[0]!, live[3]!])
    await expected(clients[1]!, [live[0]!, live[3]!])
    await expected(clients[2]!, [live[0]!, live[3]!])
    await expected(clients[3]!, [live[1]!])
    expect(clients[2]!.messages[1]!.signal!.groups).toEqual(["grp_insiders"])
    expect(clients[0]!.messages[1]!.signal!.groups).toEqual([])

    // HTTP on the same port, on whichever thread the connection lands: the route's handler runs on the main thread.
    const answers = await Promise.all(
      [0, 1].map(() => fetch(`${served.http}/v1/whoami/a%20b?x=1`, { headers: { authorization: "Bearer max-a", connection: "close" } }).then(async (r) => [r.status, await r.json()]))
    )
    expect(answers).toEqual([0, 1].map(() => [200, { name: "a b", account: "acct_max_a", query: "x=1" }]))
    const missing = await fetch(`${served.http}/v1/nothing`, { headers: { connection: "close" } })
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, "ROUTE_NOT_FOUND"])

    for (const x of clients) x.ws.close()
    await Promise.all(clients.map((x) => x.closed))
    await statsReach(served, { open: 0, topics: 0, openByThread: [0, 0] })
  })

  it("8 open sockets per account across both threads: the 9th is closed with 4029; closing one makes room", async () => {
    const served = await serveThreaded(2)
    const eight = Array.from({ length: 8 }, () => connect(served, "free-a"))
    await Promise.all(eight.map((c) => c.opened))
    await eventually(() => eight.every((c) => c.messages.length >= 1), { what: "eight snapshots", deadlineMs: 5_000, intervalMs: 5 })
    await statsReach(served, { open: 8, openByThread: [4, 4] })
    const ninth = connect(served, "free-a")
    expect(await ninth.closed).toEqual({ code: CLOSE_TOO_MANY_STREAMS, reason: "too many open streams: at most 8 per account" })
    expect(ninth.messages).toEqual([])
    expect(served.stream.stats()).toMatchObject({ open: 8, refusedTooMany: 1 })
    // Nine at once, on both threads: exactly eight more fit after the first eight close.
    for (const c of eight) c.ws.close()
    await Promise.all(eight.map((c) => c.closed))
    await statsReach(served, { open: 0 })
    const nine = Array.from({ length: 9 }, () => connect(served, "free-a"))
    const outcomes = await Promise.all(
      nine.map((c) => Promise.race([c.closed.then((x) => x.code), eventually(() => (c.messages.length >= 1 ? "open" : undefined), { what: "snapshot", deadlineMs: 5_000, intervalMs: 5 })]))
    )
    expect(outcomes.filter((o) => o === "open")).toHaveLength(8)
    expect(outcomes.filter((o) => o === CLOSE_TOO_MANY_STREAMS)).toHaveLength(1)
    await statsReach(served, { open: 8, refusedTooMany: 2 })
    const open = nine.filter((_, i) => outcomes[i] === "open")
    open[0]!.ws.close()
    await open[0]!.closed
    const again = connect(served, "free-a")
    await eventually(() => (again.messages.length >= 1 ? true : undefined), { what: "a socket after one closed", deadlineMs: 5_000, intervalMs: 5 })
    for (const c of [...open.slice(1), again]) c.ws.close()
    await Promise.all([...open.slice(1), again].map((c) => c.closed))
    await statsReach(served, { open: 0, topics: 0 })
  })

  it("drops a client that stops reading (4013) on its thread: it has had a prefix of the stream, never a gap, and the others go on", async () => {
    const served = await serveThreaded(2, { maxBufferedBytes: 64 * 1024 })
    await slowClientDropped(served, checkEventually, () => statsReach(served, { openByThread: [1, 1] }))
  }, 60_000)

  it("a batch larger than half of uWS's headroom is checked on the socket's thread: the paused client is closed with 4013, never skipped", async () => {
    await bigBatchChecked(await serveThreaded(2, { maxBufferedBytes: 64 * 1024 }), checkEventually)
  }, 60_000)

  it("shuts down cleanly: every socket closed with 1001, the threads gone", async () => {
    const served = await serveThreaded(2)
    const clients = [connect(served, "free-a"), connect(served, "free-b"), connect(served, "max-a")]
    await eventually(() => clients.every((x) => x.messages.length >= 1), { what: "snapshots", deadlineMs: 5_000, intervalMs: 5 })
    running.splice(running.indexOf(served), 1)
    await served.close()
    expect((await Promise.all(clients.map((x) => x.closed))).map((x) => x.code)).toEqual([CLOSE_GOING_AWAY, CLOSE_GOING_AWAY, CLOSE_GOING_AWAY])
  })
})

/**
 * A raw subscriber: a TCP socket doing the upgrade and reading the server's frames itself, so every
 * frame of a burst is seen as it came on the wire (one signal per text frame) and any close frame is kept.
 */
const connectRaw = (served: { readonly url: string }, token: string) => {
  const url = new URL(served.url)
  const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true })
  const reads: Array<Array<string>> = []
  const closes: Array<number> = []
  let snapshot = false
  let upgraded = false
  let buffer = Buffer.alloc(0)
  const opened = new Promise<void>((resolve, reject) => {
    socket.on("error", reject)
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      if (!upgraded) {
        const end = buffer.indexOf("\r\n\r\n")
        if (end === -1) return
        const status = buffer.toString("latin1", 0, buffer.indexOf("\r\n"))
        if (status !== "HTTP/1.1 101 Switching Protocols") return reject(new Error(`upgrade refused: ${status}`))
        upgraded = true
        buffer = buffer.subarray(end + 4)
      }
      const signals: Array<string> = []
      while (buffer.length >= 2) {
        let len = buffer[1]! & 0x7f
        let head = 2
        if (len === 126) {
          if (buffer.length < 4) break
          len = buffer.readUInt16BE(2)
          head = 4
        } else if (len === 127) {
          if (buffer.length < 10) break
          len = Number(buffer.readBigUInt64BE(2))
          head = 10
        }
        if (buffer.length < head + len) break
        const opcode = buffer[0]! & 0x0f
        const payload = buffer.subarray(head, head + len)
        buffer = buffer.subarray(head + len)
        if (opcode === 8) closes.push(len >= 2 ? payload.readUInt16BE(0) : 1005)
        if (opcode !== 1) continue
        const m = JSON.parse(payload.toString("utf8")) as { type: string; signal?: Signal }
        if (m.type === "snapshot") {
          snapshot = true
          resolve()
        } else signals.push(m.signal!.id)
      }
      if (snapshot && signals.length > 0) reads.push(signals)
    })
  })
  socket.on("connect", () =>
    socket.write(
      `GET ${STREAM_PATH} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${Buffer.from("0123456789abcdef").toString("base64")}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`
    )
  )
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()))
  return { socket, reads, closes, opened, closed, signals: () => reads.flat() }
}

const receivedAll = (clients: ReadonlyArray<ReturnType<typeof connectRaw>>, n: number) =>
  eventually(() => clients.every((x) => x.signals().length >= n), {
    what: `${n} signals on every raw subscriber`,
    deadlineMs: 10_000,
    intervalMs: 5,
    detail: () => clients.map((x) => x.signals().length).join(", ")
  })

describe.each([
  ["one thread (app.publish)", () => serve(true)],
  ["two threads", () => serveThreaded(2)]
] as const)("bursts: the signals of one hub batch, on %s", (_name, start) => {
  it("reach every socket of every topic once each, in the hub's order, frame by frame (one message per signal, as the spec's stream sends)", async () => {
    const served = await start()
    const clients = [connectRaw(served, "free-a"), connectRaw(served, "free-b"), connectRaw(served, "max-a")]
    await Promise.all(clients.map((x) => x.opened))
    await statsReach(served, { open: 3, topics: 2 })
    const burst = Array.from({ length: 10 }, () => sig())
    served.hub.publish(burst)
    await receivedAll(clients, 10)
    for (const x of clients) expect(x.signals()).toEqual(burst.map((s) => s.id))
    for (const x of clients) x.socket.destroy()
    await statsReach(served, { open: 0, topics: 0 })
  })

  it("a burst past uWS's bound of 32 messages queued per socket is written early, not dropped: every socket gets all of it, in order", async () => {
    const served = await start()
    const clients = [connectRaw(served, "free-a"), connectRaw(served, "max-a")]
    await Promise.all(clients.map((x) => x.opened))
    await statsReach(served, { open: 2 })
    const burst = Array.from({ length: 100 }, () => sig())
    served.hub.publish(burst)
    await receivedAll(clients, 100)
    for (const x of clients) {
      expect(x.signals()).toEqual(burst.map((s) => s.id))
      expect(x.closes).toEqual([])
    }
    for (const x of clients) x.socket.destroy()
    await statsReach(served, { open: 0, topics: 0 })
  })

  it("a socket closing mid-burst: the others get the whole burst in order, the closed one is released (its account can reopen), later bursts go on", async () => {
    const served = await start()
    const clients = [connectRaw(served, "free-a"), connectRaw(served, "free-b"), connectRaw(served, "max-a")]
    await Promise.all(clients.map((x) => x.opened))
    await statsReach(served, { open: 3, topics: 2 })
    const first = Array.from({ length: 5 }, () => sig())
    const second = Array.from({ length: 5 }, () => sig())
    // In one tick: half a burst is queued to every socket, one subscriber goes away, the rest of the burst follows.
    served.hub.publish(first)
    clients[1]!.socket.destroy()
    served.hub.publish(second)
    const rest = [clients[0]!, clients[2]!]
    await receivedAll(rest, 10)
    for (const x of rest) expect(x.signals()).toEqual([...first, ...second].map((s) => s.id))
    await statsReach(served, { open: 2, topics: 2 })
    const again = connectRaw(served, "free-b")
    await again.opened
    await statsReach(served, { open: 3, topics: 2 })
    const later = Array.from({ length: 3 }, () => sig())
    served.hub.publish(later)
    // The earlier subscribers already hold 10, so each is waited on for its own total, not for "at least 3".
    await receivedAll(rest, 13)
    await receivedAll([again], 3)
    for (const x of rest) expect(x.signals()).toEqual([...first, ...second, ...later].map((s) => s.id))
    expect(again.signals()).toEqual(later.map((s) => s.id))
    for (const x of [...rest, again]) x.socket.destroy()
    await statsReach(served, { open: 0, topics: 0 })
  })
})
