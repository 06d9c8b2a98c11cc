/**
 * One uWS listener serving a route table. Scoped: closing the scope drains the listener (stops
 * accepting, lets the requests in flight finish within `drainBoundMs`, closing each keep-alive
 * connection after its reply) and then closes the remaining connections, so a graceful shutdown
 * neither cuts an answer short nor leaves the process held open by idle clients.
 */
import { shared, type SharedWindowCounts } from "../src/db/SharedWindowCounts.js"
import * as uWS from "uws-pack"
import { Cause, Effect, Option, Runtime, Schema, type Scope } from "effect"
import type { ProxyTrust } from "../src/net/ProxyTrust.js"
import { type FailedAuthLimits, FailedAuthThrottle } from "./auth/FailedAuthThrottle.js"
import { behindProxies } from "./ClientAddress.js"
import { type CorsPolicy, type MountedRoutes, mountRoutes, RequestsInFlight, type RouteDef } from "./Router.js"
import { errorReply } from "./Http.js"
import { apiError } from "../src/domain/ApiError.js"
import { mountStaticSite, type StaticSite } from "./StaticSite.js"

export class ServerListenError extends Schema.TaggedError<ServerListenError>()("ServerListenError", {
  host: Schema.String,
  port: Schema.Number,
  message: Schema.String
}) {}

/** How long a draining listener waits for its requests in flight before closing their connections. */
export const drainBoundMs = 10_000

export interface HttpServerOptions {
  readonly name: string
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<RouteDef>
  /** The drain's bound (default `drainBoundMs`). */
  readonly drainMs?: number
  /** Failed-authentication throttle limits (default `DefaultFailedAuthLimits`). */
  readonly authFailureLimits?: Partial<FailedAuthLimits>
  /** The counts other API processes admitted (a database shared by replicas): the failed-authentication throttle holds across them. */
  readonly sharedLimits?: SharedWindowCounts | undefined
  /** `TRUSTED_PROXIES`: connections from these carry the client in `X-Forwarded-For` (`ClientAddress.ts`). */
  readonly trustedProxies?: ProxyTrust
  /** The web page, served beside the routes (`StaticSite.ts`); absent: none. */
  readonly site?: StaticSite
  /** Cross-origin calls admitted (`CorsPolicy`); absent: none. */
  readonly cors?: CorsPolicy
  /** More endpoints beside the routes (the MCP endpoint, `McpEndpoint.ts`), under the listener's failed-authentication throttle, for the scope's lifetime. */
  readonly mount?: (app: uWS.TemplatedApp, authFailures: FailedAuthThrottle, requests: RequestsInFlight) => Effect.Effect<unknown, never, Scope.Scope>
}

export interface RunningServer {
  readonly host: string
  readonly port: number
  readonly url: string
  /**
   * Stops accepting and waits for the requests in flight, at most the drain bound; the first
   * call does it, later ones wait for the same. Closing the scope runs it too, so a shutdown
   * that drains several listeners at once calls each one's first.
   */
  readonly drain: Effect.Effect<void>
}

/**
 * Mounts `routes` on `app` with the server's runtime; defects are logged under `name`; refused
 * credentials are throttled per client address with `authFailures`.
 */
export const mountOn = (
  app: uWS.TemplatedApp,
  name: string,
  routes: ReadonlyArray<RouteDef>,
  maxBodyBytes: number,
  authFailures: FailedAuthThrottle,
  cors?: CorsPolicy,
  requests?: RequestsInFlight
): Effect.Effect<MountedRoutes> =>
  Effect.map(Effect.runtime<never>(), (runtime) =>
    mountRoutes(app, routes, {
      maxBodyBytes,
      runtime,
      authFailures,
      ...(cors !== undefined ? { cors } : {}),
      ...(requests !== undefined ? { requests } : {}),
      onDefect: (cause, req) =>
        Runtime.runFork(runtime)(
          Effect.logError(`${req.method} ${req.path} failed unexpectedly`, Cause.pretty(cause)).pipe(Effect.annotateLogs({ server: name }))
        )
    })
  )

