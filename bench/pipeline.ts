/**
 * The actor pipeline, embedded: events published to the embedded bus (fsync on, temp dir) are
 * applied by the market actors (checkpoints in PGlite) and become visible in the MarketIndex.
 *
 * 1. Throughput: N trade events over M markets, (a) published while the actors consume and (b)
 *    already on the bus as a backlog when the actors start, each until the index shows every trade
 *    (events/s per process), with the share of the time V8 spent in GC. Each phase runs with the
 *    trades on the bus as JSON (the encoding before the binary one, which old bus data still has)
 *    and as binary (ChainEventBinary.ts), alternating, in one process: the two encodings side by side.
 * 2. Event to visible: single trades published at a fixed rate on an idle pipeline, each timed
 *    from `publish` until the index shows it (p50/p99), the budget DESIGN.md states as
 *    "chain event to visible in the API: p99 under 5 ms embedded" (the API reads the index
 *    synchronously, so index visibility is API visibility). Side by side: the actors reading only
 *    durable records (as before) and reading them before they are durable (the default now).
 *
 * Run: `npm run bench:pipeline [-- --quick]` (node with `--max-semi-space-size=64`, as `npm start`,
 * and `--expose-gc` for a full collection before each timed throughput phase). Prints a markdown section and, unless --quick,
 * rewrites it between the `pipeline` markers in docs/benchmarks.md.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as inspector from "node:inspector/promises"
import * as v8 from "node:v8"
import { PerformanceObserver } from "node:perf_hooks"
import * as os from "node:os"
import * as path from "node:path"
import * as MarketActors from "../actors/MarketActors.js"
import { MarketIndex, type MarketIndexShape } from "../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import { Bus, Topics } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../ingest/ChainEvent.js"
import { encodeChainEvent, encodeFast } from "../ingest/ChainEventCodec.js"
import * as Database from "../src/db/Database.js"
import { writeBenchmarkSection } from "./benchmarksDoc.js"

const quick = process.argv.includes("--quick")
const MARKETS = quick ? 200 : 1_000
const TRADES = quick ? 20_000 : 200_000
const LATENCY_SAMPLES = quick ? 200 : 2_000
const LATENCY_RATE_PER_S = 500
/** `BENCH_FSYNC=0` measures without the bus's fdatasync, to separate the disk's share. */
const FSYNC = process.env.BENCH_FSYNC !== "0"

/** `BENCH_PROFILE=<file.cpuprofile>` writes a CPU profile of the last binary backlog phase (storage start to caught up). */
const PROFILE = process.env.BENCH_PROFILE
/** `BENCH_PROFILE_PRODUCER=<file.cpuprofile>` writes one of the last binary producer phase (first publish to caught up). */
const PROFILE_PRODUCER = process.env.BENCH_PROFILE_PRODUCER

