/**
 * The market-data service's listener (`{data_url}`, default port 8081): one uWS app with the
 * data routes (the shared router: bounded bodies, 404/405 envelopes) and the signal stream's
 * WebSocket behaviour at `/v1/signals/stream`. Scoped: closing the scope drains the listener (no
 * new connections, requests in flight answered within the bound), then closes every stream
 * socket (1001), then the keep-alive connections.
 */
import * as uWS from "uws-pack"
import { Effect, type Scope } from "effect"
import { type FailedAuthLimits, FailedAuthThrottle } from "../auth/FailedAuthThrottle.js"
import type { RouteDef } from "../Router.js"
import { listen, mountOn, type RunningServer, type ServerListenError } from "../Server.js"
import { makeSignalStream, type SignalStream, type SignalStreamDeps, type SignalStreamOptions, STREAM_PATH } from "./SignalStream.js"

export interface DataServerOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<RouteDef>
  readonly stream: Omit<SignalStreamDeps, "runtime">
  readonly streamOptions?: Partial<SignalStreamOptions>
  /** The drain's bound (default `drainBoundMs`). */
  readonly drainMs?: number
  /** Failed-authentication throttle limits (default `DefaultFailedAuthLimits`). */
  readonly authFailureLimits?: Partial<FailedAuthLimits>
}

export interface RunningDataServer extends RunningServer {
  readonly stream: SignalStream
}

export const serveData = (options: DataServerOptions): Effect.Effect<RunningDataServer, ServerListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const app = uWS.App()
    // One throttle for the routes and the stream's upgrades: a refused bearer counts the same on both.
    const authFailures = new FailedAuthThrottle(options.authFailureLimits)
    const stream = makeSignalStream({ ...options.stream, runtime, app, authFailures }, options.streamOptions)
    // The WebSocket route first: its static path wins over the router's catch-all either way.
    app.ws(STREAM_PATH, stream.behavior)
    const mounted = yield* mountOn(app, "data", options.routes, options.maxBodyBytes, authFailures)
    const server = yield* listen({
      name: "data",
      host: options.host,
      port: options.port,
      app,
      mounted,
      ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}),
      beforeClose: stream.close
    })
    return { ...server, stream }
  })
