/**
 * Sums a V8 `.cpuprofile` (node `--cpu-prof`) by function and by file: self time (samples whose
 * top frame is the function) and total time (samples with the function anywhere on the stack,
 * counted once per sample). Optionally over a window of the monotonic clock (µs, the bounds the
 * benches print, e.g. `bench/trade.ts --only build`), and per request when told how many.
 *
 * With `--windows <file>` (`bench/trade.ts --only build` and `BENCH_TAIL_WINDOWS`: each request's
 * monotonic bounds and latency), only the samples inside requests slower than `--slower-than` ms
 * (default 5), or with `--faster` inside the others: what the tail's requests spend apart from the
 * typical ones, per request.
 *
 * Run: `npx tsx bench/cpuprofileSummary.ts <file.cpuprofile> [--from µs] [--to µs] [--requests n] [--top n] [--windows file [--slower-than ms] [--faster]]`
 */
import { readFileSync } from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const args = process.argv.slice(2)
const flag = (name: string): number | undefined => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : Number(args[i + 1])
}
const file = args.find((a, i) => !a.startsWith("--") && (i === 0 || !args[i - 1]!.startsWith("--")))
if (file === undefined) throw new Error("usage: cpuprofileSummary <file.cpuprofile> [--from µs] [--to µs] [--requests n] [--top n]")
const from = flag("--from") ?? -Infinity
const to = flag("--to") ?? Infinity
const windowsAt = args.indexOf("--windows")
const slowerThan = flag("--slower-than") ?? 5
const faster = args.includes("--faster")
/** The selected requests' [from, to] µs, in order of start (one in flight: they do not overlap). */
const windows: ReadonlyArray<readonly [number, number]> | undefined =
  windowsAt < 0
    ? undefined
    : (JSON.parse(readFileSync(args[windowsAt + 1]!, "utf8")) as Array<[number, number, number]>)
        .filter(([, , ms]) => (faster ? ms <= slowerThan : ms > slowerThan))
        .map(([a, b]) => [a, b] as const)
        .sort((x, y) => x[0] - y[0])
const requests = flag("--requests") ?? windows?.length
const top = flag("--top") ?? 30

const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

const shortUrl = (url: string): string => {
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) return url.slice(nm + "node_modules/".length)
  const src = url.search(/\/(src|api|test|bench)\//)
  return src >= 0 ? url.slice(src + 1) : url.replace(/^file:\/\//, "")
}
const fnKey = (n: ProfileNode): string => `${n.callFrame.functionName || "(anonymous)"} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
const fileKey = (n: ProfileNode): string => {
  const u = shortUrl(n.callFrame.url)
  if (u === "") return n.callFrame.functionName // (program), (garbage collector), (idle), natives
  const m = /^(@[^/]+\/[^/]+|[^/]+)\//.exec(u)
  // A package's files summed as the package; the project's own by file.
  return u.startsWith("src/") || u.startsWith("api/") ? u : m !== null && !u.startsWith("node:") ? m[1]! : u
}

const selfFn = new Map<string, number>()
const totalFn = new Map<string, number>()
const selfFile = new Map<string, number>()
const totalFile = new Map<string, number>()
const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us)

let t = profile.startTime
let windowUs = 0
let busyUs = 0
let w = 0
const inWindows = (at: number): boolean => {
  if (windows === undefined) return true
  while (w < windows.length && windows[w]![1] < at) w++
  return w < windows.length && windows[w]![0] <= at
}
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0
  if (t < from || t > to || !inWindows(t)) continue
  const dt = profile.timeDeltas[i + 1] ?? 0 // the sample's time is until the next one
  windowUs += dt
  let node = byId.get(profile.samples[i]!)
  if (node === undefined) continue
  if (node.callFrame.functionName !== "(idle)") busyUs += dt
  add(selfFn, fnKey(node), dt)
  add(selfFile, fileKey(node), dt)
  const seenFn = new Set<string>()
  const seenFile = new Set<string>()
  for (; node !== undefined; node = parent.has(node.id) ? byId.get(parent.get(node.id)!) : undefined) {
    const f = fnKey(node)
    const fl = fileKey(node)
    if (!seenFn.has(f)) (seenFn.add(f), add(totalFn, f, dt))
    if (!seenFile.has(fl)) (seenFile.add(fl), add(totalFile, fl, dt))
  }
}

const msOf = (us: number) => (requests !== undefined ? `${(us / 1000 / requests).toFixed(3)} ms/req` : `${(us / 1000).toFixed(1)} ms`)
const table = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [k, us] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${msOf(us).padStart(16)}  ${((100 * us) / Math.max(busyUs, 1)).toFixed(1).padStart(5)}%  ${k}`)
}
if (windows !== undefined) console.log(`${windows.length} requests ${faster ? `of ${slowerThan} ms or less` : `slower than ${slowerThan} ms`}, ${(windows.reduce((a, [x, y]) => a + y - x, 0) / 1000).toFixed(1)} ms inside them`)
console.log(`window ${(windowUs / 1000).toFixed(0)} ms, busy (not idle) ${msOf(busyUs)}`)
table("self by file/package", selfFile)
table("self by function", selfFn)
table("total by file/package", totalFile)
table("total by function", totalFn)
