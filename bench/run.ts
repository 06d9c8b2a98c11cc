/**
 * `npm run bench`: the curve-math baseline and the HTTP read path (uWS against node:http), in one
 * run, then the results rewritten into docs/benchmarks.md between `<!-- bench:begin -->` and
 * `<!-- bench:end -->` (the rest of the document is kept), compared with DESIGN.md's budgets.
 *
 * Flags: `--quick` (2 s cases, 1 s warm-ups; prints the section and leaves the document alone
 * unless `--write` is also given), `--write`, `--no-write`.
 * Environment: `BENCH_SECONDS` (measured seconds per case, default 10), `BENCH_WARMUP_SECONDS`
 * (default 2), `BENCH_CONNECTIONS` (default 50), `BENCH_RATE` (open-loop rate, default 20000),
 * `BENCH_PIN=0` (do not pin processes to cores). For shared machines: `BENCH_MAX_OTHER_CPU`
 * (default 25: % of one core other work may use during a measurement before it is repeated),
 * `BENCH_ATTEMPTS` (default 3 per measurement, the least disturbed kept and flagged if still
 * disturbed), `BENCH_QUIET_WAIT_SECONDS` (default 60: longest wait for quiet before the run, and
 * up to 10 s before each measurement; 0 skips waiting).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import { type CurveCaseResult, runCurveBench } from "./curve.js"
import {
  type Attempts,
  awaitQuiet,
  BARE_CASE,
  backgroundBusyCorePct,
  type HttpBenchReport,
  type HttpCaseResult,
  HTTP_CASES,
  PACED_CASE,
  runHttpBench,
  type ServerKind
} from "./http.js"

const BEGIN = "<!-- bench:begin -->"
const END = "<!-- bench:end -->"
const DOC = fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url))
const ROOT = fileURLToPath(new URL("../", import.meta.url))

/** Budgets from DESIGN.md "Performance budgets" that apply to the read path. */
const READ_P99_BUDGET_MS = 1
const READ_RATE_BUDGET = 20_000
const READ_THROUGHPUT_RATIO_BUDGET = 3

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const write = argv.includes("--write") || (!quick && !argv.includes("--no-write"))

