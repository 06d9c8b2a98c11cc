/**
 * The signals WebSocket fan-out (DESIGN.md: "Signals WebSocket: 1,000 subscribers each receive a
 * signal within 10 ms p99"), side by side with a baseline in one run.
 *
 * - `uws`: the real stream — `serveData` (api/data/DataServer.ts: a real uWS listener, the
 *   `/v1/signals/stream` behaviour of api/data/SignalStream.ts), a real `SignalHub`, the seeded
 *   tracking data, and a bench `authenticate` that maps N distinct bearer tokens to N accounts
 *   (the stream allows 8 sockets per account; one socket each here), plans cycling free/pro/max
 *   so the stream serializes each signal once per plan as it does in production.
 * - `uws2`: the same on 2 stream threads (`streamThreads: 2`, api/data/ThreadedStream.ts): the
 *   listener hands each connection to one of two worker threads, which write their sockets; its
 *   child gets the last 2 cores (on a 2-core machine, the subscribers' core too).
 * - `ws` (baseline): node's `ws` package `WebSocketServer` on the same hub, broadcasting
 *   `JSON.stringify({type:"signal",signal})` to every open client: no auth, no filters, no
 *   per-plan projection, no buffer bound.
 *
 * Each server runs in its own child process (this file with `serve <kind>`), pinned to the last
 * core with `taskset` when it exists; this process holds the N subscribers and is pinned to core
 * 0. Two kinds of subscriber, each against both servers: the `ws` client (as the integration
 * tests use) and a lean client (`connectLean`: a TCP socket reading frames straight from node's
 * `onread` buffer), which costs its core less per delivery (what is left is mostly the kernel's
 * read path), so its rows show how much of the latency is the server's and how much the 1,000
 * readers sharing one core add. The child publishes signals into the hub at a fixed rate; each
 * carries its sequence number and its publish time in `details` (`bench_seq`, `bench_sent_at`),
 * which the stream passes through untouched. Publish time is
 * taken in the child and receive time here, both as `performance.timeOrigin +
 * performance.now()` (checked at start by an IPC round trip, reported as the clock offset).
 *
 * Measured per phase (rate × signals): per-delivery latency p50/p99/max, the time until the last
 * of the N subscribers had each signal (p50/p99/max over signals), deliveries/s, deliveries
 * missing / out of order / duplicated, the server's and the clients' CPU per delivery, the time the
 * server's synchronous `hub.publish` took per signal and the time until the server had written
 * the signal to every socket (the next immediate after the publish: uWS writes pub/sub messages
 * when its loop turns, before the poll and after it).
 *
 * Run: `node --max-semi-space-size=64 --import tsx bench/wsFanout.ts [--quick]` (the lead's
 * `npm run bench:ws`). Without `--quick` the section is rewritten between the `wsfanout` markers
 * in docs/benchmarks.md (nothing else there is touched). Environment: `WSBENCH_SUBSCRIBERS`
 * (default 1000; quick 100), `WSBENCH_SIGNALS` (per phase, default 300; quick 40), `WSBENCH_RATES`
 * (comma-separated signals/s, each optionally `x` a burst size: `100x10` publishes 10 signals in one
 * `hub.publish` 10 times a second, as a detector batch arrives; default `10,100,100x10`), `WSBENCH_CLIENTS` (`ws,lean` default, or one),
 * `WSBENCH_SERVERS` (`uws,uws2,ws` default, or some), `WSBENCH_UWS2_CPUS` (the 2-thread server's
 * cores, see below), `BENCH_PIN=0` (no taskset), and for shared
 * machines `BENCH_QUIET_WAIT_SECONDS` (default 30, quick 0: longest wait for quiet before the run,
 * and up to 10 s before each phase), `BENCH_MAX_OTHER_CPU` (default 25: % of one core other work
 * may use during a phase before it is repeated), `BENCH_ATTEMPTS` (default 2, quick 1).
 */
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import { buildSignal, type Signal } from "../src/domain/Signal.js"
import type { DataPrincipal } from "../api/auth/DataBearerAuth.js"
import { serveData } from "../api/data/DataServer.js"
import { STREAM_PATH } from "../api/data/SignalStream.js"
import type { AgentKey } from "../src/services/keys/KeyRepository.js"
import { SignalHub } from "../src/services/signals/SignalHub.js"
import { seedTrackingData } from "../src/services/tracking/Seed.js"
import { make as makeTracking, type PlanId } from "../src/services/tracking/Tracking.js"

type ServerKind = "uws" | "uws2" | "ws"
const KINDS: ReadonlyArray<ServerKind> = ["uws", "uws2", "ws"]
const isServerKind = (k: string | undefined): k is ServerKind => k === "uws" || k === "uws2" || k === "ws"
/** Threads holding the stream's sockets (`DATA_STREAM_THREADS`) per curvestream server kind. */
const STREAM_THREADS: Partial<Record<ServerKind, number>> = { uws: 1, uws2: 2 }
type ClientKind = "ws" | "lean"
const CLIENT_NAMES: Record<ClientKind, string> = {
  ws: "`ws` clients",
  lean: "lean clients"
}
const SERVER_NAMES: Record<ServerKind, string> = {
  uws: "curvestream stream (uWS, `api/data/SignalStream.ts`)",
  uws2: "curvestream stream on 2 threads (`DATA_STREAM_THREADS=2`, `api/data/ThreadedStream.ts`)",
  ws: "baseline: `ws` WebSocketServer broadcast"
}
const HOST = "127.0.0.1"
const SELF = fileURLToPath(import.meta.url)
const DOC = fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url))
const BEGIN = "<!-- wsfanout:begin -->"
const END = "<!-- wsfanout:end -->"
const PLANS: ReadonlyArray<PlanId> = ["free", "pro", "max"]

/** A shared clock across processes (ms, sub-µs resolution): the wall clock at process start plus monotonic time since. */
const now = (): number => performance.timeOrigin + performance.now()

const require = createRequire(import.meta.url)

// `ws` is installed (a dependency of @effect/platform-node) without type declarations: the few members used here.
interface WsClient {
  on(event: "message", f: (data: Buffer) => void): void
  on(event: "close", f: (code: number, reason: Buffer) => void): void
  on(event: "error", f: (e: Error) => void): void
  on(event: "unexpected-response", f: (req: unknown, res: { statusCode: number }) => void): void
  readonly readyState: number
  send(data: string): void
  terminate(): void
}
interface WsServer {
  readonly clients: Set<WsClient>
  on(event: "listening", f: () => void): void
  on(event: "error", f: (e: Error) => void): void
  on(event: "connection", f: (ws: WsClient) => void): void
  address(): { port: number }
  close(f?: () => void): void
}
const ws = require("ws") as {
  WebSocket: new (url: string, options: { headers: Record<string, string>; perMessageDeflate: boolean }) => WsClient
  WebSocketServer: new (options: { host: string; port: number; perMessageDeflate: boolean; clientTracking: boolean }) => WsServer
}

