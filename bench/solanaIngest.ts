/**
 * Solana ingest latency, embedded: slot close → the event delivered by the bus. The world of
 * `test/integration/solana.ingest.test.ts` (`test/support/solanaIngestWorld.ts`): the in-process
 * `Ledger`, its Yellowstone Geyser gRPC server on a real socket, the real Yellowstone ingester at
 * `confirmed`, the embedded bus (temp dir, fsync off as in the test) and the cursor in PGlite.
 *
 * Each sample is one buy in its own slot on an idle pipeline: the buy lands, the slot is closed
 * (`advanceSlot`, which makes it confirmed) and the clock starts; it stops when the bus consumer's
 * handler receives the buy's event. The next sample starts once that event has arrived. A warm-up
 * runs first and is not counted; every sample's event must arrive exactly once.
 *
 * Run: `npm run bench:ingest [-- --quick]` (node with `--max-semi-space-size=64`, as `npm start`).
 * Prints a markdown section and, unless --quick, rewrites it between the `solanaingest` markers
 * in docs/benchmarks.md (appended at the end when absent).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import { launchCurve } from "../src/chain/solana/localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../src/chain/solana/program/ProgramIds.js"
import * as Database from "../src/db/Database.js"
import { SOL } from "../test/support/solanaLifecycle.js"
import { eventually } from "../test/support/eventually.js"
import { actors, buyer, solanaIngestWorld } from "../test/support/solanaIngestWorld.js"

const quick = process.argv.includes("--quick")
const WARMUP = quick ? 20 : 100
const SAMPLES = quick ? 50 : 500

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** The young generation's semi-space flag as given to node, if any. */
const semiSpace = (): string => {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
  const flag = process.execArgv.find((a) => a.startsWith("--max-semi-space-size"))
  return `${flag ?? "default semi-space"}${space === undefined ? "" : `, new space now ${(space.space_size / 1048576).toFixed(0)} MiB`}`
}

const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")

/** A warning when more runnable work than cores was queued (1-min load average), since the tail may then include waiting for a core. */
const oversubscribed = (): string => {
  const load = os.loadavg()[0]!
  const cores = os.availableParallelism()
  return load > cores ? ` The machine was oversubscribed (load ${load.toFixed(1)} on ${cores} cores), so the upper percentiles may include time spent waiting for a core.` : ""
}

const main = async () => {
  const loadStart = loads()
  const startedAt = performance.now()
  const database = ManagedRuntime.make(Database.layer({ url: undefined, dataDir: undefined }))
  const sql = await database.runPromise(SqlClient.SqlClient)
  const w = await solanaIngestWorld(sql)
  try {
    const a = await actors()
    await w.startIngester({ commitment: "confirmed" })
    const curve = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    w.ledger.advanceSlot()
    await eventually(() => (w.received.length === 1 ? true : undefined), { what: "the launch on the bus", deadlineMs: 15_000, intervalMs: 1 })
    const buy = buyer(w.ledger, a.trader, curve.mint.address)

    const latenciesMs: number[] = []
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const r = await buy()
      const t0 = performance.now()
      w.ledger.advanceSlot()
      const got = await eventually(() => w.received.find((x) => x.event.signature === r.signature), { what: `buy ${i} on the bus`, deadlineMs: 15_000, intervalMs: 1 })
      if (i >= WARMUP) latenciesMs.push(got.atMs - t0)
    }
    // Every buy (and the launch) on the bus exactly once.
    const ids = new Set(w.received.map((x) => x.event.id))
    if (w.received.length !== 1 + WARMUP + SAMPLES || ids.size !== w.received.length) {
      throw new Error(`expected ${1 + WARMUP + SAMPLES} distinct events on the bus, got ${w.received.length} (${ids.size} distinct)`)
    }
    latenciesMs.sort((x, y) => x - y)
    const mean = latenciesMs.reduce((s, x) => s + x, 0) / latenciesMs.length
    const cpu = os.cpus()
    const f = (p: number) => percentile(latenciesMs, p).toFixed(2)

    const section = [
      "## Solana ingest, embedded (`bench/solanaIngest.ts`)",
      "",
      `- Date: ${new Date().toISOString()} (took ${((performance.now() - startedAt) / 1000).toFixed(0)} s); command: \`npm run bench:ingest\` (${semiSpace()})`,
      `- Machine: ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${cpu.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()} ${os.arch()}; Node ${process.version}`,
      `- Load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}.${oversubscribed()}`,
      "- In one process: the in-process Solana `Ledger`, its Yellowstone Geyser gRPC server on a real socket (127.0.0.1), the Yellowstone ingester at `confirmed`, the embedded bus (temp dir, 4 partitions, fsync off) and the cursor in PGlite. " +
        `Each sample: one buy, then the slot closes (\`advanceSlot\`, which confirms it); timed from the close until the bus consumer's handler gets the buy's event; the next sample starts after it arrived. ${WARMUP} warm-up samples not counted; each event arrived exactly once.`,
      "",
      "| Measurement | Result |",
      "| --- | ---: |",
      `| Slot close → event delivered by the bus, ${SAMPLES} samples | p50 ${f(50)} ms, p90 ${f(90)} ms, p99 ${f(99)} ms, max ${latenciesMs[latenciesMs.length - 1]!.toFixed(2)} ms (mean ${mean.toFixed(2)} ms) |`,
      ""
    ].join("\n")
    process.stdout.write(section + "\n")
    if (!quick) {
      const doc = path.join(import.meta.dirname, "..", "docs", "benchmarks.md")
      const text = fs.existsSync(doc) ? fs.readFileSync(doc, "utf8") : "# Benchmarks\n"
      const block = `<!-- solanaingest:begin -->\n${section}<!-- solanaingest:end -->`
      const re = /<!-- solanaingest:begin -->[\s\S]*<!-- solanaingest:end -->/
      fs.writeFileSync(doc, re.test(text) ? text.replace(re, block) : `${text.trimEnd()}\n\n${block}\n`)
    }
  } finally {
    await w.dispose()
    await database.dispose()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
