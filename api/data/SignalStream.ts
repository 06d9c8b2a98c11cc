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
 *   writes it to each subscriber in C++, corked, one write per socket per loop iteration: its
 *   topic tree queues each published message per subscriber (at most 32; the 33rd writes that
 *   socket's queue out at once) and, when the loop turns, writes each socket's queue as one
 *   corked send, so a hub batch (a burst) reaches a socket as one frame per signal in one write
 *   (docs/decisions.md, "Signal bursts"). A
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
 *
 * The pieces are split by thread so the stream can also run on several (`ThreadedStream.ts`):
 * the ledger (`makeStreamLedger`: caps, topics, snapshot, per-plan messages) lives where the hub
 * is; the socket guard (`makeSocketGuard`: slow-client sweeps, pings) where the sockets are.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket, WebSocketBehavior } from "uws-pack"
import { type Effect, Exit, type Fiber, Runtime } from "effect"
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

/** Writes an HTTP reply to an upgrade request (inside `cork`). */
export const writeHttp = (res: HttpResponse, reply: Reply) => {
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

/** What the ledger answers a new socket: a close (code, reason), or its topic and opening snapshot. */
export type Admission =
  | { readonly kind: "refused"; readonly code: number; readonly reason: string }
  | { readonly kind: "admitted"; readonly topic: string; readonly snapshot: string }

/** One signal's deliveries: per matching topic, the message (serialized once per plan) and how many sockets listen. */
export interface TopicMessage {
  readonly topic: string
  readonly message: string
  /** The first topic this signal's message for its plan goes to (the topics of one plan share the message). */
  readonly first: boolean
  readonly subscribers: number
}

/**
 * The stream's bookkeeping on the thread that owns the hub, whichever thread holds the sockets: the
 * per-account and total caps (exact: one thread counts), the topics in use, the snapshot, and each
 * signal's messages per matching topic.
 */
export interface StreamLedger {
  /** Counts the socket against its account and the total and registers its topic, or refuses it. */
  readonly admit: (accountId: string, plan: PlanId, filter: StreamFilter) => Admission
  /** Undoes an admission (the socket closed, or its upgrade never completed). */
  readonly release: (accountId: string, topic: string) => void
  readonly fanOut: (signal: Signal) => ReadonlyArray<TopicMessage>
  readonly stats: () => { readonly open: number; readonly topics: number; readonly refusedTooMany: number; readonly sent: number }
}

export const makeStreamLedger = (deps: Pick<SignalStreamDeps, "hub" | "tracking">, options: SignalStreamOptions): StreamLedger => {
  const perAccount = new Map<string, number>()
  const topics = new Map<string, Topic>()
  let open = 0
  let refusedTooMany = 0
  let sent = 0
  const project = (plan: PlanId, s: Signal) => projectForPlan(deps.tracking, plan, s)
  return {
    admit: (accountId, plan, filter) => {
      if (open >= options.maxSocketsTotal) return { kind: "refused", code: CLOSE_SERVER_BUSY, reason: "server busy: too many open streams; retry later" }
      const n = perAccount.get(accountId) ?? 0
      if (n >= options.maxSocketsPerAccount) {
        refusedTooMany++
        return { kind: "refused", code: CLOSE_TOO_MANY_STREAMS, reason: `too many open streams: at most ${options.maxSocketsPerAccount} per account` }
      }
      perAccount.set(accountId, n + 1)
      open++
      const signals = deps.hub.newest(options.snapshotSize, (s) => matchesStream(filter, s)).reverse()
      sent++
      // Registered with the snapshot: every signal the hub publishes from here on goes to this topic.
      const name = topicOf(plan, filter)
      let topic = topics.get(name)
      if (topic === undefined) {
        topic = { name, plan, filter, subscribers: 0 }
        topics.set(name, topic)
      }
      topic.subscribers++
      return { kind: "admitted", topic: name, snapshot: stringify({ type: "snapshot", signals: signals.map((s) => project(plan, s)) }) }
    },
    release: (accountId, name) => {
      open--
      const n = (perAccount.get(accountId) ?? 1) - 1
      if (n <= 0) perAccount.delete(accountId)
      else perAccount.set(accountId, n)
      const topic = topics.get(name)
      if (topic !== undefined && --topic.subscribers <= 0) topics.delete(name)
    },
    fanOut: (signal) => {
      const out: Array<TopicMessage> = []
      if (topics.size === 0) return out
      let byPlan: Map<PlanId, string> | undefined
      for (const topic of topics.values()) {
        if (!matchesStream(topic.filter, signal)) continue
        byPlan ??= new Map()
        let message = byPlan.get(topic.plan)
        const first = message === undefined
        if (message === undefined) {
          message = stringify({ type: "signal", signal: project(topic.plan, signal) })
          byPlan.set(topic.plan, message)
        }
        out.push({ topic: topic.name, message, first, subscribers: topic.subscribers })
        sent += topic.subscribers
      }
      return out
    },
    stats: () => ({ open, topics: topics.size, refusedTooMany, sent })
  }
}

/** The socket side of the slow-client rule and the pings, on the thread that holds the sockets. */
export interface SocketGuard<T extends { closed: boolean }> {
  readonly sockets: Set<WebSocket<T>>
  /** Closes a socket as a slow client (4013). */
  readonly dropSlow: (ws: WebSocket<T>) => void
  /** Counts a message queued to the sockets of a topic, bounding the bytes any socket can gain before the next sweep. */
  readonly queued: (message: string) => void
  /** After a published batch: sweeps now if the batch approached uWS's headroom, else once uWS has written it out. */
  readonly published: () => void
  readonly droppedSlow: () => number
  /** Stops the pings and closes every socket (1001). */
  readonly close: () => void
}

export const makeSocketGuard = <T extends { closed: boolean }>(options: SignalStreamOptions): SocketGuard<T> => {
  const sockets = new Set<WebSocket<T>>()
  let droppedSlow = 0
  let bytesSinceSweep = 0
  let sweepScheduled = false

  const dropSlow = (ws: WebSocket<T>) => {
    if (ws.getUserData().closed) return
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

  const timer = setInterval(() => {
    for (const ws of [...sockets]) {
      if (ws.getUserData().closed) continue
      const status = ws.ping()
      if (status === 2 || ws.getBufferedAmount() > options.maxBufferedBytes) dropSlow(ws)
    }
  }, options.pingIntervalMs)
  timer.unref()

  return {
    sockets,
    dropSlow,
    // An upper bound of the bytes queued per socket: UTF-8 of a UTF-16 unit is at most 3 bytes, a frame header at most 14.
    queued: (message) => {
      bytesSinceSweep += 3 * message.length + 14
    },
    published: () => {
      // Keeps every socket's growth between two sweeps under half of uWS's headroom (see the module notes).
      if (bytesSinceSweep > BACKPRESSURE_HEADROOM_BYTES / 2) sweep()
      else if (!sweepScheduled) {
        sweepScheduled = true
        setImmediate(afterPublish)
      }
    },
    droppedSlow: () => droppedSlow,
    close: () => {
      clearInterval(timer)
      for (const ws of [...sockets]) if (!ws.getUserData().closed) ws.end(CLOSE_GOING_AWAY, "server shutting down")
    }
  }
}

/** The socket options of the stream's behaviour, shared by every thread that holds stream sockets. */
export const streamSocketOptions = (options: SignalStreamOptions) =>
  ({
    compression: 0,
    maxPayloadLength: 4 * 1024,
    idleTimeout: options.idleTimeoutSec,
    // Our own bound (`maxBufferedBytes`) closes a slow socket first; this only keeps uWS from dropping messages silently.
    maxBackpressure: options.maxBufferedBytes + BACKPRESSURE_HEADROOM_BYTES,
    closeOnBackpressureLimit: false,
    sendPingsAutomatically: false
  }) as const

/** An upgrade request as read inside uWS's upgrade callback (its request object is gone after it). */
export interface UpgradeRequest {
  readonly headers: Readonly<Record<string, string>>
  readonly query: string
  readonly address: string
  readonly key: string
  readonly protocol: string
  readonly extensions: string
}

/** The subprotocol a browser offers beside `bearer.<key>`, and the one the server then answers. */
export const BROWSER_PROTOCOL = "curvestream.v1"
const BEARER_PROTOCOL_PREFIX = "bearer."

/**
 * A browser's WebSocket cannot send `Authorization`: it offers the key as a subprotocol instead,
 * `new WebSocket(url, ["curvestream.v1", "bearer.<key>"])`. Without an `Authorization` header, that
 * key is the bearer and the answer names `curvestream.v1` only (the key is never echoed back).
 * Anything else is left as it came.
 */
export const bearerFromProtocols = (protocolHeader: string): { readonly authorization: string; readonly protocol: string } | undefined => {
  const offered = protocolHeader.split(",").map((p) => p.trim())
  const bearer = offered.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX))
  if (bearer === undefined || !offered.includes(BROWSER_PROTOCOL)) return undefined
  const key = bearer.slice(BEARER_PROTOCOL_PREFIX.length)
  return key === "" ? undefined : { authorization: `Bearer ${key}`, protocol: BROWSER_PROTOCOL }
}

