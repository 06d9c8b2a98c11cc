/**
 * Route table → uWebSockets.js. Each `RouteDef` is both the handler and its documentation (the
 * OpenAPI document is generated from the same table, so the two cannot drift).
 *
 * Declared inputs: a route built with `route({...})` declares its path and query parameters
 * (`Param`s from `QueryParams.ts`) and its body `Schema`; the mounted handler decodes them before
 * the route's own handler runs, refusing with the declaration's `ApiError` (`VALIDATION_FAILED`
 * naming the field, or a route-specific code), and hands the handler one object of typed values
 * (`Input`). The declarations are kept on the `RouteDef` (`inputs`) for `OpenApi.ts`. Order per
 * request: `guard` (synchronous: rate limits), `authenticate` (an Effect), then decoding (a
 * hand-written body decoder is handed the caller `authenticate` answered), then the handler. A
 * body is decoded once, here: by its Schema (`field` the first problem's path), or by the route's
 * decoder where a Schema cannot say the rules; handlers never decode it again. A route with nothing declared decodes nothing and allocates nothing; one with path
 * and query parameters and no `authenticate` stays synchronous (the hot read path).
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
 * - Every request passes the input gate (`InputGate.ts`) before the route's own decoding.
 * - A request counts as in flight from its body's first byte (or its asynchronous handler's
 *   start) until it is answered or its client goes away; `drain` (graceful shutdown) makes every
 *   later reply close its connection and completes when none is in flight.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from "uws-pack"
import { Cause, Effect, Either, Exit, Fiber, ParseResult, Runtime, Schema } from "effect"
import { type ApiError, apiError, validationFailed } from "../src/domain/ApiError.js"
import type { ErrorCode } from "../src/domain/ErrorCodes.js"
import type { FailedAuthThrottle } from "./auth/FailedAuthThrottle.js"
import { errorReply, type Header, type Method, type Reply, type Request, statusLine } from "./Http.js"
import {
  acceptsMediaType,
  bodyText,
  gateJson,
  gatePath,
  gateQuery,
  isJsonMediaType,
  JSON_MEDIA_TYPES,
  mediaTypeOf,
  unsupportedContentType
} from "./InputGate.js"
import { type Decoded, decodeInto, isApiError, type Param, type Params, scanQuery, undeclaredParam } from "./QueryParams.js"

/**
 * One documented response (`OpenApi.ts` builds the document from these): a success's body
 * `schema` (an Effect schema, closed in the document), or a refusal's `codes` (the envelope with
 * `error.code` one of them); a refusal with neither is the envelope with any code. Built with
 * `answer(...)` and `refusal([...])` from `OpenApi.ts`.
 */
export interface ResponseDoc {
  readonly description: string
  readonly schema?: Schema.Schema.Any
  /** A refusal's possible codes. */
  readonly codes?: ReadonlyArray<ErrorCode>
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
  /** Lower-case request headers the handler reads. */
  readonly headers?: ReadonlyArray<string>
  /** The router reads the body (bounded) and parses it as JSON; `inputs.body` decodes it. */
  readonly body?: RouteBody
  readonly responses: Readonly<Record<number, ResponseDoc>>
  readonly handler: Handler
  /** Left out of the OpenAPI document (probes). */
  readonly internal?: boolean
  /** What `route()` decodes before the handler runs; `OpenApi.ts` documents these. */
  readonly inputs?: RouteInputs
}

/** How the router reads a route's body (documented as `schema`). */
export interface RouteBody {
  readonly schema: Schema.Schema.Any
  readonly maxBytes?: number
  /**
   * Media types the route takes (`type/*` and `*\/*` match several); default JSON only. A
   * non-empty body of another type is refused (`refuseContentType`, by default the gate's
   * `VALIDATION_FAILED` naming `content-type`). A JSON type is parsed and gated; any other
   * accepted type reaches the handler as its bytes (`Uint8Array`), with `req.contentType`.
   */
  readonly accepts?: ReadonlyArray<string>
  /** The route's own refusal of a media type it does not take (the upload route's `UPLOAD_INVALID`). */
  readonly refuseContentType?: (mediaType: string) => ApiError
}

