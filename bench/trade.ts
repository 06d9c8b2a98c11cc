/**
 * Agent trades on the Solana localnet (issue 28, deliverable 7): the quote, the dry-run build and a
 * one-shot embedded buy from request to confirmed, each side by side in the same run with a
 * baseline on the same engine.
 *
 * The engine is the real entry point (`src/main.ts` through `test/support/engine.ts`), embedded
 * mode, `--quiet` (no market simulation), `HEADLESS_LAUNCH_ENABLED=true`, a fresh data dir, as the
 * local account's agent key (Max, `swap:write`; its embedded wallet is funded by the localnet). One
 * token is launched through the headless route first (no dev buy) and every case trades it.
 * `PLAN_OVERRIDES` lifts Max's 600 requests per minute per key, and `TRUSTED_PROXIES` names the
 * loopback so the keyless quote cases can name their client in `X-Forwarded-For` (a fresh address
 * per 100 requests, below the 120 a minute per client): both limiters still run on every request.
 *
 * Quotes (1 and 8 in flight, cases in rounds, alternating their order):
 *   - `GET /api/v1/launch/presets`: no key, a cached document: the listener's floor;
 *   - `GET /api/v1/markets/solana/{mint}/quote`: the public market quote (the curve's integer math
 *     over the in-memory index, no key);
 *   - `GET /api/v1/trade/agent/quote` without a key (the same index, the venue quote, the Free
 *     plan's fee) and with the agent key (plus `AgentAuth.authenticate`: the Max plan's fee).
 * In process: the pure `quoteVenue` on the launched curve's state (read once from the chain), two buys
 * (0.1 and 1 SOL), each call timed alone with `process.hrtime.bigint()` (µs).
 *
 * Build: `POST /api/v1/trade/agent/build` with `dryRun: true` (key auth with `swap:write`, the
 * venue and the wallet's holdings read from the localnet, the spend gate's decision, the priced
 * trade; nothing recorded or signed), a distinct `clientTradeId` each, 1 in flight (target p99 < 5
 * ms) and 8 in flight (its throughput).
 *
 * Trades: a blocking `POST /api/v1/trade/agent/submit` (payer main: the embedded wallet signs, the
 * engine records, sends and waits for `confirmed`; request sent → 200 `executed`), against the
 * baseline: the same buy transaction (`tradeInstructions`: the idempotent token-account create,
 * svc-curve's buy from `CurveInstructions.ts` with the quote's minimum out, the platform fee's
 * transfer; `TRADE_COMPUTE_UNIT_LIMIT`) priced on the curve read from the chain, signed by a funded
 * dev key (`devSigner(9)`, which nothing else signs with under --quiet), sent straight to the
 * engine's localnet RPC, confirmed by polling `getSignatureStatuses` every 250 ms like the engine
 * (`TradeService`'s default) and read back with `getTransaction` as the engine does; once more
 * polling every 5 ms, which shows the chain's own time to `confirmed` (the slot closing). The
 * localnet runs inside the engine process (on its own thread), so "engine CPU" counts the chain's work on both sides.
 * One-at-a-time rows pause a random 0–1 slot before each trade (untimed, left out of the rate).
 * Each trade buys `TRADE_AMOUNT + n` lamports so no two transactions are the same bytes.
 *
 * Run: `npm run bench:trade [-- --quick] [-- --only build]`. `--only build` runs the build case alone
 * (the engine, its token, the build rows; no quotes, no trades), prints its table with the build
 * phase's monotonic clock bounds (`process.hrtime`, µs: the clock V8's `.cpuprofile` timestamps
 * use on Linux) and never rewrites the docs. `BENCH_ENGINE_CPU_PROF=<dir>` starts the engine with
 * `--cpu-prof --cpu-prof-dir=<dir>` (written when it stops; `bench/cpuprofileSummary.ts` sums
 * it over a window), sampling every `BENCH_ENGINE_CPU_PROF_INTERVAL_US` (default 1000 µs, V8's);
 * with `--only build`, `BENCH_TAIL_WINDOWS=<file>` writes each one-in-flight build's monotonic
 * bounds and latency, for the summary's `--windows` (the slow requests' samples apart).
 * `BENCH_ENGINE_GC_LOG=<file>` logs the engine main thread's collections (`bench/engineGcLog.mjs`,
 * with `BENCH_ENGINE_TRACE_GC=1` V8's `--trace-gc` in `<file>.out`; `bench/gcSummary.ts` reads it),
 * `BENCH_ENGINE_HEAP_SAMPLE=<file>` samples its heap over each window (`<file>.<engine>.<n>.heapprofile`;
 * `bench/heapSummary.ts` groups it), `BENCH_ENGINE_ALLOC=<file>` counts the bytes its main thread
 * allocated and its collections over each window (`<file>.<engine>`, the table "Allocation per
 * window"). Each engine (`embedded`; in a full run with PostgreSQL also `server`) has its own files
 * and its windows numbered from 1: with `--only build` the engine at rest (5 s), then each build
 * mode (one, then eight in flight), otherwise each HTTP phase's modes in order. `BENCH_ENGINE_NODE_OPTIONS`
 * adds the engine's node flags (not `--max-semi-space-size`, which the command line sets after
 * them: `BENCH_ENGINE_SEMI_SPACE_MB`, default 64 as `npm start`), and `BENCH_ENGINE_ROOT=<dir>`
 * starts the engine of another checkout (a paired "before", e.g. /work/main; nothing written there). Settings: `BENCH_QUOTES` (per quote case and mode,
 * default 2000; in process ×50), `BENCH_BUILDS` (per mode, default 1000), `BENCH_TRADES` (per trade
 * row, default 30), `BENCH_SLOT_MS` (the localnet slot, default 400), `BENCH_DATABASES` (default
 * `pglite,postgres` where the PostgreSQL server binaries are installed: the build and the
 * one-shot again on a throwaway server with its own engine, side by side; `pglite` alone
 * otherwise). Prints a markdown section
 * and, unless --quick, rewrites it between the `trade` markers in docs/benchmarks.md.
 */
