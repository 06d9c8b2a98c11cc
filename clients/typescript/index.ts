/**
 * The typed client of both listeners: `openapi-fetch` over the types `generate.ts` writes from the
 * OpenAPI documents (`generated/main.ts`, `generated/data.ts`), so every path, parameter, body and
 * answer (success and refusal) is typed from the route declarations the engine mounts; and the
 * signal stream (`/v1/signals/stream`) with typed messages and reconnects that fill the gap.
 *
 *   const engine = engineClient({ baseUrl: "http://127.0.0.1:8080", apiKey })
 *   const { data, error } = await engine.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } })
 */
import createClient, { type Client, type Middleware } from "openapi-fetch"
import type { Signal } from "../../src/domain/Signal.js"
import type { paths as DataPaths } from "./generated/data.js"
import type { paths as MainPaths } from "./generated/main.js"

export type { components as MainComponents, operations as MainOperations, paths as MainPaths } from "./generated/main.js"
export type { components as DataComponents, operations as DataOperations, paths as DataPaths } from "./generated/data.js"

const header = (name: string, value: string): Middleware => ({
  onRequest: ({ request }) => {
    request.headers.set(name, value)
    return request
  }
})

export interface EngineClientOptions {
  readonly baseUrl: string
  /** An agent key (`x-api-key`); absent: public routes only. */
  readonly apiKey?: string
  /** A session or device token (`Authorization: Bearer`) for the owner routes. */
  readonly session?: string
  readonly fetch?: typeof globalThis.fetch
}

/** The main listener (launches, markets, staking, fees, keys). */
export const engineClient = (o: EngineClientOptions): Client<MainPaths> => {
  const client = createClient<MainPaths>({ baseUrl: o.baseUrl, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
  if (o.apiKey !== undefined) client.use(header("x-api-key", o.apiKey))
  if (o.session !== undefined) client.use(header("authorization", `Bearer ${o.session}`))
  return client
}

export interface DataClientOptions {
  readonly baseUrl: string
  /** A production agent key, sent as `Authorization: Bearer`; absent: no credential (every route refuses it 401). */
  readonly apiKey?: string
  readonly fetch?: typeof globalThis.fetch
}

/** The market-data listener (the signal tape, token and wallet reads, the strategy lab). */
export const dataClient = (o: DataClientOptions): Client<DataPaths> => {
  const client = createClient<DataPaths>({ baseUrl: o.baseUrl, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
  if (o.apiKey !== undefined) client.use(header("authorization", `Bearer ${o.apiKey}`))
  return client
}

// ---- the signal stream -----------------------------------------------------------------------

/** What the stream sends: the snapshot after the upgrade, then one message per new signal. */
export type SignalMessage = { readonly type: "snapshot"; readonly signals: ReadonlyArray<Signal> } | { readonly type: "signal"; readonly signal: Signal }

export interface SignalStreamOptions {
  /** The market-data listener's base URL (`http(s)://`). */
  readonly baseUrl: string
  readonly apiKey: string
  readonly query?: { readonly event_kind?: string; readonly chain?: "solana" | "hood"; readonly quality?: string }
  /** Each signal once, in order, across reconnects. */
  readonly onSignal: (signal: Signal) => void
  /** Told of each (re)connection and close; the stream reconnects by itself until `close()`. */
  readonly onState?: (state: { readonly connected: boolean; readonly code?: number; readonly reason?: string }) => void
  /** Delay before reconnecting, by attempt (default: 250 ms doubling to 10 s). */
  readonly backoffMs?: (attempt: number) => number
  readonly fetch?: typeof globalThis.fetch
  /** Opens the socket (default: the platform's `WebSocket`, with the bearer header). */
  readonly connect?: (url: string, headers: Record<string, string>) => WebSocket
}

/** How many delivered ids are remembered to drop repeats (a reconnect's snapshot overlaps). */
const SEEN_MAX = 4096
/** The tape read that fills a reconnect's gap reads at most this many signals. */
const GAP_LIMIT = 500

export interface SignalStream {
  readonly close: () => void
}

/**
 * The signal stream: delivers each signal once, in the tape's order. On a reconnect it reads the
 * tape from the last delivered signal's time (`GET /v1/signals?since=...&order=asc`) before the new
 * socket's snapshot, so signals published while it was away are not lost; repeats are dropped by id.
 */
export const signalStream = (o: SignalStreamOptions): SignalStream => {
  const seen = new Set<string>()
  let lastAtMs: number | undefined
  let closed = false
  let socket: WebSocket | undefined
  let attempt = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const data = dataClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
  const backoff = o.backoffMs ?? ((n: number) => Math.min(10_000, 250 * 2 ** n))

  const deliver = (s: Signal) => {
    if (seen.has(s.id)) return
    seen.add(s.id)
    if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value!)
    lastAtMs = Math.max(lastAtMs ?? 0, s.at_ms)
    o.onSignal(s)
  }

  /** The tape since the last delivered signal (the gap a reconnect may have left). */
  const fillGap = async () => {
    if (lastAtMs === undefined) return
    const { data: page } = await data.GET("/v1/signals", {
      params: { query: { since: String(lastAtMs), order: "asc", limit: GAP_LIMIT, ...(o.query?.chain !== undefined ? { chain: o.query.chain } : {}), ...(o.query?.quality !== undefined ? { quality: o.query.quality as "all" } : {}) } }
    })
    // Without group_by the tape answers a page of signals.
    for (const s of (page !== undefined && "signals" in page ? page.signals : []) as ReadonlyArray<Signal>) deliver(s)
  }

  const open = () => {
    const url = new URL("/v1/signals/stream", o.baseUrl)
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:"
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.set(k, v)
    const headers = { authorization: `Bearer ${o.apiKey}` }
    const ws = o.connect !== undefined ? o.connect(url.href, headers) : new (WebSocket as unknown as new (u: string, init: unknown) => WebSocket)(url.href, { headers })
    socket = ws
    // Messages wait for the gap read, so the order holds: the gap, then the snapshot, then new signals.
    let ready: Promise<void> = Promise.resolve()
    ws.addEventListener("open", () => {
      attempt = 0
      ready = fillGap().catch(() => undefined)
      o.onState?.({ connected: true })
    })
    ws.addEventListener("message", (ev: MessageEvent) => {
      const text = typeof ev.data === "string" ? ev.data : new TextDecoder().decode(ev.data as ArrayBuffer)
      const message = JSON.parse(text) as SignalMessage
      ready = ready.then(() => {
        if (message.type === "snapshot") for (const s of message.signals) deliver(s)
        else if (message.type === "signal") deliver(message.signal)
      })
    })
    ws.addEventListener("close", (ev: { readonly code: number; readonly reason: string }) => {
      o.onState?.({ connected: false, code: ev.code, reason: ev.reason })
      if (closed) return
      timer = setTimeout(open, backoff(attempt++))
    })
  }

  open()
  return {
    close: () => {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      socket?.close(1000)
    }
  }
}
