/**
 * Strategy replay on chDB, measured (printed, never asserted): a 14-day replay over a table of
 * 10 million synthetic trades (DESIGN.md budget: under 10 s), generated in SQL
 * (`INSERT ... SELECT ... FROM numbers(N)`), with signals generated the same way.
 *
 * Data: N trades (default 10,000,000) evenly over 30 days of January 2024; every tenth on one
 * hot mint, the rest on 5,000 mints; post-trade reserves vary per trade (V between 20 and 40 SOL
 * of virtual quote, X = 1e15), and each print's price matches its reserves, so exits trigger.
 * Two replays over Jan 10-24 (14 days):
 *  - "typical": 3,000 `confluence` signals at random times on random mints;
 *  - "broad": one signal on every mint in the window's first hour (the worst case for the old
 *    exhaustive read, which read every trade of the window after it).
 * Each is timed 3 times (median) with the replay's range read, then run once with the
 * exhaustive read (`read: "all"`, every trade of the candidate tokens) and the two results are
 * compared (they must be equal but for `history.trades_read`; a difference fails the bench).
 *
 *   npx tsx bench/replay.ts [--rows N] [--dir DIR | --cache [DIR]] [--keep] [--compare] [--tables T1,T2] [--no-write]
 *
 * `--cache [DIR]` (default DIR: `<tmp>/curvestream-bench-replay-cache`) keeps the generated
 * data set in `DIR/<key>`, `key` a hash of what determines it (the row count, the generator's
 * SQL, the ClickHouse migrations), and reuses it when its `complete` marker is there (written
 * once the trades and signals are in; a directory without it is wiped and generated again).
 * Not the default: a cached directory outlives the run and takes ~1.5 GB per 10M trades.
 * `--dir DIR` reuses whatever DIR holds (no key, no marker).
 *
 * `--compare` follows each timed replay with one using the statements as before issue 34 (the
 * reads' filter in a WHERE after FINAL; see `compare` below) and records both side by side.
 *
 * `--tables T1,T2` follows each timed replay with one per named table, its statements reading
 * that table instead of `trades` (another layout of the same rows in the data set, e.g. the
 * 0002 table kept beside a rebuilt one: `bench/replayTables.ts`); results must be equal.
 *
 * The section says how long the run took (wall, from the process start), the load average
 * at the start and the end, and where the last typical replay's time went: each ClickHouse
 * statement kind (timed around `ClickHouse.query`, the executor's JSON decoding included)
 * and the rest (parsing the pages, planning, simulating).
 *
 * Writes its section between `<!-- replay:begin -->` and `<!-- replay:end -->` in
 * docs/benchmarks.md (appended at the end when absent); `--no-write` only prints it.
 */
import { Effect, Either, Layer, Logger, LogLevel } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClickHouse } from "../clickhouse/ClickHouse.js"
import { migrations } from "../clickhouse/migrations/index.js"
import { decodeReplayRequest } from "../src/services/strategy/Definition.js"
import type { ReplayResult } from "../src/services/strategy/Engine.js"
import { defaultFees, pricingFor, type ReadStats, runReplay } from "../src/services/strategy/Replay.js"
import { SignalHistory } from "../src/services/strategy/SignalHistory.js"

const args = process.argv.slice(2)
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback
}
const rows = Number(option("rows", "10000000"))
const cacheRoot = args.includes("--cache")
  ? (() => {
      const next = args[args.indexOf("--cache") + 1]
      return next !== undefined && !next.startsWith("--") ? next : path.join(os.tmpdir(), "curvestream-bench-replay-cache")
    })()
  : undefined
const write = !args.includes("--no-write")
const loadsAtStart = os.loadavg()

