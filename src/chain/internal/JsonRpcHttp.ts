/**
 * JSON-RPC over undici's `dispatch` API for the engine's chain clients (`@solana/kit`'s RPC and
 * viem's transport), instead of the WHATWG `fetch` both use by default.
 *
 * Why (docs/decisions.md "The chain clients' HTTP without fetch" and "The chain clients' HTTP on
 * undici's request API"): Node's `fetch` registers every response in a `FinalizationRegistry` (to
 * cancel an unread body stream) and V8's scavenger keeps such objects alive, so each call's
 * response, its streams and what they reach (the request, its abort listeners, the awaiting fiber)
 * survive every minor collection and are promoted to the old generation, where only a major
 * collection frees them. undici's `dispatch` (our handler is called with each chunk: no stream,
 * web or node) registers nothing: its garbage dies young, as a `node:http` request's does. undici keeps the connections:
 * a pool per origin, idle keep-alive sockets closed after `JSON_RPC_KEEP_ALIVE_MS` (or before the
 * server's announced `Keep-Alive: timeout`). No compression is asked for (a caller's
 * `accept-encoding` is not sent). A URL's `user:password` is sent as Basic authorization.
 *
 * Bounded: at most `JSON_RPC_MAX_SOCKETS` connections per origin (calls beyond them wait in this
 * module's list per origin, not in undici's queue: see `acquire`), at most `JSON_RPC_MAX_PENDING`
 * calls unsettled in the process (one more is refused at once: `JsonRpcBusy`), every call settled
 * within `deadlineMs` (default `JSON_RPC_DEADLINE_MS`, waiting for a socket included: `JsonRpcTimeout`)
 * whether or not its caller passed a signal, a response body of at most `maxResponseBytes` (default
 * `JSON_RPC_MAX_RESPONSE_BYTES`, counted decoded).
 */
import { createSolanaRpcFromTransport, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, SolanaError } from "@solana/kit"
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from "@solana/rpc-spec-types"
import { Agent, type Dispatcher } from "undici"
import { BoundedMemo } from "../../platform/BoundedMemo.js"

/** Connections kept per origin (undici's pool per origin: beyond it requests queue). */
export const JSON_RPC_MAX_SOCKETS = 64
/** The largest response body read (64 MiB: a `getProgramAccounts` page with room); beyond it the call fails. */
export const JSON_RPC_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
/** The longest one call may take, a socket's wait included (fetch's undici allowed 300 s each for headers and body). */
export const JSON_RPC_DEADLINE_MS = 60_000
/** Calls unsettled at once in the process (sockets busy and queued behind them); one more fails at once. */
export const JSON_RPC_MAX_PENDING = 1024
/** An idle keep-alive socket is closed after this long (undici's and fetch's default), sooner if the server's `Keep-Alive: timeout` says so. */
export const JSON_RPC_KEEP_ALIVE_MS = 4_000

export type JsonRpcHttpHeaders = Record<string, string | Array<string> | undefined>

export interface JsonRpcHttpResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: JsonRpcHttpHeaders
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

/** The URL's `user:password` is not valid percent-encoding: refused before the call holds anything. It keeps the URL only redacted. */
export class MalformedCredentials extends Error {
  /** The URL with its credentials redacted (`redactUrlCredentials`). */
  readonly url: string
  constructor(url: string) {
    const redacted = redactUrlCredentials(url)
    super(`the JSON-RPC URL's user:password is not valid percent-encoding: ${redacted}`)
    this.name = "MalformedCredentials"
    this.url = redacted
  }
}

/** The URL does not parse (a `TypeError`, as `new URL`'s, without its `input`): its text only redacted, in the message. */
export class InvalidRpcUrl extends TypeError {
  constructor(url: string, why = "does not parse") {
    super(`the JSON-RPC URL ${why}: ${redactUrlCredentials(url)}`)
    this.name = "InvalidRpcUrl"
  }
}

/**
 * `url` with its `user:password@` (or `user@`) replaced by `***@`, for messages and logs: a URL's
 * credentials never appear in either. Parsed as a URL first (so `http:\\u:p@host/`, which parses as
 * `http://u:p@host/`, is redacted too); text that does not parse is redacted by pattern (a scheme,
 * then slashes or backslashes, then anything up to an `@` before the path).
 */