/** Copies what the upgrade needs; answers 426 (and gives undefined) for a WebSocket version other than 13. */
export const readUpgrade = (res: HttpResponse, req: HttpRequest): UpgradeRequest | undefined => {
  const headers: Record<string, string> = {}
  const authorization = req.getHeader("authorization")
  if (authorization !== "") headers.authorization = authorization
  const key = req.getHeader("sec-websocket-key")
  let protocol = req.getHeader("sec-websocket-protocol")
  const fromProtocol = authorization === "" ? bearerFromProtocols(protocol) : undefined
  if (fromProtocol !== undefined) {
    headers.authorization = fromProtocol.authorization
    protocol = fromProtocol.protocol
  }
  const extensions = req.getHeader("sec-websocket-extensions")
  // RFC 6455 4.2.2: a version other than 13 is answered 426 with the version we speak; uWS would upgrade it.
  if (req.getHeader("sec-websocket-version") !== WEBSOCKET_VERSION) {
    res.cork(() => writeHttp(res, UNSUPPORTED_VERSION))
    return undefined
  }
  return { headers, query: req.getQuery() ?? "", address: textDecoder.decode(res.getRemoteAddressAsText()), key, protocol, extensions }
}

export const INVALID_API_KEY_REPLY: Reply = { status: 401, contentType: JSON_CONTENT_TYPE, body: JSON.stringify(INVALID_API_KEY_BODY) }

