/**
 * Messages between the data service's main thread and its stream threads (`ThreadedStream.ts`,
 * `StreamWorker.ts`). Every message is structured-cloned; one port per worker keeps each direction
 * in order, which is what makes a socket's snapshot and its live signals gapless (module notes of
 * `ThreadedStream.ts`).
 */
import type { ProxyTrust } from "../../src/net/ProxyTrust.js"
import type { Method, Reply, Request } from "../Http.js"
import type { CorsPolicy, RouteDef } from "../Router.js"
import type { SignalStreamOptions } from "./SignalStream.js"

/** What a stream thread needs of a data route to read its requests (the handler stays on the main thread). */
export interface ForwardedRoute {
  readonly method: Method
  readonly path: string
  readonly auth: RouteDef["auth"]
  readonly headers?: ReadonlyArray<string>
  readonly body?: { readonly maxBytes?: number; readonly accepts?: ReadonlyArray<string> }
}

export interface StreamWorkerData {
  readonly options: SignalStreamOptions
  readonly maxBodyBytes: number
  readonly routes: ReadonlyArray<ForwardedRoute>
  /** `TRUSTED_PROXIES`, parsed (structured-cloned: plain arrays of bytes). */
  readonly trustedProxies?: ProxyTrust
  readonly cors?: CorsPolicy
}

export type ToWorker =
  /** The upgrade `id` answered over HTTP (400, 401, 429): no socket. */
  | { readonly t: "reply"; readonly id: number; readonly reply: Reply }
  /** The upgrade `id` is counted: open it, send `snapshot`, subscribe to `topic`. */
  | { readonly t: "admit"; readonly id: number; readonly topic: string; readonly snapshot: string }
  /** The upgrade `id` is over a cap: open it and close it at once with `code`. */
  | { readonly t: "refuse"; readonly id: number; readonly code: number; readonly reason: string }
  /**
   * The signals of one hub batch, in order: per signal, its message per matching topic (`first`: the first topic of
   * its plan's message). One message per batch, so a thread writes a batch to a socket in one write, as uWS does on one thread.
   */
  | { readonly t: "signals"; readonly batch: ReadonlyArray<ReadonlyArray<readonly [topic: string, message: string, first: boolean]>> }
  | { readonly t: "answer"; readonly id: number; readonly reply: Reply }
  | { readonly t: "drain" }
  | { readonly t: "close" }

export type FromWorker =
  | { readonly t: "ready"; readonly descriptor: number }
  | { readonly t: "upgrade"; readonly id: number; readonly headers: Readonly<Record<string, string>>; readonly query: string; readonly address: string }
  /** The admitted upgrade `id` is gone: closed, or aborted before it opened. `droppedSlow`: the thread's total so far. */
  | { readonly t: "gone"; readonly id: number; readonly droppedSlow: number }
  | { readonly t: "request"; readonly id: number; readonly route: number; readonly req: Request }
  | { readonly t: "abandon"; readonly id: number }
  | { readonly t: "drained" }
  | { readonly t: "closed" }
