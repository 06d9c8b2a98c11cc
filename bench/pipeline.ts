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
 * Run: `npx tsx bench/pipeline.ts [--quick]`. Prints a markdown section and, unless --quick,
 * rewrites it between the `pipeline` markers in docs/benchmarks.md.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as MarketActors from "../actors/MarketActors.js"
import { MarketIndex, type MarketIndexShape } from "../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../actors/testing/MarketSim.js"
import { Bus, Topics } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../ingest/ChainEvent.js"
import { encodeChainEvent } from "../ingest/ChainEventCodec.js"
import * as Database from "../src/db/Database.js"

const quick = process.argv.includes("--quick")
const MARKETS = quick ? 200 : 1_000
const TRADES = quick ? 20_000 : 200_000
const LATENCY_SAMPLES = quick ? 200 : 2_000
const LATENCY_RATE_PER_S = 500
/** `BENCH_FSYNC=0` measures without the bus's fdatasync, to separate the disk's share. */
const FSYNC = process.env.BENCH_FSYNC !== "0"

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const open = async (dir: string) => {
  const scope = await Effect.runPromise(Scope.make())
  const layer = MarketActors.layer({}).pipe(
    Layer.provideMerge(Layer.mergeAll(EmbeddedBus.layer({ dir: path.join(dir, "bus"), fsync: FSYNC }), Database.layer({ url: undefined, dataDir: path.join(dir, "pg") })))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return {
    scope,
    index: context.unsafeMap.get(MarketIndex.key) as MarketIndexShape,
    bus: context.unsafeMap.get(Bus.key) as Bus["Type"]
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
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const events = target.buy("latency", 1_000_000n + BigInt(i))
      const position = events[events.length - 1]!.position
      const t0 = performance.now()
      await publish(run.bus, events)
      while ((run.index.market("solana", target.mint)?.lastPosition ?? "") < position) await new Promise((r) => setImmediate(r))
      latencies.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 1000 / LATENCY_RATE_PER_S))
    }
    await Effect.runPromise(Scope.close(run.scope, Exit.void))
    latencies.sort((a, b) => a - b)

    const section = [
      "## Actor pipeline, embedded (`bench/pipeline.ts`)",
      "",
      `- Date: ${new Date().toISOString()}; command: \`npx tsx bench/pipeline.ts\`; Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"})`,
      `- Embedded bus in a temp dir with fsync ${FSYNC ? "on" : "off (BENCH_FSYNC=0)"}, PGlite checkpoints, default shards (${2 * os.availableParallelism()}); load average at the end ${os.loadavg()[0]!.toFixed(2)}.`,
      "",
      "| Measurement | Result | Budget (DESIGN.md) |",
      "| --- | ---: | --- |",
      `| Throughput: ${TRADES.toLocaleString("en")} trades over ${MARKETS.toLocaleString("en")} markets published in 5,000-event batches while the actors consume (publish with the bus's fsync, decode, apply, index; checkpoints and commits run alongside) | ${eventsPerSecond.toLocaleString("en")} events/s (${seconds.toFixed(2)} s) | ≥ 100,000 events/s per process |`,
      `| Event to visible in the index (= the API), publish included, ${LATENCY_SAMPLES.toLocaleString("en")} trades at ${LATENCY_RATE_PER_S}/s | p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms, max ${latencies[latencies.length - 1]!.toFixed(2)} ms | p99 < 5 ms embedded |`,
      ""
    ].join("\n")
    process.stdout.write(section + "\n")
    if (!quick) {
      const doc = path.join(import.meta.dirname, "..", "docs", "benchmarks.md")
      const text = fs.existsSync(doc) ? fs.readFileSync(doc, "utf8") : "# Benchmarks\n"
      const block = `<!-- pipeline:begin -->\n${section}<!-- pipeline:end -->`
      const next = /<!-- pipeline:begin -->[\s\S]*<!-- pipeline:end -->/.test(text)
        ? text.replace(/<!-- pipeline:begin -->[\s\S]*<!-- pipeline:end -->/, block)
        : `${text.trimEnd()}\n\n${block}\n`
      fs.writeFileSync(doc, next)
    }
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
