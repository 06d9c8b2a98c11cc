/**
 * The agent tool server (`clients/mcp/server.ts`) on the main listener (wired by `MainApi.ts`; it
 * sits in the composition root's layer because the tool server is a client of the routes), over MCP's streamable HTTP
 * at `MCP_PATH` (issue 32). The SDK's web-standard transport is bridged to uWS here: a request's
 * headers are copied in the callback, its body read under the listener's bound, and the transport's
 * answer (JSON: `enableJsonResponse`, so every answer is finite) written back in one cork.
 *
 * Authentication: every request carries an agent key (`x-api-key`, or `Authorization: Bearer`),
 * verified at the door as the routes verify it; a refused key is the route's 401 envelope and
 * counts against the listener's failed-authentication throttle by the client's address. A session
 * belongs to the key that opened it: another key presenting its id is told it does not exist. The
 * tools call the listener's own routes in process (`InProcessRoutes.ts`) with that key, so each
 * call meets the route's own scope, tier, pause and rate rules, and a refusal is a tool error
 * carrying the spec's `code`. Given the market-data listener's routes (this process serves both),
 * its tools (signals, replay start and poll) are offered too and called the same way. A request
 * counts in the listener's requests in flight until answered: a graceful drain waits for it.
 *
 * Bounds (docs/decisions.md): at most `MCP_SESSIONS_MAX` sessions, `MCP_SESSIONS_PER_KEY` per key
 * (a new one closes the least recently used: its client is answered 404 and initializes again, as
 * the MCP specification has it), each closed after `MCP_SESSION_IDLE_MS` without a request (a sweep
 * every `MCP_SWEEP_MS`); a request body at most the listener's `maxBodyBytes`. No GET stream (405:
 * the tools send no server-initiated messages). Closing the scope closes every session.
 */
import { randomUUID } from "node:crypto"
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Cause, Effect, Exit, Runtime, type Scope } from "effect"
import type { HttpRequest, HttpResponse, TemplatedApp } from "uws-pack"
import { toolServer } from "../clients/mcp/server.js"
import { apiError } from "./domain/ApiError.js"
import type { AgentAuth } from "../api/auth/AgentKeyAuth.js"
import type { FailedAuthThrottle } from "../api/auth/FailedAuthThrottle.js"
import { errorReply, type Reply, statusLine } from "../api/Http.js"
import { inProcessRoutes } from "../api/InProcessRoutes.js"
import { collectBody, type RequestsInFlight, type RouteDef } from "../api/Router.js"

export const MCP_PATH = "/api/v1/mcp"
export const MCP_SESSIONS_MAX = 512
export const MCP_SESSIONS_PER_KEY = 8
export const MCP_SESSION_IDLE_MS = 15 * 60_000
export const MCP_SWEEP_MS = 60_000

/** The document the tools' schemas are read from: the listener's own, as it serves it. */
const OPENAPI_PATH = "/api/v1/openapi.json"
/** The base URLs the tools' typed clients are given; their calls never leave the process. */
const IN_PROCESS = "http://in-process"
const IN_PROCESS_DATA = "http://in-process-data"
/** The market-data listener's document, as it serves it. */
const DATA_OPENAPI_PATH = "/v1/openapi.json"

export interface McpEndpointOptions {
  readonly agentAuth: AgentAuth
  /** The listener's route table: what the tools call. */
  readonly routes: ReadonlyArray<RouteDef>
  /** The market-data listener's route table in this process: its tools (signals, replays) are offered too, called in process. */
  readonly dataRoutes?: ReadonlyArray<RouteDef>
  readonly maxBodyBytes: number
  /** Bounds (tests): default the constants above. */
  readonly sessionsMax?: number
  readonly sessionsPerKey?: number
  readonly idleMs?: number
  readonly sweepMs?: number
  readonly nowMs?: () => number
}

interface Session {
  readonly keyId: string
  readonly server: McpServer
  readonly transport: WebStandardStreamableHTTPServerTransport
  lastUsedMs: number
}

/** What the endpoint holds, for tests and logs. */
export interface McpEndpoint {
  readonly sessions: () => number
}

const textDecoder = new TextDecoder()

/** A request's progress: whether its client went away; `leave` takes it out of the listener's count (once). */
interface RequestState {
  aborted: boolean
  readonly leave: () => void
}

/** A JSON-RPC error answer outside any request (the transport's own shape). */
const rpcError = (status: number, code: number, message: string): Reply => ({
  status,
  contentType: "application/json",
  body: JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null })
})

const keyOf = (headers: Headers): string | undefined => {
  const key = headers.get("x-api-key")
  if (key !== null && key !== "") return key.trim()
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "")
  return bearer?.[1]
}

