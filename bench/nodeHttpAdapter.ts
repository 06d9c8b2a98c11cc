/**
 * Bench-only: mounts a `RouteDef[]` on `node:http`, so `bench/http.ts` can run the same handlers
 * behind Node's own server as the baseline for `api/Router.ts` on uWS. It mirrors the router's
 * contract and nothing more: exact paths and `{param}` segments (URL-decoded), only the declared
 * headers copied, sync handlers answered at once, Effect handlers run with `Effect.runPromiseExit`
 * (failure → the error envelope, defect → 500 `INTERNAL`), unknown paths 404 `ROUTE_NOT_FOUND`,
 * another method 405 `METHOD_NOT_ALLOWED` with `Allow`, bodies bounded and parsed as JSON.
 * Not a serving path: DESIGN.md keeps production on uWS.
 */
import { Cause, Effect, Exit } from "effect"
import * as http from "node:http"
import { type ApiError, apiError, validationFailed } from "../src/domain/ApiError.js"
import { errorReply, type Method, type Reply, type Request } from "../api/Http.js"
import { decodeParam, type RouteDef } from "../api/Router.js"

interface PatternRoutes {
  /** Anchored; one capture group per `{param}`. */
  readonly regex: RegExp
  readonly byMethod: Map<string, RouteDef>
  readonly allow: string
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^$()|[\]\\]/g, "\\$&")

const toRegex = (path: string): RegExp =>
  new RegExp(`^${path.split(/\{[^}]+\}/).map(escapeRegex).join("([^/]+)")}$`)

const write = (res: http.ServerResponse, reply: Reply): void => {
  if (res.destroyed) return
  const headers: Record<string, string | number> = {}
  if (reply.contentType !== undefined) headers["Content-Type"] = reply.contentType
  if (reply.headers !== undefined) for (const [k, v] of reply.headers) headers[k] = v
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers)
    res.end()
    return
  }
  // An explicit length keeps Node off chunked encoding, as uWS's end(body) does.
  headers["Content-Length"] = typeof reply.body === "string" ? Buffer.byteLength(reply.body) : reply.body.byteLength
  res.writeHead(reply.status, headers)
  res.end(reply.body)
}

const internalError = () => errorReply(apiError("INTERNAL", "Internal error; nothing was recorded"))

export interface NodeAdapterOptions {
  readonly maxBodyBytes: number
}

export const nodeHttpHandler = (
  routes: ReadonlyArray<RouteDef>,
  options: NodeAdapterOptions
): ((req: http.IncomingMessage, res: http.ServerResponse) => void) => {
  // Static paths by exact string, patterned ones by regex in table order (uWS prefers static too).
  const staticPaths = new Map<string, PatternRoutes>()
  const patterned: PatternRoutes[] = []
  const grouped = new Map<string, RouteDef[]>()
  for (const route of routes) {
    const list = grouped.get(route.path) ?? []
    if (list.some((r) => r.method === route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`)
    list.push(route)
    grouped.set(route.path, list)
  }
  for (const [path, list] of grouped) {
    const entry: PatternRoutes = {
      regex: toRegex(path),
      byMethod: new Map(list.map((r) => [r.method, r])),
      allow: list.map((r) => r.method).join(", ")
    }
    if (path.includes("{")) patterned.push(entry)
    else staticPaths.set(path, entry)
  }

  const run = (res: http.ServerResponse, route: RouteDef, req: Request): void => {
    let out: Reply | Effect.Effect<Reply, ApiError>
    try {
      out = route.handler(req)
    } catch {
      out = internalError()
    }
    if (!Effect.isEffect(out)) {
      write(res, out as Reply)
      return
    }
    void Effect.runPromiseExit(out).then((exit) => {
      if (Exit.isSuccess(exit)) return write(res, exit.value)
      const failure = Cause.failureOption(exit.cause)
      write(res, failure._tag === "Some" ? errorReply(failure.value) : internalError())
    })
  }

  return (nreq, res) => {
    const url = nreq.url ?? "/"
    const q = url.indexOf("?")
    const path = q === -1 ? url : url.slice(0, q)
    const query = q === -1 ? "" : url.slice(q + 1)

    let entry = staticPaths.get(path)
    let match: RegExpExecArray | null = null
    if (entry === undefined) {
      for (const candidate of patterned) {
        match = candidate.regex.exec(path)
        if (match !== null) {
          entry = candidate
          break
        }
      }
    }
    if (entry === undefined) {
      nreq.resume()
      write(res, errorReply(apiError("ROUTE_NOT_FOUND", `No route for ${path}`)))
      return
    }
    const route = entry.byMethod.get(nreq.method ?? "")
    if (route === undefined) {
      nreq.resume()
      write(
        res,
        errorReply(apiError("METHOD_NOT_ALLOWED", `${nreq.method ?? ""} is not supported on this path`, { headers: { Allow: entry.allow } }))
      )
      return
    }

    const params = match === null ? [] : match.slice(1).map(decodeParam)
    const headers: Record<string, string> = {}
    for (const h of route.headers ?? []) {
      const v = nreq.headers[h]
      if (typeof v === "string" && v !== "") headers[h] = v
    }
    const base = {
      method: route.method as Method,
      path,
      query,
      params,
      headers,
      remoteAddress: nreq.socket.remoteAddress ?? ""
    }
    if (route.body === undefined) {
      nreq.resume()
      run(res, route, { ...base, body: undefined })
      return
    }

    const limit = route.body.maxBytes ?? options.maxBodyBytes
    const tooLarge = () => errorReply(apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } }))
    if (Number(nreq.headers["content-length"] ?? "0") > limit) {
      nreq.resume()
      write(res, tooLarge())
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    nreq.on("data", (chunk: Buffer) => {
      if (refused) return
      size += chunk.byteLength
      if (size > limit) {
        refused = true
        res.setHeader("Connection", "close")
        write(res, tooLarge())
        return
      }
      chunks.push(chunk)
    })
    nreq.on("end", () => {
      if (refused) return
      const raw = Buffer.concat(chunks).toString("utf8")
      let body: unknown
      if (raw.trim() !== "") {
        try {
          body = JSON.parse(raw)
        } catch {
          write(res, errorReply(validationFailed("body", "Request body is not valid JSON")))
          return
        }
      }
      run(res, route, { ...base, body })
    })
  }
}

export const createNodeServer = (routes: ReadonlyArray<RouteDef>, options: NodeAdapterOptions): http.Server =>
  http.createServer(nodeHttpHandler(routes, options))