/** Content-type options a declared body shares with `RouteBody`. */
type BodyMediaTypes = Pick<RouteBody, "accepts" | "refuseContentType">

/** A declared request body: its schema (decoded and documented) and bound. */
export interface SchemaBodyDecl<A> extends BodyMediaTypes {
  readonly schema: Schema.Schema<A, any, never>
  /**
   * What OpenAPI shows instead of `schema`, only where `schema` has no JSON Schema (a
   * `Schema.declare` without a `jsonSchema` annotation, as the strategy definition's entry).
   */
  readonly documented?: Schema.Schema.Any
  readonly maxBytes?: number
  /**
   * A decoder with the route's own refusal (default: the schema's, refusing `VALIDATION_FAILED`
   * with `field` the first problem's path and message `<path>: <problem>`).
   */
  readonly decode?: (body: unknown) => A | ApiError
}

/**
 * A declared request body a hand-written decoder turns into a service's input (with the spec's
 * field names and messages), where a Schema cannot say the rules; `schema` is the wire shape,
 * documented only. Built with `decodedBody`. `decode` runs once, after `authenticate`, and is
 * handed the caller it answered (a launch body's rules read the key's environment).
 */
export interface DecoderBodyDecl<A, C = any> extends BodyMediaTypes {
  readonly schema: Schema.Schema.Any
  readonly documented?: undefined
  readonly maxBytes?: number
  readonly decode: (body: unknown, caller: C) => A | ApiError
}

export type BodyDecl<A, C = any> = SchemaBodyDecl<A> | DecoderBodyDecl<A, C>

/**
 * A body decoded by `decode`, documented as `schema`. A function rather than a literal so the
 * handler's body type comes from `decode` alone.
 */
export const decodedBody = <A, C = unknown>(body: DecoderBodyDecl<A, C>): DecoderBodyDecl<A, C> => body

export interface RouteInputs {
  readonly path: Params
  readonly query: Params
  // `any`: a schema is invariant in its type, and the table holds every route's.
  readonly body?: BodyDecl<any>
}

/** What a handler receives: every declared parameter by name, decoded, and `body` when declared. */
export type Input<P extends Params, Q extends Params, B> = Decoded<P> & Decoded<Q> & ([B] extends [never] ? unknown : { readonly body: B })

/** A route's documentation and declarations, and a handler of the decoded values (see `route`). */
export interface RouteSpec<P extends Params, Q extends Params, B, C> extends Omit<RouteDef, "body" | "handler" | "inputs"> {
  /** Every `{name}` of `path`, by name. */
  readonly pathParams?: P
  readonly query?: Q
  /** Refuse a query parameter `query` does not declare (`VALIDATION_FAILED` naming it), before decoding the declared ones. */
  readonly closedQuery?: boolean
  readonly body?: BodyDecl<B, C>
  /** Runs first, synchronously: a reply refuses the request (rate limits). */
  readonly guard?: (req: Request) => Reply | undefined
  /** Runs before decoding; its value reaches the handler; a `Reply` failure is the answer. */
  readonly authenticate?: (req: Request) => Effect.Effect<C, ApiError | Reply>
  readonly handler: (req: Request, input: Input<P, Q, B>, caller: C) => Reply | Effect.Effect<Reply, ApiError>
}

export interface RouterOptions {
  /** Default body bound for routes that take a body. */
  readonly maxBodyBytes: number
  readonly runtime: Runtime.Runtime<never>
  /** Called with unexpected failures (defects), for logging. */
  readonly onDefect: (cause: Cause.Cause<unknown>, req: Request) => void
  /**
   * Counts every 401 a credentialed route answers per client address and refuses an address over
   * its budget 429 before the route runs. Absent: no throttle.
   */
  readonly authFailures?: FailedAuthThrottle
  /** Cross-origin reads from the engine's own web page (`CorsPolicy`); absent: no CORS headers, preflights 404/405. */
  readonly cors?: CorsPolicy
  /** The listener's requests in flight, shared with other endpoints on it (the MCP endpoint); absent: the routes' own. */
  readonly requests?: RequestsInFlight
}