const tokenOf = (i: number) => `bench-ws-token-${i}`

// ---- the server child -----------------------------------------------------------------------------

type ToChild =
  | { readonly cmd: "clock" }
  | { readonly cmd: "run"; readonly rate: number; readonly burst: number; readonly count: number; readonly firstSeq: number }
  | { readonly cmd: "stats" }

interface ServerStats {
  readonly open: number
  /** The curvestream stream's distinct pub/sub topics (none for the baseline). */
  readonly topics?: number
  readonly sent: number
  readonly droppedSlow: number
  readonly refused: number
}

type FromChild =
  | { readonly type: "ready"; readonly port: number; readonly pid: number }
  | { readonly type: "clock"; readonly now: number }
  | {
      readonly type: "done"
      readonly firstSentAt: number
      readonly publishMs: ReadonlyArray<number>
      readonly flushMs: ReadonlyArray<number>
      readonly lagMs: ReadonlyArray<number>
    }
  | { readonly type: "stats"; readonly stats: ServerStats }

const benchKey = (accountId: string): AgentKey => ({
  id: `key_${accountId}`,
  prefix: accountId,
  accountId,
  hash: "",
  environment: "production",
  scopes: [],
  label: null,
  avatar: null,
  rateLimitPerMin: 0,
  dailyLaunchCap: 0,
  launchChains: [],
  embeddedWallet: "denied",
  expiresAtMs: null,
  txLimit: null,
  spendLimits: null,
  paused: false,
  walletScope: "all",
  mintedByDevicePrefix: null,
  provisionedBy: null,
  createdAtMs: 0,
  lastUsedAtMs: null,
  revokedAtMs: null
})

/** One signal as a detector would emit it (a large_move with a wallet), `bench_seq`/`bench_sent_at` in its details. */
const benchSignal = (kind: ServerKind, seq: number): Signal =>
  buildSignal({
    pattern: "large_move",
    chain: "solana",
    asset: `BenchMint${String(seq % 50).padStart(35, "1")}`,
    symbol: `B${seq % 50}`,
    direction: "in",
    wallets: [`BenchWallet${String(seq % 97).padStart(33, "1")}`],
    walletIds: [],
    groups: [],
    sizeUsdMicros: 1_500_000_000n + BigInt(seq),
    mcapUsdMicros: 50_000_000_000n,
    createdAtMs: 1_735_689_600_000,
    venue: "svc-curve",
    confidence: 80,
    atMs: 1_735_689_600_000 + seq * 1000,
    position: `s:${String(seq).padStart(20, "0")}`,
    triggerIds: ["wsfanout", kind, String(seq)],
    details: { bench_seq: seq, bench_sent_at: 0 }
  })

const serve = async (kind: ServerKind, subscribers: number): Promise<void> => {
  const send = (m: FromChild) => process.send!(m)
  const hub = new SignalHub()
  let port: number
  let stats: () => ServerStats
  let close: () => Promise<void>
  const threads = STREAM_THREADS[kind]
  if (threads !== undefined) {
    const tracking = makeTracking(seedTrackingData())
    const principals = new Map<string, DataPrincipal>()
    for (let i = 0; i < subscribers; i++) {
      const accountId = `acct_bench_${i}`
      principals.set(`Bearer ${tokenOf(i)}`, { accountId, key: benchKey(accountId), tier: PLANS[i % PLANS.length]! })
    }
    const scope = await Effect.runPromise(Scope.make())
    const server = await Effect.runPromise(
      serveData({
        host: HOST,
        port: 0,
        maxBodyBytes: 64 * 1024,
        routes: [],
        streamThreads: threads,
        stream: { hub, tracking, authenticate: (headers) => Effect.succeed(principals.get(headers.authorization ?? "")) }
      }).pipe(Scope.extend(scope), Logger.withMinimumLogLevel(LogLevel.Error))
    )
    port = server.port
    stats = () => {
      const s = server.stream.stats()
      return { open: s.open, topics: s.topics, sent: s.sent, droppedSlow: s.droppedSlow, refused: s.refusedTooMany }
    }
    close = () => Effect.runPromise(Scope.close(scope, Exit.void).pipe(Logger.withMinimumLogLevel(LogLevel.Error)))
  } else {
    const wss = new ws.WebSocketServer({ host: HOST, port: 0, perMessageDeflate: false, clientTracking: true })
    await new Promise<void>((resolve, reject) => {
      wss.on("listening", resolve)
      wss.on("error", reject)
    })
    let sent = 0
    wss.on("connection", (c) => c.send(JSON.stringify({ type: "snapshot", signals: [] })))
    hub.subscribe((signal) => {
      const message = JSON.stringify({ type: "signal", signal })
      for (const c of wss.clients) {
        if (c.readyState !== 1) continue
        c.send(message)
        sent++
      }
    })
    port = wss.address().port
    stats = () => ({ open: wss.clients.size, sent, droppedSlow: 0, refused: 0 })
    close = () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate()
        wss.close(() => resolve())
      })
  }

  /**
   * Publishes `count` signals at `rate`/s, `burst` at a time in one `hub.publish` (as a detector batch arrives):
   * each stamped with its publish time just before `hub.publish`.
   */
  const run = async (rate: number, burst: number, count: number, firstSeq: number) => {
    const prepared = Array.from({ length: count }, (_, i) => benchSignal(kind, firstSeq + i))
    const publishMs: number[] = []
    const flushMs: number[] = []
    const lagMs: number[] = []
    const interval = (1000 * burst) / rate
    const start = performance.now() + 5
    let firstSentAt = Number.NaN
    for (let i = 0; i < count; i += burst) {
      const due = start + (i / burst) * interval
      const wait = due - performance.now()
      if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5))
      while (performance.now() < due) await new Promise((r) => setImmediate(r))
      lagMs.push(performance.now() - due)
      const t0 = performance.now()
      if (i === 0) firstSentAt = performance.timeOrigin + t0
      const batch = prepared.slice(i, i + burst).map((base, j) => ({ ...base, details: { bench_seq: firstSeq + i + j, bench_sent_at: performance.timeOrigin + t0 } }))
      hub.publish(batch)
      publishMs.push(performance.now() - t0)
      // uWS writes pub/sub messages when the loop turns (before the poll and after it); an immediate runs after that.
      await new Promise((r) => setImmediate(r))
      // With stream threads the sockets are written on those threads, not by this loop: nothing here to time (n/a).
      if (threads === undefined || threads === 1) flushMs.push(performance.now() - t0)
    }
    send({ type: "done", firstSentAt, publishMs, flushMs, lagMs })
  }

  process.on("message", (m: ToChild) => {
    if (m.cmd === "clock") send({ type: "clock", now: now() })
    else if (m.cmd === "stats") send({ type: "stats", stats: stats() })
    else void run(m.rate, m.burst, m.count, m.firstSeq)
  })
  process.on("disconnect", () => {
    void close().then(() => process.exit(0))
  })
  send({ type: "ready", port, pid: process.pid })
}

