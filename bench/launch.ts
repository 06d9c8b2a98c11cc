/**
 * Headless launches end to end on the Solana localnet (issue 10, "Measure"): the dry run's latency
 * (target p99 < 20 ms: bots call it before every launch) and launches from request to confirmed,
 * each side by side in the same run with a baseline on the same engine.
 *
 * The engine is the real entry point (`src/main.ts` through `test/support/engine.ts`), embedded
 * mode, `--quiet` (no market simulation), `HEADLESS_LAUNCH_ENABLED=true`, a fresh data dir, as the
 * local account's agent key (Max: 1,000 launches a day; every run stays far below). The Max plan's
 * 600 requests per minute per key would refuse the dry-run phase after 10 s, so the engine runs with
 * `PLAN_OVERRIDES` raising that one limit; the rate limiter still runs on every request.
 *
 * Dry run (one engine, the default slot): `POST /api/v1/launch/headless/dry-run` on Solana with a
 * 0.1 SOL dev buy (the full transaction is assembled and sized), a distinct `clientLaunchId` each,
 * against two baselines on the same listener and the same HTTP client:
 *   - `GET /api/v1/launch/headless/jobs/{unknown id}`: the same agent-key authentication (key
 *     cache, rate limiter, tier, scope) and one launch-ledger read, answered 404 `JOB_NOT_FOUND`;
 *     dry run − this is the dry run's own work (body decoding, the launch rules, the ledger, image
 *     and wallet reads, the transaction's assembly and sizing);
 *   - `GET /api/v1/launch/presets`: no key, a cached document: the listener's floor (loopback,
 *     uWS, router, this client).
 * Cases run in rounds, alternating their order, one in flight and then 8 in flight.
 *
 * Launches (one engine per localnet slot time, `BENCH_SLOTS`, default 400 then 100 ms): blocking
 * `POST /api/v1/launch/headless` (request sent → 200 with the confirmed result) at 1 and at 8 in
 * flight; `async: true` (request sent → 202, then the job polled every `BENCH_JOB_POLL_MS` until
 * `confirmed`); and the baseline: the same create-curve + dev-buy + fee transaction
 * (`launchTransactionInput` and `LaunchTransaction.ts` on the same decoded request, a funded dev
 * key as payer, a fresh mint) sent straight to the engine's localnet RPC, confirmed by polling
 * `getSignatureStatuses` every 250 ms like the engine (`SolanaLaunch` default) and read back with
 * `getTransaction` as the engine does; once more polling every 5 ms, which shows the chain's own
 * time to `confirmed` (the slot closing). The localnet runs inside the engine process, so "engine
 * CPU" counts the chain's work on both sides; the difference is the engine's. One-at-a-time rows
 * pause a random 0–1 slot before each launch (untimed, left out of the rate): back to back, each
 * launch would start just after the previous one's slot closed and always wait a whole slot.
 *
 * Run: `npm run bench:launch [-- --quick]`. Settings: `BENCH_DRY_RUNS` (per case and mode, default
 * 1000), `BENCH_LAUNCHES` (per launch case, default 40), `BENCH_SLOTS` (default `400,100`),
 * `BENCH_JOB_POLL_MS` (default 20), `BENCH_DATABASES` (`bench/databases.ts`: by default the dry run again on a throwaway PostgreSQL server where its binaries are installed). Prints a markdown section and, unless --quick, rewrites it
 * between the `launch` markers in docs/benchmarks.md (appended at the end when absent).
 * `-- --dry-run-only`: the dry-run phase alone; prints its table, writes nothing.
 * `BENCH_PROFILE_DIR=<dir>`: as --dry-run-only without the baselines, the engine under
 * `--cpu-prof` (its `.cpuprofile` lands in `<dir>` when it stops); `BENCH_PROFILE_CASE=job`: the
 * key-authenticated 404 job read alone instead (the keyed request's floor, issue 34);
 * `BENCH_PROFILE_CASE=launch`: as `-- --launches-only` under `--cpu-prof`.
 * `-- --launches-only`: blocking launches through the engine alone, `IN_FLIGHT` at once
 * (`BENCH_LAUNCHES` of them after as many warm-up launches as in flight), at the first slot time,
 * no dry runs and no baselines; prints one line (launches/s, latency, the engine's CPU per launch),
 * writes nothing. `BENCH_ENGINE_ROOT=<dir>`: the engine of another checkout with its own
 * `node_modules` (paired runs alternate it). Each engine's measured dry-run or launch
 * rounds print their bounds on the monotonic clock (`--from µs --to µs`, warm-up left out) for
 * `bench/cpuprofileSummary.ts`'s window.
 * `BENCH_BEFORE_ROOT=<dir>`: a checkout of an earlier commit with its own `node_modules` (e.g. the
 * last before the attempt runner, 4440a04): at the first slot time its engine runs beside this
 * one, both up at once, and the dry run and the launches run on each in turn (this one, then the
 * earlier, then the launches likewise), so the section compares them side by side in one run.
 * `BENCH_BEFORE_FIRST=1`: the earlier engine's dry runs first (paired `--dry-run-only` runs
 * alternate the order, so neither engine always runs on the warmer or the quieter machine).
 */
