/**
 * The read path on uWS against the same handlers on `node:http`, side by side in one run.
 *
 * Each measurement starts a fresh server child (`bench/serve.ts`), alone, pinned to the last core
 * when `taskset` exists, and stops it afterwards; the load generator (autocannon, main thread, no
 * workers) runs here, pinned to core 0, so on a 2-core machine each side owns one core. Cases
 * alternate which server goes first (uws, node / node, uws / ...) so slow drift on a shared
 * machine does not always favour one side. Every measurement gets a warm-up run that is thrown
 * away, then a measured run with the same settings for both servers.
 *
 * Latency comes from autocannon's per-response times (sub-ms, process.hrtime), not its own
 * histogram, which records whole milliseconds and cannot show a 1 ms budget. Server CPU comes
 * from /proc/<pid>/stat, so a run limited by the generator rather than the server is visible
 * (server CPU well under 100%) and the server's cost per request is known either way; machine-wide
 * CPU from /proc/stat, less the two processes', shows what else ran (kernel loopback work and
 * other tenants of the machine).
 */
import { BENCH_MINT } from "./routes.js"
import autocannon from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as os from "node:os"
import { performance } from "node:perf_hooks"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { percentile, runPaced } from "./pacedLoad.js"

/** `uws`/`node`: the route table; `uws-bare`/`node-bare`: no router (calibration). See serve.ts. */
export type ServerKind = "uws" | "node" | "uws-bare" | "node-bare"
export const SERVER_KINDS: ReadonlyArray<ServerKind> = ["uws", "node"]
export const BARE_KINDS: ReadonlyArray<ServerKind> = ["uws-bare", "node-bare"]

export interface HttpBenchOptions {
  readonly seconds: number
  readonly warmupSeconds: number
  readonly connections: number
  /** Rate of the open-loop latency case (the budget's "at 20k req/s"). */
  readonly pacedRatePerSec: number
  /** Pin the server child and this process to separate cores with taskset. */
  readonly pin: boolean
  /**
   * Shared machines: a measurement during which other work used more than this (% of one core)
   * is repeated, up to `maxAttempts` in all, keeping the least disturbed attempt.
   */
  readonly maxOtherCpuPct: number
  readonly maxAttempts: number
  /** Before each measurement, wait up to this long for other work to drop under `maxOtherCpuPct`. */
  readonly quietWaitSecondsPerMeasurement: number
  readonly log: (line: string) => void
}

/** How clean a measurement was: attempts made and whether the kept one was still disturbed. */
export interface Attempts {
  readonly attempts: number
  readonly disturbed: boolean
}

export interface HttpCase {
  readonly name: string
  readonly path: string
  /** Send the ETag the server itself returns for `path` as If-None-Match. */
  readonly conditional: boolean
  readonly expectStatus: number
}

export const HTTP_CASES: ReadonlyArray<HttpCase> = [
  { name: "quote-pairs 200", path: "/api/v1/launch/quote-pairs?chain=solana", conditional: false, expectStatus: 200 },
  { name: "quote-pairs 304 (If-None-Match)", path: "/api/v1/launch/quote-pairs?chain=solana", conditional: true, expectStatus: 304 },
  { name: "healthz", path: "/healthz", conditional: false, expectStatus: 200 },
  { name: "market record", path: `/api/v1/markets/solana/${BENCH_MINT}`, conditional: false, expectStatus: 200 },
  { name: "quote (buy 1 SOL)", path: `/api/v1/markets/solana/${BENCH_MINT}/quote?side=buy&amountIn=1000000000`, conditional: false, expectStatus: 200 }
]

/** The bare servers answer every path with /healthz's body: the healthz case minus the router. */
export const BARE_CASE: HttpCase = { name: "bare server, /healthz body", path: "/healthz", conditional: false, expectStatus: 200 }

/** The case the open-loop latency run uses: the read path's stand-in (full 2 KB body). */
export const PACED_CASE: HttpCase = HTTP_CASES[0]!

export interface LatencySummaryMs {
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly p999: number
  readonly max: number
}

export interface HttpCaseResult {
  readonly server: ServerKind
  readonly caseName: string
  readonly requests: number
  readonly requestsPerSec: number
  readonly latencyMs: LatencySummaryMs
  /** Connection errors and timeouts. */
  readonly errors: number
  readonly non2xx: number
  /** Responses whose status was not the case's expected one. */
  readonly unexpectedStatus: number
  readonly statusCounts: Readonly<Record<string, number>>
  /** Share of one core the server used during the measured run; NaN off Linux. */
  readonly serverCpuPct: number
  readonly serverCpuUsPerRequest: number
  /** Share of one core this process (the generator) used. */
  readonly generatorCpuPct: number
  /** Machine-wide busy CPU not charged to the server or the generator, in % of one core. */
  readonly otherCpuPct: number
  readonly attempts: Attempts
}

