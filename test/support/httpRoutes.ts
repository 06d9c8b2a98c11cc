/**
 * Route modules over real HTTP in tests: mount a route table on a uWS listener (`serve`, port 0)
 * and call one route by filling its path template, so status, headers and bodies are what a
 * client sees through the shared router (body bounds, error envelopes, content types).
 */
import { Effect, type Scope } from "effect"
import { serve } from "../../api/Server.js"
import type { RouteDef } from "../../api/Router.js"

export interface HttpReply {
  readonly status: number
  readonly contentType: string | undefined
  /** Lower-case names, as fetch gives them. */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

/** Serves `routes` for the scope's lifetime; the listener's base URL. */
export const mountRoutes = (routes: ReadonlyArray<RouteDef>, name = "routes-test"): Effect.Effect<string, unknown, Scope.Scope> =>
  Effect.map(serve({ name, host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, routes }), (s) => s.url)

/** Calls `route` on the server at `baseUrl`: path parameters in template order, URL-encoded. */
export const requestRoute = async (
  baseUrl: string,
  route: RouteDef,
  o: {
    readonly params?: ReadonlyArray<string>
    readonly query?: string
    readonly body?: unknown
    readonly headers?: Readonly<Record<string, string>>
  } = {}
): Promise<HttpReply> => {
  let i = 0
  const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(o.params?.[i++] ?? ""))
  const headers: Record<string, string> = { ...o.headers }
  if (o.body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${baseUrl}${path}${o.query ? `?${o.query}` : ""}`, {
    method: route.method,
    headers,
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {})
  })
  return { status: res.status, contentType: res.headers.get("content-type") ?? undefined, headers: [...res.headers.entries()], body: await res.text() }
}