// ---- the parent: subscribers, phases, report ------------------------------------------------------

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")

const envNumber = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got '${raw}')`)
  return n
}

const SUBSCRIBERS = Math.floor(envNumber("WSBENCH_SUBSCRIBERS", quick ? 100 : 1_000))
const SIGNALS = Math.floor(envNumber("WSBENCH_SIGNALS", quick ? 40 : 300))
const SERVERS = (process.env.WSBENCH_SERVERS ?? KINDS.join(",")).split(",").map((k): ServerKind => {
  if (!isServerKind(k)) throw new Error(`WSBENCH_SERVERS: '${k}' is not uws, uws2 or ws`)
  return k
})
const CLIENTS = (process.env.WSBENCH_CLIENTS ?? "ws,lean").split(",").map((c): ClientKind => {
  if (c !== "ws" && c !== "lean") throw new Error(`WSBENCH_CLIENTS: '${c}' is not ws or lean`)
  return c
})
/** A phase: `rate` signals/s, published `burst` at a time (`100x10`: 100/s as 10 batches of 10 a second). */
interface Rate {
  readonly rate: number
  readonly burst: number
  readonly label: string
}
const RATES: ReadonlyArray<Rate> = (process.env.WSBENCH_RATES ?? "10,100,100x10").split(",").map((r) => {
  const [rate, burst = 1] = r.split("x").map(Number)
  if (rate === undefined || !Number.isFinite(rate) || rate <= 0 || !Number.isSafeInteger(burst) || burst < 1) {
    throw new Error(`WSBENCH_RATES: '${r}' is not a positive rate (signals/s, optionally x a burst size)`)
  }
  return { rate, burst, label: burst === 1 ? `${rate}/s` : `${rate}/s in bursts of ${burst}` }
})
const WARMUP_SIGNALS = quick ? 20 : 100
const WARMUP_RATE = 100
const QUIET_WAIT_SECONDS = process.env.BENCH_QUIET_WAIT_SECONDS === undefined ? (quick ? 0 : 30) : Number(process.env.BENCH_QUIET_WAIT_SECONDS)
const PIN = process.env.BENCH_PIN !== "0"
/**
 * `WSBENCH_UWS2_CPUS=<taskset list>` places the 2-thread server elsewhere than its default (the last
 * two cores). On a 2-core machine `1` puts both stream threads on the core the 1-thread server has,
 * away from the subscribers' core: the control that separates the threads' handoff from their
 * sharing a core with the reading process.
 */
const UWS2_CPUS = process.env.WSBENCH_UWS2_CPUS
const MAX_OTHER_CPU_PCT = envNumber("BENCH_MAX_OTHER_CPU", 25)
const MAX_ATTEMPTS = Math.max(1, Math.floor(envNumber("BENCH_ATTEMPTS", quick ? 1 : 2)))
const BUDGET_P99_MS = 10

const log = (line: string) => process.stderr.write(`${line}\n`)

const hasTaskset = (): boolean => {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const clockTicksPerSec = (): number => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
}

/** utime and stime of a process in seconds (all its threads), from /proc; NaN when unavailable. */
const processCpuSec = (pid: number, ticksPerSec: number): { readonly user: number; readonly sys: number } => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { user: Number(fields[11]) / ticksPerSec, sys: Number(fields[12]) / ticksPerSec }
  } catch {
    return { user: Number.NaN, sys: Number.NaN }
  }
}

/** CPU seconds (user + system) per thread of a process, from /proc/<pid>/task; empty when unavailable. */
const threadCpuSec = (pid: number, ticksPerSec: number): Map<string, number> => {
  const out = new Map<string, number>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      out.set(tid, (Number(fields[11]) + Number(fields[12])) / ticksPerSec)
    }
  } catch {
    // a thread that ended between the listing and the read: what was read stands
  }
  return out
}

/** The most CPU any one thread used between two readings (s). */
const busiestThreadSec = (before: Map<string, number>, after: Map<string, number>): number => {
  let most = 0
  for (const [tid, sec] of after) most = Math.max(most, sec - (before.get(tid) ?? 0))
  return most
}

interface Child {
  readonly port: number
  readonly pid: number
  request<T extends FromChild["type"]>(m: ToChild, answer: T, timeoutMs?: number): Promise<Extract<FromChild, { type: T }>>
  stop(): Promise<void>
}

const startChild = (kind: ServerKind, cpu: string | undefined): Promise<Child> =>
  new Promise((resolve, reject) => {
    const nodeArgs = ["--max-semi-space-size=64", "--import", "tsx", SELF, "serve", kind, String(SUBSCRIBERS)]
    const [cmd, args] = cpu === undefined ? [process.execPath, nodeArgs] : ["taskset", ["-c", cpu, process.execPath, ...nodeArgs]]
    const child: ChildProcess = spawn(cmd, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] })
    const waiting = new Map<string, (m: FromChild) => void>()
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${kind} server did not report ready within 60 s`))
    }, 60_000)
    child.once("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${kind} server exited early (code ${code})`))
    })
    child.on("message", (m: FromChild) => {
      if (m.type === "ready") {
        clearTimeout(timer)
        resolve({
          port: m.port,
          pid: m.pid,
          request: (req, answer, timeoutMs = 600_000) =>
            new Promise((done, fail) => {
              const t = setTimeout(() => fail(new Error(`${kind} server: no '${answer}' within ${timeoutMs} ms`)), timeoutMs)
              waiting.set(answer, (reply) => {
                clearTimeout(t)
                done(reply as never)
              })
              child.send(req)
            }),
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done()
              child.removeAllListeners("exit")
              const kill = setTimeout(() => child.kill("SIGKILL"), 10_000)
              child.once("exit", () => {
                clearTimeout(kill)
                done()
              })
              child.disconnect()
            })
        })
        return
      }
      const f = waiting.get(m.type)
      waiting.delete(m.type)
      f?.(m)
    })
  })

/** Receives the current phase's deliveries; one instance for every subscriber. */
class Recorder {
  firstSeq = 0
  count = 0
  subscribers = 0
  latencies = new Float64Array(0)
  n = 0
  /** Per signal: deliveries and the slowest delivery. */
  perSignalCount = new Int32Array(0)
  perSignalMax = new Float64Array(0)
  perSignalMin = new Float64Array(0)
  lastSeq = new Int32Array(0)
  outOfOrder = 0
  stray = 0
  lastReceiveAt = 0
  /** Deliveries still expected in this phase; `onComplete` fires at 0. */
  remaining = 0
  onComplete: (() => void) | undefined

  reset(firstSeq: number, count: number, subscribers: number) {
    this.firstSeq = firstSeq
    this.count = count
    this.subscribers = subscribers
    this.latencies = new Float64Array(count * subscribers)
    this.n = 0
    this.perSignalCount = new Int32Array(count)
    this.perSignalMax = new Float64Array(count)
    this.perSignalMin = new Float64Array(count).fill(Number.POSITIVE_INFINITY)
    this.lastSeq = new Int32Array(subscribers).fill(-1)
    this.outOfOrder = 0
    this.stray = 0
    this.remaining = count * subscribers
    this.onComplete = undefined
  }

