/**
 * The market-data service's listener (`{data_url}`, default port 8081): one uWS app with the
 * data routes (the shared router: bounded bodies, 404/405 envelopes) and the signal stream's
 * WebSocket behaviour at `/v1/signals/stream`. With `streamThreads` > 1 (`DATA_STREAM_THREADS`)
 * the listener hands every connection to one of that many threads, which hold the stream's
 * sockets and read the data routes' requests for the handlers here (`ThreadedStream.ts`).
 * Scoped: closing the scope drains the listener (no new connections, requests in flight answered
 * within the bound), then closes every stream socket (1001), then the keep-alive connections (and
 * the threads).
 */
import * as uWS from "uws-pack"
import { Effect, type Scope } from "effect"
import type { ProxyTrust } from "../../src/net/ProxyTrust.js"
import { type FailedAuthLimits, FailedAuthThrottle } from "../auth/FailedAuthThrottle.js"
import { behindProxies } from "../ClientAddress.js"
import type { CorsPolicy, RouteDef } from "../Router.js"
import { listen, mountOn, type RunningServer, type ServerListenError } from "../Server.js"
import { makeSignalStream, type SignalStream, type SignalStreamDeps, type SignalStreamOptions, STREAM_PATH } from "./SignalStream.js"
import { startThreadedStream } from "./ThreadedStream.js"

export interface DataServerOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<RouteDef>
  readonly stream: Omit<SignalStreamDeps, "runtime">
  readonly streamOptions?: Partial<SignalStreamOptions>
  /** Threads holding the stream's sockets (default 1: the listener's own thread, no workers). */
  readonly streamThreads?: number
  /** The drain's bound (default `drainBoundMs`). */
  readonly drainMs?: number
  /** Failed-authentication throttle limits (default `DefaultFailedAuthLimits`). */
  readonly authFailureLimits?: Partial<FailedAuthLimits>
  /** `TRUSTED_PROXIES` (`ClientAddress.ts`); the stream threads resolve the client the same way. */
  readonly trustedProxies?: ProxyTrust
  /** Cross-origin calls from the engine's web page (absent: none). */
  readonly cors?: CorsPolicy
}

export interface RunningDataServer extends RunningServer {
  readonly stream: Pick<SignalStream, "stats" | "close">
}

export const serveData = (options: DataServerOptions): Effect.Effect<RunningDataServer, ServerListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    // With stream threads this app only listens; each thread wraps its own app with the same trust.
    const app = behindProxies(uWS.App(), options.trustedProxies)
    // One throttle for the routes and the stream's upgrades: a refused bearer counts the same on both.
    const authFailures = new FailedAuthThrottle(options.authFailureLimits)
    const listenOptions = { name: "data", host: options.host, port: options.port, app, ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}) }
    if ((options.streamThreads ?? 1) > 1) {
      const threaded = yield* startThreadedStream(
        { ...options.stream, runtime, authFailures },
        {
          app,
          threads: options.streamThreads!,
          routes: options.routes,
          maxBodyBytes: options.maxBodyBytes,
          ...(options.streamOptions !== undefined ? { options: options.streamOptions } : {}),
          ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
          ...(options.cors !== undefined ? { cors: options.cors } : {})
        }
      )
      const server = yield* listen({ ...listenOptions, mounted: threaded.mounted, beforeClose: threaded.close })
      return { ...server, stream: threaded }
    }
    const stream = makeSignalStream({ ...options.stream, runtime, app, authFailures }, options.streamOptions)
    // The WebSocket route first: its static path wins over the router's catch-all either way.
    app.ws(STREAM_PATH, stream.behavior)
    const mounted = yield* mountOn(app, "data", options.routes, options.maxBodyBytes, authFailures, options.cors)
    const server = yield* listen({ ...listenOptions, mounted, beforeClose: stream.close })
    return { ...server, stream }
  })
