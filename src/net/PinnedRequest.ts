/**
 * One outbound POST to a target the public-target check approved, connected to exactly the
 * address that was checked: the socket's `lookup` answers with that address, so nothing resolves
 * the name again, while the URL's host still goes in `Host` and (for TLS) SNI and certificate
 * verification. Redirects are never followed (Node's client does not follow them; a 3xx is just
 * a status). No connection reuse (`agent: false`): every request is pinned on its own.
 *
 * Bounded: the whole exchange up to the response status has one deadline, and at most
 * `maxResponseBytes` of a response body are read before the socket is destroyed.
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

export const pinnedPost = (target: CheckedTarget, options: PinnedPostOptions): Promise<PinnedPostResult> =>
  new Promise((resolve) => {
    let settled = false
    const settle = (result: PinnedPostResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const common = {
      method: "POST",
      host: target.hostname,
      port: target.port,
      path: `${target.url.pathname}${target.url.search}`,
      headers: { ...options.headers, "content-length": String(options.body.byteLength) },
      agent: false as const,
      lookup: pinnedLookup(target.address, target.family)
    }
    const onResponse = (res: http.IncomingMessage) => {
      settle({ _tag: "Response", statusCode: res.statusCode ?? 0 })
      let read = 0
      res.on("data", (chunk: Buffer) => {
        read += chunk.byteLength
        if (read > options.maxResponseBytes) res.destroy()
      })
      res.on("error", () => {})
      res.on("end", () => req.destroy())
    }
    const req =
      target.protocol === "https:"
        ? https.request(
            {
              ...common,
              ...(target.servername !== undefined ? { servername: target.servername } : {}),
              ...(options.ca !== undefined ? { ca: options.ca } : {})
            },
            onResponse
          )
        : http.request(common, onResponse)
    const timer = setTimeout(() => {
      settle({ _tag: "Failed", error: `timeout after ${options.timeoutMs} ms` })
      req.destroy()
    }, options.timeoutMs)
    req.on("error", (e: NodeJS.ErrnoException) => settle({ _tag: "Failed", error: describeError(e) }))
    options.signal?.addEventListener("abort", () => {
      settle({ _tag: "Failed", error: "aborted" })
      req.destroy()
    })
    req.end(options.body)
  })

const describeError = (e: NodeJS.ErrnoException): string => {
  const code = e.code !== undefined ? ` (${e.code})` : ""
  return `${e.message}${code}`.slice(0, 500)
}