const envNumber = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0 (got '${raw}')`)
  return n
}

const seconds = envNumber("BENCH_SECONDS", quick ? 2 : 10)
const warmupSeconds = envNumber("BENCH_WARMUP_SECONDS", quick ? 1 : 2)
const connections = envNumber("BENCH_CONNECTIONS", 50)
const pacedRate = envNumber("BENCH_RATE", READ_RATE_BUDGET)
const pin = process.env.BENCH_PIN !== "0"
const quietWaitSeconds = envNumber("BENCH_QUIET_WAIT_SECONDS", 60)
const maxOtherCpuPct = envNumber("BENCH_MAX_OTHER_CPU", 25)
const maxAttempts = Math.max(1, Math.floor(envNumber("BENCH_ATTEMPTS", 3)))

const log = (line: string) => process.stderr.write(`${line}\n`)

// ---- formatting ---------------------------------------------------------------------------------

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a")
const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const ms = (n: number) => (!Number.isFinite(n) ? "n/a" : n < 10 ? n.toFixed(3) : n.toFixed(1))
const ratio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : "n/a")
const pct = (n: number) => (Number.isFinite(n) ? `${Math.round(n)}%` : "n/a")
const other = (n: number, a: Attempts) =>
  `${pct(n)}${a.disturbed ? " ⚠" : ""}${a.attempts > 1 ? ` (${a.attempts} runs)` : ""}`

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, align?: ReadonlyArray<"l" | "r">): string => {
  const sep = head.map((_, i) => ((align?.[i] ?? "r") === "l" ? "---" : "---:"))
  return [head, sep, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n")
}

const packageVersion = (name: string): string => {
  try {
    return (JSON.parse(readFileSync(`${ROOT}node_modules/${name}/package.json`, "utf8")) as { version: string }).version
  } catch {
    return "?"
  }
}

const osName = (): string => {
  let distro = ""
  try {
    distro = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? ""
  } catch {
    /* not Linux */
  }
  return `${distro === "" ? os.type() : distro} (${os.type()} ${os.release()}, ${os.arch()})`
}

const command = (): string => {
  const env = [
    "BENCH_SECONDS", "BENCH_WARMUP_SECONDS", "BENCH_CONNECTIONS", "BENCH_RATE", "BENCH_PIN",
    "BENCH_MAX_OTHER_CPU", "BENCH_ATTEMPTS", "BENCH_QUIET_WAIT_SECONDS"
  ]
    .filter((k) => process.env[k] !== undefined)
    .map((k) => `${k}=${process.env[k]} `)
    .join("")
  const base = process.env.npm_lifecycle_event === "bench" ? `npm run bench${argv.length > 0 ? " --" : ""}` : "npx tsx bench/run.ts"
  return `${env}${base}${argv.length > 0 ? ` ${argv.join(" ")}` : ""}`
}

// ---- the run --------------------------------------------------------------------------------------

interface Background {
  readonly waitedSec: number
  readonly busyCorePct: number
}

const find = (rows: ReadonlyArray<HttpCaseResult>, kind: ServerKind, name: string) =>
  rows.find((r) => r.server === kind && r.caseName === name)

const SERVER_NAMES: Record<ServerKind, string> = {
  uws: "uWS",
  node: "node:http",
  "uws-bare": "uWS, bare",
  "node-bare": "node:http, bare"
}

const renderSection = (
  startedAt: Date,
  durationSec: number,
  background: Background,
  curve: ReadonlyArray<CurveCaseResult>,
  http: HttpBenchReport
): string => {
  const cpu = os.cpus()
  const s = http.settings
  const out: string[] = []
  out.push(`_Generated by \`bench/run.ts\`; everything between the bench markers is rewritten on each run._`)
  out.push("")
  out.push(`## Run`)
  out.push("")
  out.push(`- Date: ${startedAt.toISOString()} (took ${Math.round(durationSec)} s)`)
  out.push(`- Command: \`${command()}\``)
  out.push(`- Machine: ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${fixed(os.totalmem() / 2 ** 30, 1)} GiB RAM, ${osName()}`)
  out.push(`- Runtime: Node ${process.version}; uWS \`uws-pack\` ${packageVersion("uws-pack")}; effect ${packageVersion("effect")}; autocannon ${packageVersion("autocannon")}`)
  out.push(`- Placement: ${s.placement}.`)
  out.push(
    `- Background load before the run: ${pct(background.busyCorePct)} of one core busy with other work` +
      (background.waitedSec >= 3 ? ` (after waiting ${Math.round(background.waitedSec)} s for quiet)` : "") +
      `. The "other CPU" columns below show the same during each measurement.`
  )
  out.push("")
  if (cpu.length <= 2) {
    out.push(
      `> This machine has ${cpu.length} cores: the load generator and the server compete for them. The generator is kept ` +
        `to one thread (autocannon without workers) and, with pinning, each side owns one core, so a server can use at ` +
        `most one core. When the server's CPU stays well under 100% the generator, not the server, set the ceiling, and ` +
        `the requests/s ratio understates the server difference; the server CPU per request (server CPU time ÷ ` +
        `requests) is the number that does not depend on the generator.`
    )
    out.push("")
  }

  out.push(`## HTTP read path: uWS against node:http, same handlers`)
  out.push("")
  out.push(
    `Same \`RouteDef\` table (\`bench/routes.ts\`: launch configuration, plans, probes, OpenAPI, as \`src/main.ts\` builds ` +
      `them) served by \`api/Server.ts\` (uWS) and by \`bench/nodeHttpAdapter.ts\` (node:http). autocannon ${packageVersion("autocannon")}: ` +
      `${s.connections} connections, pipelining ${s.pipelining}, ${s.seconds} s per case after a ${s.warmupSeconds} s warm-up, ` +
      `a fresh server process per measurement. Latency in ms, from every response (autocannon's own histogram has whole-ms resolution).`
  )
  out.push("")
  const rows: string[][] = []
  for (const c of HTTP_CASES) {
    const u = find(http.cases, "uws", c.name)
    const n = find(http.cases, "node", c.name)
    for (const r of [u, n]) {
      if (r === undefined) continue
      rows.push([
        `\`GET ${c.path}\`${c.conditional ? " + If-None-Match" : ""}`,
        SERVER_NAMES[r.server],
        int(r.requestsPerSec),
        ms(r.latencyMs.p50),
        ms(r.latencyMs.p99),
        ms(r.latencyMs.max),
        `${r.errors} / ${r.non2xx} / ${r.unexpectedStatus}`,
        pct(r.serverCpuPct),
        fixed(r.serverCpuUsPerRequest, 1),
        pct(r.generatorCpuPct),
        other(r.otherCpuPct, r.attempts)
      ])
    }
  }
  out.push(
    table(
      ["Case", "Server", "req/s", "p50", "p99", "max", "errors / non-2xx / not expected", "server CPU", "server CPU µs/req", "generator CPU", "other CPU"],
      rows,
      ["l", "l"]
    )
  )
  out.push("")
  out.push(
    `"non-2xx" counts 304s, which are the expected answer in the If-None-Match case; "not expected" counts responses ` +
      `whose status was not the case's (200, 304, 200). CPU columns are in % of one core; "other CPU" is the machine's ` +
      `busy time not charged to the server or the generator (kernel work, other tenants). A measurement during which ` +
      `other work used more than ${s.maxOtherCpuPct}% of a core is repeated (${s.maxAttempts} runs at most, the least ` +
      `disturbed kept); ⚠ marks one that stayed disturbed.`
  )
  out.push("")
  const ratioRows = HTTP_CASES.map((c) => {
    const u = find(http.cases, "uws", c.name)
    const n = find(http.cases, "node", c.name)
    return [
      c.name,
      ratio((u?.requestsPerSec ?? Number.NaN) / (n?.requestsPerSec ?? Number.NaN)),
      ratio((n?.serverCpuUsPerRequest ?? Number.NaN) / (u?.serverCpuUsPerRequest ?? Number.NaN))
    ]
  })
  out.push(table(["Case", "uWS / node req/s", "node / uWS server CPU per request"], ratioRows, ["l"]))
  out.push("")

  out.push(`### Calibration: the servers without our router`)
  out.push("")
  out.push(
    `\`bench/serve.ts uws-bare|node-bare\`: each server answers every request with /healthz's body straight from its ` +
      `request callback, no route table, no \`Request\` object, same settings as above. This is what the published ` +
      `hello-world figures behind the budget measure, taken on this machine; the healthz rows above less these rows ` +
      `are what our router and adapter add.`
  )
  out.push("")
  const ub = find(http.calibration, "uws-bare", BARE_CASE.name)
  const nb = find(http.calibration, "node-bare", BARE_CASE.name)
  const uh = find(http.cases, "uws", "healthz")
  const nh = find(http.cases, "node", "healthz")
  out.push(
    table(
      ["Server", "req/s", "p50", "p99", "server CPU", "server CPU µs/req", "router adds µs/req (healthz − bare)", "other CPU"],
      [
        [ub, uh],
        [nb, nh]
      ].flatMap(([bare, routed]) =>
        bare === undefined
          ? []
          : [[
              SERVER_NAMES[bare.server],
              int(bare.requestsPerSec),
              ms(bare.latencyMs.p50),
              ms(bare.latencyMs.p99),
              pct(bare.serverCpuPct),
              fixed(bare.serverCpuUsPerRequest, 1),
              fixed((routed?.serverCpuUsPerRequest ?? Number.NaN) - bare.serverCpuUsPerRequest, 1),
              other(bare.otherCpuPct, bare.attempts)
            ]]
      ),
      ["l"]
    )
  )
  out.push("")
  const bareRpsRatio = (ub?.requestsPerSec ?? Number.NaN) / (nb?.requestsPerSec ?? Number.NaN)
  const bareCpuRatio = (nb?.serverCpuUsPerRequest ?? Number.NaN) / (ub?.serverCpuUsPerRequest ?? Number.NaN)
  out.push(`Bare uWS / bare node:http: ${ratio(bareRpsRatio)} req/s, ${ratio(bareCpuRatio)} by server CPU per request.`)
  out.push("")

  out.push(`### Latency at a fixed rate (open loop)`)
  out.push("")
  out.push(
    `\`GET ${PACED_CASE.path}\` (200, full body) at ${int(s.pacedRatePerSec)} req/s for ${s.seconds} s after a ${s.warmupSeconds} s ` +
      `warm-up, over up to ${s.connections} keep-alive connections, one request in flight each (\`bench/pacedLoad.ts\`). ` +
      `Latency runs from each request's scheduled time, so a stall is charged for every request it delayed.`
  )
  out.push("")
  out.push(
    table(
      ["Server", "target req/s", "achieved req/s", "p50", "p90", "p99", "p99.9", "max", "errors / not 200", "max queued", "generator lag p99", "server CPU", "server CPU µs/req", "other CPU"],
      http.paced.map((r) => [
        SERVER_NAMES[r.server],
        int(r.targetRatePerSec),
        int(r.achievedRatePerSec),
        ms(r.latencyMs.p50),
        ms(r.latencyMs.p90),
        ms(r.latencyMs.p99),
        ms(r.latencyMs.p999),
        ms(r.latencyMs.max),
        `${r.errors} / ${r.unexpectedStatus}`,
        int(r.maxQueued),
        ms(r.generatorLagP99Ms),
        pct(r.serverCpuPct),
        fixed(r.serverCpuUsPerRequest, 1),
        other(r.otherCpuPct, r.attempts)
      ]),
      ["l"]
    )
  )
  out.push("")
  out.push(
    `"max queued": most requests ever waiting for a free connection (all ${s.connections} busy). "generator lag p99": how ` +
      `late the generator itself picked requests up, in ms; when it is not far below the latencies, the generator was ` +
      `short of CPU and the latencies include its delay.`
  )
  out.push("")

  out.push(`## Curve math (in process)`)
  out.push("")
  out.push(
    `\`quoteBuy\`/\`quoteSell\` from \`src/domain/CurveMath.ts\` on states reached by real buys on the economics ` +
      `matrix's tiers (1,024 different amounts per case), median of timed rounds after a warm-up: the floor under the ` +
      `quote route before any HTTP or JSON.`
  )
  out.push("")
  out.push(table(["Case", "ops/s", "ns/op"], curve.map((r) => [r.name, int(r.opsPerSec), fixed(r.nsPerOp, 0)]), ["l"]))
  out.push("")

  out.push(`## Budgets`)
  out.push("")
  out.push(
    `From DESIGN.md "Performance budgets". The market record and quote routes do not exist yet, so the static ` +
      `quote-pairs read (a cached 2 KB JSON document behind the same router) stands in for the read path.`
  )
  out.push("")
  const up = http.paced.find((r) => r.server === "uws")
  const np = http.paced.find((r) => r.server === "node")
  const latencyMet =
    up !== undefined && up.latencyMs.p99 < READ_P99_BUDGET_MS && up.errors === 0 && up.unexpectedStatus === 0 &&
    up.achievedRatePerSec >= 0.98 * READ_RATE_BUDGET && s.pacedRatePerSec >= READ_RATE_BUDGET
  const latencyVerdict = latencyMet
    ? "**met**"
    : up?.attempts.disturbed === true
      ? "**not met on this run**, which other work disturbed (⚠ above); rerun on a quiet machine"
      : "**not met**"
  const uq = find(http.cases, "uws", PACED_CASE.name)
  const nq = find(http.cases, "node", PACED_CASE.name)
  const rpsRatio = (uq?.requestsPerSec ?? Number.NaN) / (nq?.requestsPerSec ?? Number.NaN)
  const cpuRatio = (nq?.serverCpuUsPerRequest ?? Number.NaN) / (uq?.serverCpuUsPerRequest ?? Number.NaN)
  const pacedCpuRatio = (np?.serverCpuUsPerRequest ?? Number.NaN) / (up?.serverCpuUsPerRequest ?? Number.NaN)
  const cpuEstimate =
    `By server CPU per request uWS would reach ${ratio(cpuRatio)} node's throughput per core if CPU were the only ` +
    `limit (${ratio(pacedCpuRatio)} at the same ${int(s.pacedRatePerSec)} req/s), against ${ratio(bareCpuRatio)} for the bare servers on this machine`
  const throughputVerdict =
    rpsRatio >= READ_THROUGHPUT_RATIO_BUDGET
      ? "**met**"
      : uq?.attempts.disturbed === true || nq?.attempts.disturbed === true
        ? `**not shown**: other work disturbed the run (⚠ above). ${cpuEstimate}`
        : uq !== undefined && uq.serverCpuPct < 85
          ? `**not shown on this machine**: the one-core generator, not uWS, set the ceiling (uWS used ${pct(uq.serverCpuPct)} of its core). ${cpuEstimate}`
          : `**not met**. ${cpuEstimate}`
  const budgetRows: string[][] = [
    [
      "Read path latency (market record and quote reads)",
      `p99 < ${READ_P99_BUDGET_MS} ms at ${int(READ_RATE_BUDGET)} req/s`,
      up === undefined
        ? "n/a"
        : `uWS p99 ${ms(up.latencyMs.p99)} ms at ${int(up.achievedRatePerSec)} req/s (node:http: ${np === undefined ? "n/a" : `${ms(np.latencyMs.p99)} ms`}); measured over loopback from another process, which also counts the client and the kernel`,
      latencyVerdict
    ],
    [
      "Read path throughput",
      `≥ ${READ_THROUGHPUT_RATIO_BUDGET}x node:http with the same handlers`,
      `quote-pairs 200: ${ratio(rpsRatio)} req/s; node/uWS server CPU per request ${ratio(cpuRatio)} at saturation, ` +
        `${ratio(pacedCpuRatio)} at ${int(s.pacedRatePerSec)} req/s; ` +
        ratioRows.slice(1).map(([name, r]) => `${name}: ${r} req/s`).join("; ") +
        `; bare servers: ${ratio(bareRpsRatio)} req/s, ${ratio(bareCpuRatio)} CPU per request`,
      throughputVerdict
    ],
    ["Chain event to visible in the API", "p99 < 5 ms embedded, < 50 ms through Kafka", "embedded: see “Actor pipeline, embedded” below (`bench/pipeline.ts`); through Kafka: see “Actor pipeline on Kafka beside embedded” below (`bench/kafka.ts`; the same process's index, since the separate API role does not exist yet)", "—"],
    ["Actor pipeline", "≥ 100k events/s per process, embedded", "see “Actor pipeline, embedded” below (`bench/pipeline.ts`)", "—"],
    ["Signals WebSocket", "1,000 subscribers each get a signal within 10 ms p99", "see “Signals WebSocket fan-out” below (`npm run bench:ws`, `bench/wsFanout.ts`)", "—"],
    ["Strategy replay", "14 days over 10M trades < 10 s on chDB", "see “Strategy replay on chDB” below (`bench/replay.ts`)", "—"],
    ["Memory", "100k live markets < 1 GiB", "see “Memory per live market” below (`npm run bench:memory`, `bench/memory.ts`)", "—"]
  ]
  out.push(table(["Budget", "Target", "Measured", "Verdict"], budgetRows, ["l", "l", "l", "l"]))
  out.push("")
  out.push(
    `Issue numbers follow docs/architecture.md and README.md (ingest, actors and market reads: issues 3–4; the ` +
      `market-data service: issue 6), i.e. DESIGN.md's roadmap step + 1.`
  )
  return out.join("\n")
}