export interface PacedCaseResult {
  readonly server: ServerKind
  readonly caseName: string
  readonly targetRatePerSec: number
  readonly achievedRatePerSec: number
  readonly completed: number
  readonly latencyMs: LatencySummaryMs
  readonly errors: number
  readonly unexpectedStatus: number
  readonly maxQueued: number
  /** p99 of how late the generator picked requests up (its own CPU starvation), ms. */
  readonly generatorLagP99Ms: number
  readonly serverCpuPct: number
  readonly serverCpuUsPerRequest: number
  readonly generatorCpuPct: number
  readonly otherCpuPct: number
  readonly attempts: Attempts
}

export interface HttpBenchReport {
  readonly settings: {
    readonly seconds: number
    readonly warmupSeconds: number
    readonly connections: number
    readonly pipelining: 1
    readonly workers: "none (main thread)"
    readonly pacedRatePerSec: number
    /** How processes were placed on cores, as run. */
    readonly placement: string
    readonly maxOtherCpuPct: number
    readonly maxAttempts: number
  }
  readonly cases: ReadonlyArray<HttpCaseResult>
  /** BARE_CASE on the bare servers. */
  readonly calibration: ReadonlyArray<HttpCaseResult>
  readonly paced: ReadonlyArray<PacedCaseResult>
}

const HOST = "127.0.0.1"
const SERVE_SCRIPT = fileURLToPath(new URL("./serve.ts", import.meta.url))

const summarize = (sortedMs: ArrayLike<number>): LatencySummaryMs => ({
  p50: percentile(sortedMs, 50),
  p90: percentile(sortedMs, 90),
  p99: percentile(sortedMs, 99),
  p999: percentile(sortedMs, 99.9),
  max: sortedMs.length === 0 ? Number.NaN : sortedMs[sortedMs.length - 1]!
})

// ---- processes and cores ---------------------------------------------------------------------

const hasTaskset = (): boolean => {
  try {
    execFileSync("taskset", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

export const clockTicksPerSec = (): number => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
}

/** utime + stime of a process in seconds (all its threads), from /proc; NaN when unavailable. */
export const processCpuSec = (pid: number, ticksPerSec: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // After "pid (comm) ": state is field 3, utime field 14, stime field 15 (1-based).
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSec
  } catch {
    return Number.NaN
  }
}

/**
 * A process's CPU at rest, in cores busy (all threads): measured over `ms` while nothing is asked
 * of it (an engine's localnet slots, flushes and timers), for a bench to charge or subtract.
 */
export const cpuAtRest = async (pid: number, ticksPerSec: number, ms: number): Promise<number> => {
  const cpu0 = processCpuSec(pid, ticksPerSec)
  const t0 = performance.now()
  await new Promise<void>((r) => setTimeout(r, ms))
  return (processCpuSec(pid, ticksPerSec) - cpu0) / ((performance.now() - t0) / 1000)
}

interface MachineCpu {
  readonly totalTicks: number
  readonly idleTicks: number
}

/** Aggregate CPU ticks from /proc/stat (idle includes iowait); undefined off Linux. */
export const machineCpu = (): MachineCpu | undefined => {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!
    // cpu user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number)
    return { totalTicks: f.reduce((a, b) => a + b, 0), idleTicks: f[3]! + f[4]! }
  } catch {
    return undefined
  }
}

/** Busy CPU between two samples, in % of one core (200 = both cores of a 2-core machine busy). */
export const busyCorePct = (a: MachineCpu | undefined, b: MachineCpu | undefined): number => {
  if (a === undefined || b === undefined || b.totalTicks === a.totalTicks) return Number.NaN
  const total = b.totalTicks - a.totalTicks
  return (100 * os.cpus().length * (total - (b.idleTicks - a.idleTicks))) / total
}

/** Samples the machine for `seconds` while this process sleeps: what the rest of the box is doing. */
export const backgroundBusyCorePct = async (seconds: number): Promise<number> => {
  const a = machineCpu()
  await new Promise((r) => setTimeout(r, seconds * 1000))
  return busyCorePct(a, machineCpu())
}

/**
 * Waits until other work on the machine uses under `belowCorePct` (% of one core), sampling 2 s
 * at a time, for at most `maxWaitSeconds`. Returns the last sample.
 */
export const awaitQuiet = async (
  belowCorePct: number,
  maxWaitSeconds: number,
  log: (line: string) => void
): Promise<{ readonly waitedSec: number; readonly busyCorePct: number }> => {
  const started = performance.now()
  let busy = await backgroundBusyCorePct(2)
  while (busy >= belowCorePct && (performance.now() - started) / 1000 < maxWaitSeconds) {
    log(`bench: machine busy (${Math.round(busy)}% of one core used by other work); waiting up to ${maxWaitSeconds} s for quiet`)
    busy = await backgroundBusyCorePct(2)
  }
  return { waitedSec: (performance.now() - started) / 1000, busyCorePct: busy }
}

