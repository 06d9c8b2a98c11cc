/**
 * The actor pipeline, embedded: events published to the embedded bus (fsync on, temp dir) are
 * applied by the market actors (checkpoints in PGlite) and become visible in the MarketIndex.
 *
 * 1. Throughput: a backlog of N trade events over M markets published up front, timed from the
 *    actors' start until the index shows every trade (events/s per process).
 * 2. Event to visible: single trades published at a fixed rate on an idle pipeline, each timed
 *    from `publish` until the index shows it (p50/p99), the budget DESIGN.md states as
 *    "chain event to visible in the API: p99 under 5 ms embedded" (the API reads the index
 *    synchronously, so index visibility is API visibility).
 *
 * Run: `npm run bench:pipeline [-- --quick]` (node with `--max-semi-space-size=64`, as `npm start`). Prints a markdown section and, unless --quick,
 * rewrites it between the `pipeline` markers in docs/benchmarks.md.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as inspector from "node:inspector/promises"
import * as v8 from "node:v8"
import * as os from "node:os"
import * as path from "node:path"
import * as MarketActors from "../actors/MarketActors.js"
import { MarketIndex, type MarketIndexShape } from "../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import { Bus, Topics } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../ingest/ChainEvent.js"
import { encodeChainEvent } from "../ingest/ChainEventCodec.js"
import * as Database from "../src/db/Database.js"
import { writeBenchmarkSection } from "./benchmarksDoc.js"

const quick = process.argv.includes("--quick")
const MARKETS = quick ? 200 : 1_000
const TRADES = quick ? 20_000 : 200_000
const LATENCY_SAMPLES = quick ? 200 : 2_000
const LATENCY_RATE_PER_S = 500
/** `BENCH_FSYNC=0` measures without the bus's fdatasync, to separate the disk's share. */
const FSYNC = process.env.BENCH_FSYNC !== "0"

/** `BENCH_PROFILE=<file.cpuprofile>` writes a CPU profile of the backlog phase (storage start to caught up). */
const PROFILE = process.env.BENCH_PROFILE

/** The young generation's semi-space size as V8 runs it (the `--max-semi-space-size` flag, if given). */
const semiSpace = (): string => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
  const flag = process.execArgv.find((a) => a.startsWith("--max-semi-space-size"))
  return `${flag ?? "default semi-space"}${space === undefined ? "" : `, new space now ${(space.space_size / 1048576).toFixed(0)} MiB`}`
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** Storage first, then the actors on it; `actorsStartedAt` is when the actors' layer began to build. */
const open = async (dir: string) => {
  const scope = await Effect.runPromise(Scope.make())
  const storage = await Effect.runPromise(
    Layer.buildWithScope(Layer.mergeAll(EmbeddedBus.layer({ dir: path.join(dir, "bus"), fsync: FSYNC }), Database.layer({ url: undefined, dataDir: path.join(dir, "pg") })), scope)
  )
  const actorsStartedAt = performance.now()
  const context = await Effect.runPromise(Layer.buildWithScope(MarketActors.layer({}), scope).pipe(Effect.provide(storage)))
  return {
    scope,
    actorsStartedAt,
    index: context.unsafeMap.get(MarketIndex.key) as MarketIndexShape,
    bus: storage.unsafeMap.get(Bus.key) as Bus["Type"]
  }
}