/** Starts the CPU profiler when `file` is set; the returned function stops it and writes the profile. */
const startProfile = async (file: string | undefined): Promise<() => Promise<void>> => {
  if (file === undefined) return async () => {}
  const session = new inspector.Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.start")
  return async () => {
    const { profile } = await session.post("Profiler.stop")
    fs.writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}

/** The young generation's semi-space size as V8 runs it (the `--max-semi-space-size` flag, if given). */
const semiSpace = (): string => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
  const flag = process.execArgv.find((a) => a.startsWith("--max-semi-space-size"))
  return `${flag ?? "default semi-space"}${space === undefined ? "" : `, new space now ${(space.space_size / 1048576).toFixed(0)} MiB`}`
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** Storage first, then the actors on it; `actorsStartedAt` is when the actors' layer began to build. */
const open = async (dir: string, beforeDurable = true) => {
  const scope = await Effect.runPromise(Scope.make())
  const storage = await Effect.runPromise(
    Layer.buildWithScope(Layer.mergeAll(EmbeddedBus.layer({ dir: path.join(dir, "bus"), fsync: FSYNC }), Database.layer({ url: undefined, dataDir: path.join(dir, "pg") })), scope)
  )
  const actorsStartedAt = performance.now()
  const context = await Effect.runPromise(Layer.buildWithScope(MarketActors.layer({ beforeDurable }), scope).pipe(Effect.provide(storage)))
  return {
    scope,
    actorsStartedAt,
    index: context.unsafeMap.get(MarketIndex.key) as MarketIndexShape,
    bus: storage.unsafeMap.get(Bus.key) as Bus["Type"]
  }
}

type Encode = (e: ChainEvent) => Uint8Array
const WIRES: ReadonlyArray<readonly [name: "JSON" | "binary", encode: Encode]> = [
  ["JSON", encodeFast],
  ["binary", encodeChainEvent]
]
/** Rounds per encoding (alternating JSON, binary, JSON, binary, ...). */
const ROUNDS = quick ? 1 : 2

const publish = (bus: Bus["Type"], events: ReadonlyArray<ChainEvent>, encode: Encode = encodeChainEvent) =>
  Effect.runPromise(bus.publish(Topics.chainEvents, events.map((e) => ({ key: busKey(e), value: encode(e) }))))

/** Milliseconds V8 spent in GC (every kind) since the process started observing. */
let gcMs = 0
let gcCount = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMs += entry.duration
    gcCount++
  }
}).observe({ entryTypes: ["gc"] })
/** GC entries are delivered asynchronously: let them arrive before reading the counters. */
const settleGc = () => new Promise((r) => setTimeout(r, 20))

/**
 * A full collection before a timed phase, so the phase does not pay for its set-up: the 200,000
 * trades the simulator just built (held for the whole phase, as the bus would hold them) and the
 * previous phase's garbage. Without it the first scavenges of the phase copy up to a young
 * generation of set-up objects, which no producer that builds its events as it goes would have.
 */
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:pipeline)")
const collectSetUp = async () => {
  gc()
  await settleGc()
}

interface Phase {
  readonly eventsPerSecond: number
  readonly seconds: number
  /** GC time ÷ wall time over the phase. */
  readonly gcShare: number
  readonly gcPauses: number
  /** GC milliseconds per 1,000 events. */
  readonly gcMsPerK: number
}

const mintOf = (i: number) => `Bench${String(i).replace(/0/g, "z").padStart(38, "A")}`

const tradesFor = (markets: ReadonlyArray<SimMarket>): Array<Array<ChainEvent>> => {
  const batches: ChainEvent[][] = []
  let pending: ChainEvent[] = []
  for (let i = 0; i < TRADES; i++) {
    pending.push(...markets[i % MARKETS]!.buy(`trader${i % 97}`, 10_000_000n + BigInt(i % 1000)))
    if (pending.length >= 5_000) {
      batches.push(pending)
      pending = []
    }
  }
  if (pending.length > 0) batches.push(pending)
  return batches
}

const totalTrades = (index: MarketIndexShape) => {
  let n = 0
  for (const core of index.markets()) n += core.stats.tradesTotal
  return n
}

/** Markets exist first; then the trades are published in 5,000-event batches while the actors consume. */
const producerPhase = async (dir: string, encode: Encode, profile: boolean): Promise<Phase> => {
  const markets = Array.from({ length: MARKETS }, (_, i) => new SimMarket(new ChainClock("solana"), { mint: mintOf(i) }))
  const run = await open(dir)
  await publish(run.bus, markets.map((m) => m.created()), encode)
  const batches = tradesFor(markets)
  await collectSetUp()
  const gc0 = gcMs
  const pauses0 = gcCount
  const stopProfile = await startProfile(profile ? PROFILE_PRODUCER : undefined)
  const started = performance.now()
  for (const batch of batches) await publish(run.bus, batch, encode)
  while (totalTrades(run.index) < TRADES) await new Promise((r) => setTimeout(r, 2))
  const elapsed = performance.now() - started
  await stopProfile()
  await settleGc()
  const phase: Phase = { eventsPerSecond: Math.round(TRADES / (elapsed / 1000)), seconds: elapsed / 1000, gcShare: (gcMs - gc0) / elapsed, gcPauses: gcCount - pauses0, gcMsPerK: ((gcMs - gc0) * 1000) / TRADES }
  await Effect.runPromise(Scope.close(run.scope, Exit.void))
  return phase
}