const generateTradesSql = `
INSERT INTO trades (id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw,
  quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, crosses_graduation, position, ts,
  signature, version, retracted)
SELECT
  concat('solana:', hex(cityHash64(number)), ':0') AS id,
  'solana' AS chain,
  if(number % 10 = 0, 'HOTMINT', concat('mint', toString(cityHash64(number, 7) % 5000))) AS mint,
  'curve' AS venue,
  'buy' AS side,
  concat('trader', toString(cityHash64(number, 1) % 200000)) AS trader,
  toUInt256(10000000 + cityHash64(number, 2) % 1000000000) AS amount_in_raw,
  intDiv(amount_in_raw * token_reserve_raw, quote_reserve_raw) AS amount_out_raw,
  toUInt256(0) AS fee_raw,
  toUInt256(0) AS refund_raw,
  amount_in_raw AS quote_consumed_raw,
  toUInt256(20000000000 + cityHash64(number, 9) % 20000000000) AS quote_reserve_raw,
  toUInt256(1000000000000000) AS token_reserve_raw,
  toUInt256(0) AS real_quote_raw,
  false AS crosses_graduation,
  concat('s:', leftPad(toString(300000000 + intDiv(number, 40)), 20, '0'), ':', leftPad(toString(number % 40), 6, '0'), ':0000') AS position,
  toDateTime64('2024-01-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * 2592000000, {n:UInt64})) AS ts,
  hex(cityHash64(number, 5)) AS signature,
  1 AS version,
  0 AS retracted
FROM numbers({n:UInt64})`

const signalColumns = `id, pattern, chain, asset, ts, wallets, wallet_groups, size_usd, mcap_usd, age_minutes, venue, direction, confidence, quality, position, details`
const typicalSignalsSql = `
INSERT INTO signals (${signalColumns})
SELECT concat('typ', toString(number)), 'confluence', 'solana',
  if(number % 50 = 0, 'HOTMINT', concat('mint', toString(cityHash64(number, 11) % 5000))),
  toDateTime64('2024-01-10 00:00:00', 3, 'UTC') + toIntervalMillisecond(cityHash64(number, 12) % 1209600000),
  ['w1', 'w2', 'w3'], [['smart'], [], ['kol']], toDecimal128(1000 + number % 5000, 6), toDecimal128(100000, 6), 60, 'svc-curve', 'in',
  toUInt8(50 + number % 50), 'high', '', '{}'
FROM numbers(3000)`
const broadSignalsSql = `
INSERT INTO signals (${signalColumns})
SELECT concat('brd', toString(number)), 'large_move', 'solana',
  if(number = 5000, 'HOTMINT', concat('mint', toString(number))),
  toDateTime64('2024-01-10 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 700),
  ['w1'], [['smart']], toDecimal128(5000, 6), toDecimal128(100000, 6), 60, 'svc-curve', 'in', 90, 'high', '', '{}'
FROM numbers(5001)`

/** What determines the generated data set: the cache key of `--cache`. */
const datasetKey = createHash("sha256")
  .update(JSON.stringify({ rows, generateTradesSql, typicalSignalsSql, broadSignalsSql, migrations }))
  .digest("hex")
  .slice(0, 16)
const dataDir =
  cacheRoot !== undefined
    ? path.join(cacheRoot, `replay-${rows}-${datasetKey}`)
    : args.includes("--dir")
      ? option("dir", "")
      : fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-bench-replay-"))
const completeMarker = path.join(dataDir, "complete")
if (cacheRoot !== undefined && !fs.existsSync(completeMarker)) fs.rmSync(dataDir, { recursive: true, force: true })
const keep = args.includes("--keep") || args.includes("--dir") || cacheRoot !== undefined

/**
 * Time spent in `ClickHouse.query` per statement kind (reset before each timed replay): wall
 * time, and this process's CPU time (user + system, every thread: chDB runs in the process and
 * nothing else runs while the replay awaits a statement), which the machine's load distorts
 * less than wall time.
 */
