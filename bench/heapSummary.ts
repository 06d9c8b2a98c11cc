/**
 * Sums a V8 sampling heap profile (`.heapprofile`: `bench/engineGcLog.mjs` with
 * `BENCH_ENGINE_HEAP_SAMPLE`, best with `BENCH_ENGINE_HEAP_SAMPLE_ALL=1` so every allocation counts,
 * not only what reached the old generation) four ways: by the module of the allocating function
 * (a package under node_modules, or the project file), by allocating function, by the nearest
 * project frame on the stack (the project's own code that asked for it, libraries below it
 * included), and by project frame anywhere on the stack (inclusive). Sizes are V8's estimates
 * (each sample scaled by its sampling odds), in KB, per request with `--requests n`.
 *
 * `--minus <other.heapprofile> --minus-scale f`: subtracts another window's profile scaled by `f`
 * (the engine at rest, scaled by this window's time over its own: the background's share), per
 * row.
 *
 * tsx hands V8 each project file compiled onto one line: `--tsx-cache <dir>` (tsx's cache,
 * `/tmp/tsx-<uid>`) maps a project frame's column back to its source line through the newest
 * cached compilation of that file and its source map (node's `SourceMap`).
 *
 * Run: `npx tsx bench/heapSummary.ts <file.heapprofile> [--requests n] [--top n] [--minus file --minus-scale f] [--tsx-cache dir]`
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { SourceMap } from "node:module"
import * as path from "node:path"

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<HeapNode>
}
interface HeapProfile {
  readonly head: HeapNode
}

const args = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name)
  return i < 0 ? undefined : args[i + 1]
}
const file = args[0]
if (file === undefined || file.startsWith("--")) throw new Error("usage: heapSummary <file.heapprofile> [--requests n] [--top n] [--minus file --minus-scale f]")
const requests = Number(flag("--requests") ?? 1)
const top = Number(flag("--top") ?? 25)
const minusFile = flag("--minus")
const minusScale = Number(flag("--minus-scale") ?? 1)
const tsxCache = flag("--tsx-cache")

/** Each project file's newest tsx compilation's source map, read once (undefined: none found). */
const sourceMaps = new Map<string, SourceMap | undefined>()
const indexCache = (): Map<string, SourceMap> => {
  const out = new Map<string, { map: SourceMap; mtime: number }>()
  if (tsxCache === undefined) return new Map()
  for (const name of readdirSync(tsxCache)) {
    const f = path.join(tsxCache, name)
    let text: string
    try {
      text = readFileSync(f, "utf8")
    } catch {
      continue
    }
    if (!text.startsWith('{"code"')) continue
    try {
      const entry = JSON.parse(text) as { map?: { sources?: ReadonlyArray<string> } }
      const source = entry.map?.sources?.[0]
      if (source === undefined) continue
      const mtime = statSync(f).mtimeMs
      const seen = out.get(source)
      if (seen === undefined || seen.mtime < mtime) out.set(source, { map: new SourceMap(entry.map as never), mtime })
    } catch {
      continue
    }
  }
  return new Map([...out].map(([k, v]) => [k, v.map]))
}
let cacheIndex: Map<string, SourceMap> | undefined
/** A project frame's source line (1-based) through tsx's source map, or undefined. */
const sourceLine = (url: string, line: number, column: number): number | undefined => {
  if (tsxCache === undefined || !url.startsWith("file://")) return undefined
  const file = url.slice("file://".length)
  if (!sourceMaps.has(file)) sourceMaps.set(file, (cacheIndex ??= indexCache()).get(file))
  const entry = sourceMaps.get(file)?.findEntry(line, column) as { originalLine?: number } | undefined
  return entry?.originalLine === undefined ? undefined : entry.originalLine + 1
}

