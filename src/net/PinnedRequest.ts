/**
 * One outbound request to a target the public-target check approved, connected to exactly the
 * address that was checked: the socket's `lookup` answers with that address, so nothing resolves
 * the name again, while the URL's host still goes in `Host` and (for TLS) SNI and certificate
 * verification. Redirects are never followed (Node's client does not follow them; a 3xx is just
 * a status). No connection reuse (`agent: false`): every request is pinned on its own.
 *
 * Bounded:
 * - `pinnedPost` (webhook deliveries): the exchange up to the response status has one deadline,
 *   and at most `maxResponseBytes` of a response body are read (and discarded) before the socket
 *   is destroyed.
 * - `pinnedGet` (image fetches): the whole exchange, body included, has one deadline; a 2xx body
 *   is collected up to `maxBodyBytes` and the socket is destroyed as soon as a chunk would pass
 *   the bound (a declared `Content-Length` over it is refused before any body byte is read);
 *   other statuses are answered without reading their body.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import type { CheckedTarget } from "./PublicTarget.js"

export interface PinnedPostOptions {
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly timeoutMs: number
  /** Response body bytes read (and discarded) before the connection is cut. */
  readonly maxResponseBytes: number
  /** Extra trusted certificates (tests with a self-signed receiver). */
  readonly ca?: string | undefined
  /** Aborts the exchange (the caller was interrupted). */
  readonly signal?: AbortSignal | undefined
}

export type PinnedPostResult =
  | { readonly _tag: "Response"; readonly statusCode: number }
  | { readonly _tag: "Failed"; readonly error: string }

