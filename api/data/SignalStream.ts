/**
 * `GET /v1/signals/stream` (spec 4.5): the signal tape as a WebSocket. After the upgrade the
 * server sends one `{"type":"snapshot","signals":[...]}` message (the newest 100 signals that
 * match the socket's filters, oldest first), then one `{"type":"signal","signal":{...}}` per new
 * signal, in the hub's order, and a WebSocket ping every 20 s.
 *
 * Query parameters: `event_kind` (one or more patterns, comma-separated; default all), `chain`
 * (`solana` default, or `hood`), `quality` (`curated` default, `all`, `high`, `medium`, `low`).
 * Auth: the data bearer (`Authorization: Bearer <production key>`), checked before the upgrade:
 * a refused credential is HTTP 401 `{"error": "invalid api key"}`, a bad parameter HTTP 400
 * (the error envelope), and no socket is opened.
 *
 * Invariants:
 * - At most `maxSocketsPerAccount` (8) open sockets per account: the 9th is accepted and closed
 *   at once with code 4029 and a reason saying so (a browser client sees the close code; it
 *   cannot read an HTTP refusal of an upgrade). Counted in the open handler, which runs on the
 *   event loop, so concurrent upgrades cannot race past the bound.
 * - A slow client never makes the server buffer without bound: after every send the socket's
 *   buffered bytes are checked, and a socket over `maxBufferedBytes` (default 1 MiB) is closed
 *   with code 4013 ("slow client") and stops receiving. A send uWS itself drops is treated the same.
 * - Each signal is serialized once per plan (group visibility differs by plan), not per socket.
 * - At most `maxSocketsTotal` sockets in the process (further upgrades close with 1013).
 */
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket, WebSocketBehavior } from "@trufflesuite/uws-js-unofficial"
import { Effect, Exit, Runtime } from "effect"
import { isPattern, isQualityFilter, matchesQuality, type Pattern, QUALITIES, type Quality, type Signal } from "../../actors/signals/Signal.js"
import type { ChainId } from "../../ingest/ChainEvent.js"
import { validationFailed } from "../../src/domain/ApiError.js"
import type { SignalHub } from "../../src/services/signals/SignalHub.js"
import { projectForPlan } from "../../src/services/signals/SignalTape.js"
import type { PlanId, TrackingShape } from "../../src/services/tracking/Tracking.js"
import { INVALID_API_KEY_BODY, type DataPrincipal } from "../auth/DataBearerAuth.js"
import { errorReply, JSON_CONTENT_TYPE, type Reply, statusLine, stringify } from "../Http.js"

export const STREAM_PATH = "/v1/signals/stream"

export const CLOSE_TOO_MANY_STREAMS = 4029
export const CLOSE_SLOW_CLIENT = 4013
export const CLOSE_SERVER_BUSY = 1013
export const CLOSE_GOING_AWAY = 1001

export interface SignalStreamOptions {
  /** Interval of the WebSocket pings (spec: 20 s). */
  readonly pingIntervalMs: number
  /** Signals in the opening snapshot (spec: the newest 100). */
  readonly snapshotSize: number
  /** Open sockets per account (spec: 8). */
  readonly maxSocketsPerAccount: number
  /** A socket with more bytes than this waiting to be sent is closed as a slow client. */
  readonly maxBufferedBytes: number
  readonly maxSocketsTotal: number
  /** uWS idle timeout in seconds (a peer that answers no ping for this long is closed). */
  readonly idleTimeoutSec: number
}

export const signalStreamDefaults: SignalStreamOptions = {
  pingIntervalMs: 20_000,
  snapshotSize: 100,
  maxSocketsPerAccount: 8,
  maxBufferedBytes: 1024 * 1024,
  maxSocketsTotal: 10_000,
  idleTimeoutSec: 120
}

export interface StreamFilter {
  readonly chain: ChainId
  readonly patterns: ReadonlyArray<Pattern> | undefined
  readonly qualities: ReadonlyArray<Quality>
}