interface ServerChild {
  readonly port: number
  readonly pid: number
  stop(): Promise<void>
}

const startServer = (kind: ServerKind, cpu: number | undefined): Promise<ServerChild> =>
  new Promise((resolve, reject) => {
    const nodeArgs = ["--import", "tsx", SERVE_SCRIPT, kind]
    const [cmd, args] =
      cpu === undefined ? [process.execPath, nodeArgs] : ["taskset", ["-c", String(cpu), process.execPath, ...nodeArgs]]
    const child: ChildProcess = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${kind} server did not report READY within 30 s`))
    }, 30_000)
    child.once("error", (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${kind} server exited early (code ${code})`))
    })
    const lines = createInterface({ input: child.stdout! })
    lines.on("line", (line) => {
      if (!line.startsWith("READY ")) return
      clearTimeout(timer)
      const { port, pid } = JSON.parse(line.slice(6)) as { port: number; pid: number }
      resolve({
        port,
        pid,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done()
            child.removeAllListeners("exit")
            child.once("exit", () => done())
            child.kill("SIGTERM")
          })
      })
    })
  })

// ---- one autocannon run ----------------------------------------------------------------------

interface CannonRun {
  readonly result: autocannon.Result
  readonly latenciesMs: Float64Array
  readonly elapsedSec: number
  readonly statusCounts: Record<string, number>
}