/**
 * Which browser origins may call a listener: the web page the main listener serves, on the
 * market-data listener's other port. Plain data so it crosses to the stream's worker threads.
 * An origin is admitted when it is one of `origins`, or when it is `http(s)://<host>:<pagePort>`
 * with `<host>` the request's own `Host` name (the page opened by whatever name reaches this
 * machine). Any other origin gets no CORS header, so the browser keeps the answer from its script.
 */
export interface CorsPolicy {
  readonly pagePort: number
  readonly origins: ReadonlyArray<string>
}

/** Seconds a browser may reuse a preflight's answer. */
export const CORS_MAX_AGE_S = 600

const hostName = (host: string): string => (host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!)

/** The `Access-Control-Allow-Origin` value for a request, or undefined when its origin is not admitted. */
export const corsOrigin = (policy: CorsPolicy, origin: string, host: string): string | undefined => {
  if (origin === "" || origin === "null") return undefined
  if (policy.origins.includes(origin)) return origin
  const name = hostName(host)
  if (name === "") return undefined
  return origin === `http://${name}:${policy.pagePort}` || origin === `https://${name}:${policy.pagePort}` ? origin : undefined
}

const corsHeaders = (origin: string): ReadonlyArray<Header> => [
  ["Access-Control-Allow-Origin", origin],
  ["Vary", "Origin"]
]

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

const pathNames = (path: string): ReadonlyArray<string> => (path.match(/\{[^}]+\}/g) ?? []).map((m) => m.slice(1, -1))

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("")

/** The schema's decoder with the default refusal: the first problem, `field` its path. */
export const schemaBodyDecoder = <A>(schema: Schema.Schema<A, any, never>): ((body: unknown) => A | ApiError) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first" })
  return (body) => {
    const r = decode(body)
    if (Either.isRight(r)) return r.right
    const first = ParseResult.ArrayFormatter.formatErrorSync(r.left)[0]
    const path = first === undefined ? "" : formatPath(first.path)
    const problem = first === undefined ? "is invalid" : first._tag === "Missing" ? "is required" : first.message
    return validationFailed(path === "" ? "body" : path, path === "" ? `body: ${problem}` : `${path}: ${problem}`)
  }
}

const NOTHING_DECLARED: never = Object.freeze({}) as never


/**
 * A `RouteDef` whose mounted handler decodes what `spec` declares before `spec.handler` runs,
 * typed from the declarations: `route({ pathParams: { chain: chainParam(…) }, query: { limit:
 * intParam(…) }, handler: (req, { chain, limit }) => … })` hands the handler `chain: ChainId` and
 * `limit: number` with no casts. Throws at construction when `pathParams` and the path's `{name}`s
 * differ, or a name is declared twice (path and query share the handler's input).
 */