import {
  type Base64EncodedWireTransaction,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type KeyPairSigner,
  signature as asSignature,
  signTransactionMessageWithSigners
} from "@solana/kit"
import { Either } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { devSigner } from "../src/chain/solana/client/DevSigners.js"
import { assembleLaunchTransaction, isLaunchPlan, planLaunch } from "../src/chain/solana/launch/LaunchTransaction.js"
import { TREASURY_ADDRESS } from "../src/chain/solana/localnet/DevKeys.js"
import { DefaultDevBuyCeilings } from "../src/domain/Economics.js"
import { DefaultPlans } from "../src/domain/Plans.js"
import { hostedImagesPrefix } from "../src/services/images/HostedImageUrl.js"
import { decodeLaunchRequest } from "../src/services/launch/request/DecodeLaunchRequest.js"
import { launchTransactionInput, SolanaLaunchDefaults } from "../src/services/launch/SolanaLaunch.js"
import { type Engine, startEngine } from "../test/support/engine.js"
import { solidImage } from "../test/support/testImages.js"
import { chainConfirmedAt } from "./chainConfirmed.js"
import { benchDatabases, onPostgresServer, serverNote } from "./databases.js"
import { busyCorePct, clockTicksPerSec, cpuAtRest, machineCpu, processCpuSec } from "./http.js"
import { type BenchHttp, benchEngine, expectData, expectError, httpClient } from "./httpClient.js"
import { percentile } from "./pacedLoad.js"

