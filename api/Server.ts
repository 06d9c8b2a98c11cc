/**
 * One uWS listener serving a route table. Scoped: closing the scope stops accepting (listen
 * socket closed) and then closes the remaining keep-alive connections, so a graceful shutdown
 * never leaves the process held open by idle clients.
 */
import * as uWS from "uws-pack"
import { Cause, Effect, Runtime, Schema } from "effect"
import { mountRoutes, type RouteDef } from "./Router.js"

export class ServerListenError extends Schema.TaggedError<ServerListenError>()("ServerListenError", {
  host: Schema.String,
  port: Schema.Number,
  message: Schema.String
}) {}

export interface HttpServerOptions {
  readonly name: string
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<RouteDef>
}

export interface RunningServer {
  readonly host: string
  readonly port: number
  readonly url: string
}

export const serve = (options: HttpServerOptions): Effect.Effect<RunningServer, ServerListenError, import("effect").Scope.Scope> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const app = uWS.App()
    mountRoutes(app, options.routes, {
      maxBodyBytes: options.maxBodyBytes,
      runtime,
      onDefect: (cause, req) =>
        Runtime.runFork(runtime)(
          Effect.logError(`${req.method} ${req.path} failed unexpectedly`, Cause.pretty(cause)).pipe(
            Effect.annotateLogs({ server: options.name })
          )
        )
    })
    const socket = yield* Effect.acquireRelease(
      Effect.async<uWS.us_listen_socket, ServerListenError>((resume) => {
        app.listen(options.host, options.port, (s) => {
          if (s === false) {
            resume(Effect.fail(new ServerListenError({
              host: options.host,
              port: options.port,
              message: `cannot listen on ${options.host}:${options.port}`
            })))
          } else resume(Effect.succeed(s))
        })
      }),
      (s) =>
        Effect.sync(() => {
          uWS.us_listen_socket_close(s)
          // Closes the keep-alive connections too.
          app.close()
        }).pipe(Effect.zipRight(Effect.logInfo(`${options.name} server closed`)))
    )
    const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket)
    const host = options.host
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
    yield* Effect.logInfo(`${options.name} server listening on ${url}`)
    return { host, port, url }
  })