const statementKinds = [
  ["signals", /FROM signals/],
  ["history start", /min\(ts\)/],
  ["range reads", /row_number\(\)/],
  ["final marks", /argMax/],
  ["exhaustive pages", /arraySort/]
] as const
const spent = new Map<string, { ms: number; cpuMs: number; n: number }>()
const kindOf = (sql: string) => statementKinds.find(([, re]) => re.test(sql))?.[0] ?? "other"
const breakdownOf = (totalMs: number) => {
  const inStatements = [...spent.values()].reduce((m, v) => m + v.ms, 0)
  return `${fmtMs(totalMs)}: ${[...spent]
    .map(([kind, v]) => `${kind} ${fmtMs(v.ms)} (${v.n}; CPU ${fmtMs(v.cpuMs)})`)
    .concat(`the rest (parsing the pages, planning, simulating) ${fmtMs(totalMs - inStatements)}`)
    .join(", ")}`
}
/**
 * `--compare`: each timed replay is followed by one with the statements as they were before
 * issue 34 (the replay reads' token and time filter in a WHERE, applied after FINAL's merge):
 * the timing wrapper below turns their `PREWHERE` back into `WHERE`, which is exactly the old
 * text. Both results must be equal.
 */
const compare = args.includes("--compare")
let baselineStatements = false
/** `--tables`: the tables compared against `trades`; `readTable`: the one the statements read now. */
const tables = option("tables", "").split(",").filter((t) => t !== "")
for (const t of tables) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(t)) throw new Error(`--tables: ${JSON.stringify(t)} is not a plain table name`)
let readTable: string | undefined
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000
const readsCpu = () => spent.get("range reads")?.cpuMs ?? 0

const definition = (pattern: string) => ({
  chain: "solana",
  entry: { source: "pattern", pattern },
  exit: { take_profit_pct: 30, stop_loss_pct: 20, trailing: { arm_multiple: 1.15, drop_pct: 10 }, max_hold_hours: 24 },
  sizing: { usd_per_trade: 100, max_concurrent: 20 }
})