import {
  address,
  type Base64EncodedWireTransaction,
  createNoopSigner,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  partiallySignTransactionMessageWithSigners,
  signature as asSignature,
  signTransaction
} from "@solana/kit"
import { readFileSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { findCurveAddresses } from "../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../src/chain/solana/client/DevSigners.js"
import { buildTransactionMessage } from "../src/chain/solana/client/Transactions.js"
import { TREASURY_ADDRESS } from "../src/chain/solana/localnet/DevKeys.js"
import { curveParamsOf, curveStateOf, decodeCurve } from "../src/chain/solana/program/accounts/Curve.js"
import { DefaultPlans } from "../src/domain/Plans.js"
import { TRADE_COMPUTE_UNIT_LIMIT, tradeInstructions } from "../src/services/trade/SolanaTradeChain.js"
import { requestMemo } from "../src/chain/solana/client/RequestMemo.js"
import { minOutOf, platformFeeOf, quoteVenue, type VenueState } from "../src/services/trade/VenueQuote.js"
import { ENGINE_SEMI_SPACE_MB, type Engine, startEngine } from "../test/support/engine.js"
import { solidImage } from "../test/support/testImages.js"
import { chainConfirmedAt } from "./chainConfirmed.js"
import { benchDatabases, onPostgresServer, serverNote } from "./databases.js"
import { writeBenchmarkSection } from "./benchmarksDoc.js"
import { busyCorePct, clockTicksPerSec, cpuAtRest, machineCpu, processCpuSec } from "./http.js"
import { type BenchHttp, benchEngine, expectData, httpClient } from "./httpClient.js"
import { percentile } from "./pacedLoad.js"

const quick = process.argv.includes("--quick")
const onlyAt = process.argv.indexOf("--only")
const only = onlyAt < 0 ? undefined : process.argv[onlyAt + 1]
if (only !== undefined && only !== "build") throw new Error(`--only ${only}: the one case that runs alone is build`)
const cpuProfDir = process.env.BENCH_ENGINE_CPU_PROF
const gcLogFile = process.env.BENCH_ENGINE_GC_LOG
const heapSampleFile = process.env.BENCH_ENGINE_HEAP_SAMPLE
const allocFile = process.env.BENCH_ENGINE_ALLOC
const set = (v: string | undefined): v is string => v !== undefined && v !== ""
/** The engine's preload answers SIGUSR2 (a window's bounds) only when it samples or counts: otherwise the signal would kill it. */
const windowsOn = set(heapSampleFile) || set(allocFile)
const engineRoot = set(process.env.BENCH_ENGINE_ROOT) ? path.resolve(process.env.BENCH_ENGINE_ROOT) : undefined
const envInt = (name: string, fallback: number): number => {
  const v = process.env[name]
  const n = v === undefined || v === "" ? fallback : Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number`)
  return n
}
/**
 * The engine's NODE_OPTIONS: this process's, `BENCH_ENGINE_NODE_OPTIONS` (e.g. `--max-semi-space-size=16`),
 * the CPU profile's flags, and with `BENCH_ENGINE_GC_LOG` or `BENCH_ENGINE_HEAP_SAMPLE` the preload
 * (bench/engineGcLog.mjs) logging the main thread's collections or sampling its heap.
 */
const engineNodeOptions = [
  process.env.NODE_OPTIONS ?? "",
  process.env.BENCH_ENGINE_NODE_OPTIONS ?? "",
  cpuProfDir === undefined || cpuProfDir === ""
    ? ""
    : `--cpu-prof --cpu-prof-dir=${path.resolve(cpuProfDir)} --cpu-prof-interval=${envInt("BENCH_ENGINE_CPU_PROF_INTERVAL_US", 1000)}`,
  !set(gcLogFile) && !windowsOn ? "" : `--import=${fileURLToPath(new URL("./engineGcLog.mjs", import.meta.url))}`
]
  .filter((o) => o !== "")
  .join(" ")
const SEMI_SPACE_MB = envInt("BENCH_ENGINE_SEMI_SPACE_MB", ENGINE_SEMI_SPACE_MB)
const QUOTES = quick ? 200 : envInt("BENCH_QUOTES", 2000)
const IN_PROCESS_QUOTES = QUOTES * 50
const BUILDS = quick ? 100 : envInt("BENCH_BUILDS", 1000)
const WARMUP = quick ? 20 : 100
const TRADES = quick ? 4 : envInt("BENCH_TRADES", 30)
const DATABASES = benchDatabases()
const SLOT_MS = envInt("BENCH_SLOT_MS", 400)
const ROUNDS = quick ? 1 : 4
const IN_FLIGHT = 8
/** Each trade's buy: 0.01 SOL (plus its index in lamports). */
const TRADE_AMOUNT = 10_000_000n
const SLIPPAGE_BPS = 300
/** The baseline's payer: a dev key no other part of an embedded engine signs with under --quiet. */
const BASELINE_DEV_KEY = 9
/** The engine's status polling on a trade (`TradeService` default). */
const ENGINE_POLL_MS = 250
/** The pairing's polls: the transaction's status on the chain (and the job until it names the signature) every this many ms; the job after that every `JOB_POLL_MS`. */
const CHAIN_POLL_MS = envInt("BENCH_CHAIN_POLL_MS", 2)
const JOB_POLL_MS = envInt("BENCH_JOB_POLL_MS", 20)
/** Keyless quote requests per client address: below the 120 a minute per client. */
const PER_CLIENT = 100
const MAX_FEE_BPS = BigInt(DefaultPlans.find((p) => p.id === "max")!.feeBps)

const ticks = clockTicksPerSec()
const now = () => performance.now()
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")
const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))
const us = (x: number): string => (x >= 10 ? x.toFixed(1) : x.toFixed(2))

// ---- measuring (as bench/launch.ts) ---------------------------------------------------------------

interface Tally {
  latencies: number[]
  wallMs: number
  engineCpuSec: number
  otherCpuCoreSec: number
  count: number
}

const emptyTally = (): Tally => ({ latencies: [], wallMs: 0, engineCpuSec: 0, otherCpuCoreSec: 0, count: 0 })

/**
 * With `--only build` and `BENCH_TAIL_WINDOWS=<file>`: each one-in-flight request's bounds on the
 * monotonic clock (µs, the clock of the engine's `--cpu-prof` samples) and its latency, written to
 * the file so `bench/cpuprofileSummary.ts --windows <file> --slower-than <ms>` can sum the engine's
 * samples inside the slow requests apart from the rest: the tail traced, not guessed.
 */
const tailWindowsFile = process.env.BENCH_TAIL_WINDOWS
let tailWindows: Array<[number, number, number]> | undefined
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)

/**
 * Runs `op(i)` for `count` indices with `concurrency` in flight; each op returns its latency. Adds
 * wall time (less the untimed pauses), the engine's CPU and the rest of the machine's busy time
 * (not the engine, not this process) to the tally.
 */
const measure = async (tally: Tally, enginePid: number, count: number, concurrency: number, op: (i: number) => Promise<number>, pauseMaxMs = 0): Promise<void> => {
  const cpu0 = processCpuSec(enginePid, ticks)
  const self0 = process.cpuUsage()
  const m0 = machineCpu()
  const t0 = now()
  let next = 0
  let pausedMs = 0
  const worker = async () => {
    for (;;) {
      const i = next++
      if (i >= count) return
      if (pauseMaxMs > 0) {
        const pause = Math.random() * pauseMaxMs
        await sleep(pause)
        pausedMs += pause
      }
      if (tailWindows !== undefined && concurrency === 1) {
        const from = monotonicUs()
        const latency = await op(i)
        tailWindows.push([from, monotonicUs(), latency])
        tally.latencies.push(latency)
      } else tally.latencies.push(await op(i))
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  const wall = now() - t0
  const engineSec = processCpuSec(enginePid, ticks) - cpu0
  const self = process.cpuUsage(self0)
  const busyCoreSec = (busyCorePct(m0, machineCpu()) / 100) * (wall / 1000)
  tally.wallMs += wall - pausedMs / Math.min(concurrency, count)
  tally.engineCpuSec += engineSec
  tally.otherCpuCoreSec += Math.max(0, busyCoreSec - engineSec - (self.user + self.system) / 1e6)
  tally.count += count
}

interface Row {
  readonly label: string
  readonly inFlight: number
  readonly tally: Tally
  readonly note?: string
}

const stats = (values: ReadonlyArray<number>) => {
  const s = [...values].sort((a, b) => a - b)
  return { p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[s.length - 1] ?? Number.NaN }
}

const perSecond = (t: Tally): number => (t.count * 1000) / t.wallMs
const otherPct = (t: Tally): string => `${Math.round((100 * t.otherCpuCoreSec * 1000) / t.wallMs)}%`
const enginePct = (t: Tally): string => `${Math.round((100 * t.engineCpuSec * 1000) / t.wallMs)}%`

const timed = async (f: () => Promise<void>): Promise<number> => {
  const t0 = now()
  await f()
  return now() - t0
}

// ---- the engine's windows (bench/engineGcLog.mjs) -----------------------------------------------------

/** An engine's own window files (its preload numbers its windows from 1, so two engines never share one). */
const engineFile = (file: string, name: string) => path.resolve(`${file}.${name}`)

/** Opens a window in the engine (SIGUSR2); `close` ends it and waits until its profile and count are written. */
const openWindow = async (s: Session, label: string) => {
  s.windows.push({ label, requests: 0 })
  const n = s.windows.length
  process.kill(s.pid, "SIGUSR2")
  await sleep(50) // the signal handled before the window's work
  return {
    close: async (requests: number) => {
      s.windows[n - 1]!.requests = requests
      process.kill(s.pid, "SIGUSR2")
      await sleep(2_000) // the profile and the count written before the next window
    }
  }
}

interface AllocWindow {
  readonly window: number
  readonly ms: number
  readonly allocatedBytes: number
  readonly youngBytes: number
  readonly scavenges: number
  readonly scavengeMs: number
  readonly majors: number
  readonly majorMs: number
}

/**
 * `BENCH_ENGINE_ALLOC`'s windows as a table: the engine main thread's bytes allocated per request,
 * and net of the rest window's rate over the same time (the engine's background: ingesters, slots).
 */
const allocTable = (s: Session): string[] => {
  if (!set(allocFile)) return []
  const windowLog = s.windows
  const counted = readFileSync(engineFile(allocFile, s.name), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as AllocWindow)
  const rest = counted.find((w) => windowLog[w.window - 1]?.label === "at rest")
  const restPerMs = rest === undefined ? 0 : rest.allocatedBytes / rest.ms
  const kb = (b: number) => (b / 1024).toFixed(1)
  return [
    `Allocation per window (the ${s.name} engine's main thread, \`BENCH_ENGINE_ALLOC\`, \`<file>.${s.name}\`): bytes from V8's heap statistics around every collection; net = less the rest window's rate over the same time.`,
    "",
    "| window | ms | requests | MB allocated | young MB | KB/request | net KB/request | scavenges | scavenge ms | majors | major ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...counted.map((w) => {
      const what = windowLog[w.window - 1]
      const n = what?.requests ?? 0
      return `| ${w.window}: ${what?.label ?? "?"} | ${w.ms.toFixed(0)} | ${n} | ${(w.allocatedBytes / 1048576).toFixed(1)} | ${(w.youngBytes / 1048576).toFixed(1)} | ${n === 0 ? "" : kb(w.allocatedBytes / n)} | ${n === 0 ? "" : kb((w.allocatedBytes - restPerMs * w.ms) / n)} | ${w.scavenges} | ${w.scavengeMs.toFixed(1)} | ${w.majors} | ${w.majorMs.toFixed(1)} |`
    }),
    ""
  ]
}

