/**
 * Open-loop load at a fixed rate, for latency budgets stated "at N req/s". autocannon's
 * `overallRate` is no substitute: each connection sends its per-second quota back to back and
 * then idles, so the server sees bursts at full speed, and its coordinated-omission correction
 * assumes a 1 ms interval whatever the rate.
 *
 * Here request i is due at t0 + i/rate; the scheduler spins on `setImmediate` (the generator owns
 * its core) and sends every due request on an idle keep-alive connection, or queues it when all
 * are busy. Latency runs from the due time, not the send time, so a stalled server is charged
 * for the requests it delayed (no coordinated omission). One request in flight per connection
 * (no pipelining). Responses are parsed just enough to find their end: status line,
 * Content-Length, no body for 1xx/204/304; anything else (chunked) is refused as an error.
 */
import * as net from "node:net"
import { performance } from "node:perf_hooks"

export interface PacedOptions {
  readonly host: string
  readonly port: number
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly ratePerSec: number
  readonly durationSec: number
  readonly connections: number
  /** How long to wait for the last responses after the last send. */
  readonly drainTimeoutMs?: number
}

export interface PacedResult {
  readonly scheduled: number
  readonly completed: number
  /** Completed requests per second over the send window. */
  readonly achievedRatePerSec: number
  /** Latency of each completed request from its due time, µs, sorted ascending. */
  readonly latenciesUs: Float64Array
  readonly statusCounts: Readonly<Record<string, number>>
  readonly errors: number
  /** Requests still unanswered when the drain timeout ended. */
  readonly timeouts: number
  /** Most requests ever waiting for an idle connection at once (0: the pool always had one). */
  readonly maxQueued: number
  /**
   * How late the generator itself picked up each request (pick-up time − due time), µs, sorted.
   * Large values mean the generator was starved of CPU and the latencies above include its delay.
   */
  readonly generatorLagUs: Float64Array
}

interface Conn {
  readonly socket: net.Socket
  /** Due time (performance.now ms) of the request in flight; NaN when idle. */
  dueMs: number
  pending: Buffer | null
  /** Body bytes still expected; -1 while reading the head. */
  bodyLeft: number
  /** Status of the response being read. */
  status: number
  dead: boolean
}

const HEAD_END = Buffer.from("\r\n\r\n")
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i

export const runPaced = (o: PacedOptions): Promise<PacedResult> =>
  new Promise((resolve, reject) => {
    const extra = Object.entries(o.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")
    const request = Buffer.from(`GET ${o.path} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\n${extra}\r\n`, "latin1")
    const total = Math.max(1, Math.round(o.ratePerSec * o.durationSec))
    const intervalMs = 1000 / o.ratePerSec
    const latenciesUs = new Float64Array(total)
    const lagUs = new Float64Array(total)
    const statusCounts: Record<string, number> = {}
    const idle: Conn[] = []
    const queue: number[] = [] // due times waiting for a connection
    let queueHead = 0
    let maxQueued = 0
    let completed = 0
    let errors = 0
    let next = 0
    let t0 = 0
    let lastSendMs = 0
    let connected = 0
    let settled = false

    const send = (c: Conn, dueMs: number) => {
      c.dueMs = dueMs
      c.socket.write(request)
    }

    const dispatch = (dueMs: number) => {
      const c = idle.pop()
      if (c !== undefined) return send(c, dueMs)
      queue.push(dueMs)
      maxQueued = Math.max(maxQueued, queue.length - queueHead)
    }

    const release = (c: Conn) => {
      if (queueHead < queue.length) {
        send(c, queue[queueHead++]!)
        if (queueHead === queue.length) {
          queue.length = 0
          queueHead = 0
        }
      } else {
        c.dueMs = Number.NaN
        idle.push(c)
      }
      if (completed + errors === total) finish()
    }

    const complete = (c: Conn, status: number) => {
      const key = String(status)
      statusCounts[key] = (statusCounts[key] ?? 0) + 1
      latenciesUs[completed++] = (performance.now() - c.dueMs) * 1000
      release(c)
    }

    const fail = (c: Conn) => {
      if (c.dead) return
      c.dead = true
      c.socket.destroy()
      // The request in flight is lost; the connection leaves the pool.
      if (!Number.isNaN(c.dueMs)) errors++
      if (completed + errors === total) finish()
    }

    const onData = (c: Conn, chunk: Buffer) => {
      let buf = c.pending === null ? chunk : Buffer.concat([c.pending, chunk])
      for (;;) {
        if (c.bodyLeft < 0) {
          const end = buf.indexOf(HEAD_END)
          if (end === -1) {
            c.pending = buf
            return
          }
          const head = buf.toString("latin1", 0, end)
          const status = Number(head.slice(9, 12))
          const length = CONTENT_LENGTH.exec(head)
          if (status === 304 || status === 204 || (status >= 100 && status < 200)) c.bodyLeft = 0
          else if (length !== null) c.bodyLeft = Number(length[1])
          else return fail(c) // chunked or close-delimited: not what these servers send
          buf = buf.subarray(end + HEAD_END.length)
          c.status = status
        }
        if (buf.length < c.bodyLeft) {
          c.bodyLeft -= buf.length
          c.pending = null
          return
        }
        buf = buf.subarray(c.bodyLeft)
        c.bodyLeft = -1
        complete(c, c.status)
        if (buf.length === 0) {
          c.pending = null
          return
        }
      }
    }

    let drainTimer: NodeJS.Timeout | undefined
    const conns: Conn[] = []
    const finish = () => {
      if (settled) return
      settled = true
      if (drainTimer !== undefined) clearTimeout(drainTimer)
      for (const c of conns) c.socket.destroy()
      const done = latenciesUs.subarray(0, completed).sort()
      const windowSec = Math.max(lastSendMs - t0, intervalMs) / 1000
      resolve({
        scheduled: total,
        completed,
        achievedRatePerSec: completed / windowSec,
        latenciesUs: done,
        statusCounts,
        errors,
        timeouts: total - completed - errors,
        maxQueued,
        generatorLagUs: lagUs.subarray(0, next).sort()
      })
    }

    const tick = () => {
      const now = performance.now()
      while (next < total && t0 + next * intervalMs <= now) {
        const due = t0 + next * intervalMs
        lagUs[next++] = (now - due) * 1000
        dispatch(due)
      }
      if (next < total) setImmediate(tick)
      else {
        lastSendMs = performance.now()
        drainTimer = setTimeout(finish, o.drainTimeoutMs ?? 5000)
      }
    }

    for (let i = 0; i < o.connections; i++) {
      const socket = net.connect(o.port, o.host)
      socket.setNoDelay(true)
      const c: Conn = { socket, dueMs: Number.NaN, pending: null, bodyLeft: -1, status: 0, dead: false }
      conns.push(c)
      socket.on("data", (chunk: Buffer) => onData(c, chunk))
      socket.on("error", () => fail(c))
      socket.on("close", () => fail(c))
      socket.once("connect", () => {
        idle.push(c)
        if (++connected === o.connections) {
          t0 = performance.now()
          setImmediate(tick)
        }
      })
      socket.once("error", (e) => {
        if (connected < o.connections && !settled) {
          settled = true
          for (const d of conns) d.socket.destroy()
          reject(e)
        }
      })
    }
  })

/** Nearest-rank percentile of an ascending array. */
export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!
}
