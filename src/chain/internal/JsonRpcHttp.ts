/**
 * JSON-RPC over `node:http` for the engine's chain clients (`@solana/kit`'s RPC and viem's
 * transport), instead of the WHATWG `fetch` both use by default.
 *
 * Why (docs/decisions.md "The chain clients' HTTP without fetch"): Node's `fetch` (undici)
 * registers every response in a `FinalizationRegistry` (to cancel an unread body stream) and V8's
 * scavenger keeps such objects alive, so each call's response, its streams and what they reach
 * (the request, its abort listeners, the awaiting fiber) survive every minor collection and are
 * promoted to the old generation, where only a major collection frees them. One chain read per
 * trade build and the Hood ingester's polling (20 a second against the embedded localnet) filled
 * the engine's old generation with them, and its collections landed on requests. A `node:http`
 * request with a keep-alive agent leaves nothing registered: its garbage dies young.
 *
 * Bounded: at most `JSON_RPC_MAX_SOCKETS` connections per origin, at most `JSON_RPC_MAX_PENDING`
 * calls unsettled in the process (one more is refused at once: `JsonRpcBusy`), every call settled
 * within `deadlineMs` (default `JSON_RPC_DEADLINE_MS`, waiting for a socket included: `JsonRpcTimeout`)
 * whether or not its caller passed a signal, a response body of at most `maxResponseBytes` (default
 * `JSON_RPC_MAX_RESPONSE_BYTES`). No compression is asked for.
 */
import { createSolanaRpcFromTransport, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, SolanaError } from "@solana/kit"
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from "@solana/rpc-spec-types"
import * as http from "node:http"
import * as https from "node:https"

/** Connections kept per origin (a pool per agent: beyond it requests queue). */
export const JSON_RPC_MAX_SOCKETS = 64
/** The largest response body read (64 MiB: a `getProgramAccounts` page with room); beyond it the call fails. */
export const JSON_RPC_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
/** The longest one call may take, a socket's wait included (fetch's undici allowed 300 s each for headers and body). */
export const JSON_RPC_DEADLINE_MS = 60_000
/** Calls unsettled at once in the process (sockets busy and queued behind them); one more fails at once. */
export const JSON_RPC_MAX_PENDING = 1024