// ---- the engine and the token ----------------------------------------------------------------------

interface Session {
  /** Which engine of the run (`embedded`, `server`): its window files' suffix. */
  readonly name: string
  /** Its windows opened so far, in order (its preload numbers them from 1): what each was, and its requests. */
  readonly windows: Array<{ label: string; requests: number }>
  readonly engine: Engine
  readonly pid: number
  readonly key: string
  readonly rpcUrl: string
  readonly mint: string
  readonly http: BenchHttp
  /** The typed client without a key and with the agent key, over the same keep-alive agent. */
  readonly anon: ReturnType<typeof benchEngine>
  readonly agent: ReturnType<typeof benchEngine>
}

const open = async (name: string, databaseEnv: Record<string, string> = {}): Promise<Session> => {
  if (set(allocFile)) writeFileSync(engineFile(allocFile, name), "") // this run's windows only
  const engine = await startEngine({
    env: {
      ...databaseEnv,
      HEADLESS_LAUNCH_ENABLED: "true",
      LOCALNET_SLOT_MS: String(SLOT_MS),
      PLAN_OVERRIDES: JSON.stringify({ max: { limits: { requestsPerMin: 1_000_000 } } }),
      TRUSTED_PROXIES: "127.0.0.1,::1",
      ...(engineNodeOptions === "" ? {} : { NODE_OPTIONS: engineNodeOptions }),
      ...(gcLogFile === undefined || gcLogFile === "" ? {} : { BENCH_ENGINE_GC_LOG: path.resolve(gcLogFile) }),
      ...(set(heapSampleFile) ? { BENCH_ENGINE_HEAP_SAMPLE: engineFile(heapSampleFile, name) } : {}),
      ...(set(allocFile) ? { BENCH_ENGINE_ALLOC: engineFile(allocFile, name) } : {})
    },
    args: ["--quiet"],
    semiSpaceMb: SEMI_SPACE_MB,
    ...(engineRoot !== undefined ? { root: engineRoot } : {}),
    readyTimeoutMs: 480_000
  })
  const key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  const rpcUrl = (JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }).solana.rpcUrl
  const http = httpClient(engine.url, IN_FLIGHT * 2)
  const anon = benchEngine(engine.url, http)
  const agent = benchEngine(engine.url, http, key)
  try {
    // Raw bytes with an image content type; the document types a binary body as a string.
    const png = await solidImage("png", 32, 32)
    const upload = { body: png as unknown as string, bodySerializer: (b: string) => b, headers: { "content-type": "image/png" } }
    const { imageUrl } = expectData("image upload", await agent.POST("/api/v1/uploads/agent-image", upload), 200)
    const launched = expectData("launch", await agent.POST("/api/v1/launch/headless", { body: { clientLaunchId: "bench-trade-token", name: "Bench Trade", symbol: "BTR", imageUrl } }), 200)
    if (!("mint" in launched) || typeof launched.mint !== "string") throw new Error(`launch: unexpected answer ${JSON.stringify(launched)}`)
    const mint = launched.mint
    // The market quote reads the in-memory index: wait until it holds the new market.
    const deadline = now() + 60_000
    for (;;) {
      const m = await anon.GET("/api/v1/markets/{chain}/{mint}", { params: { path: { chain: "solana", mint } } })
      if (m.response.status === 200) break
      if (now() > deadline) throw new Error(`the market ${mint} never showed: ${m.response.status} ${JSON.stringify(m.error ?? null).slice(0, 200)}`)
      await sleep(50)
    }
    return { name, windows: [], engine, pid: engine.child.pid!, key, rpcUrl, mint, http, anon, agent }
  } catch (e) {
    http.close()
    await engine.stop("SIGTERM")
    engine.cleanup()
    throw e
  }
}