  deliver(client: number, seq: number, sentAt: number, receivedAt: number) {
    const i = seq - this.firstSeq
    if (i < 0 || i >= this.count) {
      this.stray++
      return
    }
    if (seq <= this.lastSeq[client]!) this.outOfOrder++
    this.lastSeq[client] = seq
    const latency = receivedAt - sentAt
    if (this.n < this.latencies.length) this.latencies[this.n++] = latency
    this.perSignalCount[i]!++
    if (latency > this.perSignalMax[i]!) this.perSignalMax[i] = latency
    if (latency < this.perSignalMin[i]!) this.perSignalMin[i] = latency
    this.lastReceiveAt = receivedAt
    if (--this.remaining === 0) this.onComplete?.()
  }
}

const SEQ_KEY = Buffer.from('"bench_seq":')
const SENT_KEY = Buffer.from('"bench_sent_at":')

/** The number after `key` in a JSON buffer, read without parsing the whole message (keeps the client's cost per delivery small). */
const numberAfter = (data: Buffer, key: Buffer): number => {
  const at = data.indexOf(key)
  if (at === -1) return Number.NaN
  let end = at + key.length
  while (end < data.length) {
    const c = data[end]!
    if (c === 0x2c || c === 0x7d) break // , }
    end++
  }
  return Number(data.toString("latin1", at + key.length, end))
}

interface Subscribers {
  readonly closedEarly: () => number
  readonly closeCodes: () => Record<string, number>
  terminate(): void
}

/** Opens `n` subscribers (at most 50 handshakes in flight); resolves when every one had its snapshot. */
const connect = async (port: number, n: number, recorder: Recorder): Promise<Subscribers> => {
  const clients: WsClient[] = []
  let closedEarly = 0
  let terminating = false
  const codes: Record<string, number> = {}
  const url = `ws://${HOST}:${port}${STREAM_PATH}`
  const open = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const c = new ws.WebSocket(url, { headers: { authorization: `Bearer ${tokenOf(i)}` }, perMessageDeflate: false })
      clients[i] = c
      let snapshot = false
      c.on("message", (data) => {
        const receivedAt = now()
        if (!snapshot) {
          snapshot = true
          if (data.indexOf('"type":"snapshot"') === -1) reject(new Error(`subscriber ${i}: first message was not a snapshot`))
          else resolve()
          return
        }
        recorder.deliver(i, numberAfter(data, SEQ_KEY), numberAfter(data, SENT_KEY), receivedAt)
      })
      c.on("unexpected-response", (_req, res) => reject(new Error(`subscriber ${i}: upgrade refused with HTTP ${res.statusCode}`)))
      c.on("error", (e) => reject(e))
      c.on("close", (code) => {
        if (terminating) return
        closedEarly++
        codes[String(code)] = (codes[String(code)] ?? 0) + 1
        reject(new Error(`subscriber ${i}: closed (${code}) before its snapshot`))
      })
    })
  let next = 0
  const worker = async () => {
    while (next < n) await open(next++)
  }
  await Promise.all(Array.from({ length: Math.min(50, n) }, worker))
  return {
    closedEarly: () => closedEarly,
    closeCodes: () => codes,
    terminate: () => {
      terminating = true
      for (const c of clients) c.terminate()
    }
  }
}

/**
 * The lean subscriber: a plain TCP socket doing the RFC 6455 handshake (the accept key checked) and
 * reading server frames (unmasked) straight from node's `onread` buffer, with no stream machinery,
 * no per-message allocation and no UTF-8 validation. It exists to show what the server costs: the
 * subscribers' core then spends little beyond the kernel's read path per delivery (see the table's
 * client CPU), so more of the last delivery's latency is the server's and less the reader's. Pings are answered (a masked
 * pong) as a browser would; a close frame ends the client.
 */
const connectLean = async (port: number, n: number, recorder: Recorder): Promise<Subscribers> => {
  const sockets: net.Socket[] = []
  let closedEarly = 0
  let terminating = false
  const codes: Record<string, number> = {}
  // One read buffer for every socket: `onread` hands each read over synchronously, and a partial frame is copied out.
  const readBuffer = Buffer.allocUnsafe(256 * 1024)
  const open = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const key = randomBytes(16).toString("base64")
      const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64")
      let upgraded = false
      let snapshot = false
      let carry: Buffer | undefined
      let closed = false
      const fail = (e: Error) => {
        if (closed) return
        closed = true
        if (!terminating) {
          closedEarly++
          reject(e)
        }
        socket.destroy()
      }
      const frames = (data: Buffer) => {
        let at = 0
        while (data.length - at >= 2) {
          const b0 = data[at]!
          let len = data[at + 1]! & 0x7f
          let head = 2
          if (len === 126) {
            if (data.length - at < 4) break
            len = data.readUInt16BE(at + 2)
            head = 4
          } else if (len === 127) {
            if (data.length - at < 10) break
            len = Number(data.readBigUInt64BE(at + 2))
            head = 10
          }
          if (data.length - at < head + len) break
          const opcode = b0 & 0x0f
          const start = at + head
          at = start + len
          if (opcode === 1 || opcode === 2) {
            const receivedAt = now()
            const payload = data.subarray(start, start + len)
            if (!snapshot) {
              snapshot = true
              if (payload.indexOf('"type":"snapshot"') === -1) fail(new Error(`subscriber ${i}: first message was not a snapshot`))
              else resolve()
              continue
            }
            recorder.deliver(i, numberAfter(payload, SEQ_KEY), numberAfter(payload, SENT_KEY), receivedAt)
          } else if (opcode === 9) {
            // pong, masked with a zero key (the payload stays as it is)
            socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | len, 0, 0, 0, 0]), data.subarray(start, start + len)]))
          } else if (opcode === 8) {
            const code = len >= 2 ? data.readUInt16BE(start) : 1005
            codes[String(code)] = (codes[String(code)] ?? 0) + 1
            fail(new Error(`subscriber ${i}: closed (${code})`))
            return 0
          }
        }
        return at
      }
      const onData = (bytes: number, buf: Buffer): boolean => {
        let data = buf.subarray(0, bytes)
        if (carry !== undefined) {
          data = Buffer.concat([carry, data])
          carry = undefined
        }
        if (!upgraded) {
          const end = data.indexOf("\r\n\r\n")
          if (end === -1) {
            carry = Buffer.from(data)
            return true
          }
          const head = data.toString("latin1", 0, end)
          if (!head.startsWith("HTTP/1.1 101") || !head.includes(`ec-WebSocket-Accept: ${accept}`)) {
            fail(new Error(`subscriber ${i}: upgrade refused: ${head.split("\r\n")[0]}`))
            return false
          }
          upgraded = true
          data = data.subarray(end + 4)
        }
        const used = frames(data)
        if (used < data.length && !closed) carry = Buffer.from(data.subarray(used))
        return true
      }
      const socket = net.connect({ host: HOST, port, noDelay: true, onread: { buffer: readBuffer, callback: onData } })
      sockets[i] = socket
      socket.on("connect", () =>
        socket.write(
          `GET ${STREAM_PATH} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${tokenOf(i)}\r\n\r\n`
        )
      )
      socket.on("error", (e) => fail(e))
      socket.on("close", () => fail(new Error(`subscriber ${i}: connection closed`)))
    })
  let next = 0
  const worker = async () => {
    while (next < n) await open(next++)
  }
  await Promise.all(Array.from({ length: Math.min(50, n) }, worker))
  return {
    closedEarly: () => closedEarly,
    closeCodes: () => codes,
    terminate: () => {
      terminating = true
      for (const c of sockets) c.destroy()
    }
  }
}