/** Mounts the endpoint on `app` for the scope's lifetime. */
export const mountMcp = (
  app: TemplatedApp,
  o: McpEndpointOptions,
  authFailures: FailedAuthThrottle,
  requests: RequestsInFlight
): Effect.Effect<McpEndpoint, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const runPromiseExit = Runtime.runPromiseExit(runtime)
    const logDefect = (cause: Cause.Cause<unknown>, what: string) => Runtime.runFork(runtime)(Effect.logError(`${what} failed unexpectedly`, Cause.pretty(cause)))
    const mainFetchFor = inProcessRoutes(o.routes, { runtime, maxBodyBytes: o.maxBodyBytes, onDefect: logDefect })
    const dataFetchFor = o.dataRoutes === undefined ? undefined : inProcessRoutes(o.dataRoutes, { runtime, maxBodyBytes: o.maxBodyBytes, onDefect: logDefect })
    /** One fetch over both tables, by the base URL a call names. */
    const fetchFor =
      (remoteAddress: string): typeof globalThis.fetch =>
      (input, init) => {
        const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
        return (dataFetchFor !== undefined && url.startsWith(IN_PROCESS_DATA) ? dataFetchFor : mainFetchFor)(remoteAddress)(input, init)
      }
    const nowMs = o.nowMs ?? Date.now
    const sessionsMax = o.sessionsMax ?? MCP_SESSIONS_MAX
    const perKey = o.sessionsPerKey ?? MCP_SESSIONS_PER_KEY
    const idleMs = o.idleMs ?? MCP_SESSION_IDLE_MS
    // Insertion order is use order: a used session is moved to the end.
    const sessions = new Map<string, Session>()
    /** The tools' documents, read once from the listeners' own routes (as they serve them). */
    let documents: { readonly main: Record<string, unknown>; readonly data?: Record<string, unknown> } | undefined
    const documentAt = async (url: string): Promise<Record<string, unknown>> => {
      const res = await fetchFor("127.0.0.1")(url)
      if (!res.ok) throw new Error(`${url} answered ${res.status}`)
      return (await res.json()) as Record<string, unknown>
    }
    const toolDocuments = async () =>
      (documents ??= {
        main: await documentAt(`${IN_PROCESS}${OPENAPI_PATH}`),
        ...(dataFetchFor !== undefined ? { data: await documentAt(`${IN_PROCESS_DATA}${DATA_OPENAPI_PATH}`) } : {})
      })

    const close = (id: string) => {
      const s = sessions.get(id)
      if (s === undefined) return
      sessions.delete(id)
      void s.transport.close().catch(() => undefined)
      void s.server.close().catch(() => undefined)
    }
    /** Room for one more session of `keyId`: the least recently used of the key's, else of all, closed. */
    const makeRoom = (keyId: string) => {
      const own = [...sessions].filter(([, s]) => s.keyId === keyId)
      if (own.length >= perKey) close(own[0]![0])
      if (sessions.size >= sessionsMax) close(sessions.keys().next().value!)
    }
    const sweep = () => {
      const cutoff = nowMs() - idleMs
      for (const [id, s] of sessions) if (s.lastUsedMs <= cutoff) close(id)
    }
    const timer = setInterval(sweep, o.sweepMs ?? Math.min(MCP_SWEEP_MS, idleMs))
    timer.unref()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        clearInterval(timer)
        for (const id of [...sessions.keys()]) close(id)
      })
    )

    const open = async (keyId: string, key: string): Promise<Session> => {
      const server = toolServer({
        baseUrl: IN_PROCESS,
        ...(dataFetchFor !== undefined ? { dataUrl: IN_PROCESS_DATA } : {}),
        apiKey: key,
        documents: await toolDocuments(),
        fetchOf: (info) => fetchFor(String(info?.extra?.remoteAddress ?? ""))
      })
      const session: Session = {
        keyId,
        server,
        transport: new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          enableJsonResponse: true,
          maxRequestBodySize: o.maxBodyBytes,
          // Only an initialize opens a session: room is made then, not for a request that opens none.
          onsessioninitialized: (id) => {
            makeRoom(keyId)
            sessions.set(id, session)
          },
          // A DELETE: the session's server goes with it.
          onsessionclosed: close
        }),
        lastUsedMs: nowMs()
      }
      await server.connect(session.transport)
      return session
    }

    /** The answer to one request (headers copied, body read). */
    const answer = async (method: string, headers: Headers, body: Buffer | undefined, remoteAddress: string): Promise<Reply | Response> => {
      const throttled = authFailures.refusal(remoteAddress, nowMs())
      if (throttled !== undefined) return errorReply(throttled)
      if (method !== "POST" && method !== "DELETE") {
        return errorReply(apiError("METHOD_NOT_ALLOWED", `${method} is not supported on ${MCP_PATH}; POST messages, DELETE a session`, { headers: { Allow: "POST, DELETE" } }))
      }
      const key = keyOf(headers)
      const verified = await runPromiseExit(key === undefined ? Effect.fail(apiError("UNAUTHORIZED", "Missing, malformed, unknown or revoked API key")) : o.agentAuth.verify(key))
      if (Exit.isFailure(verified)) {
        const failure = Cause.failureOption(verified.cause)
        if (failure._tag === "None") {
          logDefect(verified.cause, `${method} ${MCP_PATH}`)
          return errorReply(apiError("INTERNAL", "Internal error; nothing was recorded"))
        }
        const refusal = errorReply(failure.value)
        if (refusal.status === 401) authFailures.failed(remoteAddress, nowMs())
        return refusal
      }
      const keyId = verified.value.key.id
      const sessionId = headers.get("mcp-session-id")
      let session: Session
      if (sessionId !== null) {
        const known = sessions.get(sessionId)
        if (known === undefined || known.keyId !== keyId) return rpcError(404, -32001, "Session not found")
        sessions.delete(sessionId)
        sessions.set(sessionId, known)
        session = known
      } else session = await open(keyId, key!)
      session.lastUsedMs = nowMs()
      const authInfo: AuthInfo = { token: key!, clientId: keyId, scopes: [...verified.value.key.scopes], extra: { remoteAddress } }
      const request = new Request(`${IN_PROCESS}${MCP_PATH}`, { method, headers, ...(body !== undefined ? { body: new Uint8Array(body) } : {}) })
      try {
        return await session.transport.handleRequest(request, { authInfo })
      } finally {
        // A request that opened no session (not an initialize) leaves nothing behind.
        if (sessionId === null && session.transport.sessionId === undefined) {
          void session.transport.close().catch(() => undefined)
          void session.server.close().catch(() => undefined)
        }
      }
    }

    /**
     * Writes an answer in one cork, and the request leaves the listener's count; `close` ends the
     * connection after it (a body cut off at the bound), as does a listener draining.
     */
    const write = async (res: HttpResponse, state: RequestState, out: Reply | Response, close = false) => {
      try {
        let status: number
        let headers: Array<readonly [string, string]>
        let body: string | Uint8Array | undefined
        if (out instanceof Response) {
          status = out.status
          headers = [...out.headers].filter(([k]) => k !== "content-length" && k !== "transfer-encoding")
          body = out.body === null ? undefined : new Uint8Array(await out.arrayBuffer())
        } else {
          status = out.status
          headers = [...(out.contentType !== undefined ? [["Content-Type", out.contentType] as const] : []), ...(out.headers ?? [])]
          body = out.body
        }
        if (state.aborted) return
        res.cork(() => {
          res.writeStatus(statusLine(status))
          for (const [k, v] of headers) res.writeHeader(k, v)
          res.end(body ?? "", close || requests.draining)
        })
      } finally {
        // Answered, abandoned, or failed writing (the client's connection is cut by the drain): out of the count.
        state.leave()
      }
    }

    const handle = (res: HttpResponse, req: HttpRequest): void => {
      // In flight until answered or abandoned: the listener's drain waits for it.
      requests.enter()
      let open = true
      const state: RequestState = {
        aborted: false,
        leave: () => {
          if (!open) return
          open = false
          requests.leave()
        }
      }
      res.onAborted(() => {
        state.aborted = true
        state.leave()
      })
      const method = req.getCaseSensitiveMethod().toUpperCase()
      const headers = new Headers()
      req.forEach((k, v) => headers.append(k, v))
      const remoteAddress = textDecoder.decode(res.getRemoteAddressAsText())
      const respond = (body: Buffer | undefined) =>
        answer(method, headers, body, remoteAddress)
          .catch((defect: unknown) => {
            logDefect(Cause.die(defect), `${method} ${MCP_PATH}`)
            return errorReply(apiError("INTERNAL", "Internal error; nothing was recorded"))
          })
          .then((out) => write(res, state, out))
      if (method !== "POST") {
        void respond(undefined)
        return
      }
      const limit = o.maxBodyBytes
      const tooLarge = () => errorReply(apiError("BODY_TOO_LARGE", `Request body over ${limit} bytes`, { extra: { limitBytes: limit } }))
      if (Number(req.getHeader("content-length") || "0") > limit) {
        void write(res, state, tooLarge())
        return
      }
      collectBody(
        res,
        limit,
        () => state.aborted,
        (body) => void respond(body),
        () => void write(res, state, tooLarge(), true)
      )
    }
    app.any(MCP_PATH, handle)
    return { sessions: () => sessions.size }
  })