const quick = process.argv.includes("--quick")
const envInt = (name: string, fallback: number): number => {
  const v = process.env[name]
  const n = v === undefined || v === "" ? fallback : Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number`)
  return n
}
const DRY_RUNS = quick ? 100 : envInt("BENCH_DRY_RUNS", 1000)
const DRY_WARMUP = quick ? 20 : 100
const LAUNCHES = quick ? 8 : envInt("BENCH_LAUNCHES", 40)
const SLOTS = (process.env.BENCH_SLOTS ?? "400,100").split(",").map((s) => Number(s.trim()))
const JOB_POLL_MS = envInt("BENCH_JOB_POLL_MS", 20)
/** How often an async launch's own transaction is polled on the chain (`getSignatureStatuses`) for its pairing. */
const CHAIN_POLL_MS = envInt("BENCH_CHAIN_POLL_MS", 2)
const ROUNDS = quick ? 1 : 4
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR
/** Which case a profiled run measures: `dry-run` (default) or `job` (the 404 job read). */
const PROFILE_CASE = process.env.BENCH_PROFILE_CASE ?? "dry-run"
if (PROFILE_CASE !== "dry-run" && PROFILE_CASE !== "job" && PROFILE_CASE !== "launch") throw new Error("BENCH_PROFILE_CASE must be dry-run, job or launch")
const PROFILE_LAUNCH = (PROFILE_DIR !== undefined && PROFILE_CASE === "launch") || process.argv.includes("--launches-only")
const DRY_RUN_ONLY = (PROFILE_DIR !== undefined && !PROFILE_LAUNCH) || process.argv.includes("--dry-run-only")
/** A checkout named by an env var (unset or empty: none), resolved. */
const rootFromEnv = (name: string): string | undefined => {
  const value = process.env[name]
  return value === undefined || value === "" ? undefined : path.resolve(value)
}
const ENGINE_ROOT = rootFromEnv("BENCH_ENGINE_ROOT")
const IN_FLIGHT = 8
/** The dev buy: 0.1 SOL, as the e2e test's launch. */
const DEV_BUY = "100000000"
/** The baseline's payer: a dev key no other part of an embedded engine signs with under --quiet. */
const BASELINE_DEV_KEY = 9
/** The daily cap of the local account's plan; a run must stay well below it. */
const MAX_DAILY_LAUNCHES = DefaultPlans.find((p) => p.id === "max")!.limits.launchesPerDay

const ticks = clockTicksPerSec()
const now = () => performance.now()
/** The monotonic clock in µs: the clock of V8's `.cpuprofile` timestamps (`bench/cpuprofileSummary.ts --from/--to`). */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")
const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))


// ---- measuring -------------------------------------------------------------------------------

/** An operation's latency; or, with a second figure (async: 202, then confirmed seen); and a third (async: the engine's confirmation over the chain's own). */
type Outcome = number | readonly [number, number] | readonly [number, number, number]

interface Tally {
  latencies: number[]
  /** A second latency per operation where a case has one (async: 202 → confirmed seen). */
  extra: number[]
  /**
   * Async launches, per launch: the engine's `confirmed` (the job's `updatedAt`) less the moment
   * this process first saw the same transaction `confirmed` on the chain (polled every
   * `CHAIN_POLL_MS`): what accepting and confirming through the engine adds to the chain's own
   * confirmation (issue 28 item 6, budget p99 < 30 ms).
   */
  added: number[]
  wallMs: number
  engineCpuSec: number
  /** What the engine burns at rest over the same wall time (its rate measured idle before the phase). */
  restCpuSec: number
  otherCpuCoreSec: number
  count: number
}

const emptyTally = (): Tally => ({ latencies: [], extra: [], added: [], wallMs: 0, engineCpuSec: 0, restCpuSec: 0, otherCpuCoreSec: 0, count: 0 })

/**
 * An engine's CPU at rest (cores busy, all threads) while nothing is asked of it: its localnet's
 * slots, flushes and timers. Measured per engine before each phase, so that two engines up at
 * once compare the work a request costs, not each one's idle background (the "before" engine
 * idles while this commit's is measured, and its background is charged to neither).
 */
const restRates = new Map<number, number>()
const REST_MS = Number(process.env.BENCH_REST_MS ?? 3_000)
const measureRest = async (pid: number): Promise<number> => {
  const rate = await cpuAtRest(pid, ticks, REST_MS)
  restRates.set(pid, rate)
  return rate
}
/** Engine CPU per operation, in ms: all of it, and net of the engine's rest rate over the same time. */
const cpuPerOp = (t: Tally): number => (t.engineCpuSec * 1000) / t.count
const netCpuPerOp = (t: Tally): number => ((t.engineCpuSec - t.restCpuSec) * 1000) / t.count

/**
 * Runs `op(i)` for `count` indices with `concurrency` in flight; each op returns its latency (and
 * optionally a second figure). Adds wall time, the engine's CPU and the rest of the machine's busy
 * time (not the engine, not this process) to the tally.
 */
const measure = async (
  tally: Tally,
  enginePid: number,
  count: number,
  concurrency: number,
  op: (i: number) => Promise<Outcome>,
  pauseMaxMs = 0
): Promise<void> => {
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
      const r = await op(i)
      if (typeof r === "number") tally.latencies.push(r)
      else {
        tally.latencies.push(r[0])
        tally.extra.push(r[1])
        if (r.length === 3) tally.added.push(r[2])
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  const wall = now() - t0
  const engineSec = processCpuSec(enginePid, ticks) - cpu0
  const self = process.cpuUsage(self0)
  const busyCoreSec = (busyCorePct(m0, machineCpu()) / 100) * (wall / 1000)
  // Pauses are not work: a rate is over the time spent launching.
  tally.wallMs += wall - pausedMs / Math.min(concurrency, count)
  tally.engineCpuSec += engineSec
  tally.restCpuSec += (restRates.get(enginePid) ?? 0) * (wall / 1000)
  tally.otherCpuCoreSec += Math.max(0, busyCoreSec - engineSec - (self.user + self.system) / 1e6)
  tally.count += count
}

interface Row {
  readonly label: string
  readonly inFlight: number
  readonly tally: Tally
}

const stats = (values: ReadonlyArray<number>) => {
  const s = [...values].sort((a, b) => a - b)
  return { p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[s.length - 1] ?? Number.NaN }
}

const perSecond = (t: Tally): number => (t.count * 1000) / t.wallMs
const otherPct = (t: Tally): string => `${Math.round((100 * t.otherCpuCoreSec * 1000) / t.wallMs)}%`
const enginePct = (t: Tally): string => `${Math.round((100 * t.engineCpuSec * 1000) / t.wallMs)}%`

// ---- the engine ---------------------------------------------------------------------------------

interface Session {
  readonly engine: Engine
  readonly pid: number
  readonly key: string
  readonly imageUrl: string
  readonly rpcUrl: string
  readonly http: BenchHttp
  /** The typed client without a key and with the agent key, over the same keep-alive agent. */
  readonly anon: ReturnType<typeof benchEngine>
  readonly agent: ReturnType<typeof benchEngine>
  /** Which engine, for the report: this commit's, the earlier checkout's, or on the server. */
  readonly label: string
}

/** The earlier engine's dry runs before this commit's (`BENCH_BEFORE_FIRST=1`), so paired runs can alternate the order. */
const BEFORE_FIRST = process.env.BENCH_BEFORE_FIRST === "1"
const BEFORE_ROOT = rootFromEnv("BENCH_BEFORE_ROOT")

const open = async (slotMs: number, databaseEnv: Record<string, string> = {}, root?: string, label?: string): Promise<Session> => {
  const engine = await startEngine({
    ...(root === undefined ? {} : { root }),
    env: {
      ...databaseEnv,
      HEADLESS_LAUNCH_ENABLED: "true",
      LOCALNET_SLOT_MS: String(slotMs),
      PLAN_OVERRIDES: JSON.stringify({ max: { limits: { requestsPerMin: 1_000_000 } } }),
      // Logs at info (the default): the harness takes the engine as started only on its own
      // listener's "listening on <url>" line (test/support/engine.ts), an info line.
      ...(PROFILE_DIR !== undefined ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.resolve(PROFILE_DIR)}` } : {})
    },
    args: ["--quiet"],
    readyTimeoutMs: 180_000
  })
  const key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  const rpcUrl = (JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }).solana.rpcUrl
  const http = httpClient(engine.url, IN_FLIGHT * 2)
  const anon = benchEngine(engine.url, http)
  const agent = benchEngine(engine.url, http, key)
  const png = await solidImage("png", 256, 256)
  // Raw bytes with an image content type; the document types a binary body as a string.
  const upload = { body: png as unknown as string, bodySerializer: (b: string) => b, headers: { "content-type": "image/png" } }
  const { imageUrl } = expectData("image upload", await agent.POST("/api/v1/uploads/agent-image", upload), 200)
  return { engine, pid: engine.child.pid!, key, imageUrl, rpcUrl, http, anon, agent, label: label ?? (root === undefined ? (Object.keys(databaseEnv).length === 0 ? "this commit's engine" : "this commit's engine on the server") : "the earlier engine") }
}

/** Each phase's rest rate, for the report: which engine, which phase, % of one core. */
const restLog: Array<string> = []
const restOf = async (s: Session, phase: string) => {
  const from = monotonicUs()
  const rate = await measureRest(s.pid)
  // The rest's bounds on the monotonic clock: a profile's background over the same engine's life, per µs.
  process.stderr.write(`bench: ${s.label} (pid ${s.pid}) at rest before the ${phase}: --from ${from} --to ${monotonicUs()}\n`)
  restLog.push(`${s.label} before the ${phase}: ${(rate * 100).toFixed(1)}% of a core`)
  process.stderr.write(`bench: ${s.label} at rest before the ${phase}: ${(rate * 100).toFixed(1)}% of a core\n`)
}