/**
 * Event to visible on an idle pipeline: one trade at a time, timed from the publish call until the
 * index shows it (the publish is not awaited first: the index may show it before it is durable),
 * and until the publish resolved (durable). `beforeDurable` false is the actors reading only
 * durable records, as before; true is the default.
 */
const latencyPhase = async (dir: string, beforeDurable: boolean) => {
  const market = new SimMarket(new ChainClock("solana"), { mint: mintOf(0) })
  const run = await open(dir, beforeDurable)
  await publish(run.bus, [market.created()])
  while (run.index.market("solana", market.mint) === undefined) await new Promise((r) => setTimeout(r, 2))
  const visible: number[] = []
  const durable: number[] = []
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const events = market.buy("latency", 1_000_000n + BigInt(i))
    const position = events[events.length - 1]!.position
    const t0 = performance.now()
    let durableAt = 0
    const published = publish(run.bus, events).then(() => {
      durableAt = performance.now()
    })
    while ((run.index.market("solana", market.mint)?.lastPosition ?? "") < position) await new Promise((r) => setImmediate(r))
    visible.push(performance.now() - t0)
    await published
    durable.push(durableAt - t0)
    await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE_PER_S))
  }
  await Effect.runPromise(Scope.close(run.scope, Exit.void))
  return { visible, durable }
}

/**
 * Consuming a backlog: the trades already on the bus of a fresh data directory (published by a
 * bus-only stand-in), applied by actors that start on it — the actors' own rate, without the
 * producer's encoding and fsync on the same thread.
 */
