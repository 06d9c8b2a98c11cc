import { address, isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR } from "@solana/kit"
import * as http from "node:http"
import { inspect } from "node:util"
import type { Socket } from "node:net"
import { createPublicClient, http as viemHttp, RpcRequestError } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeLoopback, listenLoopback } from "../../../test/support/loopbackHttp.js"
import { eventually } from "../../../test/support/eventually.js"
import {
  createNodeSolanaRpc,
  JSON_RPC_MAX_PENDING,
  JSON_RPC_MAX_RESPONSE_BYTES,
  JSON_RPC_MAX_SOCKETS,
  JsonRpcBusy,
  jsonRpcGateCount,
  jsonRpcPending,
  JsonRpcTimeout,
  jsonRpcWaiting,
  InvalidRpcUrl,
  MalformedCredentials,
  nodeFetchForJsonRpc,
  postJson,
  redactUrlCredentials,
  ResponseTooLarge,
  VIEM_MAX_RESPONSE_BYTES
} from "./JsonRpcHttp.js"
import { postJsonRpc } from "../JsonRpcPost.js"

/**
 * A JSON-RPC server whose answer the test sets per request; it records what it received. `chunks`
 * sends the answer in that many writes without a length.
 */
let answer: (body: string, req: http.IncomingMessage) => { status?: number; body: string; delayMs?: number; chunks?: number } = () => ({
  body: "{}"
})
const received: Array<{ body: string; headers: http.IncomingHttpHeaders }> = []
const server = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8")
    received.push({ body, headers: req.headers })
    const a = answer(body, req)
    const send = () => {
      const bytes = Buffer.from(a.body, "utf8")
      res.writeHead(a.status ?? 200, { "content-type": "application/json" })
      if (a.chunks === undefined) return void res.end(bytes)
      const size = Math.ceil(bytes.length / a.chunks)
      for (let at = 0; at < bytes.length; at += size) res.write(bytes.subarray(at, at + size))
      res.end()
    }
    if (a.delayMs === undefined) send()
    else setTimeout(send, a.delayMs)
  })
})
let url = ""

beforeAll(async () => {
  url = await listenLoopback(server)
})
afterAll(async () => {
  await closeLoopback(server)
})

/**
 * A server of its own for the connection tests: it counts connections and requests, and holds
 * every answer until the test answers it (`answerHeld`), so nothing depends on timing. A request
 * whose connection closes before its answer is counted in `closedUnanswered`; closed connections in `connectionsClosed`. With `declare`, it
 * answers at once with the declared `content-length` (and the body given, or one byte of it).
 */
const heldServer = async (declare?: (req: http.IncomingMessage) => { length: number; body?: Buffer }) => {
  const state = {
    connections: 0,
    connectionsClosed: 0,
    requests: [] as Array<{ body: string; headers: http.IncomingHttpHeaders; res: http.ServerResponse }>,
    /** Requests whose head reached the server (counted before their body, so one ended on the wire early counts too). */
    heads: 0,
    /**
     * Connections that closed having carried no request, within 3.5 s of opening (before the
     * server's own close). A connection undici destroys for a dead request closes as it opens; one
     * left idle may be closed by undici's 4 s keep-alive timer on a slow machine, which is not it.
     */
    emptyClosed: 0,
    closedUnanswered: 0,
    url: ""
  }
  const s = http.createServer((req, res) => {
    state.heads++
    carried.add(req.socket)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      state.requests.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers, res })
      res.on("close", () => {
        if (!res.writableFinished) state.closedUnanswered++
      })
      if (declare !== undefined) {
        const d = declare(req)
        res.writeHead(200, { "content-type": "application/json", "content-length": String(d.length) })
        if (d.body !== undefined) res.end(d.body)
        else res.write("{")
      }
    })
  })
  s.keepAliveTimeout = 0
  const carried = new WeakSet<Socket>()
  let closing = false
  s.on("connection", (socket: Socket) => {
    state.connections++
    const openedAt = performance.now()
    socket.on("close", () => {
      state.connectionsClosed++
      if (!closing && !carried.has(socket) && performance.now() - openedAt < 3_500) state.emptyClosed++
    })
  })
  state.url = await listenLoopback(s)
  const answerHeld = (body = "{}") => {
    for (const r of state.requests) if (!r.res.headersSent) r.res.end(body)
  }
  const close = () => {
    closing = true
    return closeLoopback(s)
  }
  return { state, answerHeld, close }
}