const percentile = (sorted: ArrayLike<number>, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

interface PhaseResult {
  readonly server: ServerKind
  readonly client: ClientKind
  readonly rate: number
  readonly burst: number
  readonly label: string
  readonly signals: number
  readonly expected: number
  readonly delivered: number
  readonly outOfOrder: number
  readonly stray: number
  readonly latency: { readonly p50: number; readonly p99: number; readonly p999: number; readonly max: number }
  readonly lastSubscriber: { readonly p50: number; readonly p99: number; readonly max: number }
  /** Per signal, the fastest of its deliveries: when the server's writes reached the first reader. */
  readonly firstSubscriber: { readonly p50: number; readonly p99: number }
  readonly deliveriesPerSec: number
  readonly serverCpuPct: number
  readonly serverCpuUsPerDelivery: number
  /** Of which in the kernel (stime): the socket writes and loopback TCP. */
  readonly serverSysUsPerDelivery: number
  /** The server's busiest thread's CPU per delivery: with stream threads, one thread's share of the writes. */
  readonly busiestThreadUsPerDelivery: number
  readonly clientCpuPct: number
  readonly clientCpuUsPerDelivery: number
  readonly otherCpuPct: number
  readonly publish: { readonly p50: number; readonly p99: number; readonly max: number }
  /** From `hub.publish` until the server's loop had written the signal to every socket (the next immediate). */
  readonly flush: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly pacingLagP99Ms: number
  /** Runs of this phase (a disturbed one is repeated) and whether the kept one was still disturbed. */
  readonly attempts: number
  readonly disturbed: boolean
}

interface ServerRun {
  readonly server: ServerKind
  readonly client: ClientKind
  readonly connectSec: number
  readonly clockOffsetMs: number
  readonly clockRttMs: number
  readonly phases: ReadonlyArray<PhaseResult>
  readonly statsAfter: ServerStats
  readonly closedEarly: number
}

type CpuTools = Pick<typeof import("./http.js"), "machineCpu" | "busyCorePct" | "awaitQuiet">

const benchServer = async (kind: ServerKind, clientKind: ClientKind, cpu: string | undefined, tools: CpuTools): Promise<ServerRun> => {
  const ticks = clockTicksPerSec()
  const child = await startChild(kind, cpu)
  const recorder = new Recorder()
  let subs: Subscribers | undefined
  try {
    // Clock check: the child's `now()` against the midpoint of an IPC round trip, best of 20.
    let clockOffsetMs = Number.NaN
    let clockRttMs = Number.POSITIVE_INFINITY
    for (let i = 0; i < 20; i++) {
      const t0 = now()
      const r = await child.request({ cmd: "clock" }, "clock")
      const t1 = now()
      if (t1 - t0 < clockRttMs) {
        clockRttMs = t1 - t0
        clockOffsetMs = r.now - (t0 + t1) / 2
      }
    }
    recorder.reset(0, 0, SUBSCRIBERS)
    const c0 = performance.now()
    subs = await (clientKind === "ws" ? connect : connectLean)(child.port, SUBSCRIBERS, recorder)
    const connectSec = (performance.now() - c0) / 1000
    const opened = (await child.request({ cmd: "stats" }, "stats")).stats
    if (opened.open !== SUBSCRIBERS) throw new Error(`${kind}: ${opened.open} sockets open on the server, expected ${SUBSCRIBERS}`)
    const label = `${kind} server, ${clientKind} clients`
    log(`bench ws: ${label}: ${SUBSCRIBERS} subscribers connected in ${connectSec.toFixed(2)} s; clock offset ${clockOffsetMs.toFixed(3)} ms (rtt ${clockRttMs.toFixed(3)} ms)`)

    let seq = 1
    const phase = async ({ rate, burst, label: rateLabel }: Rate, count: number): Promise<Omit<PhaseResult, "attempts" | "disturbed">> => {
      const firstSeq = seq
      seq += count
      recorder.reset(firstSeq, count, SUBSCRIBERS)
      const complete = new Promise<void>((resolve) => {
        recorder.onComplete = resolve
      })
      const server0 = processCpuSec(child.pid, ticks)
      const threads0 = threadCpuSec(child.pid, ticks)
      const client0 = process.cpuUsage()
      const machine0 = tools.machineCpu()
      const t0 = now()
      const done = await child.request({ cmd: "run", rate, burst, count, firstSeq }, "done")
      // Whatever has not arrived 5 s after the last publish is counted missing.
      await Promise.race([complete, new Promise((r) => setTimeout(r, 5_000))])
      const end = recorder.remaining === 0 ? recorder.lastReceiveAt : now()
      const elapsedSec = (end - t0) / 1000
      const server1 = processCpuSec(child.pid, ticks)
      const busiestSec = busiestThreadSec(threads0, threadCpuSec(child.pid, ticks))
      const serverUserSec = server1.user - server0.user
      const serverSysSec = server1.sys - server0.sys
      const serverCpuSec = serverUserSec + serverSysSec
      const client = process.cpuUsage(client0)
      const busy = tools.busyCorePct(machine0, tools.machineCpu())
      const serverCpuPct = (100 * serverCpuSec) / elapsedSec
      const clientCpuPct = (100 * (client.user + client.system)) / 1e6 / elapsedSec
      const lat = recorder.latencies.subarray(0, recorder.n).sort()
      const last = Float64Array.from(recorder.perSignalMax).sort()
      const first = Float64Array.from(recorder.perSignalMin).sort()
      const publish = Float64Array.from(done.publishMs).sort()
      const flush = Float64Array.from(done.flushMs).sort()
      const lag = Float64Array.from(done.lagMs).sort()
      return {
        server: kind,
        client: clientKind,
        rate,
        burst,
        label: rateLabel,
        signals: count,
        expected: count * SUBSCRIBERS,
        delivered: recorder.n,
        outOfOrder: recorder.outOfOrder,
        stray: recorder.stray,
        latency: { p50: percentile(lat, 50), p99: percentile(lat, 99), p999: percentile(lat, 99.9), max: lat[lat.length - 1] ?? Number.NaN },
        lastSubscriber: { p50: percentile(last, 50), p99: percentile(last, 99), max: last[last.length - 1] ?? Number.NaN },
        firstSubscriber: { p50: percentile(first, 50), p99: percentile(first, 99) },
        // From the first publish to the last delivery: the offered rate times N while nothing falls behind.
        deliveriesPerSec: recorder.n / ((recorder.lastReceiveAt - done.firstSentAt) / 1000),
        serverCpuPct,
        serverCpuUsPerDelivery: (1e6 * serverCpuSec) / Math.max(1, recorder.n),
        serverSysUsPerDelivery: (1e6 * serverSysSec) / Math.max(1, recorder.n),
        busiestThreadUsPerDelivery: (1e6 * busiestSec) / Math.max(1, recorder.n),
        clientCpuPct,
        clientCpuUsPerDelivery: (client.user + client.system) / Math.max(1, recorder.n),
        otherCpuPct: busy - serverCpuPct - clientCpuPct,
        publish: { p50: percentile(publish, 50), p99: percentile(publish, 99), max: publish[publish.length - 1] ?? Number.NaN },
        flush: { p50: percentile(flush, 50), p99: percentile(flush, 99), max: flush[flush.length - 1] ?? Number.NaN },
        pacingLagP99Ms: percentile(lag, 99)
      }
    }

    log(`bench ws: ${label}: warm-up, ${WARMUP_SIGNALS} signals at ${WARMUP_RATE}/s`)
    await phase({ rate: WARMUP_RATE, burst: 1, label: "warm-up" }, WARMUP_SIGNALS)
    const phases: PhaseResult[] = []
    for (const rate of RATES) {
      // A phase during which other work used more than MAX_OTHER_CPU_PCT of a core is repeated (the least disturbed kept).
      let r: PhaseResult | undefined
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        if (QUIET_WAIT_SECONDS > 0) await tools.awaitQuiet(MAX_OTHER_CPU_PCT, Math.min(10, QUIET_WAIT_SECONDS), log)
        log(`bench ws: ${label}: ${SIGNALS} signals at ${rate.label} to ${SUBSCRIBERS} subscribers${attempt > 1 ? ` (run ${attempt}, the last was disturbed)` : ""}`)
        const x = await phase(rate, SIGNALS)
        const disturbed = !(x.otherCpuPct <= MAX_OTHER_CPU_PCT)
        if (r === undefined || x.otherCpuPct < r.otherCpuPct) r = { ...x, attempts: attempt, disturbed }
        else r = { ...r, attempts: attempt }
        if (!disturbed) break
      }
      if (r === undefined) throw new Error("unreachable: no attempt ran")
      log(
        `bench ws: ${label} @${rate.label}: p50 ${r.latency.p50.toFixed(3)} ms, p99 ${r.latency.p99.toFixed(3)} ms, max ${r.latency.max.toFixed(3)} ms; ` +
          `${r.delivered}/${r.expected} delivered; server CPU ${Math.round(r.serverCpuPct)}%`
      )
      phases.push(r)
    }
    const statsAfter = (await child.request({ cmd: "stats" }, "stats")).stats
    return { server: kind, client: clientKind, connectSec, clockOffsetMs, clockRttMs, phases, statsAfter, closedEarly: subs.closedEarly() }
  } finally {
    subs?.terminate()
    await child.stop()
  }
}