/** The upgrade's synchronous checks: its filter (400 when a parameter is wrong), then the refused-bearer throttle (429). */
export const checkUpgrade = (deps: Pick<SignalStreamDeps, "authFailures">, req: Pick<UpgradeRequest, "query" | "address">): StreamFilter | Reply => {
  const filter = parseStreamFilter(req.query)
  if (!("chain" in filter)) return filter
  const throttled = deps.authFailures?.refusal(req.address, Date.now())
  return throttled !== undefined ? errorReply(throttled) : filter
}

/**
 * Authenticates an upgrade; a refused bearer counts against the address. `done` runs when the fiber
 * finishes, possibly in a microtask drained inside some uWS callback: callers defer any uWS call.
 */
export const authenticateUpgrade = (
  deps: Pick<SignalStreamDeps, "authenticate" | "authFailures">,
  runFork: (effect: Effect.Effect<DataPrincipal | undefined>) => Fiber.RuntimeFiber<DataPrincipal | undefined>,
  req: Pick<UpgradeRequest, "headers" | "address">,
  done: (principal: DataPrincipal | undefined) => void
): void => {
  runFork(deps.authenticate(req.headers)).addObserver((exit) => {
    const principal = Exit.isSuccess(exit) ? exit.value : undefined
    if (principal === undefined) deps.authFailures?.failed(req.address, Date.now())
    done(principal)
  })
}