interface SocketData {
  readonly accountId: string
  readonly plan: PlanId
  readonly filter: StreamFilter
  counted: boolean
  closed: boolean
}

export interface SignalStreamStats {
  readonly open: number
  readonly refusedTooMany: number
  readonly droppedSlow: number
  readonly sent: number
}

/** Parses the stream's query; a `VALIDATION_FAILED` reply when a parameter is wrong. */
export const parseStreamFilter = (query: string): StreamFilter | Reply => {
  const params = new URLSearchParams(query)
  const chain = params.get("chain") ?? "solana"
  if (chain !== "solana" && chain !== "hood") return errorReply(validationFailed("chain", `Unknown chain '${chain}'; expected solana or hood`))
  let patterns: Array<Pattern> | undefined
  const kinds = params.get("event_kind")
  if (kinds !== null && kinds !== "") {
    patterns = []
    for (const k of kinds.split(",")) {
      if (!isPattern(k)) return errorReply(validationFailed("event_kind", `Unknown event_kind '${k}'`))
      patterns.push(k)
    }
  }
  const quality = params.get("quality") ?? "curated"
  if (!isQualityFilter(quality)) return errorReply(validationFailed("quality", `Unknown quality '${quality}'; expected curated, all, high, medium or low`))
  return { chain, patterns, qualities: QUALITIES.filter((q) => matchesQuality(quality, q)) }
}

export const matchesStream = (f: StreamFilter, s: Signal): boolean =>
  s.chain === f.chain && (f.patterns === undefined || f.patterns.includes(s.pattern)) && f.qualities.includes(s.quality)

const writeHttp = (res: HttpResponse, reply: Reply) => {
  res.writeStatus(statusLine(reply.status))
  if (reply.contentType !== undefined) res.writeHeader("Content-Type", reply.contentType)
  for (const [k, v] of reply.headers ?? []) res.writeHeader(k, v)
  res.end(reply.body ?? "")
}

export interface SignalStreamDeps {
  readonly hub: SignalHub
  readonly tracking: TrackingShape
  readonly authenticate: (headers: Readonly<Record<string, string>>) => Effect.Effect<DataPrincipal | undefined>
  readonly runtime: Runtime.Runtime<never>
}

export interface SignalStream {
  readonly behavior: WebSocketBehavior<SocketData>
  readonly stats: () => SignalStreamStats
  /** Stops the ping timer and the hub subscription and closes every socket (1001). */
  readonly close: () => void
}