export interface JsonRpcHttpResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A response body over the bound: the call fails without reading the rest. */
export class ResponseTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the JSON-RPC response is over ${limit} bytes`)
    this.name = "ResponseTooLarge"
  }
}

/** The call did not settle within its deadline (no answer, or no socket free in time). */
export class JsonRpcTimeout extends Error {
  constructor(readonly deadlineMs: number) {
    super(`the JSON-RPC call did not settle within ${deadlineMs} ms`)
    this.name = "JsonRpcTimeout"
  }
}

/** `JSON_RPC_MAX_PENDING` calls are already unsettled: this one is refused before it queues. */
export class JsonRpcBusy extends Error {
  constructor(readonly limit: number) {
    super(`${limit} JSON-RPC calls are already waiting`)
    this.name = "JsonRpcBusy"
  }
}

let pending = 0
/** Calls unsettled now (for tests and stats). */
export const jsonRpcPending = (): number => pending

const httpAgent = new http.Agent({ keepAlive: true, maxSockets: JSON_RPC_MAX_SOCKETS })
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: JSON_RPC_MAX_SOCKETS })

/**
 * POSTs `body` (JSON text) to `url` and reads the whole answer as text. Rejects with the signal's
 * reason when it aborts, `ResponseTooLarge` past `maxResponseBytes`, or the socket's error.
 */
export const postJson = (
  url: string | URL,
  body: string,
  options: {
    readonly signal?: AbortSignal | null | undefined
    readonly headers?: Record<string, string>
    readonly maxResponseBytes?: number
    readonly deadlineMs?: number
  } = {}
): Promise<JsonRpcHttpResponse> =>
  new Promise((resolve, reject) => {
    const signal = options.signal ?? undefined
    if (signal?.aborted === true) return reject(signal.reason)
    if (pending >= JSON_RPC_MAX_PENDING) return reject(new JsonRpcBusy(JSON_RPC_MAX_PENDING))
    pending++
    const target = typeof url === "string" ? new URL(url) : url
    const secure = target.protocol === "https:"
    const limit = options.maxResponseBytes ?? JSON_RPC_MAX_RESPONSE_BYTES
    const payload = Buffer.from(body, "utf8")
    let settled = false
    let deadline: ReturnType<typeof setTimeout> | undefined
    const settle = (f: () => void) => {
      if (settled) return
      settled = true
      pending--
      clearTimeout(deadline)
      signal?.removeEventListener("abort", onAbort)
      f()
    }
    const fail = (e: unknown) => settle(() => reject(e))
    const onAbort = () => {
      fail(signal!.reason)
      req.destroy()
    }
    const req = (secure ? https : http).request(
      target,
      {
        method: "POST",
        agent: secure ? httpsAgent : httpAgent,
        headers: { ...options.headers, accept: "application/json", "content-type": "application/json; charset=utf-8", "content-length": payload.length }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        let size = 0
        res.on("data", (c: Buffer) => {
          size += c.length
          if (size > limit) {
            fail(new ResponseTooLarge(limit))
            req.destroy()
            return
          }
          chunks.push(c)
        })
        res.on("end", () =>
          settle(() =>
            resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers: res.headers, body: Buffer.concat(chunks, size).toString("utf8") })
          )
        )
        res.on("error", fail)
      }
    )
    req.on("error", fail)
    signal?.addEventListener("abort", onAbort, { once: true })
    const deadlineMs = options.deadlineMs ?? JSON_RPC_DEADLINE_MS
    deadline = setTimeout(() => {
      fail(new JsonRpcTimeout(deadlineMs))
      req.destroy()
    }, deadlineMs)
    req.end(payload)
  })

const headersOf = (h: http.IncomingHttpHeaders): Headers => {
  const out = new Headers()
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(", ") : v)
  return out
}

/**
 * `@solana/kit`'s RPC over `postJson`, as `createSolanaRpc(url)` would be (its JSON with bigints
 * for every integer, so no u64 loses a unit; a non-2xx status is kit's
 * `SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR`), without fetch.
 */
export const createNodeSolanaRpc = (url: string, options: { readonly maxResponseBytes?: number } = {}) =>
  createSolanaRpcFromTransport(async <TResponse>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<TResponse> => {
    const res = await postJson(url, stringifyJsonWithBigInts(payload), { signal, ...options })
    if (res.status < 200 || res.status > 299) {
      throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, { headers: headersOf(res.headers), message: res.statusText, statusCode: res.status })
    }
    return parseJsonWithBigInts(res.body) as TResponse
  })

/**
 * A `fetch` for viem's `http` transport (`fetchFn`) over `postJson`: viem keeps its own request
 * building, timeout, body bound and error mapping; only the HTTP client is this one. The answer is
 * a `Response` built from the text read (a constructed `Response` is not registered for
 * finalization as fetch's are).
 */
/** viem's own `maxResponseBodySize` default: the body is not read past it (viem would refuse it after). */
const VIEM_MAX_RESPONSE_BYTES = 10 * 1024 * 1024

export const nodeFetchForJsonRpc = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = typeof input === "string" || input instanceof URL ? input : input.url
  const body = init?.body
  if (typeof body !== "string") throw new TypeError("nodeFetchForJsonRpc posts JSON text only")
  const headers: Record<string, string> = {}
  new Headers(init?.headers).forEach((v, k) => {
    if (k !== "content-type" && k !== "accept" && k !== "content-length") headers[k] = v
  })
  const res = await postJson(url, body, { signal: init?.signal, headers, maxResponseBytes: VIEM_MAX_RESPONSE_BYTES })
  return new Response(res.status === 204 || res.status === 205 || res.status === 304 ? null : res.body, { status: res.status, statusText: res.statusText, headers: headersOf(res.headers) })
}