export const makeSignalStream = (deps: SignalStreamDeps, input: Partial<SignalStreamOptions> = {}): SignalStream => {
  const options: SignalStreamOptions = { ...signalStreamDefaults, ...input }
  const runFork = Runtime.runFork(deps.runtime)
  const ledger = makeStreamLedger(deps, options)
  const guard = makeSocketGuard<SocketData>(options)
  const sockets = guard.sockets

  /**
   * Publishes to one topic. uWS's `app.publish` when the app is known; otherwise through one of the open
   * sockets (`ws.publish` reaches every subscriber but the publishing socket itself, which then gets a
   * direct `send`: it drains anything published to it before, so its order holds too).
   */
  const publish = (topic: string, message: string) => {
    if (deps.app !== undefined) {
      deps.app.publish(topic, message, false, false)
      return
    }
    const anchor = sockets.values().next().value
    if (anchor === undefined) return
    anchor.publish(topic, message, false, false)
    const own = anchor.getUserData()
    // A send uWS had to drop (over its ceiling, which the sweeps keep us under) would be a gap: close instead.
    if (own.topic === topic && !own.closed && anchor.send(message, false, false) === 2) guard.dropSlow(anchor)
  }

  const unsubscribe = deps.hub.subscribe((signal) => {
    const out = ledger.fanOut(signal)
    if (out.length === 0) return
    for (const { topic, message, first } of out) {
      if (first) guard.queued(message)
      publish(topic, message)
    }
    guard.published()
  })

  const behavior: WebSocketBehavior<SocketData> = {
    ...streamSocketOptions(options),
    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      const request = readUpgrade(res, req)
      if (request === undefined) return
      const filter = checkUpgrade(deps, request)
      if (!("chain" in filter)) {
        res.cork(() => writeHttp(res, filter))
        return
      }
      const state = { aborted: false }
      res.onAborted(() => {
        state.aborted = true
      })
      authenticateUpgrade(deps, runFork, request, (principal) => {
        // The fiber may finish in a microtask drained inside uWS's parse of another connection's request. An upgrade there
        // would be taken for that connection's (uWS marks "the socket upgraded during this parse" once per app, not per
        // socket) and one of the two would be cut without a close frame; an immediate runs outside every uWS callback.
        setImmediate(() => {
          if (state.aborted) return
          if (principal === undefined) {
            res.cork(() => writeHttp(res, INVALID_API_KEY_REPLY))
            return
          }
          // Not inside `res.cork`: when the upgrade keeps the socket's address, the cork's epilogue reads the finished HTTP
          // response's state from what is now the WebSocket's memory and, when a stale bit reads "Connection: close", shuts
          // the new socket down (a client sees its snapshot, then 1006). The upgrade writes its 101 itself.
          const data: SocketData = { accountId: principal.accountId, plan: principal.tier, filter, topic: undefined, counted: false, closed: false }
          res.upgrade(data, request.key, request.protocol, request.extensions, context)
        })
      })
    },
    open: (ws) => {
      const data = ws.getUserData()
      const admission = ledger.admit(data.accountId, data.plan, data.filter)
      if (admission.kind === "refused") {
        data.closed = true
        ws.end(admission.code, admission.reason)
        return
      }
      data.counted = true
      data.topic = admission.topic
      sockets.add(ws)
      const status = ws.send(admission.snapshot, false, false)
      if (status === 2 || ws.getBufferedAmount() > options.maxBufferedBytes) {
        guard.dropSlow(ws)
        return
      }
      // After the snapshot: every signal the hub publishes from here on reaches this socket through its topic.
      ws.subscribe(admission.topic)
    },
    message: () => {
      // Clients have nothing to say; messages are ignored (the payload bound closes a flood).
    },
    close: (ws) => {
      const data = ws.getUserData()
      data.closed = true
      sockets.delete(ws)
      // uWS drops a closed socket's subscriptions itself; the ledger counts who listens where.
      if (data.counted) {
        data.counted = false
        ledger.release(data.accountId, data.topic!)
        data.topic = undefined
      }
    }
  }

  return {
    behavior,
    stats: () => ({ ...ledger.stats(), droppedSlow: guard.droppedSlow() }),
    close: () => {
      unsubscribe()
      guard.close()
    }
  }
}

export type { SocketData as SignalStreamSocketData }