const close = async (s: Session) => {
  s.http.close()
  await s.engine.stop("SIGTERM")
  // With BENCH_ENGINE_TRACE_GC, V8's --trace-gc lines are in the engine's output: kept beside the log.
  if (gcLogFile !== undefined && gcLogFile !== "") writeFileSync(`${path.resolve(gcLogFile)}.out`, s.engine.output())
  s.engine.cleanup()
}

/** The launched curve's venue state, read from the chain as the engine reads it. */
const curveVenue = async (s: Session): Promise<VenueState> => {
  const rpc = createSolanaRpc(s.rpcUrl)
  const { curve } = await findCurveAddresses(address(s.mint))
  const info = await rpc.getAccountInfo(curve, { encoding: "base64", commitment: "confirmed" }).send()
  if (info.value === null) throw new Error(`no curve account for ${s.mint}`)
  const decoded = decodeCurve(new Uint8Array(Buffer.from(info.value.data[0], "base64")))
  if (decoded === undefined || decoded.lifecycle !== "trading") throw new Error(`the curve of ${s.mint} does not trade`)
  return { _tag: "Curve", params: curveParamsOf(decoded), state: curveStateOf(decoded), creatorShareBps: BigInt(decoded.creatorShareBps) }
}

// ---- HTTP cases ------------------------------------------------------------------------------------

interface HttpCase {
  readonly label: string
  readonly op: () => Promise<number>
}

/** Cases in rounds, the order alternating, at 1 and then 8 in flight, after a warm-up each. */
const httpPhase = async (s: Session, cases: ReadonlyArray<HttpCase>, perCase: number): Promise<Row[]> => {
  const rows: Row[] = []
  for (const inFlight of [1, IN_FLIGHT]) {
    const tallies = cases.map(() => emptyTally())
    for (const c of cases) await measure(emptyTally(), s.pid, WARMUP, inFlight, () => c.op())
    if (tailWindows !== undefined && inFlight === 1) tailWindows.length = 0 // the warm-up's windows are not the phase's
    // A window of the engine's heap sampling and allocation count (bench/engineGcLog.mjs) over this mode's rounds.
    const window = windowsOn ? await openWindow(s, `${cases.length === 1 ? "builds" : "quotes"}, ${inFlight} in flight`) : undefined
    for (let r = 0; r < ROUNDS; r++) {
      const order = cases.map((_, k) => k)
      if (r % 2 === 1) order.reverse()
      for (const k of order) await measure(tallies[k]!, s.pid, Math.ceil(perCase / ROUNDS), inFlight, () => cases[k]!.op())
    }
    if (window !== undefined) await window.close(tallies.reduce((a, t) => a + t.count, 0))
    cases.forEach((c, k) => rows.push({ label: c.label, inFlight, tally: tallies[k]! }))
  }
  return rows
}

const quoteCases = (s: Session): HttpCase[] => {
  let seq = 0
  // A fresh client address every PER_CLIENT keyless requests (the loopback is a trusted proxy).
  const client = () => {
    const c = Math.floor(seq++ / PER_CLIENT)
    return { "x-forwarded-for": `10.${(c >> 16) & 255}.${(c >> 8) & 255}.${c & 255}` }
  }
  const amount = "100000000"
  const agentQuote = { query: { chain: "solana" as const, mint: s.mint, side: "buy" as const, amountIn: amount, slippageBps: SLIPPAGE_BPS } }
  const checkQuote = (what: string, body: any) => {
    if (typeof body?.amountOut !== "string" && typeof body?.quote?.amountOut !== "string") throw new Error(`${what}: unexpected answer ${JSON.stringify(body).slice(0, 400)}`)
  }
  return [
    {
      label: "`GET /api/v1/launch/presets` (no key, cached document: the listener's floor)",
      op: () => timed(async () => void expectData("presets", await s.anon.GET("/api/v1/launch/presets", { headers: client() }), 200))
    },
    {
      label: "`GET /api/v1/markets/solana/{mint}/quote` (public market quote, no key)",
      op: () =>
        timed(async () =>
          checkQuote(
            "market quote",
            expectData(
              "market quote",
              await s.anon.GET("/api/v1/markets/{chain}/{mint}/quote", { params: { path: { chain: "solana", mint: s.mint }, query: { side: "buy", amountIn: amount, slippageBps: SLIPPAGE_BPS } }, headers: client() }),
              200
            )
          )
        )
    },
    {
      label: "`GET /api/v1/trade/agent/quote` (no key: Free plan's fee)",
      op: () => timed(async () => checkQuote("agent quote", expectData("agent quote", await s.anon.GET("/api/v1/trade/agent/quote", { params: agentQuote, headers: client() }), 200)))
    },
    {
      label: "`GET /api/v1/trade/agent/quote` (agent key: authenticated, Max plan's fee)",
      op: () => timed(async () => checkQuote("agent quote (key)", expectData("agent quote (key)", await s.agent.GET("/api/v1/trade/agent/quote", { params: agentQuote }), 200)))
    }
  ]
}

const buildCases = (s: Session): HttpCase[] => {
  let seq = 0
  return [
    {
      label: "`POST /api/v1/trade/agent/build` (`dryRun: true`, buy 0.01 SOL: every check, the priced trade)",
      op: () =>
        timed(async () => {
          const n = ++seq
          const body = expectData(
            "build",
            await s.agent.POST("/api/v1/trade/agent/build", {
              body: { clientTradeId: `build-${n}`, chain: "solana", mint: s.mint, side: "buy", amountIn: String(TRADE_AMOUNT + BigInt(n)), slippageBps: SLIPPAGE_BPS, dryRun: true }
            }),
            200
          )
          if (!("dryRun" in body) || body.dryRun !== true || typeof body.expectedOut !== "string") throw new Error(`build: unexpected answer ${JSON.stringify(body)}`)
        })
    }
  ]
}