const close = async (s: Session) => {
  s.http.close()
  await s.engine.stop("SIGTERM")
  s.engine.cleanup()
}

const launchBody = (s: Session, id: string, n: number, extra: { readonly async?: boolean } = {}) => ({
  clientLaunchId: id,
  name: `Bench Launch ${n}`,
  symbol: `BL${n % 100_000}`,
  imageUrl: s.imageUrl,
  buyAmount: DEV_BUY,
  ...extra
})

// ---- dry run ------------------------------------------------------------------------------------

interface DryRunReport {
  readonly rows: ReadonlyArray<Row>
  readonly txBytes: number
}

const dryRunPhase = async (s: Session): Promise<DryRunReport> => {
  await restOf(s, "dry run")
  let txBytes = 0
  let seq = 0
  const timed = async (f: () => Promise<void>) => {
    const t0 = now()
    await f()
    return now() - t0
  }
  const allCases: ReadonlyArray<{ readonly label: string; readonly op: () => Promise<number> }> = [
    {
      label: "`GET /api/v1/launch/presets` (no key, cached document: the listener's floor)",
      op: () => timed(async () => void expectData("presets", await s.anon.GET("/api/v1/launch/presets"), 200))
    },
    {
      label: "`GET /api/v1/launch/headless/jobs/{unknown}` (agent key + `launch:read`, one ledger read, 404)",
      op: () =>
        timed(async () => {
          const body = expectError("job", await s.agent.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId: `none-${++seq}` } } }), 404)
          if (body.error?.code !== "JOB_NOT_FOUND") throw new Error(`job: expected JOB_NOT_FOUND, got ${JSON.stringify(body)}`)
        })
    },
    {
      label: "`POST /api/v1/launch/headless/dry-run` (Solana, 0.1 SOL dev buy: assembled and sized)",
      op: () =>
        timed(async () => {
          const n = ++seq
          const body = expectData("dry run", await s.agent.POST("/api/v1/launch/headless/dry-run", { body: launchBody(s, `dry-${n}`, n) }), 200)
          if (body.dryRun !== true || body.size?.fits !== true) throw new Error(`dry run: unexpected answer ${JSON.stringify(body)}`)
          txBytes = body.size.txBytes
        })
    }
  ]
  // Profiling: one case alone (the dry run, or with BENCH_PROFILE_CASE=job the 404 job read), so the profile holds nothing else.
  const cases = PROFILE_DIR === undefined ? allCases : PROFILE_CASE === "job" ? allCases.slice(1, 2) : allCases.slice(2)
  const rows: Row[] = []
  for (const inFlight of [1, IN_FLIGHT]) {
    const tallies = cases.map(() => emptyTally())
    for (const c of cases) await measure(emptyTally(), s.pid, DRY_WARMUP, inFlight, () => c.op())
    const from = monotonicUs()
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate the order so drift on a shared machine does not always favour one case.
      const order = cases.map((_, k) => k)
      if (r % 2 === 1) order.reverse()
      for (const k of order) await measure(tallies[k]!, s.pid, Math.ceil(DRY_RUNS / ROUNDS), inFlight, () => cases[k]!.op())
    }
    // The measured rounds' bounds on the monotonic clock, for a profile's window (warm-up left out).
    process.stderr.write(
      `bench: ${s.label} (pid ${s.pid}) dry-run phase, ${inFlight} in flight, ${Math.ceil(DRY_RUNS / ROUNDS) * ROUNDS} requests per case: --from ${from} --to ${monotonicUs()}\n`
    )
    cases.forEach((c, k) => rows.push({ label: c.label, inFlight, tally: tallies[k]! }))
  }
  return { rows, txBytes }
}

// ---- launches -----------------------------------------------------------------------------------

interface LaunchReport {
  readonly slotMs: number
  readonly measuredSlotMs: number
  readonly rows: ReadonlyArray<Row & { readonly path: "engine" | "async" | "baseline"; readonly note: string }>
  readonly launchesThroughEngine: number
}

