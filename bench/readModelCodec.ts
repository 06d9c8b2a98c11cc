/**
 * The actors' read-model encoding of one drain (`encodeDrain`, actors/replica/ReadModelCodec.ts),
 * side by side in one run with the encoder before it (`test/support/readModelCodecBefore.ts`:
 * each change's feed part stringified, counted with `Buffer.byteLength`, the record joined as a
 * string and UTF-8 encoded again), on real market states (the fold of `test/support/marketWorkload`).
 * Both give the same bytes (checked once per case before timing). The floor is the work neither
 * can avoid: each state's `encodeMarketState` and its snapshot bytes.
 *
 * Cases: drains of 16, 256 and 1,024 changed markets (`drainMax` is 1,024 events), the last two
 * past `FEED_RECORD_MAX_BYTES` (256 KiB) and so cut into several feed records. Each round times
 * every variant once per case, in an order that alternates between rounds; the figure is the
 * median over rounds of the process's CPU time per change (µs, `process.cpuUsage`: another
 * process's turn on a shared core is not counted), the spread in brackets (min–max).
 *
 * Run: `npm run bench:readmodelcodec [-- --quick]` (the project's Node 22; `npm start`'s heap flag; default 30 rounds, about 1 minute on the 2-core VM; --quick 6 rounds).
 * Prints a markdown section and, unless --quick, rewrites it between the `readmodelcodec` markers
 * in docs/benchmarks.md. Printed, never asserted.
 */
import * as os from "node:os"
import { encodeMarketState } from "../actors/market/MarketCodec.js"
import { encodeDrain, FEED_RECORD_MAX_BYTES, type MarketChange } from "../actors/replica/ReadModelCodec.js"
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
const changesOf = (n: number): ReadonlyArray<MarketChange> =>
  Array.from({ length: n }, (_, i) => {
    const [key, state] = states[i % states.length]!
    // One change in 50 a tombstone; keys distinct within the drain.
    return [i < states.length ? key : `${key}#${i}`, i % 50 === 49 ? undefined : state] as const
  })

const floor = (changes: ReadonlyArray<MarketChange>) => {
  let n = 0
  for (const [, state] of changes) if (state !== undefined) n += encoder.encode(encodeMarketState(state)).byteLength
  return n
}

const variants = [
  { name: "before (stringify, byteLength, join, encode the record)", run: (c: ReadonlyArray<MarketChange>) => encodeDrainBefore(c).feeds.length },
  { name: "now (each part encoded once, the record copied together)", run: (c: ReadonlyArray<MarketChange>) => encodeDrain(c).feeds.length },
  { name: "floor (encodeMarketState and the snapshot bytes only)", run: floor }
] as const

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rows: Array<string> = []
for (const size of CASES) {
  const changes = changesOf(size)
  const before = encodeDrainBefore(changes)
  const now = encodeDrain(changes)
  if (before.feeds.length !== now.feeds.length || before.feeds.some((f, i) => hex(f) !== hex(now.feeds[i]!))) throw new Error(`the two encoders differ on ${size} changes`)
  const reps = repsOf(size)
  for (let w = 0; w < 3; w++) for (const v of variants) for (let r = 0; r < reps; r++) v.run(changes)
  const perChange: Array<Array<number>> = variants.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0]
    for (const i of order) {
      // The process's CPU time (user + system), not the wall clock: on a shared machine another process's turn on the core is not this encoder's.
      const t0 = process.cpuUsage()
      for (let r = 0; r < reps; r++) variants[i]!.run(changes)
      const spent = process.cpuUsage(t0)
      perChange[i]!.push((spent.user + spent.system) / (reps * size))
    }
  }
  const feedBytes = now.feeds.reduce((s, f) => s + f.byteLength, 0)
  variants.forEach((v, i) => {
    const xs = perChange[i]!
    rows.push(
      `| ${size.toLocaleString("en-US")} changes: ${now.feeds.length} feed record(s), ${(feedBytes / 1024).toFixed(0)} KiB | ${v.name} | ${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}) |`
    )
  })
  const [b, n, f] = perChange.map(median) as [number, number, number]
  const [bMin, nMin, fMin] = perChange.map((xs) => Math.min(...xs)) as [number, number, number]
  rows.push(
    `| | now ÷ before, medians (the fastest rounds); the feed part's cost over the floor, before → now | ${(n / b).toFixed(2)}x (${(nMin / bMin).toFixed(2)}x); ${(b - f).toFixed(2)} → ${(n - f).toFixed(2)} µs per change (${(bMin - fMin).toFixed(2)} → ${(nMin - fMin).toFixed(2)}) |`
  )
}

const section = [
  "## Read-model drain encoding (`bench/readModelCodec.ts`)",
  "",
  `- Date: ${new Date().toISOString()} (took ${((performance.now() - startedAt) / 1000).toFixed(0)} s); command: \`node --max-semi-space-size=64 --import tsx bench/readModelCodec.ts${quick ? " --quick" : ""}\`; Node ${process.version}, ${os.cpus().length} cores; load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}.`,
  `- ${states.length} real market states (\`foldStates(workload(300, 30))\`), encoded ${stateBytes[0]}–${stateBytes[stateBytes.length - 1]} bytes (median ${median(stateBytes)}); one change in 50 a tombstone; \`FEED_RECORD_MAX_BYTES\` ${FEED_RECORD_MAX_BYTES / 1024} KiB. ${ROUNDS} rounds, each variant once per round per case (order alternating), ${CASES.map((c) => `${repsOf(c)} drains of ${c}`).join(", ")} per timing; median µs of process CPU time (user + system) per change (min–max over rounds). The two encoders' records were checked equal byte for byte before timing.`,
  "",
  "| Drain | Encoder | CPU µs per change |",
  "| --- | --- | ---: |",
  ...rows,
  ""
].join("\n")

process.stdout.write(`${section}\n`)
if (!quick) writeBenchmarkSection("readmodelcodec", section)
