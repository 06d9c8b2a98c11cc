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
 * - Fan-out through uWS pub/sub: every socket subscribes to exactly one topic, its (plan,
 *   filter) — at most one topic per distinct combination, so a signal is matched and published
 *   once per matching topic (bounded by the combinations in use, not by the sockets) and uWS
 *   writes it to each subscriber in C++, corked, one write per socket per loop iteration. A
 *   socket holds one topic, so it receives each signal at most once and in the hub's order;
 *   it subscribes right after its snapshot is sent, so nothing falls between the two.
 *   Published with `app.publish` when the stream is given its app, otherwise through any open
 *   socket (see `publish`). What this saves is JS work per delivery; the time to write a signal
 *   to every socket is the kernel's (one write each), measured in bench/wsFanout.ts.
 * - Each signal is serialized once per plan (group visibility differs by plan), not per socket.
 * - A slow client never makes the server buffer without bound: a sweep after each published
 *   batch (once uWS has written it out) checks every socket's buffered bytes, and a socket over
 *   `maxBufferedBytes` (default 1 MiB) is closed with code 4013 ("slow client") and stops
 *   receiving. uWS's own ceiling (`maxBackpressure`, past which it would silently skip a
 *   message) sits `BACKPRESSURE_HEADROOM_BYTES` above ours, and a sweep also runs before more
 *   than half that headroom is published in one go, so our close always comes first: a dropped
 *   client has received a prefix of the stream, never a gap. (`closeOnBackpressureLimit` stays
 *   off: uWS then shuts the socket's reading side down instead of sending a close code.)
 * - At most `maxSocketsTotal` sockets in the process (further upgrades close with 1013).
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket, WebSocketBehavior } from "uws-pack"
import { Effect, Exit, Runtime } from "effect"
import { isPattern, isQualityFilter, matchesQuality, type Pattern, PATTERNS, QUALITIES, type Quality, type Signal } from "../../src/domain/Signal.js"
import type { ChainId } from "../../ingest/ChainEvent.js"
import { validationFailed } from "../../src/domain/ApiError.js"
import type { SignalHub } from "../../src/services/signals/SignalHub.js"
import { projectForPlan } from "../../src/services/signals/SignalTape.js"
import type { PlanId, TrackingShape } from "../../src/services/tracking/Tracking.js"
import { INVALID_API_KEY_BODY, type DataPrincipal } from "../auth/DataBearerAuth.js"
import type { FailedAuthThrottle } from "../auth/FailedAuthThrottle.js"
import { errorReply, JSON_CONTENT_TYPE, type Reply, statusLine, stringify } from "../Http.js"

export const STREAM_PATH = "/v1/signals/stream"

export const CLOSE_TOO_MANY_STREAMS = 4029
export const CLOSE_SLOW_CLIENT = 4013
export const CLOSE_SERVER_BUSY = 1013
export const CLOSE_GOING_AWAY = 1001

/** The only WebSocket protocol version (RFC 6455); any other is refused before the upgrade. */
export const WEBSOCKET_VERSION = "13"
const textDecoder = new TextDecoder()
const UNSUPPORTED_VERSION: Reply = {
  status: 426,
  headers: [["Sec-WebSocket-Version", WEBSOCKET_VERSION]],
  contentType: JSON_CONTENT_TYPE,
  body: JSON.stringify({ error: `unsupported WebSocket version; send Sec-WebSocket-Version: ${WEBSOCKET_VERSION}` })
}

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
  /** The pub/sub topic the socket listens on, from its snapshot until it closes. */
  topic: string | undefined
  counted: boolean
  closed: boolean
}

export interface SignalStreamStats {
  readonly open: number
  /** Distinct (plan, filter) topics with at least one open socket. */
  readonly topics: number
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
  /** The app the behaviour is mounted on: signals go out with `app.publish`; without it, through an open socket. */
  readonly app?: Pick<TemplatedApp, "publish">
  /** Refused bearers count per client address (shared with the data routes); an address over its budget is answered 429. */
  readonly authFailures?: FailedAuthThrottle
}

export interface SignalStream {
  readonly behavior: WebSocketBehavior<SocketData>
  readonly stats: () => SignalStreamStats
  /** Stops the ping timer and the hub subscription and closes every socket (1001). */
  readonly close: () => void
}