export const route = <P extends Params = {}, Q extends Params = {}, B = never, C = undefined>(spec: RouteSpec<P, Q, B, C>): RouteDef => {
  const { authenticate, body, closedQuery, guard, handler, pathParams, query, ...doc } = spec
  const template = pathNames(spec.path)
  const declaredPath: Params = pathParams ?? {}
  const declaredQuery: Params = query ?? {}
  const pathKeys = Object.keys(declaredPath)
  if (pathKeys.length !== template.length || template.some((n) => declaredPath[n] === undefined)) {
    throw new Error(`${spec.method} ${spec.path}: pathParams must declare exactly ${template.join(", ") || "nothing"}`)
  }
  const queryNames = Object.keys(declaredQuery)
  for (const n of queryNames) if (declaredPath[n] !== undefined || n === "body") throw new Error(`${spec.method} ${spec.path}: '${n}' declared twice`)
  const pathParamList: ReadonlyArray<Param<unknown>> = template.map((n) => declaredPath[n]!)
  const queryParamList: ReadonlyArray<Param<unknown>> = queryNames.map((n) => declaredQuery[n]!)
  const decodeBody: ((body: unknown, caller: C) => B | ApiError) | undefined =
    body === undefined ? undefined : (body.decode ?? schemaBodyDecoder((body as SchemaBodyDecl<B>).schema))

  const inputs: RouteInputs = { path: declaredPath, query: declaredQuery, ...(body !== undefined ? { body } : {}) }
  const def = {
    ...doc,
    ...(body !== undefined
      ? {
          body: {
            schema: body.documented ?? body.schema,
            ...(body.maxBytes !== undefined ? { maxBytes: body.maxBytes } : {}),
            ...(body.accepts !== undefined ? { accepts: body.accepts } : {}),
            ...(body.refuseContentType !== undefined ? { refuseContentType: body.refuseContentType } : {})
          }
        }
      : {}),
    inputs
  }

  const nothingDeclared = template.length === 0 && queryNames.length === 0 && decodeBody === undefined && closedQuery !== true
  /** The decoded input, or the refusal. Allocates the one input object (and a query's raw array). */
  const decode = (req: Request, caller: C): Input<P, Q, B> | ApiError => {
    const out: Record<string, unknown> = {}
    const refusedPath = decodeInto(out, req.params, template, pathParamList)
    if (refusedPath !== undefined) return refusedPath
    if (closedQuery === true) {
      const unknown = undeclaredParam(req.query, queryNames)
      if (unknown !== undefined) return validationFailed(unknown, `Unknown parameter '${unknown}'; expected ${queryNames.join(", ")}`)
    }
    if (queryNames.length > 0) {
      const raws = scanQuery(req.query, queryNames, queryParamList)
      if (isApiError(raws)) return raws
      const refusedQuery = decodeInto(out, raws, queryNames, queryParamList)
      if (refusedQuery !== undefined) return refusedQuery
    }
    if (decodeBody !== undefined) {
      const b = decodeBody(req.body, caller)
      if (isApiError(b)) return b
      out.body = b
    }
    return out as unknown as Input<P, Q, B>
  }

  const decoded = nothingDeclared
    ? (req: Request, caller: C): Reply | Effect.Effect<Reply, ApiError> => handler(req, NOTHING_DECLARED, caller)
    : (req: Request, caller: C): Reply | Effect.Effect<Reply, ApiError> => {
        const input = decode(req, caller)
        return isApiError(input) ? errorReply(input) : handler(req, input, caller)
      }
  const afterGuard: Handler =
    authenticate === undefined
      ? (req) => decoded(req, undefined as C)
      : (req) =>
          Effect.matchEffect(authenticate(req), {
            onFailure: (e) => (isApiError(e) ? Effect.fail(e) : Effect.succeed(e)),
            onSuccess: (caller) => {
              const out = decoded(req, caller)
              return Effect.isEffect(out) ? out : Effect.succeed(out)
            }
          })
  const mounted: Handler =
    guard === undefined
      ? afterGuard
      : (req) => {
          const refused = guard(req)
          return refused !== undefined ? refused : afterGuard(req)
        }
  return { ...def, handler: mounted }
}

const textDecoder = new TextDecoder()
const remoteAddress = (res: HttpResponse): string => textDecoder.decode(res.getRemoteAddressAsText())

/** Writes a reply (closing the connection after it when `close`). Must be called inside or via `cork`. */
const write = (res: HttpResponse, reply: Reply, close: boolean): void => {
  res.writeStatus(statusLine(reply.status))
  if (reply.contentType !== undefined) res.writeHeader("Content-Type", reply.contentType)
  if (reply.headers !== undefined) for (const [k, v] of reply.headers) res.writeHeader(k, v)
  // endWithoutBody() writes no Content-Length: right for 304, whose length is the 200's. (Given
  // any argument, this build's endWithoutBody writes nothing at all, so `close` is a header here.)
  if (reply.body === undefined) {
    if (close) res.writeHeader("Connection", "close")
    res.endWithoutBody()
  } else res.end(reply.body, close)
}