/** A package (`effect`, `@solana/kit`) for node_modules, the project path otherwise (`src/...`), `(native)` for V8's own frames. */
export const moduleOf = (url: string): string => {
  if (url === "") return "(native)"
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (url.startsWith("node:")) return url
  const project = url.search(/\/(src|api|actors|ingest|test|bench)\//)
  return project >= 0 ? url.slice(project + 1) : url.replace(/^file:\/\//, "")
}

const isProject = (url: string): boolean => url !== "" && !url.includes("node_modules/") && !url.startsWith("node:") && /\/(src|api|actors|ingest)\//.test(url)

/** Within a package, its file too (`effect/dist/esm/internal/fiberRuntime.js`). */
const fileOf = (url: string): string => {
  const nm = url.lastIndexOf("node_modules/")
  return nm >= 0 ? url.slice(nm + "node_modules/".length) : moduleOf(url)
}

const frameName = (n: HeapNode): string => {
  const { functionName, url, lineNumber, columnNumber } = n.callFrame
  const line = (isProject(url) ? sourceLine(url, lineNumber, columnNumber) : undefined) ?? lineNumber + 1
  return `${functionName === "" ? "(anonymous)" : functionName} ${fileOf(url)}:${line}`
}

type Sums = { readonly byModule: Map<string, number>; readonly byFunction: Map<string, number>; readonly byCaller: Map<string, number>; readonly byProjectFrame: Map<string, number>; total: number }

const sum = (profile: HeapProfile): Sums => {
  const s: Sums = { byModule: new Map(), byFunction: new Map(), byCaller: new Map(), byProjectFrame: new Map(), total: 0 }
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v)
  // Iterative walk: the stack of project frames above each node, each counted once per node.
  const walk = (root: HeapNode) => {
    const todo: Array<{ node: HeapNode; projectFrames: ReadonlyArray<string> }> = [{ node: root, projectFrames: [] }]
    while (todo.length > 0) {
      const { node, projectFrames } = todo.pop()!
      const here = isProject(node.callFrame.url) ? [...projectFrames, frameName(node)] : projectFrames
      if (node.selfSize > 0) {
        s.total += node.selfSize
        add(s.byModule, moduleOf(node.callFrame.url), node.selfSize)
        add(s.byFunction, frameName(node), node.selfSize)
        add(s.byCaller, here[here.length - 1] ?? "(no project frame)", node.selfSize)
        for (const f of new Set(here)) add(s.byProjectFrame, f, node.selfSize)
      }
      for (const c of node.children) todo.push({ node: c, projectFrames: here })
    }
  }
  walk(profile.head)
  return s
}

const read = (f: string): HeapProfile => JSON.parse(readFileSync(f, "utf8")) as HeapProfile
const main = sum(read(file))
const minus = minusFile === undefined ? undefined : sum(read(minusFile))
const kb = (b: number): string => (b / 1024 / requests).toFixed(b / 1024 / requests >= 10 ? 0 : 1)

const table = (title: string, m: Map<string, number>, other: Map<string, number> | undefined) => {
  const rows = [...m].map(([k, v]) => [k, v - (other?.get(k) ?? 0) * minusScale] as const).sort((a, b) => b[1] - a[1])
  console.log(`\n### ${title}\n`)
  console.log(`| ${title.split(" ")[1] ?? "what"} | KB${requests === 1 ? "" : " per request"} |`)
  console.log("| --- | ---: |")
  for (const [k, v] of rows.slice(0, top)) console.log(`| \`${k}\` | ${kb(v)} |`)
}

const total = main.total - (minus?.total ?? 0) * minusScale
console.log(`${file}: ${kb(total)} KB${requests === 1 ? "" : ` per request (${requests})`}${minus === undefined ? "" : ` net of ${minusFile} × ${minusScale} (${kb(main.total)} before)`}`)
table("By module (of the allocating function)", main.byModule, minus?.byModule)
table("By function (allocating)", main.byFunction, minus?.byFunction)
table("By caller (the nearest project frame)", main.byCaller, minus?.byCaller)
table("By project frame (anywhere on the stack)", main.byProjectFrame, minus?.byProjectFrame)