export const redactUrlCredentials = (url: string): string => {
  if (URL.canParse(url)) {
    const parsed = new URL(url)
    if (parsed.username === "" && parsed.password === "") return url
    parsed.password = ""
    parsed.username = "***"
    return parsed.href
  }
  return url.replace(/^([a-z][a-z0-9+.-]*:[/\\]*)[^/\\?#]*@/i, "$1***@")
}

/** An `http:` or `https:` URL, else `InvalidRpcUrl` (a `wss://` or `foo://` URL parses, and undici would refuse it per call as if the node were unreachable). */
export const parseRpcUrl = (url: string | URL): URL => {
  const parsed = typeof url !== "string" ? url : URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined) throw new InvalidRpcUrl(String(url))
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new InvalidRpcUrl(parsed.href, "is not http: or https:")
  return parsed
}

let pending = 0
/** Calls unsettled now (for tests and stats). */
export const jsonRpcPending = (): number => pending

/**
 * One agent for every origin: undici's own deadlines are off (0) because each call's deadline
 * bounds headers and body together with the wait for a socket, which undici's do not count.
 */
const agent = new Agent({
  connections: JSON_RPC_MAX_SOCKETS,
  keepAliveTimeout: JSON_RPC_KEEP_ALIVE_MS,
  headersTimeout: 0,
  bodyTimeout: 0
})

/**
 * A wait list per origin in front of the agent, with as many permits as the agent's `connections`:
 * a call reaches undici only with a permit; an aborted or timed-out waiter leaves the list at once
 * and never reaches undici. A permit goes back when undici is done with the request
 * (`onResponseEnd` or `onResponseError`), not when the call settles. A call that settles while its
 * request waits in undici's queue is refused when a connection takes it (`onRequestStart` throws
 * `CallSettled`): undici drops the request unsent and keeps the connection, and the permit comes
 * back then. (Through undici's `request` API and an abort signal, undici destroyed the connection
 * that took such a request and connected again.) A call ended on its connection still costs one
 * connect: undici destroys that socket and connects again for the aborted request, which it then
 * drops (docs/decisions.md "...: the review's fixes"); its permit comes back at once, so undici may
 * hold that dead request beside `JSON_RPC_MAX_SOCKETS` live ones until then. FIFO (a `Set`
 * iterates in insertion order); an origin's entry is dropped when nothing holds or waits for a permit.
 */
interface Waiter {
  start(): void
}
class OriginGate {
  held = 0
  readonly waiters = new Set<Waiter>()
}
const gates = new Map<string, OriginGate>()

/** Runs `waiter.start()` once a permit for `origin` is free (at once if one is); returns the waiter to cancel, or undefined when it started. */
const acquire = (origin: string, waiter: Waiter): Waiter | undefined => {
  let gate = gates.get(origin)
  if (gate === undefined) gates.set(origin, (gate = new OriginGate()))
  if (gate.held < JSON_RPC_MAX_SOCKETS) {
    gate.held++
    waiter.start()
    return undefined
  }
  gate.waiters.add(waiter)
  return waiter
}

/** Gives the permit back: the first waiter takes it, or it is freed. */
const release = (origin: string): void => {
  const gate = gates.get(origin)!
  const next = gate.waiters.values().next()
  if (!next.done) {
    gate.waiters.delete(next.value)
    next.value.start()
    return
  }
  gate.held--
  if (gate.held === 0) gates.delete(origin)
}

/** Removes a waiter that will not start (aborted or past its deadline). */
const cancelWait = (origin: string, waiter: Waiter): void => {
  const gate = gates.get(origin)!
  gate.waiters.delete(waiter)
  if (gate.held === 0 && gate.waiters.size === 0) gates.delete(origin)
}

/** Origins with a wait list entry now (for tests: 0 once every call is done). */
export const jsonRpcGateCount = (): number => gates.size

/** Calls waiting for a permit now, all origins (for tests). */
export const jsonRpcWaiting = (): number => {
  let n = 0
  for (const g of gates.values()) n += g.waiters.size
  return n
}

/** URLs whose Basic authorization is kept (a few RPC URLs recur; cleared at the bound). */
const AUTH_MEMO_MAX = 64
const authMemo = new BoundedMemo<string, { readonly auth: string }>(AUTH_MEMO_MAX)

const basicAuthText = (target: URL): { readonly auth: string } => {
  let user: string
  let password: string
  try {
    user = decodeURIComponent(target.username)
    password = decodeURIComponent(target.password)
  } catch {
    throw new MalformedCredentials(target.href)
  }
  return { auth: "Basic " + Buffer.from(`${user}:${password}`, "utf8").toString("base64") }
}

/**
 * `user:password` of the URL (percent-decoded, as the WHATWG URL keeps them encoded) as a Basic
 * authorization, or undefined; throws `MalformedCredentials` when they do not decode.
 */
const basicAuthOf = (target: URL): string | undefined =>
  target.username === "" && target.password === "" ? undefined : authMemo.get(target.href, target, basicAuthText).auth

/** Thrown from a settled call's `onRequestStart`: undici then drops the request without sending it, keeping the connection. */
class CallSettled extends Error {
  constructor() {
    super("the JSON-RPC call settled before a connection took it")
    this.name = "CallSettled"
  }
}

/** `addEventListener`'s options for a call's abort listener (one object for every call). */
const ONCE = { once: true } as const

/** A call's deadline (`setTimeout`'s argument is the call: no closure per call). */
const expire = (call: JsonRpcCall): void => call.timedOut()

/**
 * One `postJson` call: its state and undici's handler for its request, as fields and methods
 * rather than a dozen closures per call (the engine runs under tsx, whose esbuild `keepNames` wraps
 * every named closure in an `Object.defineProperty` each time it is created: 3.2 KB of a trade
 * build's garbage, docs/decisions.md "The trade build's chain read without kit's response path").
 * It is its own abort listener (`handleEvent`; Node wraps an object listener in a closure of its own, but no tsx `__name`) and wait-list entry (`start`). State is in `#`
 * fields: undici probes a handler's members by name.
 */
class JsonRpcCall implements Dispatcher.DispatchHandler, Waiter {
  #settled = false
  /** On the origin's wait list (from `acquire` until `start` or `settle`). */
  #waiting = false
  /** Holds a permit (from `start` until undici is done with the request). */
  #running = false
  #deadline: ReturnType<typeof setTimeout> | undefined
  /** Set while the request is on a connection (from `onRequestStart` until undici answers or fails it). */
  #onWire: Dispatcher.DispatchController | undefined
  readonly #chunks: Array<Buffer> = []
  #size = 0
  #status = 0
  #statusText = ""
  #responseHeaders: JsonRpcHttpHeaders = {}
  readonly #origin: string
  readonly #request: Dispatcher.DispatchOptions
  readonly #limit: number
  readonly #deadlineMs: number
  readonly #signal: AbortSignal | undefined
  readonly #resolve: (r: JsonRpcHttpResponse) => void
  readonly #reject: (e: unknown) => void

  constructor(
    origin: string,
    request: Dispatcher.DispatchOptions,
    limit: number,
    deadlineMs: number,
    signal: AbortSignal | undefined,
    resolve: (r: JsonRpcHttpResponse) => void,
    reject: (e: unknown) => void
  ) {
    this.#origin = origin
    this.#request = request
    this.#limit = limit
    this.#deadlineMs = deadlineMs
    this.#signal = signal
    this.#resolve = resolve
    this.#reject = reject
  }

  /** Takes a pending slot, listens for the abort, arms the deadline and queues for a permit. */
  begin(): void {
    pending++
    this.#signal?.addEventListener("abort", this, ONCE)
    this.#deadline = setTimeout(expire, this.#deadlineMs, this)
    this.#waiting = acquire(this.#origin, this) !== undefined
  }

  /** Marks the call settled once (true the first time): the pending slot, the timer, the listener and the wait-list entry given back. */
  #settle(): boolean {
    if (this.#settled) return false
    this.#settled = true
    pending--
    clearTimeout(this.#deadline)
    this.#signal?.removeEventListener("abort", this)
    if (this.#waiting) cancelWait(this.#origin, this)
    this.#waiting = false
    return true
  }

  // The permit goes back only when undici is done with the request (see `OriginGate`), never from `fail`.
  #free(): void {
    if (!this.#running) return
    this.#running = false
    release(this.#origin)
  }

  #fail(e: unknown): void {
    if (this.#settled) return
    if (this.#settle()) this.#reject(e)
    // On a connection: undici ends it there (and destroys that socket). Still queued in undici: it is
    // dropped when a connection takes it (`onRequestStart`). Waiting for a permit: `settle` removed it.
    const controller = this.#onWire
    this.#onWire = undefined
    controller?.abort(e instanceof Error ? e : new Error(String(e)))
  }

  #tooLarge(): void {
    this.#fail(new ResponseTooLarge(this.#limit))
  }

  /** The abort listener (the caller's signal). */
  handleEvent(): void {
    this.#fail(this.#signal!.reason)
  }

  /** The deadline passed (`expire`). */
  timedOut(): void {
    this.#fail(new JsonRpcTimeout(this.#deadlineMs))
  }

  /** A permit is this call's: the request goes to undici (which reports every failure, a malformed request's included, through `onResponseError`). */
  start(): void {
    this.#waiting = false
    this.#running = true
    agent.dispatch(this.#request, this)
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // A call already settled (its deadline, its caller's abort) while in undici's queue: refused
    // here, undici drops the request and keeps the connection for the next one (`writeH1` catches
    // the throw and fails the request without destroying the socket; an `abort()` here would destroy it).
    if (this.#settled) throw new CallSettled()
    this.#onWire = controller
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, resHeaders: JsonRpcHttpHeaders, statusMessage?: string): void {
    this.#status = statusCode
    this.#statusText = statusMessage ?? ""
    this.#responseHeaders = resHeaders
    if (Number(resHeaders["content-length"]) > this.#limit) this.#tooLarge()
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return
    this.#size += chunk.length
    if (this.#size > this.#limit) return this.#tooLarge()
    this.#chunks.push(chunk)
  }

  onResponseEnd(): void {
    this.#onWire = undefined
    this.#free()
    const text = Buffer.concat(this.#chunks, this.#size).toString("utf8")
    if (this.#settle()) {
      this.#resolve({ status: this.#status, statusText: this.#statusText, headers: this.#responseHeaders, body: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text })
    }
  }

  // undici is done with the request: it failed, was aborted on its connection, or was dropped from the queue (`CallSettled`).
  onResponseError(_controller: Dispatcher.DispatchController, e: Error): void {
    this.#onWire = undefined
    this.#free()
    this.#fail(e)
  }
}

/**
 * POSTs `body` (JSON text) to `url` and reads the whole answer as text (a leading UTF-8 BOM
 * dropped, as fetch's `text()` does). Rejects with the signal's reason when it aborts,
 * `ResponseTooLarge` past `maxResponseBytes`, `JsonRpcTimeout` past `deadlineMs`, `JsonRpcBusy`
 * over `JSON_RPC_MAX_PENDING`, `MalformedCredentials` for a URL's `user:password` that does not
 * decode, `InvalidRpcUrl` (a `TypeError`) for a malformed URL, or undici's error for the connection.
 * One `JsonRpcCall` per call.
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
    // Parsed (and its credentials decoded) before a pending slot is taken: a malformed URL rejects here and holds nothing.
    let target: URL
    let urlAuth: string | undefined
    try {
      target = parseRpcUrl(url)
      urlAuth = basicAuthOf(target)
    } catch (e) {
      return reject(e)
    }
    if (pending >= JSON_RPC_MAX_PENDING) return reject(new JsonRpcBusy(JSON_RPC_MAX_PENDING))
    const headers: Record<string, string> = {}
    let authorized = false
    for (const name in options.headers) {
      const lower = name.toLowerCase()
      // No compression is asked for: nothing here decodes an answer (docs/decisions.md).
      if (lower === "accept-encoding") continue
      if (lower === "authorization") authorized = true
      headers[name] = options.headers[name]!
    }
    if (!authorized && urlAuth !== undefined) headers.authorization = urlAuth
    headers.accept = "application/json"
    headers["content-type"] = "application/json; charset=utf-8"
    const origin = target.origin
    new JsonRpcCall(
      origin,
      { origin, path: target.pathname + target.search, method: "POST", headers, body },
      options.maxResponseBytes ?? JSON_RPC_MAX_RESPONSE_BYTES,
      options.deadlineMs ?? JSON_RPC_DEADLINE_MS,
      signal,
      resolve,
      reject
    ).begin()
  })

const headersOf = (h: JsonRpcHttpHeaders): Headers => {
  const out = new Headers()
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(", ") : v)
  return out
}

/**
 * A Solana JSON-RPC call's answer text: `body` POSTed to `target` by `postJson` (its failures as
 * it rejects), a non-2xx status thrown as kit's `SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR` (what
 * kit's own HTTP transport throws). The one HTTP step of `createNodeSolanaRpc` and of the reads
 * that decode their answer themselves (`src/chain/solana/client/MultipleAccounts.ts`), so both
 * fail alike.
 */
export const postSolanaJsonRpc = async (
  target: URL,
  body: string,
  signal: AbortSignal | undefined,
  options: { readonly maxResponseBytes?: number } = {}
): Promise<string> => {
  const res = await postJson(target, body, { signal, ...options })
  if (res.status < 200 || res.status > 299) {
    throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, { headers: headersOf(res.headers), message: res.statusText, statusCode: res.status })
  }
  return res.body
}

/**
 * `@solana/kit`'s RPC over `postJson`, as `createSolanaRpc(url)` would be (its JSON with bigints
 * for every integer, so no u64 loses a unit; a non-2xx status is kit's
 * `SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR`), without fetch.
 */
export const createNodeSolanaRpc = (url: string, options: { readonly maxResponseBytes?: number } = {}) => {
  const target = parseRpcUrl(url)
  return createSolanaRpcFromTransport(
    async <TResponse>({ payload, signal }: { payload: unknown; signal?: AbortSignal }): Promise<TResponse> =>
      parseJsonWithBigInts(await postSolanaJsonRpc(target, stringifyJsonWithBigInts(payload), signal, options)) as TResponse
  )
}

/** viem's own `maxResponseBodySize` default: the body is not read past it (viem would refuse it after). */
export const VIEM_MAX_RESPONSE_BYTES = 10 * 1024 * 1024

/**
 * A `fetch` for viem's `http` transport (`fetchFn`) over `postJson`: viem keeps its own request
 * building, timeout, body bound and error mapping; only the HTTP client is this one. The answer is
 * a `Response` built from the text read (a constructed `Response` is not registered for
 * finalization as fetch's are).
 */
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