export const makeSignalStream = (deps: SignalStreamDeps, input: Partial<SignalStreamOptions> = {}): SignalStream => {
  const options: SignalStreamOptions = { ...signalStreamDefaults, ...input }
  const runFork = Runtime.runFork(deps.runtime)
  const sockets = new Set<WebSocket<SocketData>>()
  const perAccount = new Map<string, number>()
  let refusedTooMany = 0
  let droppedSlow = 0
  let sent = 0

  const project = (plan: PlanId, s: Signal) => projectForPlan(deps.tracking, plan, s)

  const dropSlow = (ws: WebSocket<SocketData>) => {
    const data = ws.getUserData()
    if (data.closed) return
    droppedSlow++
    ws.end(CLOSE_SLOW_CLIENT, `slow client: more than ${options.maxBufferedBytes} bytes waiting to be sent; reconnect and read faster`)
  }

  /** Sends and enforces the buffer bound; false when the socket was dropped. */
  const send = (ws: WebSocket<SocketData>, message: string): boolean => {
    const status = ws.send(message, false, false)
    sent++
    if (status === 2 || ws.getBufferedAmount() > options.maxBufferedBytes) {
      dropSlow(ws)
      return false
    }
    return true
  }

  const unsubscribe = deps.hub.subscribe((signal) => {
    if (sockets.size === 0) return
    const byPlan = new Map<PlanId, string>()
    for (const ws of sockets) {
      const data = ws.getUserData()
      if (data.closed || !matchesStream(data.filter, signal)) continue
      let message = byPlan.get(data.plan)
      if (message === undefined) {
        message = stringify({ type: "signal", signal: project(data.plan, signal) })
        byPlan.set(data.plan, message)
      }
      send(ws, message)
    }
  })

  const timer = setInterval(() => {
    for (const ws of sockets) {
      if (ws.getUserData().closed) continue
      const status = ws.ping()
      if (status === 2 || ws.getBufferedAmount() > options.maxBufferedBytes) dropSlow(ws)
    }
  }, options.pingIntervalMs)
  timer.unref()

  const behavior: WebSocketBehavior<SocketData> = {
    compression: 0,
    maxPayloadLength: 4 * 1024,
    idleTimeout: options.idleTimeoutSec,
    // Our own bound (`maxBufferedBytes`) closes a slow socket first; this only keeps uWS from dropping messages silently.
    maxBackpressure: options.maxBufferedBytes + 16 * 1024 * 1024,
    closeOnBackpressureLimit: 0,
    sendPingsAutomatically: false,
    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      const headers: Record<string, string> = {}
      const authorization = req.getHeader("authorization")
      if (authorization !== "") headers.authorization = authorization
      const key = req.getHeader("sec-websocket-key")
      const protocol = req.getHeader("sec-websocket-protocol")
      const extensions = req.getHeader("sec-websocket-extensions")
      const filter = parseStreamFilter(req.getQuery() ?? "")
      if (!("chain" in filter)) {
        res.cork(() => writeHttp(res, filter))
        return
      }
      const state = { aborted: false }
      res.onAborted(() => {
        state.aborted = true
      })
      const fiber = runFork(deps.authenticate(headers))
      fiber.addObserver((exit) => {
        if (state.aborted) return
        const principal = Exit.isSuccess(exit) ? exit.value : undefined
        res.cork(() => {
          if (principal === undefined) writeHttp(res, { status: 401, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(INVALID_API_KEY_BODY) })
          else {
            const data: SocketData = { accountId: principal.accountId, plan: principal.tier, filter, counted: false, closed: false }
            res.upgrade(data, key, protocol, extensions, context)
          }
        })
      })
    },
    open: (ws) => {
      const data = ws.getUserData()
      if (sockets.size >= options.maxSocketsTotal) {
        data.closed = true
        ws.end(CLOSE_SERVER_BUSY, "server busy: too many open streams; retry later")
        return
      }
      const open = perAccount.get(data.accountId) ?? 0
      if (open >= options.maxSocketsPerAccount) {
        refusedTooMany++
        data.closed = true
        ws.end(CLOSE_TOO_MANY_STREAMS, `too many open streams: at most ${options.maxSocketsPerAccount} per account`)
        return
      }
      perAccount.set(data.accountId, open + 1)
      data.counted = true
      sockets.add(ws)
      const snapshot = deps.hub.newest(options.snapshotSize, (s) => matchesStream(data.filter, s)).reverse()
      send(ws, stringify({ type: "snapshot", signals: snapshot.map((s) => project(data.plan, s)) }))
    },
    message: () => {
      // Clients have nothing to say; messages are ignored (the payload bound closes a flood).
    },
    close: (ws) => {
      const data = ws.getUserData()
      data.closed = true
      sockets.delete(ws)
      if (data.counted) {
        data.counted = false
        const n = (perAccount.get(data.accountId) ?? 1) - 1
        if (n <= 0) perAccount.delete(data.accountId)
        else perAccount.set(data.accountId, n)
      }
    }
  }

  return {
    behavior,
    stats: () => ({ open: sockets.size, refusedTooMany, droppedSlow, sent }),
    close: () => {
      clearInterval(timer)
      unsubscribe()
      for (const ws of [...sockets]) if (!ws.getUserData().closed) ws.end(CLOSE_GOING_AWAY, "server shutting down")
    }
  }
}

export type { SocketData as SignalStreamSocketData }