/**
 * A request target (path and query) longer than this is refused 414 `URI_TOO_LONG` by the router.
 * uWS itself answers 431 when the whole request head passes its 4 KiB limit (the build's
 * `UWS_HTTP_MAX_HEADERS_SIZE` default), so the bound sits below it: room for a 60-token prices
 * query (about 2.8 KiB escaped) and ordinary headers.
 */
export const maxUrlLength = 3072

export const uriTooLong = (path: string, query: string): ApiError | undefined =>
  path.length + query.length > maxUrlLength
    ? apiError("URI_TOO_LONG", `Request target over ${maxUrlLength} characters`, { extra: { limit: maxUrlLength } })
    : undefined

/**
 * A complete body as the handler receives it: nothing when empty; parsed JSON (UTF-8 checked,
 * then the gate) for a JSON media type; the bytes for another type the route accepts.
 */
export const readBody = (
  bytes: Buffer,
  contentType: string,
  accepts: ReadonlyArray<string>,
  refuseContentType: (mediaType: string) => ApiError
): { readonly body: unknown } | ApiError => {
  if (bytes.byteLength === 0) return { body: undefined }
  const mediaType = mediaTypeOf(contentType)
  if (!acceptsMediaType(accepts, mediaType)) return refuseContentType(mediaType)
  if (!isJsonMediaType(mediaType)) return { body: new Uint8Array(bytes) }
  const text = bodyText(bytes)
  if (isApiError(text)) return text
  if (text.trim() === "") return { body: undefined }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return validationFailed("body", "Request body is not valid JSON")
  }
  return gateJson(body) ?? { body }
}

/**
 * A reply to HEAD carries no body (RFC 9110 9.3.2): written with one, a client reads the body as
 * the next response. HEAD reaches only the 404 and 405 handlers (routes are mounted per method).
 */
const headless = (method: string, reply: Reply): Reply => {
  if (method !== "HEAD" || reply.body === undefined) return reply
  const { body: _body, ...head } = reply
  return head
}

export const internalError = (): Reply => errorReply(apiError("INTERNAL", "Internal error; nothing was recorded"))

/**
 * A listener's requests read or being answered and not yet answered (nor abandoned by their
 * client), counted over every endpoint on it, and its drain: from the drain on, every reply
 * closes its connection (keep-alive clients reconnect elsewhere); the drain completes once none
 * is in flight. Unbounded: the server bounds it.
 */
export class RequestsInFlight {
  private count = 0
  private waiters: Array<() => void> = []
  /** Set by the drain: replies close their connections. */
  draining = false
  size(): number {
    return this.count
  }
  enter(): void {
    this.count++
  }
  leave(): void {
    if (--this.count === 0) for (const wake of this.waiters.splice(0)) wake()
  }
  readonly drain: Effect.Effect<void> = Effect.async<void>((resume) => {
    this.draining = true
    if (this.count === 0) {
      resume(Effect.void)
      return
    }
    const wake = () => resume(Effect.void)
    this.waiters.push(wake)
    // The server's bound interrupts a drain that waited too long: its waiter goes.
    return Effect.sync(() => {
      const i = this.waiters.indexOf(wake)
      if (i >= 0) this.waiters.splice(i, 1)
    })
  })
}

/**
 * Reads a request's body up to `limit` bytes: `onBody` with all of it, or `onTooLarge` once it
 * passes the bound (the rest is ignored). uWS lends each chunk for the callback only: it is copied.
 */