/** Median (min–max) of the three runs' range-read CPU times. */
const cpuOf = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return `median ${fmtMs(sorted[1]!)} (${fmtMs(sorted[0]!)}–${fmtMs(sorted[2]!)})`
}
const loads = (l: ReadonlyArray<number>) => l.map((x) => x.toFixed(2)).join(" / ")
const fmtMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`)

const program = Effect.gen(function* () {
  const ch = yield* ClickHouse
  const lines: Array<string> = []
  const row = (what: string, value: string, budget = "") => {
    lines.push(`| ${what} | ${value} | ${budget} |`)
    console.log(`${what.padEnd(100)} ${value}`)
  }
  const [version] = yield* ch.query<{ v: string }>("SELECT version() AS v")
  const [existing] = yield* ch.query<{ n: string }>("SELECT toString(count()) AS n FROM trades")
  if (Number(existing?.n ?? "0") === 0) {
    const t0 = performance.now()
    yield* ch.command(generateTradesSql, { n: rows })
    const ms = performance.now() - t0
    row(`Generate ${rows.toLocaleString("en-US")} trades (INSERT ... SELECT FROM numbers, through the candle view)`, `${fmtMs(ms)} (${Math.round((rows / ms) * 1000).toLocaleString("en-US")} rows/s)`)
    yield* ch.command(typicalSignalsSql)
    yield* ch.command(broadSignalsSql)
    if (cacheRoot !== undefined) fs.writeFileSync(completeMarker, `${new Date().toISOString()}\n`)
  } else row(`Trades already present (reused${cacheRoot !== undefined ? ` from the cache, ${dataDir}` : ""})`, Number(existing!.n).toLocaleString("en-US"))
  const [parts] = yield* ch.query<{ parts: string }>("SELECT toString(count()) AS parts FROM system.parts WHERE database = currentDatabase() AND table = 'trades' AND active")
  let breakdown = ""
  const settings = { fees: defaultFees, pricing: pricingFor({ solana: 150_000_000n, hood: 3_000_000_000n }) }
  for (const [name, pattern] of [["typical: 3,000 confluence signals", "confluence"], ["broad: a signal on every one of 5,001 mints", "large_move"]] as const) {
    const decoded = decodeReplayRequest({ definition: definition(pattern), from: "2024-01-10T00:00:00Z", to: "2024-01-24T00:00:00Z" })
    if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
    const runs: Array<number> = []
    const runsCpu: Array<number> = []
    const onTable = new Map(tables.map((t) => [t, { wall: [] as Array<number>, cpu: [] as Array<number>, breakdown: "" }]))
    let last: ReplayResult | undefined
    let stats: ReadStats | undefined
    let lastMs = 0
    const baselineRuns: Array<number> = []
    let baselineBreakdown = ""
    const same = (x: ReplayResult) => JSON.stringify({ ...x, history: { ...x.history, trades_read: 0 } })
    for (let i = 0; i < 3; i++) {
      spent.clear()
      const t0 = performance.now()
      last = yield* runReplay(decoded.right, { ...settings, onReadStats: (s) => (stats = s) })
      lastMs = performance.now() - t0
      runs.push(lastMs)
      runsCpu.push(readsCpu())
      if (pattern === "confluence") breakdown = breakdownOf(lastMs)
      for (const [table, m] of onTable) {
        // Right after, in the same process and data: the same statements on another table.
        spent.clear()
        readTable = table
        const b0 = performance.now()
        const other = yield* Effect.ensuring(runReplay(decoded.right, settings), Effect.sync(() => (readTable = undefined)))
        m.wall.push(performance.now() - b0)
        m.cpu.push(readsCpu())
        if (pattern === "confluence") m.breakdown = breakdownOf(m.wall[m.wall.length - 1]!)
        if (same(other) !== same(last)) throw new Error(`${name}: the result on ${table} differs`)
      }
      if (compare) {
        // The baseline right after, in the same process and data: the statements as before issue 34.
        spent.clear()
        baselineStatements = true
        const b0 = performance.now()
        const before = yield* Effect.ensuring(runReplay(decoded.right, settings), Effect.sync(() => (baselineStatements = false)))
        baselineRuns.push(performance.now() - b0)
        if (pattern === "confluence") baselineBreakdown = breakdownOf(baselineRuns[baselineRuns.length - 1]!)
        if (same(before) !== same(last)) throw new Error(`${name}: the baseline statements' result differs`)
      }
    }
    if (pattern === "confluence") {
      row("Where the last typical run's time went (ClickHouse statements by kind: wall time, statement count and the process's CPU time in brackets)", breakdown)
      if (compare) row("the same, baseline statements (`--compare`: the filter in WHERE, after FINAL, as before issue 34)", baselineBreakdown)
      for (const [table, m] of onTable) row(`the same, on \`${table}\` (\`--tables\`)`, m.breakdown)
    }
    runs.sort((a, b) => a - b)
    const r = last!
    const t0 = performance.now()
    const all = yield* runReplay(decoded.right, { ...settings, read: "all" })
    const allMs = performance.now() - t0
    if (same(all) !== same(r)) throw new Error(`${name}: the range read's result differs from the exhaustive read's`)
    row(
      `14-day replay, ${name} (${r.history.trades_read.toLocaleString("en-US")} trades read in ${stats?.rounds ?? "?"} round(s), ${stats?.statements ?? "?"} ClickHouse statements for trades; ${r.trade_count.toLocaleString("en-US")} positions, verdict ${r.verdict})`,
      `median ${fmtMs(runs[1]!)} (min ${fmtMs(runs[0]!)}, max ${fmtMs(runs[2]!)}); range reads' CPU ${cpuOf(runsCpu)}`,
      "< 10 s"
    )
    for (const [table, m] of onTable) {
      const wall = [...m.wall].sort((a, b) => a - b)
      row(
        `the same, on \`${table}\` (\`--tables\`: each run right after one of the runs above; result equal)`,
        `median ${fmtMs(wall[1]!)} (min ${fmtMs(wall[0]!)}, max ${fmtMs(wall[2]!)}); range reads' CPU ${cpuOf(m.cpu)}`
      )
    }
    if (compare) {
      baselineRuns.sort((a, b) => a - b)
      row(
        `the same, baseline statements (\`--compare\`: each run right after one of the runs above; result equal)`,
        `median ${fmtMs(baselineRuns[1]!)} (min ${fmtMs(baselineRuns[0]!)}, max ${fmtMs(baselineRuns[2]!)})`
      )
    }
    row(
      `the same, exhaustive read (${all.history.trades_read.toLocaleString("en-US")} trades read; result equal to the range read's)`,
      `${fmtMs(allMs)} (one run)`
    )
  }
  const section = [
    "## Strategy replay on chDB (`bench/replay.ts`)",
    "",
    `- Date: ${new Date().toISOString()} (took ${Math.round(process.uptime())} s); command: \`npx tsx bench/replay.ts${args.length > 0 ? ` ${args.join(" ")}` : ""}\`; Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? "?"}); chDB ${version?.v ?? "?"}; load average (1/5/15 min) at the start ${loads(loadsAtStart)}, at the end ${loads(os.loadavg())}${os.loadavg()[0]! > os.cpus().length ? " (loaded: more runnable work than cores)" : ""}; the trades table in ${parts?.parts ?? "?"} active parts.`,
    `- ${rows.toLocaleString("en-US")} synthetic trades over 30 days (1 hot mint with every tenth trade, 5,000 others); the replay window is 14 days (Jan 10-24). Each replay: read the window's signals, then, in rounds of one day, per token only the trades that can change the result (from each entry signal, and on while a position is open), read as per-token ranges in ClickHouse (token and time filtered in a PREWHERE on the sorting key, then FINAL) and merged in chain order; simulate (exact bigint fills on each fill trade's reserves; TP 30%, SL 20%, trailing 1.15x/10%, 24 h max hold, 20 concurrent); then the benchmark tokens' last trades. Median of 3 runs; then one run with the exhaustive read (every trade of the candidate tokens from their first signal, one-day pages), whose result must be equal.`,
    "",
    "| Measurement | Result | Budget (DESIGN.md) |",
    "| --- | ---: | --- |",
    ...lines,
    ""
  ].join("\n")
  console.log("\n" + section)
  if (write) {
    const doc = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "docs", "benchmarks.md")
    const text = fs.readFileSync(doc, "utf8")
    const block = `<!-- replay:begin -->\n${section}<!-- replay:end -->`
    const marker = /<!-- replay:begin -->[\s\S]*<!-- replay:end -->/
    fs.writeFileSync(doc, marker.test(text) ? text.replace(marker, block) : `${text.trimEnd()}\n\n${block}\n`)
    console.log(`wrote ${doc}`)
  }
})

