/**
 * The benches' HTTP client: keep-alive `node:http`, one socket per request in flight (the engine's
 * own listener is measured, not a client's connection setup). Its `fetch` (the WHATWG signature
 * openapi-fetch calls) goes over the same agent, so the typed client (`engineClient`) built on it
 * keeps that property.
 */
import * as http from "node:http"
import type { Client } from "openapi-fetch"
import { engineClient, type MainPaths } from "../clients/typescript/index.js"

/** Statuses whose answer has no body (a `Response` refuses one). */
const NO_BODY = new Set([204, 205, 304])

const responseHeaders = (res: http.IncomingMessage): Headers => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  return headers
}

export interface BenchHttp {
  /** `fetch` to `base` over the keep-alive agent (the request's method, URL, headers and body; no abort signal). */
  readonly fetch: typeof globalThis.fetch
  readonly close: () => void
}

export const httpClient = (base: string, maxSockets: number): BenchHttp => {
  const u = new URL(base)
  const agent = new http.Agent({ keepAlive: true, maxSockets })
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request && init === undefined ? input : new Request(input, init)
    const url = new URL(request.url)
    // One agent, one listener: its sockets are the engine's.
    if (url.origin !== u.origin) throw new Error(`bench fetch: ${url.origin} is not ${u.origin}`)
    const payload = request.body === null ? undefined : Buffer.from(await request.arrayBuffer())
    const headers: Record<string, string> = Object.fromEntries(request.headers)
    if (payload !== undefined) headers["content-length"] = String(payload.byteLength)
    return new Promise<Response>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, method: request.method, path: url.pathname + url.search, agent, headers }, (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const status = res.statusCode ?? 0
          resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? "", headers: responseHeaders(res) }))
        })
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(payload)
    })
  }
  return { fetch, close: () => agent.destroy() }
}

/** The engine's typed client over the bench's keep-alive `fetch`; with `apiKey`, as that agent key. */
export const benchEngine = (base: string, client: BenchHttp, apiKey?: string): Client<MainPaths> =>
  engineClient({ baseUrl: base, fetch: client.fetch, ...(apiKey !== undefined ? { apiKey } : {}) })

interface Answered {
  readonly data?: unknown
  readonly error?: unknown
  readonly response: Response
}

const refused = (what: string, a: Answered, status: number) =>
  new Error(`${what}: expected ${status}, got ${a.response.status}: ${JSON.stringify(a.error ?? a.data ?? null).slice(0, 400)}`)

/** A typed call's body when it answered `status` (a success status). */
export const expectData = <A extends Answered>(what: string, a: A, status: number): NonNullable<A["data"]> => {
  if (a.response.status !== status || a.data === undefined) throw refused(what, a, status)
  return a.data as NonNullable<A["data"]>
}

/** A typed call's refusal when it answered `status` (an error status). */
export const expectError = <A extends Answered>(what: string, a: A, status: number): NonNullable<A["error"]> => {
  if (a.response.status !== status || a.error === undefined) throw refused(what, a, status)
  return a.error as NonNullable<A["error"]>
}
