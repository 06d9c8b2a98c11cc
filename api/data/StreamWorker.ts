/**
 * A stream thread (`DATA_STREAM_THREADS` > 1; see `ThreadedStream.ts`): a uWS app the main
 * thread's listener hands every other accepted connection to (uWS child apps). It holds those
 * connections' sockets and writes them; everything that needs the hub, the accounts or a route's
 * services stays on the main thread:
 * - `GET /v1/signals/stream`: the 426 check here, then the upgrade's query, bearer and address go
 *   to the main thread, which answers 400/401/429, refuses (4029/1013), or admits with the
 *   socket's topic and snapshot. The upgrade runs when that answer arrives, in the port's message
 *   handler (outside every uWS callback, as `SignalStream.ts` requires, and never inside `cork`).
 * - Signals arrive as one message per hub batch with their bytes per topic; `app.publish` writes them.
 *   The slow-client sweep and the pings are `SignalStream.ts`'s own (`makeSocketGuard`), per socket.
 * - Every other data route is read by the shared router (bounds, gates, 404/405) with a handler
 *   that forwards the request to the main thread and writes its reply.
 */
import * as uWS from "uws-pack"
import { Cause, Effect, Runtime, Schema } from "effect"
import { parentPort, workerData } from "node:worker_threads"
import type { Reply } from "../Http.js"
import { mountRoutes, type RouteDef } from "../Router.js"
import { behindProxies } from "../ClientAddress.js"
import { makeSocketGuard, readUpgrade, writeHttp, STREAM_PATH, streamSocketOptions, type UpgradeRequest } from "./SignalStream.js"
import type { FromWorker, StreamWorkerData, ToWorker } from "./StreamThreadProtocol.js"

interface WorkerSocketData {
  readonly id: number
  readonly topic: string | undefined
  readonly snapshot: string | undefined
  readonly refusal: { readonly code: number; readonly reason: string } | undefined
  counted: boolean
  closed: boolean
}

interface PendingUpgrade {
  readonly res: uWS.HttpResponse
  readonly context: uWS.us_socket_context_t
  readonly request: UpgradeRequest
  aborted: boolean
}

const port = parentPort!
const { options, maxBodyBytes, routes, trustedProxies, cors } = workerData as StreamWorkerData
const post = (m: FromWorker) => port.postMessage(m)
const app = behindProxies(uWS.App(), trustedProxies)
const guard = makeSocketGuard<WorkerSocketData>(options)
const upgrades = new Map<number, PendingUpgrade>()
const answers = new Map<number, (reply: Reply) => void>()
let nextId = 0

const gone = (id: number) => post({ t: "gone", id, droppedSlow: guard.droppedSlow() })

app.ws<WorkerSocketData>(STREAM_PATH, {
  ...streamSocketOptions(options),
  upgrade: (res, req, context) => {
    const request = readUpgrade(res, req)
    if (request === undefined) return
    const id = ++nextId
    const pending: PendingUpgrade = { res, context, request, aborted: false }
    upgrades.set(id, pending)
    res.onAborted(() => {
      pending.aborted = true
    })
    post({ t: "upgrade", id, headers: request.headers, query: request.query, address: request.address })
  },
  open: (ws) => {
    const data = ws.getUserData()
    if (data.refusal !== undefined) {
      data.closed = true
      ws.end(data.refusal.code, data.refusal.reason)
      return
    }
    guard.sockets.add(ws)
    const status = ws.send(data.snapshot!, false, false)
    if (status === 2 || ws.getBufferedAmount() > options.maxBufferedBytes) {
      guard.dropSlow(ws)
      return
    }
    // Signals the main thread published after this socket's snapshot come after the admission on the port: none is missed.
    ws.subscribe(data.topic!)
  },
  message: () => {
    // Clients have nothing to say; messages are ignored (the payload bound closes a flood).
  },
  close: (ws) => {
    const data = ws.getUserData()
    data.closed = true
    guard.sockets.delete(ws)
    if (data.counted) {
      data.counted = false
      gone(data.id)
    }
  }
})

const forwarded = routes.map(
  (r, index): RouteDef => ({
    method: r.method,
    path: r.path,
    operationId: `forwarded${index}`,
    summary: "",
    tags: [],
    auth: r.auth,
    ...(r.headers !== undefined ? { headers: r.headers } : {}),
    ...(r.body !== undefined ? { body: { schema: Schema.Unknown, ...r.body } } : {}),
    responses: {},
    handler: (req) =>
      Effect.async<Reply>((resume) => {
        const id = ++nextId
        answers.set(id, (reply) => resume(Effect.succeed(reply)))
        post({ t: "request", id, route: index, req })
        // The client went away (the router interrupts its handler): the main thread interrupts its fiber too.
        return Effect.sync(() => {
          if (answers.delete(id)) post({ t: "abandon", id })
        })
      })
  })
)
const mounted = mountRoutes(app, forwarded, {
  maxBodyBytes,
  ...(cors !== undefined ? { cors } : {}),
  runtime: Runtime.defaultRuntime,
  // The refused-bearer throttle is the main thread's (one count per address across threads).
  onDefect: (cause, req) => console.error(`data stream thread: ${req.method} ${req.path} failed unexpectedly`, Cause.pretty(cause))
})

const upgrade = (id: number, data: Omit<WorkerSocketData, "id" | "closed" | "counted">, counted: boolean) => {
  const pending = upgrades.get(id)
  if (pending === undefined) return
  upgrades.delete(id)
  if (pending.aborted) {
    if (counted) gone(id)
    return
  }
  const { res, request, context } = pending
  res.upgrade<WorkerSocketData>({ id, ...data, counted, closed: false }, request.key, request.protocol, request.extensions, context)
}

port.on("message", (m: ToWorker) => {
  switch (m.t) {
    case "signals":
      for (const items of m.batch) {
        for (const [topic, message, first] of items) {
          if (first) guard.queued(message)
          app.publish(topic, message, false, false)
        }
        // Per signal, as on one thread: a batch past half of uWS's headroom is swept before the rest is queued.
        guard.published()
      }
      return
    case "admit":
      upgrade(m.id, { topic: m.topic, snapshot: m.snapshot, refusal: undefined }, true)
      return
    case "refuse":
      upgrade(m.id, { topic: undefined, snapshot: undefined, refusal: { code: m.code, reason: m.reason } }, false)
      return
    case "reply": {
      const pending = upgrades.get(m.id)
      upgrades.delete(m.id)
      if (pending === undefined || pending.aborted) return
      pending.res.cork(() => writeHttp(pending.res, m.reply))
      return
    }
    case "answer":
      answers.get(m.id)?.(m.reply)
      answers.delete(m.id)
      return
    case "drain":
      Effect.runFork(mounted.drain).addObserver(() => post({ t: "drained" }))
      return
    case "close":
      guard.close()
      // The close frames leave when the loop turns; then the remaining connections are cut.
      setImmediate(() => {
        app.close()
        post({ t: "closed" })
        port.close()
      })
      return
  }
})

post({ t: "ready", descriptor: (app as unknown as { getDescriptor(): number }).getDescriptor() })