const publish = (bus: Bus["Type"], events: ReadonlyArray<ChainEvent>) =>
  Effect.runPromise(bus.publish(Topics.chainEvents, events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))))

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-bench-pipeline-"))
  try {
    // Markets exist first; then TRADES trades are published in 5,000-event batches while the
    // actors consume, timed until the index shows every one (publish, fsync, decode, apply, index).
    const clock = new ChainClock("solana")
    const markets = Array.from({ length: MARKETS }, (_, i) => new SimMarket(clock, { mint: `Bench${String(i).replace(/0/g, "z").padStart(38, "A")}` }))
    const run = await open(dir)
    await publish(run.bus, markets.map((m) => m.created()))
    const total = () => {
      let n = 0
      for (const core of run.index.markets()) n += core.stats.tradesTotal
      return n
    }
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
    const started = performance.now()
    for (const batch of batches) await publish(run.bus, batch)
    while (total() < TRADES) await new Promise((r) => setTimeout(r, 2))
    const seconds = (performance.now() - started) / 1000
    const eventsPerSecond = Math.round(TRADES / seconds)

    // Event to visible, on the idle pipeline.
    const target = markets[0]!
    const latencies: number[] = []
    const publishLatencies: number[] = []
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const events = target.buy("latency", 1_000_000n + BigInt(i))
      const position = events[events.length - 1]!.position
      const t0 = performance.now()
      await publish(run.bus, events)
      publishLatencies.push(performance.now() - t0)
      while ((run.index.market("solana", target.mint)?.lastPosition ?? "") < position) await new Promise((r) => setImmediate(r))
      latencies.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE_PER_S))
    }
    await Effect.runPromise(Scope.close(run.scope, Exit.void))

    // Consuming a backlog: the same trades, already on the bus of a fresh data directory (published
    // by a bus-only process stand-in), applied by actors that start on it — the actors' own rate,
    // without the producer's encoding and fsync on the same thread.
    const backlogDir = path.join(dir, "backlog")
    {
      const scope = await Effect.runPromise(Scope.make())
      const busContext = await Effect.runPromise(Layer.buildWithScope(EmbeddedBus.layer({ dir: path.join(backlogDir, "bus"), fsync: FSYNC }), scope))
      const bus = busContext.unsafeMap.get(Bus.key) as Bus["Type"]
      const fresh = markets.map((m) => new SimMarket(new ChainClock("solana"), { mint: m.mint }))
      await publish(bus, fresh.map((m) => m.created()))
      let chunk: ChainEvent[] = []
      for (let i = 0; i < TRADES; i++) {
        chunk.push(...fresh[i % MARKETS]!.buy(`trader${i % 97}`, 10_000_000n + BigInt(i % 1000)))
        if (chunk.length >= 5_000) {
          await publish(bus, chunk)
          chunk = []
        }
      }
      if (chunk.length > 0) await publish(bus, chunk)
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    const profiler = PROFILE === undefined ? undefined : new inspector.Session()
    if (profiler !== undefined) {
      profiler.connect()
      await profiler.post("Profiler.enable")
      await profiler.post("Profiler.start")
    }
    const backlogRun = await open(backlogDir)
    const backlogTotal = () => {
      let n = 0
      for (const core of backlogRun.index.markets()) n += core.stats.tradesTotal
      return n
    }
    while (backlogTotal() < TRADES) await new Promise((r) => setImmediate(r))
    const backlogSeconds = (performance.now() - backlogRun.actorsStartedAt) / 1000
    const backlogRate = Math.round(TRADES / backlogSeconds)
    if (profiler !== undefined) {
      const { profile } = await profiler.post("Profiler.stop")
      fs.writeFileSync(PROFILE!, JSON.stringify(profile))
      profiler.disconnect()
    }
    await Effect.runPromise(Scope.close(backlogRun.scope, Exit.void))
    latencies.sort((a, b) => a - b)
    publishLatencies.sort((a, b) => a - b)

    const section = [
      "## Actor pipeline, embedded (`bench/pipeline.ts`)",
      "",
      `- Date: ${new Date().toISOString()}; command: \`npm run bench:pipeline\` (${semiSpace()}); Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"})`,
      `- Embedded bus in a temp dir with fsync ${FSYNC ? "on" : "off (BENCH_FSYNC=0)"}, PGlite checkpoints, default shards (${2 * os.availableParallelism()}); load average at the end ${os.loadavg()[0]!.toFixed(2)}.`,
      "",
      "| Measurement | Result | Budget (DESIGN.md) |",
      "| --- | ---: | --- |",
      `| Throughput: ${TRADES.toLocaleString("en")} trades over ${MARKETS.toLocaleString("en")} markets published in 5,000-event batches while the actors consume (publish with the bus's fsync, decode, apply, index; checkpoints and commits run alongside) | ${eventsPerSecond.toLocaleString("en")} events/s (${seconds.toFixed(2)} s) | ≥ 100,000 events/s per process |`,
      `| Throughput, consuming a backlog: the same ${TRADES.toLocaleString("en")} trades already on the bus when the actors start (timed from the actors' start: load checkpoints, subscribe, decode, apply, index; checkpoints and commits alongside) | ${backlogRate.toLocaleString("en")} events/s (${backlogSeconds.toFixed(2)} s) | ≥ 100,000 events/s per process |`,
      `| Event to visible in the index (= the API), publish included, ${LATENCY_SAMPLES.toLocaleString("en")} trades at ${LATENCY_RATE_PER_S}/s | p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms, max ${latencies[latencies.length - 1]!.toFixed(2)} ms (of which publish, until durable: p50 ${percentile(publishLatencies, 50).toFixed(2)} ms, p99 ${percentile(publishLatencies, 99).toFixed(2)} ms) | p99 < 5 ms embedded |`,
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
