/**
 * Route table → uWebSockets.js. Each `RouteDef` is both the handler and its documentation (the
 * OpenAPI document is generated from the same table, so the two cannot drift).
 *
 * Invariants:
 * - Everything a handler needs from the uWS request (params, query, declared headers) is copied
 *   before the handler runs; uWS request objects are invalid after the callback returns.
 * - `onAborted` is registered before any asynchronous step; every write happens inside `cork`.
 * - Bodies are bounded: a declared Content-Length over the limit is refused at once (413), a
 *   streamed body is cut off at the limit; chunks are copied because uWS neuters them.
 * - Synchronous handlers run with no Effect machinery (the hot read path); Effect handlers run on
 *   the server's runtime and are interrupted when the client goes away.
 * - Unknown paths answer 404 `ROUTE_NOT_FOUND`, a known path with another method 405
 *   `METHOD_NOT_ALLOWED` with `Allow`; a defect answers 500 `INTERNAL`, never a stack.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from "uws-pack"
import { Cause, Effect, Exit, Fiber, Runtime } from "effect"
import type { Schema } from "effect"
import { type ApiError, apiError, validationFailed } from "../src/domain/ApiError.js"
import { errorReply, type Method, type Reply, type Request, statusLine } from "./Http.js"

export interface ParamDoc {
  readonly name: string
  readonly description: string
  readonly required?: boolean
  /** A JSON Schema for the parameter's value. */
  readonly schema: Record<string, unknown>
}

export interface ResponseDoc {
  readonly description: string
  readonly schema?: Schema.Schema.Any
  readonly headers?: ReadonlyArray<string>
}

export type Handler = (req: Request) => Reply | Effect.Effect<Reply, ApiError>

export interface RouteDef {
  readonly method: Method
  /** OpenAPI-style path: `/api/v1/markets/{chain}/{mint}`. */
  readonly path: string
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  readonly tags: ReadonlyArray<string>
  /** Credential the route takes; `public` needs none. */
  readonly auth: "public" | "agentKey" | "session" | "bearer"
  readonly pathParams?: ReadonlyArray<ParamDoc>
  readonly query?: ReadonlyArray<ParamDoc>
  /** Lower-case request headers the handler reads. */
  readonly headers?: ReadonlyArray<string>
  readonly body?: { readonly schema: Schema.Schema.Any; readonly maxBytes?: number }
  readonly responses: Readonly<Record<number, ResponseDoc>>
  readonly handler: Handler
  /** Left out of the OpenAPI document (probes). */
  readonly internal?: boolean
}

export interface RouterOptions {
  /** Default body bound for routes that take a body. */
  readonly maxBodyBytes: number
  readonly runtime: Runtime.Runtime<never>
  /** Called with unexpected failures (defects), for logging. */
  readonly onDefect: (cause: Cause.Cause<unknown>, req: Request) => void
}

const uwsPattern = (path: string): string => path.replace(/\{[^}]+\}/g, (m) => `:${m.slice(1, -1)}`)
const paramCount = (path: string): number => (path.match(/\{[^}]+\}/g) ?? []).length