const backlogPhase = async (dir: string, encode: Encode, profile: boolean): Promise<Phase> => {
  {
    const scope = await Effect.runPromise(Scope.make())
    const busContext = await Effect.runPromise(Layer.buildWithScope(EmbeddedBus.layer({ dir: path.join(dir, "bus"), fsync: FSYNC }), scope))
    const bus = busContext.unsafeMap.get(Bus.key) as Bus["Type"]
    const markets = Array.from({ length: MARKETS }, (_, i) => new SimMarket(new ChainClock("solana"), { mint: mintOf(i) }))
    await publish(bus, markets.map((m) => m.created()), encode)
    for (const batch of tradesFor(markets)) await publish(bus, batch, encode)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  const stopProfile = await startProfile(profile ? PROFILE : undefined)
  await collectSetUp()
  const gc0 = gcMs
  const pauses0 = gcCount
  const run = await open(dir)
  while (totalTrades(run.index) < TRADES) await new Promise((r) => setImmediate(r))
  const elapsed = performance.now() - run.actorsStartedAt
  await stopProfile()
  await settleGc()
  // GC from just before the actors' start: the layer build is inside the timed span too.
  const phase: Phase = { eventsPerSecond: Math.round(TRADES / (elapsed / 1000)), seconds: elapsed / 1000, gcShare: (gcMs - gc0) / elapsed, gcPauses: gcCount - pauses0, gcMsPerK: ((gcMs - gc0) * 1000) / TRADES }
  await Effect.runPromise(Scope.close(run.scope, Exit.void))
  return phase
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-bench-pipeline-"))
  const loadStart = loads()
  try {
    const producer = new Map<string, Array<Phase>>()
    const backlog = new Map<string, Array<Phase>>()
    let n = 0
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, encode] of WIRES) {
        const last = round === ROUNDS - 1 && name === "binary"
        producer.set(name, [...(producer.get(name) ?? []), await producerPhase(path.join(dir, `p${n}`), encode, last)])
        backlog.set(name, [...(backlog.get(name) ?? []), await backlogPhase(path.join(dir, `b${n}`), encode, last)])
        n++
      }
    }
    // Event to visible, the actors reading only durable records (before) and before durability (now), alternating.
    const LATENCY_MODES = [
      ["actors read durable records only (before)", false],
      ["actors read records before they are durable (now)", true]
    ] as const
    const visible = new Map<string, number[]>()
    const durableMs = new Map<string, number[]>()
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, beforeDurable] of LATENCY_MODES) {
        const r = await latencyPhase(path.join(dir, `l${n++}`), beforeDurable)
        visible.set(name, [...(visible.get(name) ?? []), ...r.visible])
        durableMs.set(name, [...(durableMs.get(name) ?? []), ...r.durable])
      }
    }
    for (const xs of [...visible.values(), ...durableMs.values()]) xs.sort((a, b) => a - b)
    const cell = (phases: ReadonlyArray<Phase>): string =>
      `${Math.round(median(phases.map((p) => p.eventsPerSecond))).toLocaleString("en")} events/s (${phases.map((p) => p.eventsPerSecond.toLocaleString("en")).join(", ")})`
    const gcCell = (phases: ReadonlyArray<Phase>): string =>
      `${(100 * median(phases.map((p) => p.gcShare))).toFixed(1)}%, ${median(phases.map((p) => p.gcMsPerK)).toFixed(2)} ms per 1k events (${phases.map((p) => `${(100 * p.gcShare).toFixed(1)}% in ${p.gcPauses} pauses`).join(", ")})`
    const budget = "≥ 100,000 events/s per process"
    const rows = [
      [
        `Throughput: ${TRADES.toLocaleString("en")} trades over ${MARKETS.toLocaleString("en")} markets published in 5,000-event batches while the actors consume (publish with the bus's fsync, encode, decode, apply, index; checkpoints and commits run alongside)`,
        producer
      ],
      [
        `Throughput, consuming a backlog: the same ${TRADES.toLocaleString("en")} trades already on the bus when the actors start (timed from the actors' start: load checkpoints, subscribe, decode, apply, index; checkpoints and commits alongside)`,
        backlog
      ]
    ] as const
    const section = [
      "## Actor pipeline, embedded (`bench/pipeline.ts`)",
      "",
      `- Date: ${new Date().toISOString()} (took ${Math.round(process.uptime())} s${quick ? ", --quick" : ""}); command: \`npm run bench:pipeline\` (${semiSpace()}); Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"})`,
      `- Embedded bus in a temp dir with fsync ${FSYNC ? "on" : "off (BENCH_FSYNC=0)"}, PGlite checkpoints, default shards (${2 * os.availableParallelism()}). Load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}${os.loadavg()[0]! > os.cpus().length ? ": the machine was loaded (more runnable work than cores), so every figure includes time spent waiting for a core" : ""}.`,
      `- Each throughput phase ran ${ROUNDS} time(s) per bus encoding, alternating JSON and binary in this one process (fresh bus and database each time); the figure is the median, the runs in brackets. "JSON" is every trade on the bus as JSON, the encoding before this one and what old bus data holds; "binary" is the versioned binary encoding of trades (\`ingest/ChainEventBinary.ts\`), the default. GC share: V8's GC time (every pause, from \`PerformanceObserver\` \`gc\` entries) ÷ the phase's wall time, GC milliseconds per 1,000 events, and the pauses per run.`,
      "",
      "| Measurement | Bus encoding | Result | GC share | Budget (DESIGN.md) |",
      "| --- | --- | ---: | ---: | --- |",
      ...rows.flatMap(([what, byWire]) =>
        WIRES.map(([name]) => `| ${what} | ${name} | ${cell(byWire.get(name)!)} | ${gcCell(byWire.get(name)!)} | ${budget} |`)
      ),
      ...LATENCY_MODES.map(([name]) => {
        const v = visible.get(name)!
        const d = durableMs.get(name)!
        return `| Event to visible in the index (= the API), ${LATENCY_SAMPLES.toLocaleString("en")} trades at ${LATENCY_RATE_PER_S}/s per run, from the publish call: ${name} | binary | p50 ${percentile(v, 50).toFixed(2)} ms, p99 ${percentile(v, 99).toFixed(2)} ms, max ${v[v.length - 1]!.toFixed(2)} ms (publish until durable: p50 ${percentile(d, 50).toFixed(2)} ms, p99 ${percentile(d, 99).toFixed(2)} ms) | | p99 < 5 ms embedded |`
      }),
      ""
    ].join("\n")
    process.stdout.write(section + "\n")
    if (!quick) writeBenchmarkSection("pipeline", section)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