// ---- the section ------------------------------------------------------------------------------------

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a")
const ms = (n: number) => (!Number.isFinite(n) ? "n/a" : n < 10 ? n.toFixed(3) : n.toFixed(1))
const pct = (n: number) => (Number.isFinite(n) ? `${Math.round(n)}%` : "n/a")
const fixed = (n: number, d: number) => (Number.isFinite(n) ? n.toFixed(d) : "n/a")

const packageVersion = (name: string): string => {
  try {
    // Read from node_modules: a package's `exports` map may not expose its package.json (uws-pack's does not).
    return (JSON.parse(readFileSync(fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url)), "utf8")) as { version: string }).version
  } catch {
    return "?"
  }
}

const commandLine = (): string => {
  const env = ["WSBENCH_SUBSCRIBERS", "WSBENCH_SIGNALS", "WSBENCH_RATES", "WSBENCH_CLIENTS", "WSBENCH_SERVERS", "WSBENCH_UWS2_CPUS", "BENCH_PIN", "BENCH_QUIET_WAIT_SECONDS", "BENCH_MAX_OTHER_CPU", "BENCH_ATTEMPTS"]
    .filter((k) => process.env[k] !== undefined)
    .map((k) => `${k}=${process.env[k]} `)
    .join("")
  const base = process.env.npm_lifecycle_event === "bench:ws" ? `npm run bench:ws${argv.length > 0 ? " --" : ""}` : "node --max-semi-space-size=64 --import tsx bench/wsFanout.ts"
  return `${env}${base}${argv.length > 0 ? ` ${argv.join(" ")}` : ""}`
}