/** Path parameters arrive percent-encoded; a malformed escape is kept as sent. */
export const decodeParam = (s: string): string => {
  if (!s.includes("%")) return s
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const textDecoder = new TextDecoder()
const remoteAddress = (res: HttpResponse): string => textDecoder.decode(res.getRemoteAddressAsText())

/** Writes a reply unless the client already went away. Must be called inside or via `cork`. */
const write = (res: HttpResponse, reply: Reply): void => {
  res.writeStatus(statusLine(reply.status))
  if (reply.contentType !== undefined) res.writeHeader("Content-Type", reply.contentType)
  if (reply.headers !== undefined) for (const [k, v] of reply.headers) res.writeHeader(k, v)
  // endWithoutBody() writes no Content-Length: right for 304, whose length is the 200's.
  if (reply.body === undefined) res.endWithoutBody()
  else res.end(reply.body)
}

const internalError = () => errorReply(apiError("INTERNAL", "Internal error; nothing was recorded"))

export const mountRoutes = (app: TemplatedApp, routes: ReadonlyArray<RouteDef>, options: RouterOptions): void => {
  const runFork = Runtime.runFork(options.runtime)
  const byPath = new Map<string, RouteDef[]>()
  for (const route of routes) {
    const list = byPath.get(route.path) ?? []
    if (list.some((r) => r.method === route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`)
    list.push(route)
    byPath.set(route.path, list)
  }

  const run = (res: HttpResponse, route: RouteDef, req: Request, state: { aborted: boolean }) => {
    let out: Reply | Effect.Effect<Reply, ApiError>
    try {
      out = route.handler(req)
    } catch (defect) {
      options.onDefect(Cause.die(defect), req)
      out = internalError()
    }
    if (!Effect.isEffect(out)) {
      if (!state.aborted) res.cork(() => write(res, out as Reply))
      return
    }
    const fiber = runFork(out)
    res.onAborted(() => {
      state.aborted = true
      runFork(Fiber.interrupt(fiber))
    })
    fiber.addObserver((exit) => {
      if (state.aborted) return
      let reply: Reply
      if (Exit.isSuccess(exit)) reply = exit.value
      else {
        const failure = Cause.failureOption(exit.cause)
        if (failure._tag === "Some") reply = errorReply(failure.value)
        else {
          options.onDefect(exit.cause, req)
          reply = internalError()
        }
      }
      res.cork(() => write(res, reply))
    })
  }

  const handle = (route: RouteDef) => {
    const n = paramCount(route.path)
    const headerNames = route.headers ?? []
    return (res: HttpResponse, uReq: HttpRequest): void => {
      const params: string[] = new Array(n)
      for (let i = 0; i < n; i++) params[i] = decodeParam(uReq.getParameter(i) ?? "")
      const headers: Record<string, string> = {}
      for (const h of headerNames) {
        const v = uReq.getHeader(h)
        if (v !== "") headers[h] = v
      }
      const base = {
        method: route.method,
        path: uReq.getUrl(),
        query: uReq.getQuery() ?? "",
        params,
        headers,
        remoteAddress: remoteAddress(res)
      }
      const state = { aborted: false }
      if (route.body === undefined) {
        run(res, route, { ...base, body: undefined }, state)
        return
      }
      // Body routes: bounded read, then JSON.
      const limit = route.body.maxBytes ?? options.maxBodyBytes
      const declared = Number(uReq.getHeader("content-length") || "0")
      if (declared > limit) {
        res.cork(() => {
          write(res, errorReply(apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } })))
        })
        return
      }
      res.onAborted(() => {
        state.aborted = true
      })
      const chunks: Buffer[] = []
      let size = 0
      let refused = false
      res.onData((chunk, isLast) => {
        if (refused || state.aborted) return
        size += chunk.byteLength
        if (size > limit) {
          refused = true
          res.cork(() => {
            res.writeStatus(statusLine(413))
            const r = errorReply(apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } }))
            res.writeHeader("Content-Type", r.contentType ?? "application/json")
            res.end(r.body, true)
          })
          return
        }
        chunks.push(Buffer.from(new Uint8Array(chunk).slice()))
        if (!isLast) return
        const raw = Buffer.concat(chunks).toString("utf8")
        let body: unknown
        if (raw.trim() === "") body = undefined
        else {
          try {
            body = JSON.parse(raw)
          } catch {
            res.cork(() => write(res, errorReply(validationFailed("body", "Request body is not valid JSON"))))
            return
          }
        }
        run(res, route, { ...base, body }, state)
      })
    }
  }

  const methodNotAllowed = (allowed: string) => (res: HttpResponse, uReq: HttpRequest) => {
    const method = uReq.getCaseSensitiveMethod()
    res.cork(() =>
      write(
        res,
        errorReply(apiError("METHOD_NOT_ALLOWED", `${method} is not supported on this path`, { headers: { Allow: allowed } }))
      )
    )
  }

  for (const [path, list] of byPath) {
    const pattern = uwsPattern(path)
    for (const route of list) {
      switch (route.method) {
        case "GET":
          app.get(pattern, handle(route))
          break
        case "POST":
          app.post(pattern, handle(route))
          break
        case "PUT":
          app.put(pattern, handle(route))
          break
        case "PATCH":
          app.patch(pattern, handle(route))
          break
        case "DELETE":
          app.del(pattern, handle(route))
          break
      }
    }
    const allowed = list.map((r) => r.method).join(", ")
    app.any(pattern, methodNotAllowed(allowed))
  }

  app.any("/*", (res, uReq) => {
    const path = uReq.getUrl()
    res.cork(() => write(res, errorReply(apiError("ROUTE_NOT_FOUND", `No route for ${path}`))))
  })
}