export const collectBody = (res: HttpResponse, limit: number, aborted: () => boolean, onBody: (body: Buffer) => void, onTooLarge: () => void): void => {
  let chunks: Array<Buffer> | undefined
  let size = 0
  let refused = false
  res.onData((chunk, isLast) => {
    if (refused || aborted()) return
    size += chunk.byteLength
    if (size > limit) {
      refused = true
      onTooLarge()
      return
    }
    const copy = Buffer.from(chunk.slice(0))
    if (isLast) onBody(chunks === undefined ? copy : Buffer.concat([...chunks, copy]))
    else (chunks ??= []).push(copy)
  })
}

/** What `mountRoutes` hands back: the requests under way, and the drain a graceful shutdown runs. */
export interface MountedRoutes {
  /** Requests read or being answered asynchronously and not yet answered (nor abandoned by their client). */
  readonly inFlight: () => number
  /**
   * From now on every reply closes its connection (keep-alive clients reconnect elsewhere);
   * completes once no request is in flight. Unbounded: the server bounds it.
   */
  readonly drain: Effect.Effect<void>
}

/** A request's progress: whether its client went away, whether it counts as in flight. */
interface RequestState {
  aborted: boolean
  open: boolean
  /** CORS headers every answer to this request carries (an admitted origin). */
  cors?: ReadonlyArray<Header> | undefined
}

