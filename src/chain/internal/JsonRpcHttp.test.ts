import { address, isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR } from "@solana/kit"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { gzipSync } from "node:zlib"
import { createPublicClient, http as viemHttp, RpcRequestError } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../test/support/eventually.js"
import { createNodeSolanaRpc, JSON_RPC_MAX_PENDING, JsonRpcBusy, jsonRpcPending, JsonRpcTimeout, nodeFetchForJsonRpc, postJson, ResponseTooLarge } from "./JsonRpcHttp.js"

/**
 * A JSON-RPC server whose answer the test sets per request; it records what it received. `gzip`
 * compresses the answer (and says so), `chunks` sends it in that many writes without a length.
 */
let answer: (body: string, req: http.IncomingMessage) => { status?: number; body: string; delayMs?: number; gzip?: boolean; chunks?: number } = () => ({
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
      const bytes = a.gzip === true ? gzipSync(a.body) : Buffer.from(a.body, "utf8")
      res.writeHead(a.status ?? 200, { "content-type": "application/json", ...(a.gzip === true ? { "content-encoding": "gzip" } : {}) })
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
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
})

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
  })

  it("settles a call without a signal at its deadline, and one waiting for a socket too", async () => {
    answer = () => ({ body: "{}", delayMs: 60_000 })
    // 64 sockets to the origin, all held: the 65th waits for one, and both kinds end at the deadline.
    const calls = Array.from({ length: 70 }, () => postJson(url, "{}", { deadlineMs: 300 }))
    const outcomes = await Promise.allSettled(calls)
    expect(outcomes.every((o) => o.status === "rejected" && o.reason instanceof JsonRpcTimeout)).toBe(true)
    expect(jsonRpcPending()).toBe(0)
    server.closeAllConnections()
    // The origin is usable again at once.
    answer = () => ({ body: '{"ok":1}' })
    expect((await postJson(url, "{}", { deadlineMs: 2_000 })).body).toBe('{"ok":1}')
  })

  it(`refuses the call past ${JSON_RPC_MAX_PENDING} unsettled ones at once, and takes calls again as they settle`, async () => {
    answer = () => ({ body: "{}", delayMs: 60_000 })
    const held = Array.from({ length: JSON_RPC_MAX_PENDING }, () => postJson(url, "{}", { deadlineMs: 1_000 }))
    expect(jsonRpcPending()).toBe(JSON_RPC_MAX_PENDING)
    await expect(postJson(url, "{}")).rejects.toBeInstanceOf(JsonRpcBusy)
    await Promise.allSettled(held)
    expect(jsonRpcPending()).toBe(0)
    server.closeAllConnections()
    answer = () => ({ body: '{"ok":2}' })
    expect((await postJson(url, "{}")).body).toBe('{"ok":2}')
  })

  it("reads a body sent without a length up to the bound, and refuses one byte more", async () => {
    answer = () => ({ body: "y".repeat(1000), chunks: 4 })
    expect((await postJson(url, "{}", { maxResponseBytes: 1000 })).body).toHaveLength(1000)
    await expect(postJson(url, "{}", { maxResponseBytes: 999 })).rejects.toBeInstanceOf(ResponseTooLarge)
    expect(jsonRpcPending()).toBe(0)
  })

  it("decodes a gzip answer the caller asked for, and bounds it decoded", async () => {
    const text = '{"ok":"' + "z".repeat(991) + '"}'
    answer = (_, req) => ({ body: text, gzip: req.headers["accept-encoding"] === "gzip" })
    const res = await postJson(url, "{}", { headers: { "accept-encoding": "gzip" } })
    expect(res.body).toBe(text)
    expect(res.headers["content-encoding"]).toBeUndefined()
    expect((await postJson(url, "{}", { headers: { "accept-encoding": "gzip" }, maxResponseBytes: 1000 })).body).toBe(text)
    await expect(postJson(url, "{}", { headers: { "accept-encoding": "gzip" }, maxResponseBytes: 999 })).rejects.toBeInstanceOf(ResponseTooLarge)
    // Not asked: none is sent, and the text arrives as it was.
    expect((await postJson(url, "{}")).body).toBe(text)
    expect(received[received.length - 1]!.headers["accept-encoding"]).toBeUndefined()
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
    await new Promise<void>((r) => quiet.listen(0, "127.0.0.1", r))
    try {
      const quietUrl = `http://127.0.0.1:${(quiet.address() as AddressInfo).port}/`
      expect((await postJson(quietUrl, "{}")).body).toBe('{"ok":4}')
      expect((await postJson(quietUrl, "{}")).body).toBe('{"ok":4}')
      expect(sockets.length).toBeGreaterThan(0)
      await eventually(() => sockets.every((s) => s.endedByClient), { what: "the client closing its idle sockets", deadlineMs: 20_000, intervalMs: 100 })
    } finally {
      quiet.closeAllConnections()
      await new Promise<void>((r) => quiet.close(() => r()))
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