/** A `lookup` that always answers with the checked address, in whichever shape the caller asked. */
export const pinnedLookup = (address: string, family: 4 | 6): LookupFunction =>
  ((_hostname: string, options: { all?: boolean }, callback: (...args: ReadonlyArray<unknown>) => void) => {
    if (options?.all === true) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as unknown as LookupFunction

/** The request pinned to the checked address; `settle` is the caller's one-shot completion. */
const openPinned = (
  target: CheckedTarget,
  method: "GET" | "POST",
  headers: Readonly<Record<string, string>>,
  options: { readonly ca?: string | undefined },
  onResponse: (res: http.IncomingMessage) => void
): http.ClientRequest => {
  const common = {
    method,
    host: target.hostname,
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    headers,
    agent: false as const,
    lookup: pinnedLookup(target.address, target.family)
  }
  return target.protocol === "https:"
    ? https.request(
        {
          ...common,
          ...(target.servername !== undefined ? { servername: target.servername } : {}),
          ...(options.ca !== undefined ? { ca: options.ca } : {})
        },
        onResponse
      )
    : http.request(common, onResponse)
}

/** A one-shot settle with a deadline and an abort signal, both ending the request. */
const settlement = <R>(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  resolve: (r: R) => void,
  onTimeout: () => R,
  onAbort: () => R
) => {
  let settled = false
  let req: http.ClientRequest | undefined
  const settle = (result: R) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    resolve(result)
  }
  const timer = setTimeout(() => {
    settle(onTimeout())
    req?.destroy()
  }, timeoutMs)
  signal?.addEventListener("abort", () => {
    settle(onAbort())
    req?.destroy()
  })
  return {
    settle,
    attach: (r: http.ClientRequest) => {
      req = r
      if (settled) r.destroy()
    }
  }
}

export const pinnedPost = (target: CheckedTarget, options: PinnedPostOptions): Promise<PinnedPostResult> =>
  new Promise((resolve) => {
    const { settle, attach } = settlement<PinnedPostResult>(
      options.timeoutMs,
      options.signal,
      resolve,
      () => ({ _tag: "Failed", error: `timeout after ${options.timeoutMs} ms` }),
      () => ({ _tag: "Failed", error: "aborted" })
    )
    const headers = { ...options.headers, "content-length": String(options.body.byteLength) }
    const req = openPinned(target, "POST", headers, options, (res) => {
      settle({ _tag: "Response", statusCode: res.statusCode ?? 0 })
      let read = 0
      res.on("data", (chunk: Buffer) => {
        read += chunk.byteLength
        if (read > options.maxResponseBytes) res.destroy()
      })
      res.on("error", () => {})
      res.on("end", () => req.destroy())
    })
    attach(req)
    req.on("error", (e: NodeJS.ErrnoException) => settle({ _tag: "Failed", error: describeError(e) }))
    req.end(options.body)
  })

export interface PinnedGetOptions {
  readonly headers: Readonly<Record<string, string>>
  /** Deadline of the whole exchange, body included. */
  readonly timeoutMs: number
  /** Largest 2xx body accepted, in bytes. */
  readonly maxBodyBytes: number
  /** Extra trusted certificates (tests with a self-signed server). */
  readonly ca?: string | undefined
  readonly signal?: AbortSignal | undefined
}

export type PinnedGetResult =
  /** A 2xx answer and its whole body. */
  | { readonly _tag: "Body"; readonly statusCode: number; readonly contentType: string | undefined; readonly body: Uint8Array }
  /** Any other status; its body is not read. `location` for a redirect. */
  | { readonly _tag: "Status"; readonly statusCode: number; readonly location: string | undefined }
  /** A 2xx body over `maxBodyBytes`: declared (`bytesRead` 0) or met while reading. */
  | { readonly _tag: "TooLarge"; readonly bytesRead: number; readonly declaredBytes: number | undefined }
  | { readonly _tag: "Failed"; readonly error: string; readonly timedOut: boolean }

export const pinnedGet = (target: CheckedTarget, options: PinnedGetOptions): Promise<PinnedGetResult> =>
  new Promise((resolve) => {
    const { settle, attach } = settlement<PinnedGetResult>(
      options.timeoutMs,
      options.signal,
      resolve,
      () => ({ _tag: "Failed", error: `no complete answer within ${options.timeoutMs} ms`, timedOut: true }),
      () => ({ _tag: "Failed", error: "aborted", timedOut: false })
    )
    const req = openPinned(target, "GET", options.headers, options, (res) => {
      const statusCode = res.statusCode ?? 0
      if (statusCode < 200 || statusCode >= 300) {
        settle({ _tag: "Status", statusCode, location: res.headers.location })
        req.destroy()
        return
      }
      const declared = res.headers["content-length"] !== undefined ? Number(res.headers["content-length"]) : undefined
      if (declared !== undefined && declared > options.maxBodyBytes) {
        settle({ _tag: "TooLarge", bytesRead: 0, declaredBytes: declared })
        req.destroy()
        return
      }
      const chunks: Buffer[] = []
      let read = 0
      res.on("data", (chunk: Buffer) => {
        read += chunk.byteLength
        if (read > options.maxBodyBytes) {
          settle({ _tag: "TooLarge", bytesRead: read, declaredBytes: declared })
          req.destroy()
          return
        }
        chunks.push(chunk)
      })
      res.on("error", (e: NodeJS.ErrnoException) => settle({ _tag: "Failed", error: describeError(e), timedOut: false }))
      res.on("close", () => {
        if (!res.complete) settle({ _tag: "Failed", error: "connection closed before the body ended", timedOut: false })
      })
      res.on("end", () => {
        const body = Buffer.concat(chunks, read)
        const contentType = res.headers["content-type"]
        settle({ _tag: "Body", statusCode, contentType, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) })
        req.destroy()
      })
    })
    attach(req)
    req.on("error", (e: NodeJS.ErrnoException) => settle({ _tag: "Failed", error: describeError(e), timedOut: false }))
    req.end()
  })

const describeError = (e: NodeJS.ErrnoException): string => {
  const code = e.code !== undefined ? ` (${e.code})` : ""
  return `${e.message}${code}`.slice(0, 500)
}