const render = (
  startedAt: Date,
  tookSec: number,
  placement: string,
  background: { waitedSec: number; busyCorePct: number },
  loadStart: ReadonlyArray<number>,
  runs: ReadonlyArray<ServerRun>
): string => {
  const cpu = os.cpus()
  const out: string[] = []
  out.push(`## Signals WebSocket fan-out (\`bench/wsFanout.ts\`)`)
  out.push("")
  out.push(`- Date: ${startedAt.toISOString()} (took ${Math.round(tookSec)} s); command: \`${commandLine()}\``)
  out.push(`- Machine: ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${fixed(os.totalmem() / 2 ** 30, 1)} GiB RAM, ${os.type()} ${os.release()} ${os.arch()}; Node ${process.version}; uWS \`uws-pack\` ${packageVersion("uws-pack")}; \`ws\` ${packageVersion("ws")} (bufferutil ${existsSync(fileURLToPath(new URL("../node_modules/bufferutil", import.meta.url))) ? "installed" : "absent"})`)
  out.push(`- Placement: ${placement}.`)
  out.push(
    `- Load average (1/5/15 min) at the start ${loadStart.map((l) => l.toFixed(2)).join(" / ")}, at the end ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")}; ` +
      `before the run ${pct(background.busyCorePct)} of one core was busy with other work${background.waitedSec >= 3 ? ` (after waiting ${Math.round(background.waitedSec)} s for quiet)` : ""}.`
  )
  out.push(
    `- ${int(SUBSCRIBERS)} subscribers (${CLIENTS.map((c) => (c === "ws" ? `\`ws\` ${packageVersion("ws")} clients` : "lean clients")).join(", then ")}, all in the bench process, one socket per account, ${int(SUBSCRIBERS)} distinct bearer tokens, plans cycling free/pro/max), ` +
      `each server in its own child process; per rate ${int(SIGNALS)} signals (a \`large_move\` with one wallet, ~${int(Buffer.byteLength(JSON.stringify({ type: "signal", signal: benchSignal("uws", 1) })))} bytes as sent) after a warm-up of ${WARMUP_SIGNALS} at ${WARMUP_RATE}/s. ` +
      `Clock offset between the processes, by IPC round trip: ${runs.map((r) => `${r.server} ${fixed(r.clockOffsetMs, 3)} ms (rtt ${fixed(r.clockRttMs, 3)} ms)`).join(", ")}.`
  )
  out.push("")
  out.push(
    `Latency runs from just before \`hub.publish\` in the server process to the subscriber's \`message\` event in the client ` +
      `process. "first subscriber" and "last subscriber" are, per signal, the fastest and the slowest of its ${int(SUBSCRIBERS)} deliveries. Both servers publish into the same ` +
      `\`SignalHub\`; the curvestream stream authenticates each upgrade, subscribes each socket to the uWS topic of its (plan, filter), ` +
      `serializes each signal once per plan, publishes it once per matching topic and checks every socket's buffered bytes after uWS has written ` +
      `the batch; the baseline serializes once and calls \`send\` on every client.`
  )
  out.push("")
  const rows: string[][] = []
  for (const rate of RATES) {
    for (const run of runs) {
      const p = run.phases.find((x) => x.label === rate.label)
      if (p === undefined) continue
      rows.push([
        rate.label,
        CLIENT_NAMES[run.client],
        SERVER_NAMES[run.server],
        `${int(p.delivered)} / ${int(p.expected)}`,
        int(p.deliveriesPerSec),
        ms(p.latency.p50),
        ms(p.latency.p99),
        ms(p.latency.p999),
        ms(p.latency.max),
        `${ms(p.firstSubscriber.p50)} / ${ms(p.firstSubscriber.p99)}`,
        `${ms(p.lastSubscriber.p50)} / ${ms(p.lastSubscriber.p99)} / ${ms(p.lastSubscriber.max)}`,
        `${ms(p.publish.p50)} / ${ms(p.publish.p99)}`,
        `${ms(p.flush.p50)} / ${ms(p.flush.p99)}`,
        ms(p.pacingLagP99Ms),
        `${p.outOfOrder} / ${p.stray}`,
        pct(p.serverCpuPct),
        `${fixed(p.serverCpuUsPerDelivery, 2)} (${fixed(p.serverSysUsPerDelivery, 2)})`,
        fixed(p.busiestThreadUsPerDelivery, 2),
        `${pct(p.clientCpuPct)} (${fixed(p.clientCpuUsPerDelivery, 2)} µs)`,
        `${pct(p.otherCpuPct)}${p.disturbed ? " ⚠" : ""}${p.attempts > 1 ? ` (${p.attempts} runs)` : ""}`
      ])
    }
  }
  out.push(
    [
      ["Rate", "Clients", "Server", "delivered / expected", "deliveries/s", "p50", "p99", "p99.9", "max", "first subscriber p50 / p99", "last subscriber p50 / p99 / max", "server publish p50 / p99", "server written out p50 / p99", "publisher lag p99", "out of order / stray", "server CPU", "server CPU µs/delivery (of which kernel)", "busiest server thread µs/delivery", "client CPU (µs/delivery)", "other CPU"],
      ["---:", "---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]
    ]
      .concat(rows)
      .map((r) => `| ${r.join(" | ")} |`)
      .join("\n")
  )
  out.push("")
  out.push(
    `Times in ms. "server publish" is how long the server's synchronous \`hub.publish\` took per signal (the baseline writes every socket inside it; ` +
      `the curvestream stream hands one message per matching topic to uWS, which writes the sockets when its loop turns); "server written out" is from ` +
      `\`hub.publish\` until the server's next immediate, by which point either server has written the signal to every socket, so it is the server's own ` +
      `share of the last subscriber's latency. "publisher lag" is how late the server's publishing loop got to each signal's scheduled time (a starved ` +
      `server process shows here first). CPU in % of one core over the phase; "other CPU" is the machine's busy time not charged to the server or the client process ` +
      `(kernel loopback work, other tenants); a phase during which that exceeded ${MAX_OTHER_CPU_PCT}% of a core is ` +
      `repeated (${MAX_ATTEMPTS} ${MAX_ATTEMPTS === 1 ? "run" : "runs"} at most, the least disturbed kept) and ⚠ marks one that stayed disturbed.`
  )
  out.push("")
  out.push(
    `The ${int(SUBSCRIBERS)} subscribers share one process and one core, so the last delivery of a signal also waits for that process to read ` +
      `the ${int(SUBSCRIBERS - 1)} before it. \`ws\` clients are what the integration tests use (a stream per socket, UTF-8 validation, an event ` +
      `per message); lean clients (\`connectLean\` in this file) read frames straight from node's \`onread\` buffer, so their core spends little ` +
      `beyond the kernel's read path per delivery and more of the latency left is the server's (its writes) and the kernel's. The same server code serves both; ` +
      `"client CPU" shows what each kind of subscriber costs.`
  )
  out.push("")
  const notes = runs.map(
    (r) =>
      `${r.server} server with ${r.client} clients: ${int(SUBSCRIBERS)} connected in ${fixed(r.connectSec, 2)} s; after the run ${int(r.statsAfter.open)} open, ` +
        `${int(r.statsAfter.droppedSlow)} dropped as slow, ${int(r.statsAfter.refused)} refused (per-account cap), ${int(r.closedEarly)} closed by the server before the end` +
        (r.statsAfter.topics === undefined ? "" : `, ${int(r.statsAfter.topics)} distinct topics`)
  )
  out.push(`Sockets: ${notes.join("; ")}.`)
  out.push("")
  const verdictRows = CLIENTS.flatMap((client) =>
    SERVERS.filter((k) => k !== "ws").flatMap((kind) => RATES.map((rate) => {
      const p = runs.find((r) => r.server === kind && r.client === client)?.phases.find((x) => x.label === rate.label)
      const b = runs.find((r) => r.server === "ws" && r.client === client)?.phases.find((x) => x.label === rate.label)
      const complete = p !== undefined && p.delivered === p.expected && p.outOfOrder === 0
      const met = complete && p.latency.p99 < BUDGET_P99_MS
      return [
        `${rate.burst === 1 ? `${int(rate.rate)} signals/s` : `${int(rate.rate)} signals/s in bursts of ${rate.burst}`} to ${int(SUBSCRIBERS)} subscribers (${CLIENT_NAMES[client]}; ${STREAM_THREADS[kind] === 1 ? "1 thread" : `${STREAM_THREADS[kind]} threads`})`,
        `p99 < ${BUDGET_P99_MS} ms`,
        p === undefined
          ? "n/a"
          : `p99 ${ms(p.latency.p99)} ms (last subscriber p99 ${ms(p.lastSubscriber.p99)} ms; server written out p99 ${ms(p.flush.p99)} ms), ${int(p.delivered)}/${int(p.expected)} delivered in order; baseline p99 ${b === undefined ? "n/a" : `${ms(b.latency.p99)} ms`}; server CPU per delivery ${fixed(p.serverCpuUsPerDelivery, 2)} µs vs ${b === undefined ? "n/a" : fixed(b.serverCpuUsPerDelivery, 2)} µs; client CPU per delivery ${fixed(p.clientCpuUsPerDelivery, 2)} µs`,
        SUBSCRIBERS < 1000
          ? "— (fewer subscribers than the budget)"
          : met
            ? "**met**"
            : !complete
              ? "**not met** (deliveries missing or out of order)"
              : p.disturbed
                ? "**not shown on this run**: other work used the machine (⚠ above); rerun on a quiet machine"
                : "**not met**"
      ]
    }))
  )
  out.push(
    [["Budget (DESIGN.md)", "Target", "Measured", "Verdict"], ["---", "---", "---", "---"]]
      .concat(verdictRows)
      .map((r) => `| ${r.join(" | ")} |`)
      .join("\n")
  )
  out.push("")
  out.push(...projection(runs))
  return out.join("\n")
}

