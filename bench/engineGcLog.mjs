// Preloaded into an engine a bench starts (`node --import <this file>`, bench/trade.ts with
// `BENCH_ENGINE_GC_LOG=<file>`): every garbage collection of the engine's main thread, as V8 reports
// it to `perf_hooks` (`gc` entries: the pause, its kind), appended to the file as one JSON array a
// line, `[startUs, pauseMs, kind, flags]`, the start on the monotonic clock in µs (the clock of the
// bench's `BENCH_TAIL_WINDOWS` and of `--cpu-prof`), kind "major" / "minor" / "incremental" /
// "weakcb". `BENCH_ENGINE_TRACE_GC=1` also turns on V8's `--trace-gc` (heap sizes and the reason
// of each collection, on stdout, every thread; NODE_OPTIONS refuses the flag, so it is set here).
// `BENCH_ENGINE_HEAP_SAMPLE=<file>`: V8's sampling heap profiler on the main thread between two
// SIGUSR2 (bench/trade.ts sends them around the one-in-flight build phase), written to
// `<file>.heapprofile`: by allocation site, what the phase allocated that was still alive or
// died in a major collection (it survived into the old generation: what the major collections
// mark); with `BENCH_ENGINE_HEAP_SAMPLE_ALL=1` every allocation (the minor collections' too).
// Plain JS: it loads before tsx. `bench/gcSummary.ts` reads the GC file.
import { appendFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { constants, PerformanceObserver, performance } from "node:perf_hooks"
import { setFlagsFromString } from "node:v8"
import { isMainThread } from "node:worker_threads"

/** Only in the engine (its entry `src/main.ts`): not in a bench or npm process that inherited NODE_OPTIONS. */
const isEngine = isMainThread && process.argv.some((a) => a.endsWith("src/main.ts"))
const file = process.env.BENCH_ENGINE_GC_LOG
if (isEngine && file !== undefined && file !== "") {
  if (process.env.BENCH_ENGINE_TRACE_GC === "1") setFlagsFromString("--trace-gc")
  // performance.now() 0 on the monotonic clock, in µs.
  const originUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
    [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb"
  }
  let pending = []
  const flush = () => {
    if (pending.length === 0) return
    appendFileSync(file, pending.map((e) => JSON.stringify(e)).join("\n") + "\n")
    pending = []
  }
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      pending.push([Math.round(originUs + e.startTime * 1000), Number(e.duration.toFixed(3)), kinds[e.detail?.kind] ?? String(e.detail?.kind), e.detail?.flags ?? 0])
    }
  }).observe({ entryTypes: ["gc"] })
  setInterval(flush, 2000).unref()
  process.on("exit", flush)
}

const heapFile = process.env.BENCH_ENGINE_HEAP_SAMPLE
if (isEngine && heapFile !== undefined && heapFile !== "") {
  const session = new Session()
  session.connect()
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r))))
  let sampling = false
  process.on("SIGUSR2", () => {
    if (!sampling) {
      sampling = true
      const all = process.env.BENCH_ENGINE_HEAP_SAMPLE_ALL === "1"
      void post("HeapProfiler.startSampling", { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: all })
      return
    }
    sampling = false
    void post("HeapProfiler.stopSampling").then(({ profile }) => writeFileSync(`${heapFile}.heapprofile`, JSON.stringify(profile)))
  })
}
