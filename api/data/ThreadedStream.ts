/**
 * The signal stream served from several threads (`DATA_STREAM_THREADS` > 1). Writing a signal to
 * 1,000 sockets is one kernel write each (~8.6 µs, bench/wsFanout.ts), so one thread holding every
 * socket spends ~9 ms per signal; sockets spread over N threads are written N at a time.
 *
 * Shape (uWS.js permits no other on one port: a connection cannot move between threads once
 * accepted, and child apps take a connection with all its routes, before its first byte):
 * - The main thread's app only listens; every accepted connection goes round robin to one of N
 *   stream threads (`StreamWorker.ts`, uWS child apps). Each thread serves the stream path and every
 *   other data route (read there by the shared router, answered here by the route's handler).
 * - Everything with state stays here, on one thread: authentication and the refused-bearer
 *   throttle, the stream ledger (per-account and total caps, topics, snapshots; `SignalStream.ts`)
 *   and the hub. So the 8-per-account cap is exact across threads: an upgrade is counted here
 *   when its bearer is accepted, before its thread opens the socket, and released when the thread
 *   reports it gone (closed, or aborted before it opened).
 * - Gapless: the admission (with its snapshot, taken when the topic is registered) and every later
 *   signal go down the same port in order, and the thread opens the socket and subscribes it in the
 *   admission's message handler, before it reads the next message.
 * - Each signal is serialized once per plan here; a hub batch is posted once per thread (per signal,
 *   the messages of its matching topics; sent before any later admission); each thread
 *   `app.publish`es them, so a socket gets a batch in one write as on one thread. The slow-client rule runs per socket in its
 *   thread, unchanged (`makeSocketGuard`).
 * - A route's refused-bearer count and check happen here, after the thread read the request (a
 *   throttled client's body is read before its 429, unlike the one-thread router, which refuses first).
 */
import * as uWS from "uws-pack"
import { Cause, Effect, Exit, type Fiber, Option, Runtime } from "effect"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { errorReply, type Reply } from "../Http.js"
import { type CorsPolicy, internalError, type MountedRoutes, type RouteDef } from "../Router.js"
import {
  authenticateUpgrade,
  checkUpgrade,
  INVALID_API_KEY_REPLY,
  makeStreamLedger,
  signalStreamDefaults,
  type SignalStreamDeps,
  type SignalStreamOptions,
  type SignalStreamStats
} from "./SignalStream.js"
import type { ForwardedRoute, FromWorker, StreamWorkerData, ToWorker } from "./StreamThreadProtocol.js"
import type { ProxyTrust } from "../../src/net/ProxyTrust.js"

export interface ThreadedStreamStats extends SignalStreamStats {
  /** Open stream sockets per thread. */
  readonly openByThread: ReadonlyArray<number>
}

export interface ThreadedStream {
  readonly stats: () => ThreadedStreamStats
  /** Stops the hub subscription and has every thread close its sockets (1001) and its connections. */
  readonly close: () => void
  /** The data routes' drain across the threads: replies close their connections; done when none is in flight. */
  readonly mounted: MountedRoutes
}

export interface ThreadedStreamInput {
  /** The listening app: it hands its accepted connections to the threads. */
  readonly app: uWS.TemplatedApp
  readonly threads: number
  readonly routes: ReadonlyArray<RouteDef>
  readonly maxBodyBytes: number
  readonly options?: Partial<SignalStreamOptions>
  /** Each thread resolves its connections' clients with this (`ClientAddress.ts`). */
  readonly trustedProxies?: ProxyTrust
  readonly cors?: CorsPolicy
}

interface Thread {
  readonly worker: Worker
  readonly descriptor: number
  /** Admitted upgrades not yet gone: id → account and topic. */
  readonly admitted: Map<number, { readonly accountId: string; readonly topic: string }>
  /** Forwarded requests being answered: id → fiber. */
  readonly requests: Map<number, Fiber.RuntimeFiber<Reply>>
  droppedSlow: number
  live: boolean
}

/** The threads run the TypeScript sources as the process does: tsx's loader, by path, so any working directory finds it. */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href

type ChildApps = { addChildAppDescriptor(d: number): void; removeChildAppDescriptor(d: number): void }

