/**
 * The actors' read-model encoding of one drain (`encodeDrain`, actors/replica/ReadModelCodec.ts:
 * each changed market's core in a binary record, the snapshots views of the feed record) side by
 * side in one run with the encoder before it (`test/support/readModelCodecBefore.ts`: each
 * market's whole state, retract window included, in the checkpoint codec's JSON, and that text
 * again as a JSON string inside the feed record), on real market states (the fold of
 * `test/support/marketWorkload`); and what a replica pays to decode each (`decodeFeedRecord` of
 * the records each wrote). Both are checked to carry the same cores before timing.
 *
 * Cases: drains of 16, 256 and 1,024 changed markets (`drainMax` is 1,024 events), the larger
 * ones past `FEED_RECORD_MAX_BYTES` (256 KiB) in the JSON and so cut into several feed records.
 * Each round times every variant once per case, in an order that alternates between rounds; the
 * figure is the median over rounds of the process's CPU time per change (µs, `process.cpuUsage`:
 * another process's turn on a shared core is not counted), the spread in brackets (min–max).
 *
 * Run: `npm run bench:readmodelcodec [-- --quick]` (the project's Node 22; `npm start`'s heap flag; default 30 rounds, about 1 minute on the 2-core VM; --quick 6 rounds).
 * Prints a markdown section and, unless --quick, rewrites it between the `readmodelcodec` markers
 * in docs/benchmarks.md. Printed, never asserted.
 */
import * as os from "node:os"
import { isDeepStrictEqual } from "node:util"
import { encodeMarketState } from "../actors/market/MarketCodec.js"
import { decodeFeedRecord, encodeDrain, encodeSnapshot, FEED_RECORD_MAX_BYTES, type MarketChange } from "../actors/replica/ReadModelCodec.js"
import { foldStates, workload } from "../test/support/marketWorkload.js"
import { encodeDrainBefore } from "../test/support/readModelCodecBefore.js"
import { writeBenchmarkSection } from "./benchmarksDoc.js"

const quick = process.argv.includes("--quick")
const ROUNDS = quick ? 6 : 30
const CASES = [16, 256, 1_024] as const
/** Drains timed per case, variant and round (more for the small drains, so each timing is a few ms). */
const repsOf = (changes: number) => Math.max(2, Math.round(4_096 / changes))

const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")
const loadStart = loads()
const startedAt = performance.now()

// Real states: 600 markets (300 per chain) after 30 trade rounds, some graduated, some migrated.
const states = [...foldStates(workload(300, 30))]
const encoder = new TextEncoder()
const stateBytes = states.map(([, s]) => encoder.encode(encodeMarketState(s)).byteLength).sort((a, b) => a - b)
const coreBytes = states.map(([, s]) => encodeSnapshot(s).byteLength).sort((a, b) => a - b)
const changesOf = (n: number): ReadonlyArray<MarketChange> =>
  Array.from({ length: n }, (_, i) => {
    const [key, state] = states[i % states.length]!
    // One change in 50 a tombstone; keys distinct within the drain.
    return [i < states.length ? key : `${key}#${i}`, i % 50 === 49 ? undefined : state] as const
  })

const variants = [
  { name: "encode, before (the whole state's JSON, again inside the feed's)", run: (c: ReadonlyArray<MarketChange>) => encodeDrainBefore(c).feeds.length },
  { name: "encode, now (the core's binary record, the snapshots views of the feed's)", run: (c: ReadonlyArray<MarketChange>) => encodeDrain(c).feeds.length }
] as const

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rows: Array<string> = []
for (const size of CASES) {
  const changes = changesOf(size)
  const before = encodeDrainBefore(changes)
  const now = encodeDrain(changes)
  const cores = (feeds: ReadonlyArray<Uint8Array>) => feeds.flatMap((f) => decodeFeedRecord(f)).map(([key, s]) => [key, s?.core])
  if (!isDeepStrictEqual(cores(before.feeds), cores(now.feeds))) throw new Error(`the two encoders carry different cores on ${size} changes`)
  const decoders = [
    { name: "decode, before", run: () => before.feeds.forEach(decodeFeedRecord) },
    { name: "decode, now", run: () => now.feeds.forEach(decodeFeedRecord) }
  ]
  const timed = [...variants.map((v) => ({ name: v.name, run: () => v.run(changes) })), ...decoders]
  const reps = repsOf(size)
  for (let w = 0; w < 3; w++) for (const v of timed) for (let r = 0; r < reps; r++) v.run()
  const perChange: Array<Array<number>> = timed.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1, 2, 3] : [3, 2, 1, 0]
    for (const i of order) {
      // The process's CPU time (user + system), not the wall clock: on a shared machine another process's turn on the core is not this encoder's.
      const t0 = process.cpuUsage()
      for (let r = 0; r < reps; r++) timed[i]!.run()
      const spent = process.cpuUsage(t0)
      perChange[i]!.push((spent.user + spent.system) / (reps * size))
    }
  }
  const kib = (feeds: ReadonlyArray<Uint8Array>) => `${feeds.length} record(s), ${(feeds.reduce((n, f) => n + f.byteLength, 0) / 1024).toFixed(0)} KiB`
  const drain = `${size.toLocaleString("en-US")} changes: before ${kib(before.feeds)}; now ${kib(now.feeds)}`
  timed.forEach((v, i) => {
    const xs = perChange[i]!
    rows.push(`| ${i === 0 ? drain : ""} | ${v.name} | ${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}) |`)
  })
  const [eb, en, db, dn] = perChange.map(median) as [number, number, number, number]
  rows.push(`| | now ÷ before, medians: encode; decode | ${(en / eb).toFixed(2)}x; ${(dn / db).toFixed(2)}x |`)
}

const section = [
  "## Read-model drain encoding (`bench/readModelCodec.ts`)",
  "",
  `- Date: ${new Date().toISOString()} (took ${((performance.now() - startedAt) / 1000).toFixed(0)} s); command: \`node --max-semi-space-size=64 --import tsx bench/readModelCodec.ts${quick ? " --quick" : ""}\`; Node ${process.version}, ${os.cpus().length} cores; load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}.`,
  `- ${states.length} real market states (\`foldStates(workload(300, 30))\`), their JSON (before) ${stateBytes[0]}–${stateBytes[stateBytes.length - 1]} bytes (median ${median(stateBytes)}), their core's record (now) ${coreBytes[0]}–${coreBytes[coreBytes.length - 1]} bytes (median ${median(coreBytes)}); one change in 50 a tombstone; \`FEED_RECORD_MAX_BYTES\` ${FEED_RECORD_MAX_BYTES / 1024} KiB. ${ROUNDS} rounds, each variant once per round per case (order alternating), ${CASES.map((c) => `${repsOf(c)} drains of ${c}`).join(", ")} per timing; median µs of process CPU time (user + system) per change (min–max over rounds). The two encoders' records were checked to carry the same cores before timing.`,
  "",
  "| Drain | Step | CPU µs per change |",
  "| --- | --- | ---: |",
  ...rows,
  ""
].join("\n")

process.stdout.write(`${section}\n`)
if (!quick) writeBenchmarkSection("readmodelcodec", section)