/** How far uWS's own ceiling (`maxBackpressure`) sits above `maxBufferedBytes`; see the module notes. */
export const BACKPRESSURE_HEADROOM_BYTES = 16 * 1024 * 1024

/** The topic of a (plan, filter): equal filters written differently (order, repeats) share one. */
export const topicOf = (plan: PlanId, f: StreamFilter): string =>
  `${plan}|${f.chain}|${f.patterns === undefined ? "*" : PATTERNS.filter((p) => f.patterns!.includes(p)).join(",")}|${f.qualities.join(",")}`

interface Topic {
  readonly name: string
  readonly plan: PlanId
  readonly filter: StreamFilter
  subscribers: number
}

export const makeSignalStream = (deps: SignalStreamDeps, input: Partial<SignalStreamOptions> = {}): SignalStream => {
  const options: SignalStreamOptions = { ...signalStreamDefaults, ...input }
  const runFork = Runtime.runFork(deps.runtime)
  const sockets = new Set<WebSocket<SocketData>>()
  const perAccount = new Map<string, number>()
  const topics = new Map<string, Topic>()
  let refusedTooMany = 0
  let droppedSlow = 0
  let sent = 0
  let bytesSinceSweep = 0
  let sweepScheduled = false

  const project = (plan: PlanId, s: Signal) => projectForPlan(deps.tracking, plan, s)

  const dropSlow = (ws: WebSocket<SocketData>) => {
    const data = ws.getUserData()
    if (data.closed) return
    droppedSlow++
    ws.end(CLOSE_SLOW_CLIENT, `slow client: more than ${options.maxBufferedBytes} bytes waiting to be sent; reconnect and read faster`)
  }

  /** Closes every socket over the buffer bound (the close handler removes it from `sockets`). */
  const sweep = () => {
    bytesSinceSweep = 0
    for (const ws of [...sockets]) if (ws.getBufferedAmount() > options.maxBufferedBytes) dropSlow(ws)
  }

  // uWS writes published messages out when the event loop next turns (its pre/post loop handlers, before
  // the poll and after it); an immediate runs after that, so the sweep sees the bytes each socket could not take.
  const afterPublish = () => {
    sweepScheduled = false
    sweep()
  }

  /**
   * Publishes to one topic. uWS's `app.publish` when the app is known; otherwise through one of the open
   * sockets (`ws.publish` reaches every subscriber but the publishing socket itself, which then gets a
   * direct `send`: it drains anything published to it before, so its order holds too).
   */
  const publish = (topic: Topic, message: string) => {
    if (deps.app !== undefined) {
      deps.app.publish(topic.name, message, false, false)
      return
    }
    const anchor = sockets.values().next().value
    if (anchor === undefined) return
    anchor.publish(topic.name, message, false, false)
    const own = anchor.getUserData()
    // A send uWS had to drop (over its ceiling, which the sweeps keep us under) would be a gap: close instead.
    if (own.topic === topic.name && !own.closed && anchor.send(message, false, false) === 2) dropSlow(anchor)
  }

  const unsubscribe = deps.hub.subscribe((signal) => {
    if (topics.size === 0) return
    let byPlan: Map<PlanId, string> | undefined
    for (const topic of topics.values()) {
      if (!matchesStream(topic.filter, signal)) continue
      byPlan ??= new Map()
      let message = byPlan.get(topic.plan)
      if (message === undefined) {
        message = stringify({ type: "signal", signal: project(topic.plan, signal) })
        byPlan.set(topic.plan, message)
        // An upper bound of the bytes queued per socket: UTF-8 of a UTF-16 unit is at most 3 bytes, a frame header at most 14.
        bytesSinceSweep += 3 * message.length + 14
      }
      publish(topic, message)
      sent += topic.subscribers
    }
    if (byPlan === undefined) return
    // Keeps every socket's growth between two sweeps under half of uWS's headroom (see the module notes).
    if (bytesSinceSweep > BACKPRESSURE_HEADROOM_BYTES / 2) sweep()
    else if (!sweepScheduled) {
      sweepScheduled = true
      setImmediate(afterPublish)
    }
  })

  const timer = setInterval(() => {
    for (const ws of [...sockets]) {
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
    maxBackpressure: options.maxBufferedBytes + BACKPRESSURE_HEADROOM_BYTES,
    closeOnBackpressureLimit: false,
    sendPingsAutomatically: false,
    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      const headers: Record<string, string> = {}
      const authorization = req.getHeader("authorization")
      if (authorization !== "") headers.authorization = authorization
      const key = req.getHeader("sec-websocket-key")
      const protocol = req.getHeader("sec-websocket-protocol")
      const extensions = req.getHeader("sec-websocket-extensions")
      // RFC 6455 4.2.2: a version other than 13 is answered 426 with the version we speak; uWS would upgrade it.
      if (req.getHeader("sec-websocket-version") !== WEBSOCKET_VERSION) {
        res.cork(() => writeHttp(res, UNSUPPORTED_VERSION))
        return
      }
      const filter = parseStreamFilter(req.getQuery() ?? "")
      if (!("chain" in filter)) {
        res.cork(() => writeHttp(res, filter))
        return
      }
      const address = textDecoder.decode(res.getRemoteAddressAsText())
      const throttled = deps.authFailures?.refusal(address, Date.now())
      if (throttled !== undefined) {
        res.cork(() => writeHttp(res, errorReply(throttled)))
        return
      }
      const state = { aborted: false }
      res.onAborted(() => {
        state.aborted = true
      })
      const fiber = runFork(deps.authenticate(headers))
      fiber.addObserver((exit) => {
        const principal = Exit.isSuccess(exit) ? exit.value : undefined
        if (principal === undefined) deps.authFailures?.failed(address, Date.now())
        // The fiber may finish in a microtask drained inside uWS's parse of another connection's request. An upgrade there
        // would be taken for that connection's (uWS marks "the socket upgraded during this parse" once per app, not per
        // socket) and one of the two would be cut without a close frame; an immediate runs outside every uWS callback.
        setImmediate(() => {
          if (state.aborted) return
          if (principal === undefined) {
            res.cork(() => writeHttp(res, { status: 401, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(INVALID_API_KEY_BODY) }))
            return
          }
          // Not inside `res.cork`: when the upgrade keeps the socket's address, the cork's epilogue reads the finished HTTP
          // response's state from what is now the WebSocket's memory and, when a stale bit reads "Connection: close", shuts
          // the new socket down (a client sees its snapshot, then 1006). The upgrade writes its 101 itself.
          const data: SocketData = { accountId: principal.accountId, plan: principal.tier, filter, topic: undefined, counted: false, closed: false }
          res.upgrade(data, key, protocol, extensions, context)
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
      const status = ws.send(stringify({ type: "snapshot", signals: snapshot.map((s) => project(data.plan, s)) }), false, false)
      sent++
      if (status === 2 || ws.getBufferedAmount() > options.maxBufferedBytes) {
        dropSlow(ws)
        return
      }
      // After the snapshot: every signal the hub publishes from here on reaches this socket through its topic.
      const name = topicOf(data.plan, data.filter)
      let topic = topics.get(name)
      if (topic === undefined) {
        topic = { name, plan: data.plan, filter: data.filter, subscribers: 0 }
        topics.set(name, topic)
      }
      ws.subscribe(name)
      topic.subscribers++
      data.topic = name
    },
    message: () => {
      // Clients have nothing to say; messages are ignored (the payload bound closes a flood).
    },
    close: (ws) => {
      const data = ws.getUserData()
      data.closed = true
      sockets.delete(ws)
      if (data.topic !== undefined) {
        // uWS drops a closed socket's subscriptions itself; this is our count of who listens where.
        const topic = topics.get(data.topic)
        data.topic = undefined
        if (topic !== undefined && --topic.subscribers <= 0) topics.delete(topic.name)
      }
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
    stats: () => ({ open: sockets.size, topics: topics.size, refusedTooMany, droppedSlow, sent }),
    close: () => {
      clearInterval(timer)
      unsubscribe()
      for (const ws of [...sockets]) if (!ws.getUserData().closed) ws.end(CLOSE_GOING_AWAY, "server shutting down")
    }
  }
}

export type { SocketData as SignalStreamSocketData }