const forwardedRoute = (r: RouteDef): ForwardedRoute => {
  if (r.body?.refuseContentType !== undefined) throw new Error(`${r.method} ${r.path}: a custom content-type refusal cannot be read on a stream thread`)
  return {
    method: r.method,
    path: r.path,
    auth: r.auth,
    ...(r.headers !== undefined ? { headers: r.headers } : {}),
    ...(r.body !== undefined ? { body: { ...(r.body.maxBytes !== undefined ? { maxBytes: r.body.maxBytes } : {}), ...(r.body.accepts !== undefined ? { accepts: r.body.accepts } : {}) } } : {})
  }
}

/** Starts the threads and hands them the app's connections; closing the scope stops them (after `close`). */
export const startThreadedStream = (deps: Omit<SignalStreamDeps, "app">, input: ThreadedStreamInput): Effect.Effect<ThreadedStream, never, import("effect").Scope.Scope> =>
  Effect.gen(function* () {
    const options: SignalStreamOptions = { ...signalStreamDefaults, ...input.options }
    const runFork = Runtime.runFork(deps.runtime)
    const ledger = makeStreamLedger(deps, options)
    const data: StreamWorkerData = {
      options,
      maxBodyBytes: input.maxBodyBytes,
      routes: input.routes.map(forwardedRoute),
      ...(input.trustedProxies !== undefined ? { trustedProxies: input.trustedProxies } : {}),
      ...(input.cors !== undefined ? { cors: input.cors } : {})
    }
    const children = input.app as unknown as ChildApps
    let closing = false
    const drainWaiters: Array<() => void> = []
    let flushSignals = () => {}
    let drained = 0

    const send = (thread: Thread, m: ToWorker) => {
      if (thread.live) thread.worker.postMessage(m)
    }

    const answerRequest = (thread: Thread, id: number, route: RouteDef, req: Extract<FromWorker, { t: "request" }>["req"]) => {
      const throttle = deps.authFailures
      const throttled = throttle !== undefined && route.auth !== "public" ? throttle.refusal(req.remoteAddress, Date.now()) : undefined
      if (throttled !== undefined) return send(thread, { t: "answer", id, reply: errorReply(throttled) })
      const fiber = runFork(
        Effect.suspend(() => {
          const out = route.handler(req)
          return Effect.isEffect(out) ? out : Effect.succeed(out)
        }).pipe(
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOption(cause)
            if (Option.isSome(failure)) return Effect.succeed(errorReply(failure.value))
            return Effect.as(Effect.logError(`${req.method} ${req.path} failed unexpectedly`, Cause.pretty(cause)).pipe(Effect.annotateLogs({ server: "data" })), internalError())
          })
        )
      )
      thread.requests.set(id, fiber)
      fiber.addObserver((exit) => {
        thread.requests.delete(id)
        if (!Exit.isSuccess(exit)) return
        if (throttle !== undefined && exit.value.status === 401 && route.auth !== "public") throttle.failed(req.remoteAddress, Date.now())
        send(thread, { t: "answer", id, reply: exit.value })
      })
    }

    const onMessage = (thread: Thread, m: FromWorker) => {
      switch (m.t) {
        case "upgrade": {
          const filter = checkUpgrade(deps, m)
          if (!("chain" in filter)) return send(thread, { t: "reply", id: m.id, reply: filter })
          authenticateUpgrade(deps, runFork, m, (principal) => {
            if (principal === undefined) return send(thread, { t: "reply", id: m.id, reply: INVALID_API_KEY_REPLY })
            // Each thread's port is in order, but two ports are read in either order within one loop turn. An immediate runs
            // after the turn that read this upgrade, so every socket another thread reported gone before it is released first.
            setImmediate(() => {
              if (!thread.live || closing) return
              // Signals the hub published before this snapshot go out first: the new socket gets them in its snapshot only.
              flushSignals()
              const admission = ledger.admit(principal.accountId, principal.tier, filter)
              if (admission.kind === "refused") return send(thread, { t: "refuse", id: m.id, code: admission.code, reason: admission.reason })
              thread.admitted.set(m.id, { accountId: principal.accountId, topic: admission.topic })
              send(thread, { t: "admit", id: m.id, topic: admission.topic, snapshot: admission.snapshot })
            })
          })
          return
        }
        case "gone": {
          thread.droppedSlow = m.droppedSlow
          const admitted = thread.admitted.get(m.id)
          if (admitted === undefined) return
          thread.admitted.delete(m.id)
          ledger.release(admitted.accountId, admitted.topic)
          return
        }
        case "request":
          return answerRequest(thread, m.id, input.routes[m.route]!, m.req)
        case "abandon": {
          const fiber = thread.requests.get(m.id)
          thread.requests.delete(m.id)
          if (fiber !== undefined) runFork(fiber.interruptAsFork(fiber.id()))
          return
        }
        case "drained":
          if (++drained >= threads.filter((t) => t.live).length) for (const wake of drainWaiters.splice(0)) wake()
          return
        case "ready":
        case "closed":
          return
      }
    }

    const release = (thread: Thread) => {
      for (const { accountId, topic } of thread.admitted.values()) ledger.release(accountId, topic)
      thread.admitted.clear()
    }

    const spawn = Effect.async<Thread>((resume) => {
      const worker = new Worker(new URL("./StreamWorker.ts", import.meta.url), { workerData: data, execArgv: ["--import", TSX_LOADER] })
      worker.once("message", (m: FromWorker) => {
        if (m.t !== "ready") return
        const thread: Thread = { worker, descriptor: m.descriptor, admitted: new Map(), requests: new Map(), droppedSlow: 0, live: true }
        worker.on("message", (next: FromWorker) => onMessage(thread, next))
        worker.on("exit", (code) => {
          thread.live = false
          release(thread)
          if (closing) return
          // A lost thread takes its connections with it; the listener stops handing it new ones.
          children.removeChildAppDescriptor(thread.descriptor)
          runFork(Effect.logError(`data stream thread exited (${code}); its connections are closed`).pipe(Effect.annotateLogs({ server: "data" })))
        })
        resume(Effect.succeed(thread))
      })
      worker.once("error", (e) => runFork(Effect.logError("data stream thread failed", e).pipe(Effect.annotateLogs({ server: "data" }))))
      // A thread that cannot start (its module fails to load) ends the start instead of leaving it waiting.
      worker.once("exit", (code) => resume(Effect.dieMessage(`data stream thread exited (${code}) before it was ready`)))
    })

    const threads: Array<Thread> = yield* Effect.acquireRelease(Effect.all(Array.from({ length: input.threads }, () => spawn)), (all) =>
      Effect.gen(function* () {
        closing = true
        for (const t of all) send(t, { t: "close" })
        // Each thread exits once its app is closed; a thread that does not within 5 s is terminated.
        yield* Effect.forEach(all, (t) =>
          Effect.promise(() => new Promise<void>((resolve) => (t.live ? t.worker.once("exit", () => resolve()) : resolve()))).pipe(
            Effect.timeout("5 seconds"),
            Effect.catchAll(() => Effect.promise(() => t.worker.terminate()))
          )
        )
      })
    )
    for (const t of threads) children.addChildAppDescriptor(t.descriptor)

    // The hub calls its listeners once per signal; a batch goes to the threads as one message, at the end of the publish.
    let batch: Array<ReadonlyArray<readonly [string, string, boolean]>> = []
    flushSignals = () => {
      if (batch.length === 0) return
      const m: ToWorker = { t: "signals", batch }
      batch = []
      for (const t of threads) send(t, m)
    }
    const unsubscribe = deps.hub.subscribe((signal) => {
      const out = ledger.fanOut(signal)
      if (out.length === 0) return
      if (batch.length === 0) queueMicrotask(flushSignals)
      batch.push(out.map((x) => [x.topic, x.message, x.first] as const))
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))

    const stats = (): ThreadedStreamStats => ({
      ...ledger.stats(),
      droppedSlow: threads.reduce((n, t) => n + t.droppedSlow, 0),
      openByThread: threads.map((t) => t.admitted.size)
    })

    return {
      stats,
      close: () => {
        unsubscribe()
        closing = true
        for (const t of threads) send(t, { t: "close" })
      },
      mounted: {
        inFlight: () => threads.reduce((n, t) => n + t.requests.size, 0),
        drain: Effect.async<void>((resume) => {
          drained = 0
          drainWaiters.push(() => resume(Effect.void))
          for (const t of threads) send(t, { t: "drain" })
          if (threads.every((t) => !t.live)) for (const wake of drainWaiters.splice(0)) wake()
        })
      }
    }
  })
