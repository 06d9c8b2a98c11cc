// Preloaded into an engine a bench starts (`node --import <this file>`, bench/trade.ts with
// `BENCH_ENGINE_GC_LOG=<file>`): every garbage collection of the engine's main thread, as V8 reports
// it to `perf_hooks` (`gc` entries: the pause, its kind), appended to the file as one JSON array a
// line, `[startUs, pauseMs, kind, flags]`, the start on the monotonic clock in µs (the clock of the
// bench's `BENCH_TAIL_WINDOWS` and of `--cpu-prof`), kind "major" / "minor" / "incremental" /
// "weakcb". `BENCH_ENGINE_TRACE_GC=1` also turns on V8's `--trace-gc` (heap sizes and the reason
// of each collection, on stdout, every thread; NODE_OPTIONS refuses the flag, so it is set here).
//
// Windows: each pair of SIGUSR2 the bench sends (bench/trade.ts: around the engine at rest and
// around each build mode) opens and closes a window, numbered from 1.
// `BENCH_ENGINE_ALLOC=<file>`: per window one JSON line, `{ window, ms, allocatedBytes,
// youngBytes, scavenges, scavengeMs, majors, majorMs }`: the bytes the main thread allocated
// (from V8's own heap statistics before and after every collection, `v8.GCProfiler`: what each
// collection found in use less what the one before it left, plus the end's use less the last
// one's; `youngBytes` the same over the young generation alone, what drives the scavenges) and the
// collections, their count and pause (V8's own cost of each).
// `BENCH_ENGINE_HEAP_SAMPLE=<file>`: V8's sampling heap profiler over each window, written to
// `<file>.<window>.heapprofile`: by allocation site, what the window allocated that was still
// alive or died in a major collection (it survived into the old generation: what the major
// collections mark); with `BENCH_ENGINE_HEAP_SAMPLE_ALL=1` every allocation (the minor collections'
// too: all the window allocated, estimated from 16 KiB samples). `bench/heapSummary.ts` reads it.
// Plain JS: it loads before tsx. `bench/gcSummary.ts` reads the GC file.
import { appendFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { constants, PerformanceObserver, performance } from "node:perf_hooks"
import { GCProfiler, getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from "node:v8"
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
const allocFile = process.env.BENCH_ENGINE_ALLOC
const sampleHeap = heapFile !== undefined && heapFile !== ""
const countAlloc = allocFile !== undefined && allocFile !== ""
if (isEngine && (sampleHeap || countAlloc)) {
  const session = sampleHeap ? new Session() : undefined
  session?.connect()
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r))))
  /** The young generation's bytes in use (new space and its large objects), from heap space statistics. */
  // (`v8.getHeapSpaceStatistics` names its fields in snake case, the GC profiler's JSON in camel case.)
  const youngOf = (spaces) =>
    spaces.reduce((a, s) => {
      const name = s.spaceName ?? s.space_name
      return name === "new_space" || name === "new_large_object_space" ? a + (s.spaceUsedSize ?? s.space_used_size) : a
    }, 0)
  let window = 0
  let open
  process.on("SIGUSR2", () => {
    if (open === undefined) {
      window++
      const profiler = countAlloc ? new GCProfiler() : undefined
      open = {
        window,
        t0: performance.now(),
        used0: getHeapStatistics().used_heap_size,
        young0: youngOf(getHeapSpaceStatistics()),
        profiler
      }
      profiler?.start()
      if (sampleHeap) {
        const all = process.env.BENCH_ENGINE_HEAP_SAMPLE_ALL === "1"
        void post("HeapProfiler.startSampling", { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: all })
      }
      return
    }
    const w = open
    open = undefined
    if (w.profiler !== undefined) {
      const used1 = getHeapStatistics().used_heap_size
      const young1 = youngOf(getHeapSpaceStatistics())
      const { statistics } = w.profiler.stop()
      let allocated = 0
      let young = 0
      let lastUsed = w.used0
      let lastYoung = w.young0
      let scavenges = 0
      let scavengeUs = 0
      let majors = 0
      let majorUs = 0
      for (const g of statistics) {
        allocated += Math.max(0, g.beforeGC.heapStatistics.usedHeapSize - lastUsed)
        young += Math.max(0, youngOf(g.beforeGC.heapSpaceStatistics) - lastYoung)
        lastUsed = g.afterGC.heapStatistics.usedHeapSize
        lastYoung = youngOf(g.afterGC.heapSpaceStatistics)
        if (g.gcType === "Scavenge" || g.gcType === "MinorMarkSweep") {
          scavenges++
          scavengeUs += g.cost
        } else if (g.gcType === "MarkSweepCompact") {
          majors++
          majorUs += g.cost
        }
      }
      allocated += Math.max(0, used1 - lastUsed)
      young += Math.max(0, young1 - lastYoung)
      appendFileSync(
        allocFile,
        JSON.stringify({
          window: w.window,
          ms: Number((performance.now() - w.t0).toFixed(1)),
          allocatedBytes: allocated,
          youngBytes: young,
          scavenges,
          scavengeMs: Number((scavengeUs / 1000).toFixed(2)),
          majors,
          majorMs: Number((majorUs / 1000).toFixed(2))
        }) + "\n"
      )
    }
    if (sampleHeap) void post("HeapProfiler.stopSampling").then(({ profile }) => writeFileSync(`${heapFile}.${w.window}.heapprofile`, JSON.stringify(profile)))
  })
}
