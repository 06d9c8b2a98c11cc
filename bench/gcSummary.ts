/**
 * Sums the engine main thread's garbage collections (`BENCH_ENGINE_GC_LOG`, written by
 * `bench/engineGcLog.mjs`: `[startUs, pauseMs, kind, flags]` a line) over a window of the
 * monotonic clock (µs, the bounds `bench/trade.ts --only build` prints): count, total, p50 and
 * largest pause per kind. With `--windows <file>` (`BENCH_TAIL_WINDOWS`: each one-in-flight
 * build's bounds and latency), also which collections land inside a build, and the pause inside
 * the builds slower than `--slower-than` ms (default 5) against the others, per build; the window
 * is then the builds' span unless `--from`/`--to` say otherwise.
 *
 * Run: `npx tsx bench/gcSummary.ts <gc.log> [--from µs] [--to µs] [--windows file [--slower-than ms]]`
 */
import { readFileSync } from "node:fs"

type Gc = readonly [startUs: number, pauseMs: number, kind: string, flags: number]

const args = process.argv.slice(2)
const flag = (name: string): number | undefined => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : Number(args[i + 1])
}
const file = args[0]
if (file === undefined || file.startsWith("--")) throw new Error("usage: gcSummary <gc.log> [--from µs] [--to µs] [--windows file [--slower-than ms]]")
const slowerThan = flag("--slower-than") ?? 5
const windowsAt = args.indexOf("--windows")
const windows: ReadonlyArray<readonly [number, number, number]> | undefined =
  windowsAt < 0 ? undefined : (JSON.parse(readFileSync(args[windowsAt + 1]!, "utf8")) as Array<[number, number, number]>).sort((a, b) => a[0] - b[0])
// Without bounds, the windows' span (the one-in-flight builds) when given.
const from = flag("--from") ?? windows?.[0]?.[0] ?? -Infinity
const to = flag("--to") ?? windows?.[windows.length - 1]?.[1] ?? Infinity

const gcs: ReadonlyArray<Gc> = readFileSync(file, "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Gc)
  .filter(([t]) => t >= from && t <= to)
const spanMs = gcs.length === 0 ? 0 : (Math.min(to, gcs[gcs.length - 1]![0]) - Math.max(from, gcs[0]![0])) / 1000
const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

const byKind = new Map<string, Array<number>>()
for (const [, pause, kind] of gcs) byKind.set(kind, [...(byKind.get(kind) ?? []), pause])
console.log(`${gcs.length} collections${Number.isFinite(from) && Number.isFinite(to) ? ` in ${fmt((to - from) / 1000)} ms` : ` over ${fmt(spanMs)} ms`}`)
console.log("| kind | count | total pause ms | p50 ms | max ms |")
console.log("| --- | ---: | ---: | ---: | ---: |")
for (const [kind, pauses] of [...byKind].sort((a, b) => a[0].localeCompare(b[0]))) {
  const s = [...pauses].sort((a, b) => a - b)
  console.log(`| ${kind} | ${s.length} | ${fmt(s.reduce((a, b) => a + b, 0))} | ${fmt(s[Math.floor((s.length - 1) / 2)]!)} | ${fmt(s[s.length - 1]!)} |`)
}

if (windows !== undefined) {
  // Each collection's pause overlapping a build's bounds, charged to that build.
  const inside = (w: readonly [number, number, number]): ReadonlyArray<Gc> =>
    gcs.filter(([t, pause]) => t < w[1] && t + pause * 1000 > w[0])
  const slow = windows.filter((w) => w[2] > slowerThan)
  const fast = windows.filter((w) => w[2] <= slowerThan)
  const perBuild = (ws: ReadonlyArray<readonly [number, number, number]>) => {
    const hits = ws.map(inside)
    const pause = hits.reduce((a, h) => a + h.reduce((b, g) => b + g[1], 0), 0)
    const majors = hits.reduce((a, h) => a + h.filter((g) => g[2] === "major").length, 0)
    const withMajor = hits.filter((h) => h.some((g) => g[2] === "major")).length
    return { n: ws.length, pause: ws.length === 0 ? 0 : pause / ws.length, majors, withMajor }
  }
  const s = perBuild(slow)
  const f = perBuild(fast)
  console.log("")
  console.log(`builds over ${slowerThan} ms: ${s.n}, GC pause inside ${fmt(s.pause)} ms per build, ${s.withMajor} with a major collection (${s.majors} majors)`)
  console.log(`the others: ${f.n}, GC pause inside ${fmt(f.pause)} ms per build, ${f.withMajor} with a major collection (${f.majors} majors)`)
  const majors = gcs.filter((g) => g[2] === "major")
  const landed = majors.filter((g) => windows.some((w) => g[0] < w[1] && g[0] + g[1] * 1000 > w[0]))
  console.log(`major collections in the window: ${majors.length}, ${landed.length} inside a build`)
}