const rpcResult = (body: string, result: string): string => `{"jsonrpc":"2.0","id":${JSON.stringify((JSON.parse(body) as { id: unknown }).id)},"result":${result}}`

describe("postJson", () => {
  it("posts the JSON text and reads the whole answer", async () => {
    answer = () => ({ body: '{"ok":true}' })
    const res = await postJson(url, '{"a":1}', { headers: { "x-probe": "1" } })
    expect(res.status).toBe(200)
    expect(res.body).toBe('{"ok":true}')
    const last = received[received.length - 1]!
    expect(last.body).toBe('{"a":1}')
    expect(last.headers["content-type"]).toBe("application/json; charset=utf-8")
    expect(last.headers["x-probe"]).toBe("1")
    expect(last.headers["accept-encoding"]).toBeUndefined()
  })

  it("reads a body of exactly the bound and refuses one byte more", async () => {
    answer = () => ({ body: "x".repeat(1000) })
    expect((await postJson(url, "{}", { maxResponseBytes: 1000 })).body).toHaveLength(1000)
    await expect(postJson(url, "{}", { maxResponseBytes: 999 })).rejects.toBeInstanceOf(ResponseTooLarge)
    await eventually(() => jsonRpcGateCount() === 0, { what: "the permit back", deadlineMs: 20_000, intervalMs: 20 })
  })

  it("settles a call without a signal at its deadline, and one waiting for a socket too", async () => {
    const held = await heldServer()
    try {
      // 64 connections to the origin, all held: the 65th waits for one, and both kinds end at the deadline.
      const calls = Array.from({ length: 70 }, () => postJson(held.state.url, "{}", { deadlineMs: 300 }))
      const outcomes = await Promise.allSettled(calls)
      expect(outcomes.every((o) => o.status === "rejected" && o.reason instanceof JsonRpcTimeout)).toBe(true)
      expect(jsonRpcPending()).toBe(0)
      expect(jsonRpcWaiting()).toBe(0)
      // The origin is usable again at once (the server answers only once it has the request: no race
      // with a closing socket; how many of the 64 reached the server before their deadline depends on the machine's load).
      const next = postJson(held.state.url, '"next"', { deadlineMs: 30_000 })
      await eventually(() => held.state.requests.some((r) => r.body === '"next"'), { what: "the next call at the server", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld('{"ok":1}')
      expect((await next).body).toBe('{"ok":1}')
      // Each call that reached undici ends at most one connection (an in-flight abort), and undici
      // opens at most one again per end: at most the first 64, one per call (70) and one for the next
      // call. (How many of the 6 waiters reach undici before their own deadline depends on the load:
      // this bounds, it does not count; the spread test below is the one a dead request's connection fails.)
      expect(held.state.connections).toBeLessThanOrEqual(JSON_RPC_MAX_SOCKETS + 70 + 1)
    } finally {
      await held.close()
    }
  })

  it(`refuses the call past ${JSON_RPC_MAX_PENDING} unsettled ones at once, and takes calls again as they settle`, async () => {
    const held = await heldServer()
    try {
      const stop = new AbortController()
      const calls = Array.from({ length: JSON_RPC_MAX_PENDING }, () => postJson(held.state.url, "{}", { signal: stop.signal }))
      expect(jsonRpcPending()).toBe(JSON_RPC_MAX_PENDING)
      expect(jsonRpcWaiting()).toBe(JSON_RPC_MAX_PENDING - JSON_RPC_MAX_SOCKETS)
      await expect(postJson(held.state.url, "{}")).rejects.toBeInstanceOf(JsonRpcBusy)
      // All settle at once (one signal, no timing): the 960 waiters leave the list before any permit comes back.
      stop.abort(new Error("stopped"))
      await Promise.allSettled(calls)
      expect(jsonRpcPending()).toBe(0)
      const next = postJson(held.state.url, '"next"', { deadlineMs: 30_000 })
      await eventually(() => held.state.requests.some((r) => r.body === '"next"'), { what: "the next call at the server", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld('{"ok":2}')
      expect((await next).body).toBe('{"ok":2}')
      // Only the 64 with a permit reached undici: at most the first 64, one again per abort and one for the
      // next call. (When a permit went back as the call failed, each waiter took one and died inside
      // undici in turn, a connect each: about 1,000.)
      expect(held.state.connections).toBeLessThanOrEqual(2 * JSON_RPC_MAX_SOCKETS + 1)
    } finally {
      await held.close()
    }
  })

  it("refuses a malformed URL without holding a pending slot, its credentials on neither the message nor the error", async () => {
    await expect(postJson("not a url", "{}")).rejects.toBeInstanceOf(TypeError)
    expect(jsonRpcPending()).toBe(0)
    const e = await postJson("http://u:s3cret@ho st/", "{}").catch((x: unknown) => x)
    expect(e).toBeInstanceOf(TypeError)
    expect(inspect(e)).not.toContain("s3cret")
    let thrown: unknown
    try {
      createNodeSolanaRpc("http://u:s3cret@ho st/")
    } catch (x) {
      thrown = x
    }
    expect(thrown).toBeInstanceOf(TypeError)
    expect(inspect(thrown)).not.toContain("s3cret")
    expect(jsonRpcPending()).toBe(0)
  })

  it("refuses a URL whose user:password does not decode, typed, holding nothing, without the password in the message", async () => {
    const e = await postJson("http://a%zz:s3cret@127.0.0.1:1/", "{}").catch((x: unknown) => x)
    expect(e).toBeInstanceOf(MalformedCredentials)
    expect((e as Error).message).not.toContain("s3cret")
    // Nowhere on the error either (a log line prints the whole object).
    expect(inspect(e)).not.toContain("s3cret")
    expect(JSON.stringify(e)).not.toContain("s3cret")
    expect(jsonRpcPending()).toBe(0)
    expect(jsonRpcGateCount()).toBe(0)
  })

  it("refuses a URL that is not http: or https: (it parses; undici would refuse each call as unreachable), typed, holding nothing, without the password", async () => {
    for (const url of ["wss://u:s3cret@127.0.0.1:1/", "foo://127.0.0.1:1/"]) {
      const e = await postJson(url, "{}").catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidRpcUrl)
      expect((e as Error).message).toContain("is not http: or https:")
      expect(inspect(e)).not.toContain("s3cret")
    }
    expect(jsonRpcPending()).toBe(0)
    expect(jsonRpcGateCount()).toBe(0)
  })

  it("redacts a URL's credentials for messages", () => {
    expect(redactUrlCredentials("http://u:s3cret@host:8899/path?q=1")).toBe("http://***@host:8899/path?q=1")
    expect(redactUrlCredentials("https://key@host/")).toBe("https://***@host/")
    expect(redactUrlCredentials("http://host/a@b")).toBe("http://host/a@b")
    expect(redactUrlCredentials("not a url")).toBe("not a url")
    // main.ts logs node URLs through this function: what parses as a URL with credentials, and text that does not.
    expect(redactUrlCredentials("http:\\\\u:s3cret@host/")).toBe("http://***@host/")
    expect(redactUrlCredentials("http:\\\\u:s3cret@ho st/")).not.toContain("s3cret")
    expect(redactUrlCredentials("http://u:s3cret@ho st/")).not.toContain("s3cret")
  })

  it("sends the URL's user:password as Basic authorization (decoded), unless the caller set one", async () => {
    answer = () => ({ body: "{}" })
    const withCredentials = url.replace("http://", "http://us%40er:p%3Ass%20w@")
    await postJson(withCredentials, "{}")
    expect(received[received.length - 1]!.headers.authorization).toBe("Basic " + Buffer.from("us@er:p:ss w").toString("base64"))
    await postJson(withCredentials, "{}", { headers: { Authorization: "Bearer t" } })
    expect(received[received.length - 1]!.headers.authorization).toBe("Bearer t")
    await postJson(url, "{}")
    expect(received[received.length - 1]!.headers.authorization).toBeUndefined()
  })

  it("asks for no compression even when the caller's headers do", async () => {
    answer = () => ({ body: "{}" })
    await postJson(url, "{}", { headers: { "Accept-Encoding": "gzip" } })
    expect(received[received.length - 1]!.headers["accept-encoding"]).toBeUndefined()
  })

  it(`refuses kit's default bound + 1 (${JSON_RPC_MAX_RESPONSE_BYTES} bytes) declared, and reads viem's default bound (${VIEM_MAX_RESPONSE_BYTES}) exactly`, async () => {
    const viemBody = Buffer.alloc(VIEM_MAX_RESPONSE_BYTES, 0x20)
    const declared = await heldServer((req) =>
      req.url === "/kit-over"
        ? { length: JSON_RPC_MAX_RESPONSE_BYTES + 1 }
        : req.url === "/kit-at"
          ? { length: JSON_RPC_MAX_RESPONSE_BYTES }
          : req.url === "/viem-over"
            ? { length: VIEM_MAX_RESPONSE_BYTES + 1 }
            : req.url === "/small-at"
              ? { length: 1000, body: Buffer.alloc(1000, 0x20) }
              : req.url === "/small-over"
                ? { length: 1001, body: Buffer.alloc(1001, 0x20) }
                : { length: viemBody.length, body: viemBody }
    )
    try {
      // The declared-length check at its bound, whole bodies: a length equal to the bound is read, one more refused.
      expect((await postJson(declared.state.url + "small-at", "{}", { maxResponseBytes: 1000 })).body).toHaveLength(1000)
      await expect(postJson(declared.state.url + "small-over", "{}", { maxResponseBytes: 1000 })).rejects.toBeInstanceOf(ResponseTooLarge)
      // Over the bound on the declared length alone: refused before the body is read.
      await expect(postJson(declared.state.url + "kit-over", "{}")).rejects.toBeInstanceOf(ResponseTooLarge)
      // At the bound the declared length is accepted: the call goes on reading (the server sent its headers and one byte) until its caller aborts it.
      const stop = new AbortController()
      const atBound = postJson(declared.state.url + "kit-at", "{}", { signal: stop.signal })
      await eventually(() => declared.state.requests.some((r) => r.res.req.url === "/kit-at" && r.res.headersSent), { what: "the headers sent at the bound", deadlineMs: 20_000, intervalMs: 20 })
      expect(jsonRpcPending()).toBe(1)
      const reason = new Error("read at the bound")
      stop.abort(reason)
      await expect(atBound).rejects.toBe(reason)
      const viemInit = { method: "POST", body: "{}", headers: { "content-type": "application/json" } }
      await expect(nodeFetchForJsonRpc(declared.state.url + "viem-over", viemInit)).rejects.toBeInstanceOf(ResponseTooLarge)
      const res = await nodeFetchForJsonRpc(declared.state.url + "viem-at", viemInit)
      expect((await res.text()).length).toBe(VIEM_MAX_RESPONSE_BYTES)
      expect(jsonRpcPending()).toBe(0)
    } finally {
      await declared.close()
    }
  })

  it("reads a body sent without a length up to the bound, and refuses one byte more", async () => {
    answer = () => ({ body: "y".repeat(1000), chunks: 4 })
    expect((await postJson(url, "{}", { maxResponseBytes: 1000 })).body).toHaveLength(1000)
    await expect(postJson(url, "{}", { maxResponseBytes: 999 })).rejects.toBeInstanceOf(ResponseTooLarge)
    expect(jsonRpcPending()).toBe(0)
    // The refused body's permit goes back (its stream destroyed, whether or not undici had it whole): no origin entry is left.
    await eventually(() => jsonRpcGateCount() === 0, { what: "the permit back", deadlineMs: 20_000, intervalMs: 20 })
  })

  it("drops a leading byte-order mark, as fetch's text() does", async () => {
    answer = () => ({ body: '\uFEFF{"ok":3}' })
    expect((await postJson(url, "{}")).body).toBe('{"ok":3}')
  })

  it("closes an idle keep-alive socket itself when the server gives no keep-alive timeout", async () => {
    // This server never closes an idle connection (no keep-alive timeout, none announced): the close it sees is the client's.
    const quiet = http.createServer((req, res) => {
      req.resume()
      req.on("end", () => res.end('{"ok":4}'))
    })
    quiet.keepAliveTimeout = 0
    const sockets: Array<{ socket: Socket; endedByClient: boolean }> = []
    quiet.on("connection", (socket: Socket) => {
      const seen = { socket, endedByClient: false }
      sockets.push(seen)
      socket.on("end", () => (seen.endedByClient = true))
    })
    const quietUrl = await listenLoopback(quiet)
    try {
      expect((await postJson(quietUrl, "{}")).body).toBe('{"ok":4}')
      expect((await postJson(quietUrl, "{}")).body).toBe('{"ok":4}')
      expect(sockets.length).toBeGreaterThan(0)
      await eventually(() => sockets.every((s) => s.endedByClient), { what: "the client closing its idle sockets", deadlineMs: 20_000, intervalMs: 100 })
    } finally {
      await closeLoopback(quiet)
    }
  })

  it("rejects with the signal's reason when it aborts, before or during the call", async () => {
    answer = () => ({ body: "{}", delayMs: 5_000 })
    const before = new AbortController()
    before.abort(new Error("gone before"))
    await expect(postJson(url, "{}", { signal: before.signal })).rejects.toThrow("gone before")
    const during = new AbortController()
    const call = postJson(url, "{}", { signal: during.signal })
    setTimeout(() => during.abort(new Error("gone during")), 20)
    await expect(call).rejects.toThrow("gone during")
  })
})

describe("postJsonRpc", () => {
  it("posts one JSON-RPC call with the URL's user:password as Basic authorization (fetch refuses such a URL)", async () => {
    answer = (body) => ({ body: rpcResult(body, '"0x2a"') })
    const res = await postJsonRpc(url.replace("http://", "http://u:s3cret@"), "eth_blockNumber", [], 5_000)
    expect(res.status).toBe(200)
    expect(res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: "0x2a" })
    const last = received[received.length - 1]!
    expect(JSON.parse(last.body)).toEqual({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] })
    expect(last.headers.authorization).toBe("Basic " + Buffer.from("u:s3cret").toString("base64"))
  })

  it("fails without the URL's password in the message: a refused connection, a deadline, a body that is not JSON", async () => {
    // Port 1 on loopback: nothing listens there (no port closed and maybe reused by another test).
    const refused = await postJsonRpc("http://u:s3cret@127.0.0.1:1/", "getSlot", [], 5_000).catch((x: unknown) => x)
    expect(refused).toBeInstanceOf(Error)
    expect(String((refused as Error).message)).not.toContain("s3cret")
    answer = () => ({ body: "{}", delayMs: 2_000 })
    const late = await postJsonRpc(url.replace("http://", "http://u:s3cret@"), "getSlot", [], 100).catch((x: unknown) => x)
    expect(late).toBeInstanceOf(JsonRpcTimeout)
    expect((late as Error).message).not.toContain("s3cret")
    answer = () => ({ body: "<html>bad gateway</html>", status: 502 })
    const notJsonAnswer = await postJsonRpc(url.replace("http://", "http://u:s3cret@"), "getSlot", [], 5_000)
    expect(notJsonAnswer.status).toBe(502)
    const notJson = (() => {
      try {
        return notJsonAnswer.json()
      } catch (e) {
        return e
      }
    })()
    expect(notJson).toBeInstanceOf(SyntaxError)
    expect((notJson as Error).message).not.toContain("s3cret")
  })
})

describe("createNodeSolanaRpc", () => {
  it("reads a u64 beyond 2^53 to the unit", async () => {
    answer = (body) => ({ body: rpcResult(body, '{"context":{"slot":7},"value":18446744073709551615}') })
    const rpc = createNodeSolanaRpc(url)
    const { value, context } = await rpc.getBalance(address("11111111111111111111111111111111")).send()
    expect(value).toBe(18446744073709551615n)
    expect(context.slot).toBe(7n)
  })

  it("answers a non-2xx status with kit's transport error", async () => {
    answer = () => ({ status: 503, body: "busy" })
    const rpc = createNodeSolanaRpc(url)
    const e = await rpc.getSlot().send().catch((x: unknown) => x)
    expect(isSolanaError(e, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)).toBe(true)
    expect((e as { context: { statusCode: number } }).context.statusCode).toBe(503)
  })
})

describe("nodeFetchForJsonRpc (viem's fetchFn)", () => {
  const client = () => createPublicClient({ transport: viemHttp(url, { retryCount: 0, fetchFn: nodeFetchForJsonRpc }) })

  it("carries viem's calls and answers", async () => {
    answer = (body) => ({ body: rpcResult(body, '"0x2a"') })
    expect(await client().getBlockNumber({ cacheTime: 0 })).toBe(42n)
  })

  it("keeps viem's JSON-RPC errors (code and message)", async () => {
    answer = (body) => ({ body: `{"jsonrpc":"2.0","id":${(JSON.parse(body) as { id: number }).id},"error":{"code":-32000,"message":"nope"}}` })
    const e = await client().getBlockNumber({ cacheTime: 0 }).catch((x: unknown) => x)
    expect((e as Error).message).toContain("nope")
    expect((e as { walk: (f: (x: unknown) => boolean) => unknown }).walk((x) => x instanceof RpcRequestError)).toBeInstanceOf(RpcRequestError)
  })
})

describe("postJson's connections", () => {
  const settledAll = (calls: Array<Promise<unknown>>) => Promise.allSettled(calls)

  it(`holds at most ${JSON_RPC_MAX_SOCKETS} connections and requests per origin; the rest wait in the process`, async () => {
    const held = await heldServer()
    try {
      const calls = Array.from({ length: JSON_RPC_MAX_SOCKETS + 6 }, () => postJson(held.state.url, "{}"))
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS, { what: "64 requests at the server", deadlineMs: 20_000, intervalMs: 20 })
      // The six others wait for a permit in the process, not in undici: nothing more is sent.
      expect(jsonRpcWaiting()).toBe(6)
      expect(held.state.connections).toBe(JSON_RPC_MAX_SOCKETS)
      expect(held.state.requests).toHaveLength(JSON_RPC_MAX_SOCKETS)
      held.answerHeld()
      // Each answer frees a connection for a waiter: the six are sent on the same connections.
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS + 6, { what: "the six waiters sent", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld()
      const outcomes = await settledAll(calls)
      expect(outcomes.every((o) => o.status === "fulfilled")).toBe(true)
      expect(held.state.connections).toBe(JSON_RPC_MAX_SOCKETS)
      expect(jsonRpcPending()).toBe(0)
    } finally {
      await held.close()
    }
  })

  it("drops aborted waiters at once: after a stall, live calls reuse the same 64 connections and are sent first", async () => {
    const held = await heldServer()
    try {
      const live = Array.from({ length: JSON_RPC_MAX_SOCKETS }, () => postJson(held.state.url, '"live"'))
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS, { what: "64 requests at the server", deadlineMs: 20_000, intervalMs: 20 })
      const gone = new AbortController()
      const dead = Array.from({ length: 200 }, () => postJson(held.state.url, '"dead"', { signal: gone.signal }))
      expect(jsonRpcWaiting()).toBe(200)
      gone.abort(new Error("caller gone"))
      expect(jsonRpcWaiting()).toBe(0)
      expect((await settledAll(dead)).every((o) => o.status === "rejected")).toBe(true)
      // The next live call, made after the aborts, is the next request the server sees.
      const next = postJson(held.state.url, '"next"')
      held.answerHeld('{"ok":"first"}')
      expect((await settledAll(live)).every((o) => o.status === "fulfilled")).toBe(true)
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS + 1, { what: "the next live call sent", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld('{"ok":"next"}')
      expect((await next).body).toBe('{"ok":"next"}')
      // No connection was opened for an aborted call: still the first 64.
      expect(held.state.connections).toBe(JSON_RPC_MAX_SOCKETS)
      expect(held.state.requests).toHaveLength(JSON_RPC_MAX_SOCKETS + 1)
      expect(jsonRpcPending()).toBe(0)
    } finally {
      await held.close()
    }
  })

  it("costs two connections per in-flight abort (undici's behaviour): the one it ends and a new one, which a waiting call would use; closed here at once, as the origin has no connection left", async () => {
    const held = await heldServer()
    try {
      const stop = new AbortController()
      const calls = Array.from({ length: JSON_RPC_MAX_SOCKETS }, () => postJson(held.state.url, "{}", { signal: stop.signal }))
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS, { what: "64 requests at the server", deadlineMs: 20_000, intervalMs: 20 })
      stop.abort(new Error("stopped"))
      expect((await Promise.allSettled(calls)).every((o) => o.status === "rejected")).toBe(true)
      // undici keeps an aborted in-flight request queued until its socket closes, then connects
      // again for it and drops it unsent (docs/decisions.md). A waiting call would take the new
      // connection (the next test: 65 connections); with none, it is closed by undici's 4 s
      // keep-alive timer while the origin keeps another connection, and at once here, where all 64
      // disconnect: undici's Agent closes an origin's pool when its last connection goes. 128
      // opened, all closed, no request more.
      await eventually(() => held.state.connections === 2 * JSON_RPC_MAX_SOCKETS && held.state.connectionsClosed === 2 * JSON_RPC_MAX_SOCKETS, {
        what: "64 ended and 64 empty connections, all closed",
        deadlineMs: 20_000,
        intervalMs: 20
      })
      expect(held.state.requests).toHaveLength(JSON_RPC_MAX_SOCKETS)
      // Nothing is left behind: the next calls connect afresh and are answered.
      const next = postJson(held.state.url, "{}")
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS + 1, { what: "the next request at the server", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld()
      expect((await next).status).toBe(200)
      expect(held.state.connections).toBe(2 * JSON_RPC_MAX_SOCKETS + 1)
    } finally {
      await held.close()
    }
  })

  it("one in-flight abort costs one connect: the waiter its permit went to, dead in undici's queue, is dropped there with the connection kept, and the waiters aborted with it never enter undici", async () => {
    const held = await heldServer()
    try {
      const ctl = Array.from({ length: JSON_RPC_MAX_SOCKETS }, () => new AbortController())
      const first = Promise.allSettled(ctl.map((c) => postJson(held.state.url, '"held"', { signal: c.signal })))
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS, { what: "64 requests at the server", deadlineMs: 20_000, intervalMs: 20 })
      const gone = new AbortController()
      const dead = Promise.allSettled(Array.from({ length: 200 }, () => postJson(held.state.url, '"dead"', { signal: gone.signal })))
      // One in-flight abort and then the 200 waiters', in one synchronous block: the first's permit
      // goes to the first waiter as undici fails the aborted request, so that waiter dies in undici's
      // queue; it must be dropped there without a connect (and its permit must not pass to waiters
      // that die inside undici one after another, each costing a connect).
      ctl[0]!.abort(new Error("first gone"))
      gone.abort(new Error("caller gone"))
      const live = postJson(held.state.url, '"live"')
      await eventually(() => held.state.requests.some((r) => r.body === '"live"'), { what: "the live call at the server", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld('{"ok":"live"}')
      expect((await live).body).toBe('{"ok":"live"}')
      expect((await dead).every((o) => o.status === "rejected")).toBe(true)
      expect((await first).filter((o) => o.status === "fulfilled")).toHaveLength(JSON_RPC_MAX_SOCKETS - 1)
      // The 64 first connections and the one undici opened after the abort, which the live call used.
      expect(held.state.connections).toBe(JSON_RPC_MAX_SOCKETS + 1)
      expect(held.state.requests.filter((r) => r.body === '"dead"')).toHaveLength(0)
      expect(jsonRpcPending()).toBe(0)
      expect(jsonRpcGateCount()).toBe(0)
    } finally {
      await held.close()
    }
  })

  it("drops a call that died in undici's queue and keeps the connection: with deadlines spread over time no connection closes without a request", async () => {
    const held = await heldServer()
    try {
      // 63 calls held at the server until their 300 ms deadline, and 200 waiters whose deadlines
      // fall one after another over 300-600 ms: as each held call ends on the wire its permit passes
      // to a waiter, which undici queues until the connection is back (a connect after an in-flight
      // abort), and some waiters die there.
      // One held call has no deadline: the origin always keeps a connection, so undici's Agent never
      // closes its pool (it does when an origin's last connection goes, closing the connections it
      // opened again after the aborts, empty: timing, not this module).
      const anchor = postJson(held.state.url, '"anchor"', { deadlineMs: 30_000 })
      await eventually(() => held.state.requests.length === 1, { what: "the anchor at the server", deadlineMs: 20_000, intervalMs: 20 })
      const calls = [
        ...Array.from({ length: JSON_RPC_MAX_SOCKETS - 1 }, () => postJson(held.state.url, '"held"', { deadlineMs: 300 })),
        ...Array.from({ length: 200 }, (_, i) => postJson(held.state.url, '"waiter"', { deadlineMs: 300 + Math.round((i * 300) / 200) }))
      ]
      const outcomes = await Promise.allSettled(calls)
      expect(outcomes.every((o) => o.status === "rejected" && o.reason instanceof JsonRpcTimeout)).toBe(true)
      const next = postJson(held.state.url, '"next"', { deadlineMs: 30_000 })
      await eventually(() => held.state.requests.some((r) => r.body === '"next"'), { what: "the next call at the server", deadlineMs: 20_000, intervalMs: 20 })
      held.answerHeld('{"ok":3}')
      expect((await next).body).toBe('{"ok":3}')
      expect((await anchor).body).toBe('{"ok":3}')
      // No connection is closed without having carried a request: a call that died in undici's queue
      // is dropped when a connection takes it, and that connection carries the next request. (Through
      // undici's `request` API and an abort signal, undici destroyed each connection that took a dead
      // request: 57 and 141 such connections in two runs. Connections opened again after an abort on
      // the wire, undici's, are not counted here: they carry the next waiter.)
      expect(held.state.emptyClosed).toBe(0)
      expect(jsonRpcPending()).toBe(0)
      await eventually(() => jsonRpcGateCount() === 0, { what: "the origin's entry dropped", deadlineMs: 20_000, intervalMs: 20 })
    } finally {
      await held.close()
    }
  })

  // Permits go back inside undici's own loops (its error and end callbacks): a refused connection
  // or a reset after the headers, with waiters queued behind the 64, must settle every call once,
  // hold nothing after, and never throw out of undici (an uncaught exception fails this file).
  it("a refused connection with waiters queued: every call fails, nothing pending, the origin's entry dropped", async () => {
    const calls = Array.from({ length: 100 }, () => postJson("http://127.0.0.1:1/", "{}", { deadlineMs: 20_000 }))
    const outcomes = await Promise.allSettled(calls)
    expect(outcomes.filter((o) => o.status === "rejected" && !(o.reason instanceof JsonRpcTimeout)).length).toBe(100)
    expect(jsonRpcPending()).toBe(0)
    expect(jsonRpcWaiting()).toBe(0)
    await eventually(() => jsonRpcGateCount() === 0, { what: "the origin's entry dropped", deadlineMs: 20_000, intervalMs: 20 })
  })

  it("a connection reset after the headers with waiters queued: every call fails, nothing pending, the origin's entry dropped", async () => {
    const s = http.createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" })
        res.write("{", () => req.socket.destroy())
      })
    })
    const url = await listenLoopback(s)
    try {
      const calls = Array.from({ length: 100 }, () => postJson(url, "{}", { deadlineMs: 20_000 }))
      const outcomes = await Promise.allSettled(calls)
      expect(outcomes.filter((o) => o.status === "rejected" && !(o.reason instanceof JsonRpcTimeout)).length).toBe(100)
      expect(jsonRpcPending()).toBe(0)
      expect(jsonRpcWaiting()).toBe(0)
      await eventually(() => jsonRpcGateCount() === 0, { what: "the origin's entry dropped", deadlineMs: 20_000, intervalMs: 20 })
    } finally {
      await closeLoopback(s)
    }
  })

  it("hands permits out first come, first served; the origin's entry is dropped once all are done", async () => {
    const held = await heldServer()
    try {
      const first = Array.from({ length: JSON_RPC_MAX_SOCKETS }, () => postJson(held.state.url, '"held"'))
      await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS, { what: "64 requests at the server", deadlineMs: 20_000, intervalMs: 20 })
      const waiters = ["w1", "w2", "w3"].map((w) => postJson(held.state.url, JSON.stringify(w)))
      expect(jsonRpcWaiting()).toBe(3)
      expect(jsonRpcGateCount()).toBe(1)
      for (const [i, w] of ["w1", "w2", "w3"].entries()) {
        // Answer one held request: the one permit it frees goes to the next waiter in order.
        held.state.requests[i]!.res.end("{}")
        await eventually(() => held.state.requests.length === JSON_RPC_MAX_SOCKETS + i + 1, { what: `waiter ${w} sent`, deadlineMs: 20_000, intervalMs: 20 })
        expect(held.state.requests[JSON_RPC_MAX_SOCKETS + i]!.body).toBe(JSON.stringify(w))
        expect(jsonRpcWaiting()).toBe(2 - i)
      }
      held.answerHeld()
      expect((await Promise.allSettled([...first, ...waiters])).every((o) => o.status === "fulfilled")).toBe(true)
      expect(jsonRpcPending()).toBe(0)
      await eventually(() => jsonRpcGateCount() === 0, { what: "the origin's entry dropped", deadlineMs: 20_000, intervalMs: 20 })
    } finally {
      await held.close()
    }
  })

  it("ends the HTTP request when the call aborts: the server sees the connection close", async () => {
    const held = await heldServer()
    try {
      const stop = new AbortController()
      const call = postJson(held.state.url, "{}", { signal: stop.signal })
      await eventually(() => held.state.requests.length === 1, { what: "the request at the server", deadlineMs: 20_000, intervalMs: 20 })
      stop.abort(new Error("stopped"))
      await expect(call).rejects.toThrow("stopped")
      await eventually(() => held.state.closedUnanswered === 1, { what: "the server seeing the request closed", deadlineMs: 20_000, intervalMs: 20 })
      expect(jsonRpcPending()).toBe(0)
    } finally {
      await held.close()
    }
  })
})
