/**
 * Spans and SQL statements per request on the engine's write routes' dry runs (issue 27: "the
 * runner must not cost latency"): the engine starts with `bench/spanCounter.mjs` preloaded, which
 * counts every span Effect's tracer opens by name (`Effect.fn`/`withSpan` spans; `sql.execute`, one
 * per SQL statement); after a warm-up the counts are read before and after `n` requests of each
 * case, one in flight, and printed per request, by name.
 *
 * Cases: `GET /api/v1/launch/headless/jobs/{unknown}` (the key-authenticated floor: one ledger
 * read), `POST /api/v1/launch/headless/dry-run` (Solana, 0.1 SOL dev buy, as `bench/launch.ts`)
 * and, with `--trade`, `POST /api/v1/trade/agent/build` with `dryRun: true` (as `bench/trade.ts`,
 * on a token the engine launched first) and the one-shot `POST /api/v1/trade/agent/submit` (payer main, blocking), and with `--atomic` `POST /api/v1/launch/atomic/build` with four
 * main-payer legs (as `bench/atomicBundle.ts`), and with `--launch` `POST /api/v1/launch/headless` itself
 * (blocking: a launch with a 0.1 SOL dev buy, sent and confirmed; the statements of the whole launch,
 * its confirmation and the market it creates, background included).
 *
 * Run: `npx tsx bench/spanCount.ts [--trade] [--atomic] [--launch] [--n 200]`; `BENCH_BEFORE_ROOT=<dir>`: the engine of
 * another checkout with its own `node_modules` instead (its Effect is the one counted). Writes
 * nothing but its table (stdout).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DefaultPlans } from "../src/domain/Plans.js"
import { startEngine } from "../test/support/engine.js"
import { solidImage } from "../test/support/testImages.js"
import { benchEngine, expectData, expectError, httpClient } from "./httpClient.js"

const args = process.argv.slice(2)
const nAt = args.indexOf("--n")
const N = nAt < 0 ? 200 : Number(args[nAt + 1])
const WARMUP = 30
const trade = args.includes("--trade")
const atomic = args.includes("--atomic")
const launch = args.includes("--launch")
// The local account is on Max: its launches a day bound the cases that take one (a launch, an
// atomic build's daily-cap slot; warm-up included) and --trade's token.
const launchesPerDay = DefaultPlans.find((p) => p.id === "max")!.limits.launchesPerDay
const launchesNeeded = (launch ? WARMUP + N : 0) + (atomic ? WARMUP + N : 0) + (trade ? 1 : 0)
if (launchesNeeded > launchesPerDay) throw new Error(`--n ${N}: ${launchesNeeded} launches against Max's ${launchesPerDay} a day`)
const root = process.env.BENCH_BEFORE_ROOT === undefined || process.env.BENCH_BEFORE_ROOT === "" ? undefined : path.resolve(process.env.BENCH_BEFORE_ROOT)

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
type Counts = Record<string, number>

const main = async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "span-count-"))
  const countFile = path.join(dir, "counts.json")
  const engine = await startEngine({
    ...(root === undefined ? {} : { root }),
    env: {
      HEADLESS_LAUNCH_ENABLED: "true",
      PLAN_OVERRIDES: JSON.stringify({ max: { limits: { requestsPerMin: 1_000_000 } } }),
      NODE_OPTIONS: `--import ${pathToUrl(path.resolve("bench/spanCounter.mjs"))}`,
      SPAN_COUNT_FILE: countFile
    },
    args: ["--quiet"],
    readyTimeoutMs: 480_000
  })
  const http = httpClient(engine.url, 2)
  try {
    const key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
    const agent = benchEngine(engine.url, http, key)
    const anon = benchEngine(engine.url, http)
    const png = await solidImage("png", 256, 256)
    const upload = { body: png as unknown as string, bodySerializer: (b: string) => b, headers: { "content-type": "image/png" } }
    const { imageUrl } = expectData("image upload", await agent.POST("/api/v1/uploads/agent-image", upload), 200)
    let seq = 0
    /** A Solana launch with a 0.1 SOL dev buy, id `<prefix>-<n>` (the dry run's and the launch's body). */
    const launchBody = (prefix: string, n: number) => ({ clientLaunchId: `${prefix}-${n}`, name: `Bench Launch ${n}`, symbol: `BL${n % 100_000}`, imageUrl, buyAmount: "100000000" })
    const cases: Array<{ label: string; op: () => Promise<void> }> = [
      {
        label: "GET /api/v1/launch/headless/jobs/{unknown} (404)",
        op: async () => void expectError("job", await agent.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId: `none-${++seq}` } } }), 404)
      },
      {
        label: "POST /api/v1/launch/headless/dry-run (Solana, 0.1 SOL dev buy)",
        op: async () => {
          const n = ++seq
          expectData("dry run", await agent.POST("/api/v1/launch/headless/dry-run", { body: launchBody("dry", n) }), 200)
        }
      }
    ]
    if (atomic) {
      const SOL = 1_000_000_000n
      const firstBuys = [SOL / 2n, SOL, 2n * SOL, SOL / 3n].map((a) => ({ payer: { type: "main" as const }, amountRaw: a.toString() }))
      cases.push({
        label: "POST /api/v1/launch/atomic/build (4 main-payer legs)",
        op: async () => {
          const n = ++seq
          const body = { clientLaunchId: `atomic-${n}`, name: "Bench Atomic", symbol: "BATM", imageUrl, payer: { type: "main" as const }, firstBuys }
          expectData("atomic build", await agent.POST("/api/v1/launch/atomic/build", { body }), 200)
        }
      })
    }
    if (launch) {
      cases.push({
        label: "POST /api/v1/launch/headless (Solana, 0.1 SOL dev buy, blocking: sent and confirmed)",
        op: async () => {
          const n = ++seq
          expectData("launch", await agent.POST("/api/v1/launch/headless", { body: launchBody("launch", n) }), 200)
        }
      })
    }
    if (trade) {
      const launched = expectData("launch", await agent.POST("/api/v1/launch/headless", { body: { clientLaunchId: "span-trade-token", name: "Span Trade", symbol: "STR", imageUrl } }), 200)
      const mint = (launched as { mint: string }).mint
      const deadline = Date.now() + 60_000
      while ((await anon.GET("/api/v1/markets/{chain}/{mint}", { params: { path: { chain: "solana", mint } } })).response.status !== 200) {
        if (Date.now() > deadline) throw new Error(`the market ${mint} never showed`)
        await sleep(50)
      }
      cases.push({
        label: "POST /api/v1/trade/agent/build (dryRun, buy 0.01 SOL)",
        op: async () => {
          const n = ++seq
          const body = { clientTradeId: `build-${n}`, chain: "solana" as const, mint, side: "buy" as const, amountIn: String(10_000_000 + n), slippageBps: 300, dryRun: true }
          expectData("build", await agent.POST("/api/v1/trade/agent/build", { body }), 200)
        }
      })
      cases.push({
        label: "POST /api/v1/trade/agent/submit (payer main, blocking: buy 0.01 SOL signed, sent and executed)",
        op: async () => {
          const n = ++seq
          const body = { clientTradeId: `submit-${n}`, chain: "solana" as const, mint, side: "buy" as const, amountIn: String(10_000_000 + n), slippageBps: 300 }
          expectData("submit", await agent.POST("/api/v1/trade/agent/submit", { body }), 200)
        }
      })
    }
    const snapshot = async (): Promise<Counts> => {
      rmSync(countFile, { force: true })
      process.kill(engine.child.pid!, "SIGUSR2")
      for (let i = 0; i < 200; i++) {
        try {
          return JSON.parse(readFileSync(countFile, "utf8")) as Counts
        } catch {
          await sleep(10)
        }
      }
      throw new Error("the engine never wrote its span counts (is bench/spanCounter.mjs preloaded?)")
    }
    for (const c of cases) {
      for (let i = 0; i < WARMUP; i++) await c.op()
      const a = await snapshot()
      for (let i = 0; i < N; i++) await c.op()
      const b = await snapshot()
      const per = Object.entries(b)
        .map(([name, v]) => [name, (v - (a[name] ?? 0)) / N] as const)
        .filter(([, v]) => v > 0)
        .sort((x, y) => y[1] - x[1])
      const total = per.reduce((s, [name, v]) => (name.startsWith("  sql:") ? s : s + v), 0)
      const sql = per.find(([name]) => name === "sql.execute")?.[1] ?? 0
      process.stdout.write(`\n${c.label}: ${N} requests, one in flight${root === undefined ? "" : ` (engine from ${root})`}\n`)
      process.stdout.write(`spans per request ${total.toFixed(2)} (of which sql.execute ${sql.toFixed(2)}, each statement below as "sql: …"); by name (background spans over the window included):\n`)
      for (const [name, v] of per) process.stdout.write(`  ${v.toFixed(2).padStart(7)}  ${name}\n`)
    }
  } finally {
    http.close()
    await engine.stop("SIGTERM")
    engine.cleanup()
    rmSync(dir, { recursive: true, force: true })
  }
}

const pathToUrl = (p: string) => new URL(`file://${p}`).href

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  process.exit(1)
})