const cannon = (url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<CannonRun> =>
  new Promise((resolve, reject) => {
    const latencies: number[] = []
    const statusCounts: Record<string, number> = {}
    const started = performance.now()
    const instance = autocannon({ url, headers, connections, pipelining: 1, duration: seconds, timeout: 10 }, (err, result) => {
      if (err !== null && err !== undefined) return reject(err)
      const latenciesMs = Float64Array.from(latencies).sort()
      resolve({ result, latenciesMs, elapsedSec: (performance.now() - started) / 1000, statusCounts })
    })
    instance.on("response", (_client, statusCode, _bytes, responseTimeMs) => {
      latencies.push(responseTimeMs)
      const key = String(statusCode)
      statusCounts[key] = (statusCounts[key] ?? 0) + 1
    })
  })

const etagOf = async (base: string, path: string): Promise<string> => {
  const res = await fetch(base + path)
  await res.arrayBuffer()
  const etag = res.headers.get("etag")
  if (etag === null) throw new Error(`${path} sent no ETag`)
  return etag
}

// ---- the bench ----------------------------------------------------------------------------------

/** Process and machine CPU over one measured run. */
const cpuWindow = (pid: number, ticks: number) => {
  const server0 = processCpuSec(pid, ticks)
  const gen0 = process.cpuUsage()
  const machine0 = machineCpu()
  const t0 = performance.now()
  return () => {
    const elapsedSec = (performance.now() - t0) / 1000
    const serverCpuSec = processCpuSec(pid, ticks) - server0
    const gen = process.cpuUsage(gen0)
    const serverCpuPct = (100 * serverCpuSec) / elapsedSec
    const generatorCpuPct = (100 * (gen.user + gen.system)) / 1e6 / elapsedSec
    return {
      serverCpuSec,
      serverCpuPct,
      generatorCpuPct,
      otherCpuPct: busyCorePct(machine0, machineCpu()) - serverCpuPct - generatorCpuPct
    }
  }
}

export const runHttpBench = async (o: HttpBenchOptions): Promise<HttpBenchReport> => {
  const cores = os.cpus().length
  const pin = o.pin && cores >= 2 && process.platform === "linux" && hasTaskset()
  const serverCpu = pin ? cores - 1 : undefined
  let placement = "not pinned (the OS schedules generator and server on any core)"
  if (pin) {
    execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" })
    placement = `server child pinned to core ${serverCpu} (taskset -c ${serverCpu}); generator process pinned to core 0 (taskset -a -p -c 0)`
  }
  const ticks = clockTicksPerSec()
  const cases: HttpCaseResult[] = []
  const calibration: HttpCaseResult[] = []
  const paced: PacedCaseResult[] = []

  /** A fresh server of `kind` for the duration of `body`, then stopped. */
  const withServer = async <A>(kind: ServerKind, body: (server: ServerChild, base: string) => Promise<A>): Promise<A> => {
    const server = await startServer(kind, serverCpu)
    try {
      return await body(server, `http://${HOST}:${server.port}`)
    } finally {
      await server.stop()
    }
  }

  const order = (i: number): ReadonlyArray<ServerKind> => (i % 2 === 0 ? SERVER_KINDS : [...SERVER_KINDS].reverse())

  /** Runs `measure` until other work stayed under the bound, keeping the least disturbed attempt. */
  const clean = async <A extends { readonly otherCpuPct: number }>(label: string, measure: () => Promise<A>): Promise<A & { readonly attempts: Attempts }> => {
    let best: A | undefined
    let attempts = 0
    while (attempts < o.maxAttempts) {
      attempts++
      await awaitQuiet(o.maxOtherCpuPct, o.quietWaitSecondsPerMeasurement, o.log)
      const r = await measure()
      if (best === undefined || !(r.otherCpuPct >= best.otherCpuPct)) best = r
      if (!(r.otherCpuPct > o.maxOtherCpuPct)) break
      o.log(`http: ${label}: other work used ${Math.round(r.otherCpuPct)}% of a core during the run${attempts < o.maxAttempts ? "; measuring again" : ""}`)
    }
    return { ...best!, attempts: { attempts, disturbed: best!.otherCpuPct > o.maxOtherCpuPct } }
  }

  const closedLoop = (kind: ServerKind, c: HttpCase) =>
    clean(`${kind} ${c.name}`, () =>
      withServer(kind, async (server, base) => {
        const headers: Record<string, string> = c.conditional ? { "if-none-match": await etagOf(base, c.path) } : {}
        o.log(`http: ${kind} ${c.name}: warm-up ${o.warmupSeconds} s, then ${o.seconds} s`)
        await cannon(base + c.path, headers, o.warmupSeconds, o.connections)
        const window = cpuWindow(server.pid, ticks)
        const run = await cannon(base + c.path, headers, o.seconds, o.connections)
        const cpu = window()
        const requests = run.latenciesMs.length
        const expected = run.statusCounts[String(c.expectStatus)] ?? 0
        return {
          server: kind,
          caseName: c.name,
          requests,
          requestsPerSec: requests / run.elapsedSec,
          latencyMs: summarize(run.latenciesMs),
          errors: run.result.errors + run.result.timeouts,
          non2xx: run.result.non2xx,
          unexpectedStatus: requests - expected,
          statusCounts: run.statusCounts,
          serverCpuPct: cpu.serverCpuPct,
          serverCpuUsPerRequest: (cpu.serverCpuSec * 1e6) / requests,
          generatorCpuPct: cpu.generatorCpuPct,
          otherCpuPct: cpu.otherCpuPct
        }
      })
    )

  for (const [i, c] of HTTP_CASES.entries()) {
    for (const kind of order(i)) cases.push(await closedLoop(kind, c))
  }
  for (const kind of BARE_KINDS) calibration.push(await closedLoop(kind, BARE_CASE))

  for (const kind of order(HTTP_CASES.length)) {
    const result = await clean(`${kind} ${PACED_CASE.name} open loop`, () =>
      withServer(kind, async (server, base) => {
        const headers: Record<string, string> = PACED_CASE.conditional ? { "if-none-match": await etagOf(base, PACED_CASE.path) } : {}
        const pacedRun = (seconds: number) =>
          runPaced({
            host: HOST,
            port: server.port,
            path: PACED_CASE.path,
            headers,
            ratePerSec: o.pacedRatePerSec,
            durationSec: seconds,
            connections: o.connections
          })
        o.log(`http: ${kind} ${PACED_CASE.name}, open loop at ${o.pacedRatePerSec} req/s: warm-up ${o.warmupSeconds} s, then ${o.seconds} s`)
        await pacedRun(o.warmupSeconds)
        const window = cpuWindow(server.pid, ticks)
        const r = await pacedRun(o.seconds)
        const cpu = window()
        return {
          server: kind,
          caseName: PACED_CASE.name,
          targetRatePerSec: o.pacedRatePerSec,
          achievedRatePerSec: r.achievedRatePerSec,
          completed: r.completed,
          latencyMs: summarize(r.latenciesUs.map((us) => us / 1000)),
          errors: r.errors + r.timeouts,
          unexpectedStatus: r.completed - (r.statusCounts[String(PACED_CASE.expectStatus)] ?? 0),
          maxQueued: r.maxQueued,
          generatorLagP99Ms: percentile(r.generatorLagUs, 99) / 1000,
          serverCpuPct: cpu.serverCpuPct,
          serverCpuUsPerRequest: (cpu.serverCpuSec * 1e6) / r.completed,
          generatorCpuPct: cpu.generatorCpuPct,
          otherCpuPct: cpu.otherCpuPct
        }
      })
    )
    paced.push(result)
  }

  return {
    settings: {
      seconds: o.seconds,
      warmupSeconds: o.warmupSeconds,
      connections: o.connections,
      pipelining: 1,
      workers: "none (main thread)",
      pacedRatePerSec: o.pacedRatePerSec,
      placement,
      maxOtherCpuPct: o.maxOtherCpuPct,
      maxAttempts: o.maxAttempts
    },
    cases,
    calibration,
    paced
  }
}
