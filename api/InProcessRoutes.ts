/**
 * A route table called in process, as a `fetch`: the MCP endpoint's tools (`src/McpEndpoint.ts`)
 * call the main listener's own routes through the typed client with this instead of a loopback
 * connection, so a tool call passes exactly what an HTTP call to the route passes (the input gate,
 * the route's key check with its scopes and limits, its decoding, its handler, the error table's
 * refusal) and is attributed to the MCP client's own address, not to the loopback.
 *
 * The steps are the router's (`Router.ts` `mountRoutes`), in its order: the request target's
 * bound and gate, the body's bound and media type, then the route's handler (guard, authenticate,
 * decode, handle); a failure is its `errorReply`, a defect `INTERNAL`. What the router does for a
 * socket and not for a call in process is left out: CORS, the failed-authentication throttle (the
 * MCP endpoint checks the key at its door under that throttle), drain accounting (the endpoint's
 * requests are its own).
 */
import { Cause, Effect, Exit, Runtime } from "effect"
import { apiError } from "../src/domain/ApiError.js"
import { errorReply, type Reply } from "./Http.js"
import { gatePath, gateQuery, JSON_MEDIA_TYPES, unsupportedContentType } from "./InputGate.js"
import { isApiError } from "./QueryParams.js"
import { decodeParam, internalError, readBody, type RouteDef, uriTooLong } from "./Router.js"

interface Compiled {
  readonly route: RouteDef
  readonly pattern: RegExp
  readonly names: ReadonlyArray<string>
}

const compile = (route: RouteDef): Compiled => {
  const names = (route.path.match(/\{[^}]+\}/g) ?? []).map((m) => m.slice(1, -1))
  const source = route.path
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("([^/]+)")
  return { route, pattern: new RegExp(`^${source}$`), names }
}

export interface InProcessOptions {
  readonly runtime: Runtime.Runtime<never>
  /** The default body bound (a route's own `maxBytes` wins). */
  readonly maxBodyBytes: number
  readonly onDefect: (cause: Cause.Cause<unknown>, what: string) => void
}

/** The routes as a `fetch` for calls made on behalf of the client at `remoteAddress`. */
export const inProcessRoutes = (routes: ReadonlyArray<RouteDef>, o: InProcessOptions) => {
  const compiled = routes.map(compile)
  const runPromiseExit = Runtime.runPromiseExit(o.runtime)

  const reply = async (request: Request, remoteAddress: string): Promise<Reply> => {
    const url = new URL(request.url)
    const path = url.pathname
    const query = url.search.startsWith("?") ? url.search.slice(1) : url.search
    const onPath = compiled.filter((c) => c.pattern.test(path))
    const found = onPath.find((c) => c.route.method === request.method)
    if (found === undefined) {
      return onPath.length === 0
        ? errorReply(uriTooLong(path, query) ?? apiError("ROUTE_NOT_FOUND", `No route for ${path}`))
        : errorReply(apiError("METHOD_NOT_ALLOWED", `${request.method} is not supported on this path`, { headers: { Allow: onPath.map((c) => c.route.method).join(", ") } }))
    }
    const { route, pattern, names } = found
    const raws = (pattern.exec(path) ?? []).slice(1)
    const gated = uriTooLong(path, query) ?? gatePath(raws, names) ?? gateQuery(query)
    if (gated !== undefined) return errorReply(gated)
    const headers: Record<string, string> = {}
    for (const h of route.headers ?? []) {
      const v = request.headers.get(h)
      if (v !== null && v !== "") headers[h] = v
    }
    const base = { method: route.method, path, query, params: raws.map(decodeParam), headers, remoteAddress }
    let body: unknown = undefined
    const contentType = request.headers.get("content-type") ?? ""
    if (route.body !== undefined) {
      const limit = route.body.maxBytes ?? o.maxBodyBytes
      const bytes = Buffer.from(await request.arrayBuffer())
      if (bytes.byteLength > limit) return errorReply(apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } }))
      const accepts = route.body.accepts ?? JSON_MEDIA_TYPES
      const read = readBody(bytes, contentType, accepts, route.body.refuseContentType ?? ((mediaType: string) => unsupportedContentType(accepts, mediaType)))
      if (isApiError(read)) return errorReply(read)
      body = read.body
    }
    const req = contentType === "" || route.body === undefined ? { ...base, body } : { ...base, body, contentType }
    const what = `${route.method} ${path} (in process)`
    let out: Reply | Effect.Effect<Reply, unknown>
    try {
      out = route.handler(req)
    } catch (defect) {
      o.onDefect(Cause.die(defect), what)
      return internalError()
    }
    if (!Effect.isEffect(out)) return out
    const exit = await runPromiseExit(out)
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some" && isApiError(failure.value)) return errorReply(failure.value)
    o.onDefect(exit.cause, what)
    return internalError()
  }

  /** A `fetch` answering from the routes, for the client at `remoteAddress`. */
  return (remoteAddress: string): typeof globalThis.fetch =>
    (async (input: string | URL | Request, init?: RequestInit) => {
      const request = input instanceof Request && init === undefined ? input : new Request(input, init)
      const r = await reply(request, remoteAddress)
      const headers = new Headers()
      if (r.contentType !== undefined) headers.set("content-type", r.contentType)
      for (const [k, v] of r.headers ?? []) headers.append(k, v)
      return new Response(r.status === 204 || r.status === 304 ? null : (r.body ?? null), { status: r.status, headers })
    }) as typeof globalThis.fetch
}