// ---- in process ------------------------------------------------------------------------------------

interface InProcessRow {
  readonly label: string
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly meanUs: number
}

const inProcessQuotes = (venue: VenueState): InProcessRow[] => {
  const rows: InProcessRow[] = []
  const cases: ReadonlyArray<{ readonly label: string; readonly side: "buy" | "sell"; readonly amount: bigint }> = [
    { label: "`quoteVenue` curve buy (0.1 SOL)", side: "buy", amount: 100_000_000n },
    { label: "`quoteVenue` curve buy (1 SOL)", side: "buy", amount: 1_000_000_000n }
  ]
  for (const c of cases) {
    const probe = quoteVenue(venue, c.side, c.amount)
    if (probe._tag !== "Filled") throw new Error(`in-process ${c.side} quote refused: ${JSON.stringify(probe)}`)
    for (let i = 0; i < 10_000; i++) quoteVenue(venue, c.side, c.amount + BigInt(i & 1023))
    const samples = new Float64Array(IN_PROCESS_QUOTES)
    let sink = 0n
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < IN_PROCESS_QUOTES; i++) {
      const a = process.hrtime.bigint()
      const q = quoteVenue(venue, c.side, c.amount + BigInt(i & 1023))
      const b = process.hrtime.bigint()
      samples[i] = Number(b - a) / 1000
      if (q._tag === "Filled") sink += q.amountOut
    }
    const total = Number(process.hrtime.bigint() - t0) / 1000
    if (sink === 0n) throw new Error("in-process quotes filled nothing")
    const st = stats(Array.from(samples))
    rows.push({ label: c.label, count: IN_PROCESS_QUOTES, p50: st.p50, p99: st.p99, max: st.max, meanUs: total / IN_PROCESS_QUOTES })
  }
  return rows
}

// ---- trades ----------------------------------------------------------------------------------------

interface TradeReport {
  readonly rows: ReadonlyArray<Row & { readonly path: "engine" | "baseline" }>
  readonly measuredSlotMs: number
  /** Per async one-shot: the engine's clock at `executed` less `confirmed` first seen on the chain (ms). */
  readonly paired: ReadonlyArray<number>
}