/** The baseline: the engine's launch transaction for the same request, sent straight to the localnet. */
const baselineLauncher = async (s: Session) => {
  const rpc = createSolanaRpc(s.rpcUrl)
  const payer: KeyPairSigner = await devSigner(BASELINE_DEV_KEY)
  const feeBps = BigInt(DefaultPlans.find((p) => p.id === "max")!.feeBps)
  const settings = { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: `${s.engine.url}${hostedImagesPrefix}` }
  return async (n: number, pollMs: number): Promise<number> => {
    const decoded = decodeLaunchRequest(launchBody(s, `base-${n}`, n), { keyEnvironment: "production" }, settings)
    if (Either.isLeft(decoded)) throw new Error(`baseline request refused: ${JSON.stringify(decoded.left)}`)
    const r = decoded.right
    const t0 = now()
    const mint = await generateKeyPairSigner()
    const latest = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
    const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
    const input = launchTransactionInput({ request: r, payer: payer.address, platformFeeBps: feeBps, metadataUri: s.imageUrl }, payer, mint, TREASURY_ADDRESS, lifetime)
    if (input === undefined) throw new Error("baseline: not a Solana request")
    const plan = planLaunch(input.terms, input.devBuyRaw, input.platformFee)
    if (!isLaunchPlan(plan)) throw new Error(`baseline plan refused: ${plan.reason}`)
    const tx = await signTransactionMessageWithSigners((await assembleLaunchTransaction(input, plan)).message)
    const sig = asSignature(getSignatureFromTransaction(tx))
    await rpc.sendTransaction(getBase64EncodedWireTransaction(tx) as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" }).send()
    for (;;) {
      const status = (await rpc.getSignatureStatuses([sig]).send()).value[0]
      if (status != null && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized")) {
        if (status.err !== null) throw new Error(`baseline launch ${sig} failed on chain: ${JSON.stringify(status.err, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`)
        break
      }
      await sleep(pollMs)
    }
    const landed = await rpc.getTransaction(sig, { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send()
    if (landed === null) throw new Error(`baseline launch ${sig} confirmed but not readable`)
    return now() - t0
  }
}

const launchPhase = async (s: Session, slotMs: number): Promise<LaunchReport> => {
  await restOf(s, `launches, slot ${slotMs} ms`)
  const rpc = createSolanaRpc(s.rpcUrl)
  const baseline = await baselineLauncher(s)
  let seq = 0
  let throughEngine = 0

  const blocking = async (): Promise<number> => {
    const n = ++seq
    throughEngine++
    const t0 = now()
    const body = expectData("launch", await s.agent.POST("/api/v1/launch/headless", { body: launchBody(s, `blk-${n}`, n) }), 200)
    const t = now() - t0
    if (!("mint" in body) || body.success !== true || typeof body.mint !== "string" || body.devBuy?.signature !== body.signature) throw new Error(`launch: unexpected answer ${JSON.stringify(body)}`)
    return t
  }
  /** When this process first saw `sig` `confirmed` on the chain (`Date.now`, the engine's clock too), polled every `CHAIN_POLL_MS`. */
  const chainConfirmed = (sig: string): Promise<number> => chainConfirmedAt(rpc, sig, CHAIN_POLL_MS)
  const asynchronous = async (): Promise<Outcome> => {
    const n = ++seq
    throughEngine++
    const id = `asy-${n}`
    const t0 = now()
    expectData("async launch", await s.agent.POST("/api/v1/launch/headless", { body: launchBody(s, id, n, { async: true }) }), 202)
    const accepted = now() - t0
    // The chain's own confirmation of the launch's transaction, watched from the moment the job names it.
    let onChain: Promise<number> | undefined
    for (;;) {
      const { job } = expectData("job", await s.agent.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId: id } } }), 200)
      if (onChain === undefined && job.signature !== null) onChain = chainConfirmed(job.signature)
      if (job.status === "confirmed") {
        const seen = now() - t0
        if (onChain === undefined) throw new Error(`async launch ${id} confirmed without a signature: ${JSON.stringify(job)}`)
        return [accepted, seen, job.updatedAt - (await onChain)] as const
      }
      if (job.status === "failed") throw new Error(`async launch ${id} failed: ${JSON.stringify(job)}`)
      await sleep(JOB_POLL_MS)
    }
  }

  const enginePoll = SolanaLaunchDefaults.pollIntervalMs
  const cases: ReadonlyArray<{ readonly path: "engine" | "async" | "baseline"; readonly label: string; readonly note: string; readonly inFlight: number; readonly op: () => Promise<Outcome> }> = [
    { path: "engine", label: "engine, blocking", note: "request sent → 200 confirmed", inFlight: 1, op: blocking },
    { path: "baseline", label: `baseline, straight to the localnet (poll ${enginePoll} ms)`, note: "build → confirmed → read", inFlight: 1, op: () => baseline(++seq, enginePoll) },
    { path: "engine", label: "engine, blocking", note: "request sent → 200 confirmed", inFlight: IN_FLIGHT, op: blocking },
    { path: "baseline", label: `baseline, straight to the localnet (poll ${enginePoll} ms)`, note: "build → confirmed → read", inFlight: IN_FLIGHT, op: () => baseline(++seq, enginePoll) },
    { path: "async", label: `engine, async (job polled every ${JOB_POLL_MS} ms)`, note: "request sent → job `confirmed` seen (202 in the next column)", inFlight: 1, op: asynchronous },
    { path: "baseline", label: "baseline, straight to the localnet (poll 5 ms)", note: "the chain's own time to `confirmed`", inFlight: 1, op: () => baseline(++seq, 5) }
  ]
  if (PROFILE_LAUNCH) {
    // Profiling: the engine's blocking launches alone, IN_FLIGHT at once, after a warm-up of as many.
    await measure(emptyTally(), s.pid, IN_FLIGHT, IN_FLIGHT, blocking)
    const tally = emptyTally()
    const from = monotonicUs()
    await measure(tally, s.pid, LAUNCHES, IN_FLIGHT, blocking)
    process.stderr.write(`bench: ${s.label} (pid ${s.pid}) launches, ${IN_FLIGHT} in flight, ${LAUNCHES} launches: --from ${from} --to ${monotonicUs()}\n`)
    const row = { label: "engine, blocking", inFlight: IN_FLIGHT, tally, path: "engine" as const, note: "request sent → 200 confirmed" }
    return { slotMs, measuredSlotMs: slotMs, rows: [row], launchesThroughEngine: LAUNCHES + IN_FLIGHT }
  }
  // Warm-up: one of each (JIT, connections, the first blockhash).
  for (const c of cases) await measure(emptyTally(), s.pid, 1, 1, c.op)
  const slot0 = await rpc.getSlot({ commitment: "processed" }).send()
  const slotT0 = now()
  const tallies = cases.map(() => emptyTally())
  const rounds = quick ? 1 : 2
  for (let r = 0; r < rounds; r++) {
    const order = cases.map((_, k) => k)
    if (r % 2 === 1) order.reverse()
    // One at a time, a random pause of up to a slot before each launch (untimed): otherwise each
    // launch starts just after the previous one's slot closed and always waits a whole slot.
    for (const k of order) await measure(tallies[k]!, s.pid, Math.ceil(LAUNCHES / rounds), cases[k]!.inFlight, cases[k]!.op, cases[k]!.inFlight === 1 ? slotMs : 0)
  }
  const slot1 = await rpc.getSlot({ commitment: "processed" }).send()
  const measuredSlotMs = (now() - slotT0) / Number(slot1 - slot0)
  return {
    slotMs,
    measuredSlotMs,
    rows: cases.map((c, k) => ({ path: c.path, label: c.label, note: c.note, inFlight: c.inFlight, tally: tallies[k]! })),
    launchesThroughEngine: throughEngine
  }
}