export const mountRoutes = (app: TemplatedApp, routes: ReadonlyArray<RouteDef>, options: RouterOptions): MountedRoutes => {
  const runFork = Runtime.runFork(options.runtime)
  const requests = options.requests ?? new RequestsInFlight()
  const track = (state: RequestState) => {
    if (state.open) return
    state.open = true
    requests.enter()
  }
  const settle = (state: RequestState) => {
    if (!state.open) return
    state.open = false
    requests.leave()
  }
  const answer = (res: HttpResponse, reply: Reply, state?: RequestState) =>
    res.cork(() => write(res, state?.cors === undefined ? reply : { ...reply, headers: [...(reply.headers ?? []), ...state.cors] }, requests.draining))
  const cors = options.cors
  const throttle = options.authFailures
  /** A credentialed route's reply: a 401 counts against the client's address. */
  const counted = (route: RouteDef, req: Request, reply: Reply): Reply => {
    if (throttle !== undefined && reply.status === 401 && route.auth !== "public") throttle.failed(req.remoteAddress, Date.now())
    return reply
  }
  const byPath = new Map<string, RouteDef[]>()
  for (const route of routes) {
    const list = byPath.get(route.path) ?? []
    if (list.some((r) => r.method === route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`)
    list.push(route)
    byPath.set(route.path, list)
  }

  const run = (res: HttpResponse, route: RouteDef, req: Request, state: RequestState) => {
    let out: Reply | Effect.Effect<Reply, ApiError>
    try {
      out = route.handler(req)
    } catch (defect) {
      options.onDefect(Cause.die(defect), req)
      out = internalError()
    }
    if (!Effect.isEffect(out)) {
      if (!state.aborted) answer(res, counted(route, req, out as Reply), state)
      settle(state)
      return
    }
    track(state)
    const fiber = runFork(out)
    res.onAborted(() => {
      state.aborted = true
      settle(state)
      runFork(Fiber.interrupt(fiber))
    })
    fiber.addObserver((exit) => {
      if (state.aborted) return
      settle(state)
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
      answer(res, counted(route, req, reply), state)
    })
  }

  const handle = (route: RouteDef) => {
    const n = paramCount(route.path)
    const names = pathNames(route.path)
    const headerNames = route.headers ?? []
    const accepts = route.body?.accepts ?? JSON_MEDIA_TYPES
    const refuseContentType = route.body?.refuseContentType ?? ((mediaType: string) => unsupportedContentType(accepts, mediaType))
    const refuse = (res: HttpResponse, err: ApiError, state: RequestState) => answer(res, errorReply(err), state)
    return (res: HttpResponse, uReq: HttpRequest): void => {
      const allowedOrigin = cors === undefined ? undefined : corsOrigin(cors, uReq.getHeader("origin"), uReq.getHeader("host"))
      const state: RequestState = { aborted: false, open: false, cors: allowedOrigin === undefined ? undefined : corsHeaders(allowedOrigin) }
      const path = uReq.getUrl()
      const query = uReq.getQuery() ?? ""
      const raws: string[] = new Array(n)
      for (let i = 0; i < n; i++) raws[i] = uReq.getParameter(i) ?? ""
      const headers: Record<string, string> = {}
      for (const h of headerNames) {
        const v = uReq.getHeader(h)
        if (v !== "") headers[h] = v
      }
      const gated = uriTooLong(path, query) ?? gatePath(raws, names) ?? gateQuery(query)
      if (gated !== undefined) {
        refuse(res, gated, state)
        return
      }
      const params: string[] = new Array(n)
      for (let i = 0; i < n; i++) params[i] = decodeParam(raws[i]!)
      const base = { method: route.method, path, query, params, headers, remoteAddress: remoteAddress(res) }
      const throttled = throttle !== undefined && route.auth !== "public" ? throttle.refusal(base.remoteAddress, Date.now()) : undefined
      if (throttled !== undefined) {
        refuse(res, throttled, state)
        return
      }
      if (route.body === undefined) {
        run(res, route, { ...base, body: undefined }, state)
        return
      }
      // Body routes: bounded read, then the content type, UTF-8, JSON and the gate.
      const limit = route.body.maxBytes ?? options.maxBodyBytes
      const declared = Number(uReq.getHeader("content-length") || "0")
      const contentType = uReq.getHeader("content-type")
      if (declared > limit) {
        refuse(res, apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } }), state)
        return
      }
      track(state)
      res.onAborted(() => {
        state.aborted = true
        settle(state)
      })
      collectBody(
        res,
        limit,
        () => state.aborted,
        (body) => {
          const read = readBody(body, contentType, accepts, refuseContentType)
          if (isApiError(read)) {
            refuse(res, read, state)
            settle(state)
            return
          }
          run(res, route, contentType === "" ? { ...base, body: read.body } : { ...base, body: read.body, contentType }, state)
        },
        () => {
          res.cork(() => {
            res.writeStatus(statusLine(413))
            const r = errorReply(apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } }))
            res.writeHeader("Content-Type", r.contentType ?? "application/json")
            for (const [k, v] of state.cors ?? []) res.writeHeader(k, v)
            res.end(r.body, true)
          })
          settle(state)
        }
      )
    }
  }

  const methodNotAllowed = (allowed: string) => (res: HttpResponse, uReq: HttpRequest) => {
    const method = uReq.getCaseSensitiveMethod()
    answer(res, headless(method, errorReply(apiError("METHOD_NOT_ALLOWED", `${method} is not supported on this path`, { headers: { Allow: allowed } }))))
  }

  if (cors !== undefined) {
    // Preflights of the admitted origins (any path: the real request gets the route's own answer).
    app.options("/*", (res, uReq) => {
      const origin = corsOrigin(cors, uReq.getHeader("origin"), uReq.getHeader("host"))
      const method = uReq.getHeader("access-control-request-method")
      if (origin === undefined || method === "") {
        answer(res, errorReply(apiError("ROUTE_NOT_FOUND", `No route for OPTIONS ${uReq.getUrl()}`)))
        return
      }
      answer(res, {
        status: 204,
        headers: [
          ...corsHeaders(origin),
          ["Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE"],
          ["Access-Control-Allow-Headers", "authorization, content-type, idempotency-key"],
          ["Access-Control-Max-Age", String(CORS_MAX_AGE_S)]
        ]
      })
    })
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
    const refusal = uriTooLong(path, uReq.getQuery() ?? "") ?? apiError("ROUTE_NOT_FOUND", `No route for ${path}`)
    answer(res, headless(uReq.getCaseSensitiveMethod(), errorReply(refusal)))
  })

  return {
    inFlight: () => requests.size(),
    drain: requests.drain
  }
}