/** The baseline: the same buy transaction for the same amount, signed by a dev key, straight to the localnet. */
const baselineTrader = async (s: Session) => {
  const rpc = createSolanaRpc(s.rpcUrl)
  const payer = await devSigner(BASELINE_DEV_KEY)
  const { curve } = await findCurveAddresses(address(s.mint))
  return async (n: number, pollMs: number): Promise<number> => {
    const amountIn = TRADE_AMOUNT + BigInt(n)
    const t0 = now()
    // Priced on the curve as it is now, as the engine prices a trade.
    const [info, latest] = await Promise.all([
      rpc.getAccountInfo(curve, { encoding: "base64", commitment: "confirmed" }).send(),
      rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
    ])
    const decoded = info.value === null ? undefined : decodeCurve(new Uint8Array(Buffer.from(info.value.data[0], "base64")))
    if (decoded === undefined) throw new Error("baseline: the curve is unreadable")
    const fill = quoteVenue({ _tag: "Curve", params: curveParamsOf(decoded), state: curveStateOf(decoded), creatorShareBps: BigInt(decoded.creatorShareBps) }, "buy", amountIn)
    if (fill._tag !== "Filled") throw new Error(`baseline: quote refused ${JSON.stringify(fill)}`)
    const fee = platformFeeOf(fill, "buy", { planFeeBps: MAX_FEE_BPS, referred: false }).feeRaw
    const instructions = await tradeInstructions({
      owner: payer.address,
      venue: "svc-curve",
      side: "buy",
      mint: s.mint,
      quoteMint: decoded.quoteMint,
      amountInRaw: amountIn,
      minAmountOutRaw: minOutOf(fill, BigInt(SLIPPAGE_BPS)),
      fee: fee > 0n ? { feeRaw: fee, treasury: TREASURY_ADDRESS } : null,
      // The same instructions as the engine's trade, its request memo included.
      memo: requestMemo("trade", "bench-baseline", `baseline-${n}-${Date.now()}`)
    })
    const message = buildTransactionMessage({ feePayer: createNoopSigner(payer.address), lifetime: latest.value, instructions, computeUnitLimit: TRADE_COMPUTE_UNIT_LIMIT })
    const tx = await signTransaction([payer.keyPair], await partiallySignTransactionMessageWithSigners(message))
    const sig = asSignature(getSignatureFromTransaction(tx))
    await rpc.sendTransaction(getBase64EncodedWireTransaction(tx) as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" }).send()
    for (;;) {
      const status = (await rpc.getSignatureStatuses([sig]).send()).value[0]
      if (status != null && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized")) {
        if (status.err !== null) throw new Error(`baseline trade ${sig} failed on chain: ${JSON.stringify(status.err, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`)
        break
      }
      await sleep(pollMs)
    }
    const landed = await rpc.getTransaction(sig, { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send()
    if (landed === null) throw new Error(`baseline trade ${sig} confirmed but not readable`)
    return now() - t0
  }
}

/** `engineOnly`: the engine's rows alone (the second database's run; the baseline does not touch a database). */
const tradePhase = async (s: Session, engineOnly = false): Promise<TradeReport> => {
  const rpc = createSolanaRpc(s.rpcUrl)
  const baseline = await baselineTrader(s)
  let seq = 0
  const oneShot = async (): Promise<number> => {
    const n = ++seq
    const t0 = now()
    const body = expectData(
      "submit",
      await s.agent.POST("/api/v1/trade/agent/submit", {
        body: { clientTradeId: `trade-${n}`, chain: "solana", mint: s.mint, side: "buy", amountIn: String(TRADE_AMOUNT + BigInt(n)), slippageBps: SLIPPAGE_BPS }
      }),
      200
    )
    const t = now() - t0
    if (!("amountOut" in body) || body.status !== "executed" || typeof body.amountOut !== "string") throw new Error(`submit: unexpected answer ${JSON.stringify(body)}`)
    return t
  }
  /** When this process first saw `sig` `confirmed` on the chain (`Date.now`, the engine's clock too), polled every `CHAIN_POLL_MS`. */
  const chainConfirmed = (sig: string): Promise<number> => chainConfirmedAt(rpc, sig, CHAIN_POLL_MS)
  /** The engine's clock when it logged the trade `id` executed (the attempt runner logs it right after the row's `executed` is saved). */
  const executedLoggedAt = (id: string): number | undefined => {
    const line = s.engine
      .output()
      .split("\n")
      .findLast((l) => l.includes('message="agent trade executed"') && (l.includes(`clientTradeId=${id} `) || l.endsWith(`clientTradeId=${id}`)))
    const at = line?.match(/timestamp=(\S+)/)?.[1]
    return at === undefined ? undefined : Date.parse(at)
  }
  /**
   * An async one-shot (202, then its job polled every `JOB_POLL_MS`), paired with the chain's own
   * confirmation of its own transaction: from the moment the job names the signature this process
   * polls the transaction's status every `CHAIN_POLL_MS`; the answer is the engine's clock when it
   * logged the trade executed (right after saving the row `executed`, which a trade view has no
   * timestamp of) less the moment the transaction was first seen `confirmed`.
   */
  const pairedShot = async (): Promise<number> => {
    const n = ++seq
    const id = `paired-${n}`
    expectData(
      "async submit",
      await s.agent.POST("/api/v1/trade/agent/submit", {
        body: { clientTradeId: id, chain: "solana", mint: s.mint, side: "buy", amountIn: String(TRADE_AMOUNT + BigInt(n)), slippageBps: SLIPPAGE_BPS, async: true }
      }),
      202
    )
    let onChain: Promise<number> | undefined
    for (;;) {
      const trade = expectData("trade job", await s.agent.GET("/api/v1/trade/agent/trades/{clientTradeId}", { params: { path: { clientTradeId: id } } }), 200)
      if (onChain === undefined && trade.signature !== "") onChain = chainConfirmed(trade.signature)
      if (trade.status === "executed") {
        if (onChain === undefined) throw new Error(`async trade ${id} executed without a signature: ${JSON.stringify(trade)}`)
        const confirmedAt = await onChain
        const executedAt = executedLoggedAt(id)
        if (executedAt === undefined) throw new Error(`async trade ${id}: the engine's "agent trade executed" line is not in its output`)
        return executedAt - confirmedAt
      }
      if (trade.status === "failed") throw new Error(`async trade ${id} failed: ${JSON.stringify(trade)}`)
      await sleep(onChain === undefined ? CHAIN_POLL_MS : JOB_POLL_MS)
    }
  }
  const allCases: ReadonlyArray<{ readonly path: "engine" | "baseline"; readonly label: string; readonly note: string; readonly inFlight: number; readonly op: () => Promise<number> }> = [
    { path: "engine", label: "engine, one-shot `submit` (payer main, blocking)", note: "request sent → 200 executed", inFlight: 1, op: oneShot },
    { path: "baseline", label: `baseline, straight to the localnet (poll ${ENGINE_POLL_MS} ms)`, note: "read + price → confirmed → read", inFlight: 1, op: () => baseline(++seq, ENGINE_POLL_MS) },
    { path: "engine", label: "engine, one-shot `submit` (payer main, blocking)", note: "request sent → 200 executed", inFlight: IN_FLIGHT, op: oneShot },
    { path: "baseline", label: `baseline, straight to the localnet (poll ${ENGINE_POLL_MS} ms)`, note: "read + price → confirmed → read", inFlight: IN_FLIGHT, op: () => baseline(++seq, ENGINE_POLL_MS) },
    { path: "baseline", label: "baseline, straight to the localnet (poll 5 ms)", note: "the chain's own time to `confirmed`", inFlight: 1, op: () => baseline(++seq, 5) }
  ]
  const cases = engineOnly ? allCases.filter((c) => c.path === "engine") : allCases
  for (const c of cases) await measure(emptyTally(), s.pid, 1, 1, c.op)
  const slot0 = await rpc.getSlot({ commitment: "processed" }).send()
  const slotT0 = now()
  const tallies = cases.map(() => emptyTally())
  const rounds = quick ? 1 : 2
  for (let r = 0; r < rounds; r++) {
    const order = cases.map((_, k) => k)
    if (r % 2 === 1) order.reverse()
    for (const k of order) await measure(tallies[k]!, s.pid, Math.ceil(TRADES / rounds), cases[k]!.inFlight, cases[k]!.op, cases[k]!.inFlight === 1 ? SLOT_MS : 0)
  }
  const slot1 = await rpc.getSlot({ commitment: "processed" }).send()
  // Item 6's trade half, one at a time after a random 0–1 slot pause (the one-shot's rows do not pair).
  const paired = emptyTally()
  await measure(emptyTally(), s.pid, 1, 1, pairedShot)
  await measure(paired, s.pid, TRADES, 1, pairedShot, SLOT_MS)
  return {
    measuredSlotMs: (now() - slotT0) / Number(slot1 - slot0),
    rows: cases.map((c, k) => ({ path: c.path, label: c.label, note: c.note, inFlight: c.inFlight, tally: tallies[k]! })),
    paired: paired.latencies
  }
}

// ---- report ----------------------------------------------------------------------------------------

/** The build and one-shot rows on PGlite beside the same on the PostgreSQL server (issue 34 item 3). */
const databasesSection = (builds: ReadonlyArray<Row>, trades: TradeReport, onServer: { readonly builds: ReadonlyArray<Row>; readonly trades: TradeReport; readonly version: string } | undefined): string[] => {
  if (onServer === undefined) return []
  const pairs: Array<readonly [string, Row, Row]> = []
  for (const inFlight of [1, IN_FLIGHT]) {
    const b = builds.find((r) => r.inFlight === inFlight)
    const sb = onServer.builds.find((r) => r.inFlight === inFlight)
    if (b !== undefined && sb !== undefined) pairs.push(["build (dry run)", b, sb])
  }
  for (const inFlight of [1, IN_FLIGHT]) {
    const t = trades.rows.find((r) => r.path === "engine" && r.inFlight === inFlight)
    const st = onServer.trades.rows.find((r) => r.path === "engine" && r.inFlight === inFlight)
    if (t !== undefined && st !== undefined) pairs.push(["one-shot `submit`", t, st])
  }
  const cell = (r: Row) => {
    const st = stats(r.tally.latencies)
    return `${ms(st.p50)} / ${ms(st.p99)} | ${ms((r.tally.engineCpuSec * 1000) / r.tally.count)} | ${otherPct(r.tally)}`
  }
  return [
    "### PGlite and the PostgreSQL server side by side",
    "",
    `The build and the one-shot again, in the same run, on ${serverNote(onServer.version)} and its own launched token; the baseline rows are not repeated (they touch no database). "engine CPU" counts PGlite's worker thread (it is in the engine's process) but not the server's backends, which show in "other CPU".`,
    "",
    "| Case | in flight | PGlite p50 / p99 ms | engine CPU ms/req | other CPU | server p50 / p99 ms | engine CPU ms/req | other CPU |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...pairs.map(([label, a, b]) => `| ${label} | ${a.inFlight} | ${cell(a)} | ${cell(b)} |`),
    "",
    ...(trades.paired.length > 0 && onServer.trades.paired.length > 0
      ? [`Executed over the chain's own confirmation, paired per trade as above (${onServer.trades.paired.length} on the server): PGlite ${pairedFigures(trades.paired)}; the server ${pairedFigures(onServer.trades.paired)}.`, ""]
      : [])
  ]
}

const pairedFigures = (values: ReadonlyArray<number>): string => {
  const st = stats(values)
  return `p50 ${ms(st.p50)} ms, p90 ${ms(st.p90)} ms, p99 ${ms(st.p99)} ms`
}

const httpTable = (rows: ReadonlyArray<Row>): string[] => {
  const lines = [
    "| Case | in flight | requests | req/s | p50 | p90 | p99 | max | engine CPU ms/req | engine CPU | other CPU |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  ]
  for (const r of rows) {
    const st = stats(r.tally.latencies)
    lines.push(
      `| ${r.label} | ${r.inFlight} | ${r.tally.count} | ${perSecond(r.tally).toFixed(0)} | ${ms(st.p50)} | ${ms(st.p90)} | ${ms(st.p99)} | ${ms(st.max)} | ${ms((r.tally.engineCpuSec * 1000) / r.tally.count)} | ${enginePct(r.tally)} | ${otherPct(r.tally)} |`
    )
  }
  return lines
}

const inProcessTable = (rows: ReadonlyArray<InProcessRow>): string[] => [
  "| Case | calls | p50 µs | p99 µs | max µs | mean µs (one clock over the loop) |",
  "| --- | ---: | ---: | ---: | ---: | ---: |",
  ...rows.map((r) => `| ${r.label} | ${r.count} | ${us(r.p50)} | ${us(r.p99)} | ${us(r.max)} | ${us(r.meanUs)} |`)
]

const tradeTable = (t: TradeReport): string[] => {
  const lines = [
    "| Path | in flight | trades | trades/s | p50 | p90 | p99 | max | engine CPU ms/trade | other CPU | measures |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  ]
  for (const r of t.rows) {
    const st = stats(r.tally.latencies)
    lines.push(
      `| ${r.label} | ${r.inFlight} | ${r.tally.count} | ${perSecond(r.tally).toFixed(2)} | ${ms(st.p50)} | ${ms(st.p90)} | ${ms(st.p99)} | ${ms(st.max)} | ${ms((r.tally.engineCpuSec * 1000) / r.tally.count)} | ${otherPct(r.tally)} | ${r.note} |`
    )
  }
  return lines
}

const overhead = (t: TradeReport): string => {
  const find = (p: "engine" | "baseline", inFlight: number) => t.rows.find((r) => r.path === p && r.inFlight === inFlight && !r.label.includes("poll 5 ms"))!
  const parts = [1, IN_FLIGHT].map((c) => {
    const e = find("engine", c).tally
    const b = find("baseline", c).tally
    const es = stats(e.latencies)
    const bs = stats(b.latencies)
    const cpu = (e.engineCpuSec / e.count - b.engineCpuSec / b.count) * 1000
    return `${c} in flight: p50 ${es.p50 - bs.p50 >= 0 ? "+" : ""}${ms(es.p50 - bs.p50)} ms, p99 ${es.p99 - bs.p99 >= 0 ? "+" : ""}${ms(es.p99 - bs.p99)} ms, engine CPU ${cpu >= 0 ? "+" : ""}${ms(cpu)} ms per trade`
  })
  return `One-shot over the baseline at the same ${ENGINE_POLL_MS} ms status polling: ${parts.join("; ")}.`
}

/** Item 6's trade half: each async one-shot's `executed` over its transaction's own `confirmed`. */
const pairedLine = (t: TradeReport): string[] => {
  if (t.paired.length === 0) return []
  const st = stats(t.paired)
  return [
    `Executed over the chain's own confirmation (issue 28 item 6), paired per trade: ${t.paired.length} async one-shots (\`async: true\`, the same buy), one at a time after a random 0–1 slot pause; the engine's clock when it recorded the trade \`executed\` (its "agent trade executed" log line, written right after the row is saved; the trade view carries no timestamp of it) less the moment this process first saw the same transaction \`confirmed\` on the chain, polling its status every ${CHAIN_POLL_MS} ms from when the job named its signature (so a figure can be negative by up to about the poll and one RPC round trip): p50 ${ms(st.p50)} ms, p90 ${ms(st.p90)} ms, p99 ${ms(st.p99)} ms, max ${ms(st.max)} ms (budget: p99 < 30 ms).`,
    ""
  ]
}

const main = async () => {
  const startedAt = now()
  const loadStart = loads()
  process.stderr.write(`bench: engine with LOCALNET_SLOT_MS=${SLOT_MS} (load ${loads()})\n`)
  const s = await open("embedded")
  if (only === "build") {
    try {
      process.stderr.write(`bench: builds only (load ${loads()})\n`)
      // The engine's own background (slots, ingest, actors) with no request in flight, charged to every row's CPU.
      const restWindow = windowsOn ? await openWindow(s, "at rest") : undefined
      const restPct = 100 * (await cpuAtRest(s.pid, ticks, 5_000))
      await restWindow?.close(0)
      const from = process.hrtime.bigint() / 1000n
      if (tailWindowsFile !== undefined && tailWindowsFile !== "") tailWindows = []
      const builds = await httpPhase(s, buildCases(s), BUILDS)
      const to = process.hrtime.bigint() / 1000n
      if (tailWindows !== undefined) writeFileSync(tailWindowsFile!, JSON.stringify(tailWindows))
      process.stdout.write(
        [
          `Build (dry run) only, ${BUILDS} requests per mode; the engine ${engineRoot === undefined ? "of this checkout" : `of ${engineRoot}`} with --max-semi-space-size=${SEMI_SPACE_MB}; load average ${loadStart} at the start, ${loads()} at the end; the engine at rest before the phase (5 s, no request): ${restPct.toFixed(0)}% of a core; the build phase on the monotonic clock: ${from}..${to} µs.`,
          "",
          ...httpTable(builds),
          "",
          ...allocTable(s)
        ].join("\n")
      )
    } finally {
      await close(s)
    }
    return
  }
  let quotes: Row[]
  let builds: Row[]
  let inProcess: InProcessRow[]
  let trades: TradeReport
  try {
    process.stderr.write(`bench: quotes (load ${loads()})\n`)
    quotes = await httpPhase(s, quoteCases(s), QUOTES)
    inProcess = inProcessQuotes(await curveVenue(s))
    process.stderr.write(`bench: builds (load ${loads()})\n`)
    builds = await httpPhase(s, buildCases(s), BUILDS)
    process.stderr.write(`bench: trades (load ${loads()})\n`)
    trades = await tradePhase(s)
  } finally {
    await close(s)
  }
  /** `BENCH_ENGINE_ALLOC`'s tables, one per engine (each its own file and window numbers). */
  const allocTables = allocTable(s)
  // The same build and one-shot on the PostgreSQL server (issue 34 item 3): what the embedded default costs.
  let onServer: { readonly builds: Row[]; readonly trades: TradeReport; readonly version: string } | undefined
  if (DATABASES.includes("postgres")) {
    process.stderr.write(`bench: the PostgreSQL server (load ${loads()})\n`)
    onServer = await onPostgresServer(async (env, version) => {
      const ps = await open("server", env)
      let done: { readonly builds: Row[]; readonly trades: TradeReport; readonly version: string }
      try {
        process.stderr.write(`bench: builds on the server (load ${loads()})\n`)
        const serverBuilds = await httpPhase(ps, buildCases(ps), BUILDS)
        process.stderr.write(`bench: trades on the server (load ${loads()})\n`)
        done = { builds: serverBuilds, trades: await tradePhase(ps, true), version }
      } finally {
        await close(ps)
      }
      allocTables.push(...allocTable(ps))
      return done
    })
  }
  const cpu = os.cpus()
  const buildVerdict = builds
    .map((r) => {
      const p99 = stats(r.tally.latencies).p99
      return r.inFlight === 1 ? `one in flight p99 ${ms(p99)} ms, **${p99 < 5 ? "met" : "not met"}**` : `${r.inFlight} in flight ${perSecond(r.tally).toFixed(0)} builds/s (p99 ${ms(p99)} ms)`
    })
    .join("; ")
  const section = [
    "## Agent trades (`bench/trade.ts`)",
    "",
    `- Date: ${new Date().toISOString()} (took ${((now() - startedAt) / 1000).toFixed(0)} s); command: \`${["BENCH_QUOTES", "BENCH_BUILDS", "BENCH_TRADES", "BENCH_SLOT_MS"].filter((k) => !quick && process.env[k] !== undefined).map((k) => `${k}=${process.env[k]} `).join("")}npm run bench:trade${quick ? " -- --quick" : ""}\``,
    `- Machine: ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()} ${os.arch()}; Node ${process.version}`,
    `- Load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}.`,
    `- The engine is \`src/main.ts\` in embedded mode (\`--quiet\`: no market simulation; \`HEADLESS_LAUNCH_ENABLED=true\`; a fresh data dir; PGlite, the embedded bus, the Solana localnet in the same process, \`LOCALNET_SLOT_MS=${SLOT_MS}\`), started by \`test/support/engine.ts\`; one token launched through \`POST /api/v1/launch/headless\` (no dev buy) is traded throughout. Requests come from this process over loopback (keep-alive \`node:http\`), as the local account's agent key (Max, \`swap:write\`; its embedded wallet funded by the localnet). \`PLAN_OVERRIDES\` lifts Max's 600 requests/min; \`TRUSTED_PROXIES\` names the loopback and the keyless requests carry a fresh \`X-Forwarded-For\` client every ${PER_CLIENT} requests (below 120 a minute per client); both limiters, and the client's resolution behind the proxy, run on every request of every case.`,
    "",
    "### Quote",
    "",
    `${QUOTES} requests per case and mode (${ROUNDS} round(s), the cases' order alternating, after ${WARMUP} warm-up requests each), a buy of 0.1 SOL on the launched curve. Times in ms from the request written to the whole answer read. "engine CPU" is the engine process's CPU (all threads) over the case; "other CPU" is the machine's busy time not charged to the engine or this process (this VM's other tenants), both in % of one core.`,
    "",
    ...httpTable(quotes),
    "",
    `In process: the pure \`quoteVenue\` (\`src/services/trade/VenueQuote.ts\`) on the launched curve's state read once from the chain, ${IN_PROCESS_QUOTES} calls per case after 10,000 warm-up calls, each call timed alone with \`process.hrtime.bigint()\` (the clock's own cost, a few tenths of a µs, is inside each sample; the last column divides one clock over the whole loop by the calls).`,
    "",
    ...inProcessTable(inProcess),
    "",
    "### Build (dry run)",
    "",
    `${BUILDS} requests per mode, a distinct \`clientTradeId\` each, a buy of 0.01 SOL: key auth (\`swap:write\`), the body decoded, the embedded wallet's address (cached per account after its first read), the venue and the wallet's holdings read from the localnet RPC in one call (the curve, its pool, the wallet, its token account; over loopback HTTP to the localnet's RPC, which runs in the engine's process), then the wallet's funds (from the holdings just read) and after them the spend gate's decision on the key row the request authenticated with (no SQL for this key, which has no txLimit; a key with one reads its window), in turn, funds first, the priced trade with its fee and minimum out; nothing recorded or signed.`,
    "",
    ...httpTable(builds),
    "",
    `Target: build p99 < 5 ms at one in flight. Measured: ${buildVerdict}.`,
    "",
    ...allocTables,
    "### One-shot buy against a raw send",
    "",
    `Each trade: a buy of 0.01 SOL (plus its index in lamports, so no two transactions are the same bytes) on the SOL pair, ${SLIPPAGE_BPS} bps slippage; ${TRADES} trades per row in ${quick ? 1 : 2} round(s) (order reversed in the second) after one warm-up each. One-at-a-time rows pause a random 0–1 slot before each trade (not timed, not counted in trades/s). The baseline is the same transaction (\`tradeInstructions\`: the idempotent token-account create, svc-curve's buy with the quote's minimum out, the 0.25 % platform fee's transfer) priced on the curve read from the chain (curve and blockhash read together), signed by a funded dev key, sent straight to the localnet RPC, confirmed by polling \`getSignatureStatuses\` and read back with \`getTransaction\`. Measured slot over the phase: ${trades.measuredSlotMs.toFixed(0)} ms.`,
    "",
    ...tradeTable(trades),
    "",
    overhead(trades),
    "",
    ...pairedLine(trades),
    ...databasesSection(builds, trades, onServer),
    "#### Reading the numbers",
    "",
    `Both paths wait on the same chain: the transaction is confirmed when its slot closes (the 5 ms row: on average half a slot plus the localnet's own work), and the baseline sees it at its next status poll, while the engine reads the status the moment its own ingester delivers the transaction (\`ChainArrivals\`; its ${ENGINE_POLL_MS} ms poll is only the fallback): most of either figure is the slot, not the work; the 5 ms row is the floor. What the one-shot adds over the raw send is the engine's own path, in order: HTTP, the key's authentication with \`swap:write\` and the body's decoding; the idempotency lookup of \`clientTradeId\` (PGlite); the embedded wallet's address (cached after its first read); the venue and the wallet's holdings in one localnet RPC call (the curve, its pool, the wallet and its token account; over loopback HTTP to the localnet in the engine's process), where the baseline reads the curve and the blockhash together; the spend gate's USD valuation and hold under the key's lock (a SQL write); the blockhash read beside the build's address derivations; the embedded wallet's signature; the trade row recorded \`sending\` before the send (what makes a crash safe); the send; the attempt runner's status read (woken by the ingest stream) and the \`getTransaction\` read of the executed amount; and the row saved \`executed\` (booking the spend) before the answer.`,
    ""
  ]
  const text = section.join("\n") + "\n"
  process.stdout.write(text)
  if (!quick) writeBenchmarkSection("trade", text)
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