const PREAMBLE = `# Benchmarks

Measured numbers for DESIGN.md's performance budgets. Performance targets are checked here, side by
side against a baseline in one run, never as timing assertions in tests.

Run \`npm run bench\` (every case for 10 s after a 2 s warm-up: about three minutes on a quiet machine,
longer on a busy one, where disturbed measurements are repeated) to rewrite the section between the
markers below; \`npm run bench -- --quick\` is a 2 s smoke run that prints the section and leaves
this file alone. Settings: \`BENCH_SECONDS\`, \`BENCH_WARMUP_SECONDS\`, \`BENCH_CONNECTIONS\`, \`BENCH_RATE\`,
\`BENCH_PIN=0\`, and for shared machines \`BENCH_MAX_OTHER_CPU\`, \`BENCH_ATTEMPTS\`, \`BENCH_QUIET_WAIT_SECONDS\`
(see \`bench/run.ts\`). Text outside the markers is kept.

What runs: \`bench/curve.ts\` (curve math in process), \`bench/http.ts\` (uWS against node:http with the
same route table, each server in its own process, autocannon in the parent), \`bench/pacedLoad.ts\`
(fixed-rate latency).
`

const writeDoc = (section: string): void => {
  const block = `${BEGIN}\n${section}\n${END}`
  const current = existsSync(DOC) ? readFileSync(DOC, "utf8") : PREAMBLE
  const b = current.indexOf(BEGIN)
  const e = current.indexOf(END)
  const next =
    b !== -1 && e > b
      ? current.slice(0, b) + block + current.slice(e + END.length)
      : `${current.trimEnd()}\n\n${block}\n`
  writeFileSync(DOC, next)
}

const main = async () => {
  const background =
    quietWaitSeconds > 0
      ? await awaitQuiet(maxOtherCpuPct, quietWaitSeconds, log)
      : { waitedSec: 0, busyCorePct: await backgroundBusyCorePct(2) }
  const startedAt = new Date()
  const t0 = performance.now()
  log(`bench: curve math`)
  const curve = runCurveBench({ secondsPerCase: quick ? 0.5 : 2, warmupSeconds: quick ? 0.2 : 0.5, log })
  log(`bench: http (${seconds} s per case, ${warmupSeconds} s warm-up, ${connections} connections)`)
  const http = await runHttpBench({
    seconds,
    warmupSeconds,
    connections,
    pacedRatePerSec: pacedRate,
    pin,
    maxOtherCpuPct,
    maxAttempts,
    quietWaitSecondsPerMeasurement: Math.min(10, quietWaitSeconds),
    log
  })
  const section = renderSection(startedAt, (performance.now() - t0) / 1000, background, curve, http)
  if (write) {
    writeDoc(section)
    log(`bench: wrote ${DOC}`)
  }
  process.stdout.write(`${section}\n`)
}

main().catch((e: unknown) => {
  log(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
  process.exit(1)
})
