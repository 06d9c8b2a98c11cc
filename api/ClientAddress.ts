/**
 * The client's address behind trusted proxies, for every per-client decision and log line of a
 * listener: `behindProxies(app, trust)` gives the uWS app to mount routes and the WebSocket
 * behaviour on. Each HTTP handler and each upgrade registered through it first resolves the client
 * (`src/net/ProxyTrust.ts`: the first untrusted address in `X-Forwarded-For` from the right, when
 * the connection comes from a trusted proxy) and, when it differs from the connection's peer,
 * makes that response's `getRemoteAddressAsText` answer it. So the router's failed-authentication
 * throttle, the per-client limits in route guards, the stream's upgrade checks and its log lines
 * read the client with no change of their own, on the main thread and on the stream threads alike.
 *
 * Cost: with no trusted proxy configured the app itself is returned, untouched (no wrapper, no
 * allocation per request). With proxies: one peer read and a comparison per rule; the header is
 * read only for a trusted peer.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocketBehavior } from "uws-pack"
import { clientBehind, type ProxyTrust } from "../src/net/ProxyTrust.js"

export const FORWARDED_FOR_HEADER = "x-forwarded-for"

const textEncoder = new TextEncoder()

/** Points `res`'s remote address at the client when the peer is a trusted proxy. Must run inside the uWS handler (reads `req`). */
export const resolveClient = (trust: ProxyTrust, res: HttpResponse, req: HttpRequest): void => {
  const client = clientBehind(trust, new Uint8Array(res.getRemoteAddress()), req.getHeader(FORWARDED_FOR_HEADER))
  if (client === undefined) return
  const text = textEncoder.encode(client).buffer as ArrayBuffer
  const shadow = res as unknown as { getRemoteAddressAsText: () => ArrayBuffer }
  shadow.getRemoteAddressAsText = () => text
}

const HTTP_METHODS = new Set(["get", "post", "put", "patch", "del", "options", "head", "connect", "trace", "any"])

type HttpHandler = (res: HttpResponse, req: HttpRequest) => void | Promise<void>

/** `app` when nothing is trusted; else `app` with every handler and upgrade resolving the client first. */
export const behindProxies = <A extends TemplatedApp>(app: A, trust: ProxyTrust | undefined): A => {
  if (trust === undefined || trust.rules.length === 0) return app
  return new Proxy(app, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== "function") return value
      if (typeof prop === "string" && HTTP_METHODS.has(prop)) {
        return (pattern: string, handler: HttpHandler) => {
          ;(value as (p: string, h: HttpHandler) => unknown).call(target, pattern, (res: HttpResponse, req: HttpRequest) => {
            resolveClient(trust, res, req)
            return handler(res, req)
          })
          return receiver
        }
      }
      if (prop === "ws") {
        return (pattern: string, behavior: WebSocketBehavior<unknown>) => {
          const upgrade = behavior.upgrade
          const wrapped: WebSocketBehavior<unknown> =
            upgrade === undefined
              ? behavior
              : {
                  ...behavior,
                  upgrade: (res, req, context) => {
                    resolveClient(trust, res, req)
                    return upgrade(res, req, context)
                  }
                }
          ;(value as (p: string, b: WebSocketBehavior<unknown>) => unknown).call(target, pattern, wrapped)
          return receiver
        }
      }
      return (value as (...args: unknown[]) => unknown).bind(target)
    }
  })
}