/** chDB, with every `query` timed into `spent` by statement kind. */
const env = (() => {
  const timed = Layer.effect(
    ClickHouse,
    Effect.map(ClickHouse, (ch) => ({
      ...ch,
      query: ((sql: string, params?: Record<string, unknown>) =>
        Effect.suspend(() => {
          const t0 = performance.now()
          const c0 = process.cpuUsage()
          const baseline = baselineStatements ? sql.replace(/\bPREWHERE\b/g, "WHERE") : sql
          return Effect.ensuring(
            ch.query(readTable !== undefined ? baseline.replace(/\bFROM trades\b/g, `FROM ${readTable}`) : baseline, params),
            Effect.sync(() => {
              const kind = kindOf(sql)
              const s = spent.get(kind) ?? { ms: 0, cpuMs: 0, n: 0 }
              spent.set(kind, { ms: s.ms + performance.now() - t0, cpuMs: s.cpuMs + cpuMs(process.cpuUsage(c0)), n: s.n + 1 })
            })
          )
        })) as typeof ch.query
    }))
  )
  const ch = Layer.provide(timed, ClickHouse.layerChdb({ dataDir }))
  return Layer.merge(ch, Layer.provide(SignalHistory.layerClickHouse, ch))
})()

Effect.runPromise(
  Effect.provide(program, env).pipe(
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.ensuring(Effect.sync(() => (keep ? console.log(`kept ${dataDir}`) : fs.rmSync(dataDir, { recursive: true, force: true }))))
  )
).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
