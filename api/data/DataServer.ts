/**
 * The market-data service's listener (`{data_url}`, default port 8081): one uWS app with the
 * data routes (the shared router: bounded bodies, 404/405 envelopes) and the signal stream's
 * WebSocket behaviour at `/v1/signals/stream`. Scoped: closing the scope closes the listen
 * socket, then every stream socket (1001), then the keep-alive connections.
 */
import * as uWS from "uws-pack"
import { Cause, Effect, Runtime, type Scope } from "effect"
import { mountRoutes, type RouteDef } from "../Router.js"
import { type RunningServer, ServerListenError } from "../Server.js"
import { makeSignalStream, type SignalStream, type SignalStreamDeps, type SignalStreamOptions, STREAM_PATH } from "./SignalStream.js"

export interface DataServerOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<RouteDef>
  readonly stream: Omit<SignalStreamDeps, "runtime">
  readonly streamOptions?: Partial<SignalStreamOptions>
}

export interface RunningDataServer extends RunningServer {
  readonly stream: SignalStream
}

export const serveData = (options: DataServerOptions): Effect.Effect<RunningDataServer, ServerListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const app = uWS.App()
    const stream = makeSignalStream({ ...options.stream, runtime, app }, options.streamOptions)
    // The WebSocket route first: its static path wins over the router's catch-all either way.
    app.ws(STREAM_PATH, stream.behavior)
    mountRoutes(app, options.routes, {
      maxBodyBytes: options.maxBodyBytes,
      runtime,
      onDefect: (cause, req) =>
        Runtime.runFork(runtime)(
          Effect.logError(`${req.method} ${req.path} failed unexpectedly`, Cause.pretty(cause)).pipe(Effect.annotateLogs({ server: "data" }))
        )
    })
    const socket = yield* Effect.acquireRelease(
      Effect.async<uWS.us_listen_socket, ServerListenError>((resume) => {
        app.listen(options.host, options.port, (s) => {
          if (s === false) {
            resume(Effect.fail(new ServerListenError({ host: options.host, port: options.port, message: `cannot listen on ${options.host}:${options.port}` })))
          } else resume(Effect.succeed(s))
        })
      }),
      (s) =>
        Effect.sync(() => {
          uWS.us_listen_socket_close(s)
          stream.close()
          app.close()
        }).pipe(Effect.zipRight(Effect.logInfo("data server closed")))
    )
    const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket)
    const host = options.host
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
    yield* Effect.logInfo(`data server listening on ${url}`)
    return { host, port, url, stream }
  })