/**
 * Listens with `app` for the scope's lifetime. Closing the scope: the drain (listen socket
 * closed, requests in flight answered within the bound), then `beforeClose` (the data server
 * closes its stream sockets with 1001), then the remaining connections.
 */
/** `listen(host, port, options, cb)`: the binding takes it, its declarations name only the other overloads. */
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => uWS.TemplatedApp
/** The binding's `LIBUS_LISTEN_EXCLUSIVE_PORT` (exported at run time, undeclared in its types). */
const EXCLUSIVE_PORT = (uWS as unknown as { readonly LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT

export const listen = (o: {
  readonly name: string
  readonly host: string
  readonly port: number
  readonly app: uWS.TemplatedApp
  readonly mounted: MountedRoutes
  readonly drainMs?: number
  readonly beforeClose?: () => void
}): Effect.Effect<RunningServer, ServerListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const drainMs = o.drainMs ?? drainBoundMs
    const socket = yield* Effect.async<uWS.us_listen_socket, ServerListenError>((resume) => {
      // Exclusive: uWS binds with SO_REUSEPORT by default, so a second listener on a taken port
      // (another process, or this engine's other listener given the same port) would bind too and
      // take a share of the connections; exclusive, it fails here instead.
      ;(o.app.listen as unknown as ListenWithOptions)(o.host, o.port, EXCLUSIVE_PORT, (s) => {
        if (s === false) resume(Effect.fail(new ServerListenError({ host: o.host, port: o.port, message: `cannot listen on ${o.host}:${o.port}` })))
        else resume(Effect.succeed(s))
      })
    })
    const drain = yield* Effect.cached(
      Effect.gen(function* () {
        uWS.us_listen_socket_close(socket)
        // Interruptible: finalizers run uninterruptibly, and the bound must be able to cut the wait.
        const waited = yield* Effect.timeoutOption(Effect.interruptible(o.mounted.drain), drainMs)
        if (Option.isNone(waited)) {
          yield* Effect.logWarning(`${o.name} server: ${o.mounted.inFlight()} requests still in flight after ${drainMs} ms; closing their connections`)
        }
      })
    )
    yield* Effect.addFinalizer(() =>
      drain.pipe(
        Effect.zipRight(Effect.sync(() => o.beforeClose?.())),
        // uWS corks writes made outside its callbacks and flushes them when the event-loop turn
        // ends: let the close frames `beforeClose` wrote leave before the sockets are cut.
        Effect.zipRight(o.beforeClose === undefined ? Effect.void : Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))),
        // Closes the keep-alive connections too.
        Effect.zipRight(Effect.sync(() => o.app.close())),
        Effect.zipRight(Effect.logInfo(`${o.name} server closed`))
      )
    )
    const port = uWS.us_socket_local_port(socket as unknown as uWS.us_socket)
    const url = `http://${o.host.includes(":") ? `[${o.host}]` : o.host}:${port}`
    yield* Effect.logInfo(`${o.name} server listening on ${url}`)
    return { host: o.host, port, url, drain }
  })

export const serve = (options: HttpServerOptions): Effect.Effect<RunningServer, ServerListenError, Scope.Scope> =>
  Effect.gen(function* () {
    const app = behindProxies(uWS.App(), options.trustedProxies)
    const authFailures = new FailedAuthThrottle(options.authFailureLimits, shared(options.sharedLimits, `failed-auth-${options.name}`))
    // One count of requests in flight over the routes and the extra endpoints: the drain waits for both.
    const requests = new RequestsInFlight()
    if (options.mount !== undefined) yield* options.mount(app, authFailures, requests)
    const mounted = yield* mountOn(app, options.name, options.routes, options.maxBodyBytes, authFailures, options.cors, requests)
    if (options.site !== undefined) mountStaticSite(app, options.site, (urlPath) => errorReply(apiError("ROUTE_NOT_FOUND", `No route for ${urlPath}`)))
    return yield* listen({ name: options.name, host: options.host, port: options.port, app, mounted, ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}) })
  })