/** Threads the projection is drawn for. */
const PROJECTED_THREADS: ReadonlyArray<number> = [1, 2, 8, 16]

/**
 * The stream-threads projection, per client kind and rate where both curvestream servers ran: each of N threads writes
 * S/N sockets at the one-thread server's CPU per delivery `w`, after the main thread's share per signal `c` (the
 * two-thread server's `hub.publish` p50: per-plan serialization and one message per thread); p99 moves by as much as
 * the written-out time does. A model, assuming a free core per thread; the rows measured on this machine are beside it.
 */
const projection = (runs: ReadonlyArray<ServerRun>): ReadonlyArray<string> => {
  const rows: string[][] = []
  for (const client of CLIENTS) {
    for (const rate of RATES) {
      const one = runs.find((r) => r.server === "uws" && r.client === client)?.phases.find((x) => x.label === rate.label)
      const two = runs.find((r) => r.server === "uws2" && r.client === client)?.phases.find((x) => x.label === rate.label)
      if (one === undefined || two === undefined) continue
      // A batch of `burst` signals goes out together: each socket's write carries all of them.
      const writtenOut = (n: number) => two.publish.p50 + (SUBSCRIBERS * rate.burst * one.serverCpuUsPerDelivery) / n / 1000
      rows.push([
        rate.label,
        CLIENT_NAMES[client],
        fixed(one.serverCpuUsPerDelivery, 2),
        ms(two.publish.p50),
        `${ms(one.flush.p50)} / ${ms(one.latency.p99)}`,
        `${ms(two.latency.p99)}${two.disturbed ? " ⚠" : ""}`,
        `${fixed(one.busiestThreadUsPerDelivery, 2)} / ${fixed(two.busiestThreadUsPerDelivery, 2)}`,
        ...PROJECTED_THREADS.map((n) => `${ms(writtenOut(n))} / ${ms(one.latency.p99 - writtenOut(1) + writtenOut(n))}`)
      ])
    }
  }
  if (rows.length === 0) return []
  return [
    `Stream threads, measured and projected. Model: a signal is written out after the main thread's share \`c\` (the 2-thread server's \`hub.publish\` p50: ` +
      `serialization per plan and one message per thread) plus, on each of N threads in parallel, its ${int(SUBSCRIBERS)}/N sockets at \`w\` µs per signal each (the ` +
      `1-thread server's CPU per delivery, nearly all kernel writes; times the burst size for a batch); p99 is the 1-thread p99 moved by the change in that ` +
      `time, so it keeps this bench's one reading process (~${int(SUBSCRIBERS)} reads on one core per signal), which subscribers on their own machines do not add. ` +
      `It assumes a free core per thread and readers that are not on the server's cores, which this machine cannot give the 2-thread server (see Placement).`,
    "",
    [
      ["Rate", "Clients", "w (µs/socket)", "c (ms)", "1 thread measured: written out p50 / p99", "2 threads measured: p99", "busiest thread µs/delivery, 1 / 2 threads", ...PROJECTED_THREADS.map((n) => `${n} thread${n === 1 ? "" : "s"} model: written out / p99`)],
      ["---:", "---", "---:", "---:", "---:", "---:", "---:", ...PROJECTED_THREADS.map(() => "---:")]
    ]
      .concat(rows)
      .map((r) => `| ${r.join(" | ")} |`)
      .join("\n"),
    ""
  ]
}

const writeDoc = (section: string): void => {
  const block = `${BEGIN}\n${section}${END}`
  const current = existsSync(DOC) ? readFileSync(DOC, "utf8") : "# Benchmarks\n"
  const b = current.indexOf(BEGIN)
  const e = current.indexOf(END)
  const next = b !== -1 && e > b ? current.slice(0, b) + block + current.slice(e + END.length) : `${current.trimEnd()}\n\n${block}\n`
  writeFileSync(DOC, next)
}

const main = async () => {
  const { awaitQuiet, backgroundBusyCorePct, machineCpu, busyCorePct } = await import("./http.js")
  const loadStart = os.loadavg()
  const background =
    QUIET_WAIT_SECONDS > 0 ? await awaitQuiet(25, QUIET_WAIT_SECONDS, log) : { waitedSec: 0, busyCorePct: await backgroundBusyCorePct(1) }
  const cores = os.cpus().length
  const pin = PIN && cores >= 2 && process.platform === "linux" && hasTaskset()
  // A server with N stream threads gets the last N cores (all of them on a 2-core machine, the subscribers' core 0 too).
  const serverCpus = (kind: ServerKind): string | undefined => {
    if (!pin) return undefined
    if (kind === "uws2" && UWS2_CPUS !== undefined) return UWS2_CPUS
    const n = Math.min(cores, STREAM_THREADS[kind] ?? 1)
    return n === 1 ? String(cores - 1) : `${cores - n}-${cores - 1}`
  }
  let placement = "not pinned (the OS schedules clients and server on any core)"
  if (pin) {
    execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" })
    placement =
      `subscribers' process pinned to core 0 (taskset -a -p -c 0); ` +
      SERVERS.map((k) => `${k} server child on core${serverCpus(k)!.includes("-") ? "s" : ""} ${serverCpus(k)} (taskset -c ${serverCpus(k)})`).join(", ")
  }
  const startedAt = new Date()
  const t0 = performance.now()
  const runs: ServerRun[] = []
  for (const client of CLIENTS) for (const kind of SERVERS) runs.push(await benchServer(kind, client, serverCpus(kind), { machineCpu, busyCorePct, awaitQuiet }))
  const section = render(startedAt, (performance.now() - t0) / 1000, placement, background, loadStart, runs)
  process.stdout.write(`${section}\n`)
  if (!quick) {
    writeDoc(section)
    log(`bench ws: wrote ${DOC}`)
  }
}

if (argv[0] === "serve") {
  const kind = argv[1]
  if (!isServerKind(kind)) throw new Error(`serve: unknown server '${kind}'`)
  serve(kind, Number(argv[2] ?? "1000")).catch((e: unknown) => {
    log(`bench ws server failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
    process.exit(1)
  })
} else {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      log(`bench ws failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
      process.exit(1)
    }
  )
}