// ---- report ---------------------------------------------------------------------------------------

interface BeforeReport {
  readonly root: string
  readonly commit: string
  readonly dry: DryRunReport
  readonly launches?: LaunchReport
}

const commitOf = (root: string): string => {
  const r = spawnSync("git", ["-C", root, "log", "-1", "--format=%h %ad %s", "--date=short"], { encoding: "utf8" })
  return r.status === 0 ? r.stdout.trim().slice(0, 120) : root
}

/** This commit's rows beside the earlier commit's: the dry run and the engine's launches, same cases. */
const beforeTable = (dry: DryRunReport, launch: LaunchReport | undefined, b: BeforeReport): string[] => {
  const lines = [
    "| Case | in flight | before p50 / p99 ms | now p50 / p99 ms | before engine CPU ms | now engine CPU ms | before CPU net of rest ms | now CPU net of rest ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  ]
  const row = (label: string, inFlight: number, was: Tally, is: Tally, asyncJob: boolean) => {
    const w = stats(asyncJob ? was.extra : was.latencies)
    const n = stats(asyncJob ? is.extra : is.latencies)
    lines.push(`| ${label} | ${inFlight} | ${ms(w.p50)} / ${ms(w.p99)} | ${ms(n.p50)} / ${ms(n.p99)} | ${ms(cpuPerOp(was))} | ${ms(cpuPerOp(is))} | ${ms(netCpuPerOp(was))} | ${ms(netCpuPerOp(is))} |`)
  }
  for (const r of dry.rows) {
    const w = b.dry.rows.find((x) => x.label === r.label && x.inFlight === r.inFlight)
    if (w !== undefined) row(r.label, r.inFlight, w.tally, r.tally, false)
  }
  if (launch !== undefined && b.launches !== undefined)
    for (const r of launch.rows) {
      if (r.path === "baseline") continue
      const w = b.launches.rows.find((x) => x.label === r.label && x.inFlight === r.inFlight)
      if (w !== undefined) row(`launch: ${r.label} (${r.note})`, r.inFlight, w.tally, r.tally, r.path === "async")
    }
  return lines
}

const dryRunTable = (d: DryRunReport): string[] => {
  const lines = [
    "| Case | in flight | requests | req/s | p50 | p90 | p99 | max | engine CPU ms/req | engine CPU | other CPU |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  ]
  for (const r of d.rows) {
    const st = stats(r.tally.latencies)
    lines.push(
      `| ${r.label} | ${r.inFlight} | ${r.tally.count} | ${perSecond(r.tally).toFixed(0)} | ${ms(st.p50)} | ${ms(st.p90)} | ${ms(st.p99)} | ${ms(st.max)} | ${ms((r.tally.engineCpuSec * 1000) / r.tally.count)} | ${enginePct(r.tally)} | ${otherPct(r.tally)} |`
    )
  }
  return lines
}

const launchTable = (l: LaunchReport): string[] => {
  const lines = [
    "| Path | in flight | launches | launches/s | p50 | p90 | p99 | max | 202 p50 / p99 | engine CPU ms/launch | other CPU | measures |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  ]
  for (const r of l.rows) {
    const st = stats(r.path === "async" ? r.tally.extra : r.tally.latencies)
    const accepted = r.path === "async" ? stats(r.tally.latencies) : undefined
    lines.push(
      `| ${r.label} | ${r.inFlight} | ${r.tally.count} | ${perSecond(r.tally).toFixed(2)} | ${ms(st.p50)} | ${ms(st.p90)} | ${ms(st.p99)} | ${ms(st.max)} | ${accepted === undefined ? "" : `${ms(accepted.p50)} / ${ms(accepted.p99)}`} | ${ms((r.tally.engineCpuSec * 1000) / r.tally.count)} | ${otherPct(r.tally)} | ${r.note} |`
    )
  }
  return lines
}

const overhead = (l: LaunchReport): string => {
  const find = (p: "engine" | "baseline", inFlight: number) => l.rows.find((r) => r.path === p && r.inFlight === inFlight && !r.label.includes("poll 5 ms"))!
  const parts = [1, IN_FLIGHT].map((c) => {
    const e = stats(find("engine", c).tally.latencies)
    const b = stats(find("baseline", c).tally.latencies)
    const cpu = (find("engine", c).tally.engineCpuSec / find("engine", c).tally.count - find("baseline", c).tally.engineCpuSec / find("baseline", c).tally.count) * 1000
    return `${c} in flight: p50 +${ms(e.p50 - b.p50)} ms, p99 +${ms(e.p99 - b.p99)} ms, engine CPU +${ms(cpu)} ms per launch`
  })
  return `Engine over the baseline at the same ${SolanaLaunchDefaults.pollIntervalMs} ms status polling: ${parts.join("; ")}.`
}

/** Issue 28 item 6's launch half: per async launch, the engine's confirmation over the chain's own, paired on the same transaction. */
const streamed = (l: LaunchReport): string => {
  const added = l.rows.find((r) => r.path === "async")!.tally.added
  const st = stats(added)
  return (
    `Accepted → confirmed over the chain's own (issue 28 item 6), paired per async launch: the job's \`updatedAt\` at \`confirmed\` (the engine's clock when it recorded the confirmation) less the moment this process first saw the same transaction \`confirmed\` on the chain, polling its status every ${CHAIN_POLL_MS} ms from when the job named its signature (so a figure can be negative by up to about the poll and one RPC round trip): ` +
    `${added.length} launches, p50 ${ms(st.p50)} ms, p90 ${ms(st.p90)} ms, p99 ${ms(st.p99)} ms, max ${ms(st.max)} ms. Budget p99 < 30 ms: **${st.p99 < 30 ? "met" : "not met"}**.`
  )
}

const main = async () => {
  if (SLOTS.some((x) => !Number.isSafeInteger(x) || x <= 0)) throw new Error("BENCH_SLOTS must list positive whole ms")
  // Launches alone compare engines run by run (BENCH_ENGINE_ROOT), not side by side.
  if (PROFILE_LAUNCH && BEFORE_ROOT !== undefined) throw new Error("--launches-only (and BENCH_PROFILE_CASE=launch) runs one engine: pair runs with BENCH_ENGINE_ROOT, not BENCH_BEFORE_ROOT")
  const startedAt = now()
  const loadStart = loads()
  const launchesPerEngine = PROFILE_LAUNCH ? LAUNCHES + IN_FLIGHT : 4 * LAUNCHES + 8
  if (launchesPerEngine > MAX_DAILY_LAUNCHES / 4) throw new Error(`BENCH_LAUNCHES too high: ${launchesPerEngine} launches per engine against a daily cap of ${MAX_DAILY_LAUNCHES}`)
  let dry: DryRunReport | undefined
  const launches: LaunchReport[] = []
  let before: BeforeReport | undefined
  for (const slotMs of DRY_RUN_ONLY || PROFILE_LAUNCH ? SLOTS.slice(0, 1) : SLOTS) {
    process.stderr.write(`bench: engine with LOCALNET_SLOT_MS=${slotMs} (load ${loads()})\n`)
    const s = await open(slotMs, {}, ENGINE_ROOT, ENGINE_ROOT === undefined ? undefined : `the engine of ${ENGINE_ROOT}`)
    // The earlier commit's engine, up beside this one for the first slot time's phases (this one
    // stopped if that one does not start).
    const b = BEFORE_ROOT !== undefined && before === undefined ? await open(slotMs, {}, BEFORE_ROOT).catch(async (e) => (await close(s), Promise.reject(e))) : undefined
    try {
      if (dry === undefined && !PROFILE_LAUNCH) {
        // With BENCH_BEFORE_FIRST=1 the earlier engine's dry runs go first (paired runs alternate it).
        const beforeDry = async () => {
          process.stderr.write(`bench: dry runs, before (load ${loads()})\n`)
          before = { root: BEFORE_ROOT!, commit: commitOf(BEFORE_ROOT!), dry: await dryRunPhase(b!) }
        }
        if (b !== undefined && BEFORE_FIRST) await beforeDry()
        process.stderr.write(`bench: dry runs (load ${loads()})\n`)
        dry = await dryRunPhase(s)
        if (b !== undefined && !BEFORE_FIRST) await beforeDry()
      }
      if (DRY_RUN_ONLY) continue
      process.stderr.write(`bench: launches (load ${loads()})\n`)
      launches.push(await launchPhase(s, slotMs))
      if (b !== undefined && before !== undefined) {
        process.stderr.write(`bench: launches, before (load ${loads()})\n`)
        before = { ...before, launches: await launchPhase(b, slotMs) }
      }
    } finally {
      if (b !== undefined) await close(b)
      await close(s)
    }
  }
  if (PROFILE_LAUNCH) {
    const t = launches[0]!.rows[0]!.tally
    const st = stats(t.latencies)
    console.log(`launches through the engine${ENGINE_ROOT === undefined ? "" : ` of ${ENGINE_ROOT}`}, ${IN_FLIGHT} in flight, slot ${SLOTS[0]} ms: ${t.count} in ${ms(t.wallMs)} ms (${((t.count * 1000) / t.wallMs).toFixed(2)}/s), p50 ${ms(st.p50)} ms, p99 ${ms(st.p99)} ms, engine CPU ${cpuPerOp(t).toFixed(1)} ms per launch (net of rest ${netCpuPerOp(t).toFixed(1)})`)
    return
  }
  // The dry run again on the PostgreSQL server (issue 34 item 3): what the embedded default costs.
  let onServer: { readonly dry: DryRunReport; readonly version: string } | undefined
  if (PROFILE_DIR === undefined && benchDatabases().includes("postgres")) {
    process.stderr.write(`bench: dry runs on the PostgreSQL server (load ${loads()})\n`)
    onServer = await onPostgresServer(async (env, version) => {
      const s = await open(SLOTS[0]!, env)
      try {
        return { dry: await dryRunPhase(s), version }
      } finally {
        await close(s)
      }
    })
  }
  const cpu = os.cpus()
  const dryRow = dry!.rows.filter((r) => r.label.includes("dry-run"))
  const dryVerdict = dryRow
    .map((r) => {
      const p99 = stats(r.tally.latencies).p99
      return `${r.inFlight === 1 ? "one" : r.inFlight} in flight p99 ${ms(p99)} ms, **${p99 < 20 ? "met" : "not met"}**`
    })
    .join("; ")
  const section = [
    "## Headless launches (`bench/launch.ts`)",
    "",
    `- Date: ${new Date().toISOString()} (took ${((now() - startedAt) / 1000).toFixed(0)} s); command: \`npm run bench:launch${quick ? " -- --quick" : ""}\``,
    `- Machine: ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()} ${os.arch()}; Node ${process.version}`,
    `- Load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}.`,
    "- The engine is `src/main.ts` in embedded mode (`--quiet`: no market simulation; `HEADLESS_LAUNCH_ENABLED=true`; a fresh data dir; PGlite, the embedded bus, the Solana localnet in the same process), started by `test/support/engine.ts`; requests come from this process over loopback (keep-alive `node:http`), as the local account's agent key (Max). `PLAN_OVERRIDES` lifts Max's 600 requests/min so the dry-run phase is not refused; the limiter still runs on every request.",
    "",
    "### Dry run",
    "",
    `${DRY_RUNS} requests per case and mode (${ROUNDS} round(s), the cases' order alternating, after ${DRY_WARMUP} warm-up requests each), a distinct \`clientLaunchId\` per dry run; the Solana transaction is ${dry!.txBytes} bytes of 1,232. Times in ms from the request written to the whole answer read. "engine CPU" is the engine process's CPU (all threads) over the case; "other CPU" is the machine's busy time not charged to the engine or this process (this VM's other tenants), both in % of one core.`,
    "",
    ...dryRunTable(dry!),
    "",
    `Target: dry-run p99 < 20 ms. Measured: ${dryVerdict}.`,
    "",
    ...(onServer === undefined
      ? []
      : [
          "#### The same on the PostgreSQL server",
          "",
          `The same cases, in the same run, on ${serverNote(onServer.version)}. "engine CPU" counts PGlite's worker thread above (it is in the engine's process) but not the server's backends here, which show in "other CPU".`,
          "",
          ...dryRunTable(onServer.dry),
          ""
        ]),
    "### Launches",
    "",
    `Each launch: a 0.1 SOL dev buy on the SOL pair (create_curve, the payer's token account, the buy and the 0.25% platform fee in one transaction), distinct \`clientLaunchId\`s; ${LAUNCHES} launches per row in ${quick ? 1 : 2} round(s) (order reversed in the second) after one warm-up each. One-at-a-time rows pause a random 0–1 slot before each launch (not timed, not counted in launches/s), so launches arrive at random points of the slot rather than locked to its clock. The engine reads a launch's status the moment its own ingester delivers the transaction (\`ChainArrivals\`), with a \`getSignatureStatuses\` poll every ${SolanaLaunchDefaults.pollIntervalMs} ms as the fallback; the localnet confirms a transaction when its slot closes.`,
    ""
  ]
  for (const l of launches) {
    section.push(
      `#### Localnet slot ${l.slotMs} ms (\`LOCALNET_SLOT_MS=${l.slotMs}\`; measured ${l.measuredSlotMs.toFixed(0)} ms per slot over the phase; ${l.launchesThroughEngine} launches through the engine, daily cap ${MAX_DAILY_LAUNCHES})`,
      "",
      ...launchTable(l),
      "",
      overhead(l),
      "",
      streamed(l),
      ""
    )
  }
  if (before !== undefined)
    section.push(
      "### Before the attempt runner, side by side",
      "",
      `The same dry-run cases and the engine's launch rows at slot ${SLOTS[0]} ms, in this run, on an engine started from another checkout (\`BENCH_BEFORE_ROOT\`: ${before.commit}), up at the same time as this commit's; the dry run ran on ${BEFORE_FIRST ? "the earlier engine first, then on this commit's" : "this commit's engine first, then on the earlier one's"}, the launches on this commit's first. The rows above are this commit's.`,
      "",
      ...beforeTable(dry!, launches[0], before),
      "",
      `"CPU net of rest" subtracts, over each case's wall time, the CPU the same engine burned at rest (nothing asked of it for ${REST_MS} ms) just before the phase: ${restLog.join("; ")}.`,
      ""
    )
  const text = section.join("\n") + "\n"
  process.stdout.write(text)
  if (!quick && !DRY_RUN_ONLY) {
    const doc = path.join(import.meta.dirname, "..", "docs", "benchmarks.md")
    const current = existsSync(doc) ? readFileSync(doc, "utf8") : "# Benchmarks\n"
    const block = `<!-- launch:begin -->\n${text}<!-- launch:end -->`
    const re = /<!-- launch:begin -->[\s\S]*<!-- launch:end -->/
    writeFileSync(doc, re.test(current) ? current.replace(re, block) : `${current.trimEnd()}\n\n${block}\n`)
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
