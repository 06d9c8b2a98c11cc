/**
 * Memory per live market (DESIGN.md budget: 100k live markets in under 1 GiB). Builds N markets
 * (Solana, and Hood with its 8-event retract window) through the market actor's `step`,
 * publishes them into a `MarketIndexStore` as the shards do, serializes every record once (what a
 * read caches), and measures the heap after a forced GC. Hood twice: all hot (every market traded
 * within the reorg window, so each keeps its full retract window) and idle (the chain has moved
 * past the window since, and the runtime's sweep, `makeTrimHistory`, has folded the history away).
 *
 * Run: `npm run bench:memory [-- --quick]` (node with `--expose-gc`). Prints a markdown section and,
 * unless --quick, rewrites it between the `memory` markers in docs/benchmarks.md. The default
 * (100,000 markets per case) took 151 s on the 2-core VM at load 6–7 (2026-11-30); --quick (10,000)
 * about 18 s. It took over 15 minutes before the simulator's events were built without Schema
 * validation (`validate: false` below, issue 34).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { defaultConfig, hoodBlockOf, makeStep, makeTrimHistory, type MarketState } from "../actors/market/MarketActor.js"
import { MarketIndexStore } from "../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import { Either } from "effect"
import type { ChainEvent, ChainId } from "../ingest/ChainEvent.js"
import { decodeChainEvent, encodeChainEvent } from "../ingest/ChainEventCodec.js"

const quick = process.argv.includes("--quick")
const MARKETS = quick ? 10_000 : 100_000
const TRADES_PER_MARKET = 10
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:memory)")

const heap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

const measure = (chain: ChainId, idle = false): { readonly bytesPerMarket: number; readonly totalMiB: number; readonly kept: number } => {
  const step = makeStep(defaultConfig)
  const trim = makeTrimHistory(defaultConfig)
  const before = heap()
  const index = new MarketIndexStore()
  const states = new Map<string, MarketState>()
  const clock = new ChainClock(chain)
  const mintOf = (i: number) => (chain === "hood" ? `0x${i.toString(16).padStart(40, "0")}` : `Mem${String(i).replace(/0/g, "z").padStart(40, "A")}`)
  for (let start = 0; start < MARKETS; start += 1_000) {
    const changes = new Map<string, MarketState | undefined>()
    for (let i = start; i < Math.min(MARKETS, start + 1_000); i++) {
      const market = new SimMarket(clock, { mint: mintOf(i), validate: false })
      const events: Array<ChainEvent> = [market.created()]
      for (let t = 0; t < TRADES_PER_MARKET; t++) events.push(...market.buy(`Trader${(i + t) % 997}`.padEnd(44, "x"), 100_000_000n))
      for (const simulated of events) {
        // Read off the bus as the actors do: encoded, then decoded (its strings are its own, not the simulator's).
        const e = Either.getOrThrow(decodeChainEvent(encodeChainEvent(simulated)))
        const key = `${e.chain}:${e.mint}`
        const [next] = step(states.get(key), e)
        if (next === undefined || next === states.get(key)) continue
        states.set(key, next)
        changes.set(key, next)
      }
    }
    index.publish([...changes])
  }
  if (idle) {
    // The sweep, once the chain is the reorg window past every market's last event.
    let head = 0
    for (const state of states.values()) head = Math.max(head, hoodBlockOf(state.core!.lastPosition) ?? 0)
    for (const [key, state] of states) states.set(key, trim(state, head + defaultConfig.retractDepthBlocks!))
  }
  for (let i = 0; i < MARKETS; i++) index.get(chain, mintOf(i))
  let kept = 0
  for (const state of states.values()) kept += state.window?.events.length ?? 0
  const after = heap()
  if (index.size() !== MARKETS) throw new Error(`expected ${MARKETS} markets, index has ${index.size()}`)
  // Keep both alive until measured.
  if (states.size !== MARKETS) throw new Error("states lost")
  return { bytesPerMarket: Math.round((after - before) / MARKETS), totalMiB: (after - before) / 1048576, kept: kept / MARKETS }
}

const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")
const loadStart = loads()
/**
 * Each case in a process of its own: measured one after another in one heap, a case's "before"
 * still held tens of MiB of the previous case (V8 keeps some of it) and the idle Hood case, built
 * from the same mints as the hot one, came out near zero. The parent prints the table.
 */
type Case = "solana" | "hood" | "idle"
const one = process.argv.find((a) => a.startsWith("--case="))?.slice("--case=".length) as Case | undefined
if (one !== undefined) {
  const result = one === "solana" ? measure("solana") : measure("hood", one === "idle")
  const cpu = process.cpuUsage()
  process.stdout.write(JSON.stringify({ ...result, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + "\n")
  process.exit(0)
}
const startedMs = Date.now()
const runCase = (c: Case): ReturnType<typeof measure> & { readonly cpuSeconds: number } => {
  const out = execFileSync(process.execPath, [...process.execArgv, import.meta.filename, `--case=${c}`, ...(quick ? ["--quick"] : [])], { encoding: "utf8", maxBuffer: 1 << 20 })
  return JSON.parse(out.trim().split("\n").pop()!) as ReturnType<typeof measure> & { readonly cpuSeconds: number }
}
const solana = runCase("solana")
const hood = runCase("hood")
const hoodIdle = runCase("idle")
const tookS = Math.round((Date.now() - startedMs) / 1000)
const cpuS = Math.round(solana.cpuSeconds + hood.cpuSeconds + hoodIdle.cpuSeconds)
const section = [
  "## Memory per live market (`bench/memory.ts`)",
  "",
  `- Date: ${new Date().toISOString()} (took ${tookS} s, ${cpuS} s of CPU in the three case processes); command: \`npm run bench:memory${quick ? " -- --quick" : ""}\` (${quick ? "--quick: 10,000 markets per case; the default is 100,000" : "the default, 100,000 markets per case; `-- --quick` is 10,000"}); Node ${process.version}, ${os.cpus().length} cores; load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()} (heap sizes do not depend on load).`,
  `- ${MARKETS.toLocaleString("en")} markets per chain, ${TRADES_PER_MARKET} trades each, each encoded and decoded as the actors read it off the bus (so its strings are its own, as in production), applied through the market actor's step, published into the MarketIndex and every record serialized once (the cached JSON); heap after forced GC, shard states and index together (they share the state objects), each case in a fresh process. Hood all hot: every market's events within the reorg window (${defaultConfig.retractDepthBlocks} blocks), so each keeps its full retract window; Hood idle: the same markets after the chain moved ${defaultConfig.retractDepthBlocks} blocks past their last events and the runtime's history sweep ran.`,
  "",
  "| Chain | Retract events kept per market | Bytes per market | Total for the run | Budget (DESIGN.md) |",
  "| --- | ---: | ---: | ---: | --- |",
  `| solana | ${solana.kept} | ${solana.bytesPerMarket.toLocaleString("en")} | ${solana.totalMiB.toFixed(0)} MiB | 100k markets < 1 GiB (≤ 10,737 bytes each) |`,
  `| hood, all hot (8-event retract window) | ${hood.kept} | ${hood.bytesPerMarket.toLocaleString("en")} | ${hood.totalMiB.toFixed(0)} MiB | 100k markets < 1 GiB (≤ 10,737 bytes each) |`,
  `| hood, idle past the reorg window | ${hoodIdle.kept} | ${hoodIdle.bytesPerMarket.toLocaleString("en")} | ${hoodIdle.totalMiB.toFixed(0)} MiB | 100k markets < 1 GiB (≤ 10,737 bytes each) |`,
  "",
  "The simulator builds its events without Schema validation since 2026-11-30 (issue 34): the validated constructions left Effect's parser memo (a `WeakMap`) holding ~200 bytes per constructed event after GC, which earlier runs counted per market (Solana 4,669, Hood hot 9,909, idle 5,413 bytes on 2026-11-26), and cost a quarter of the CPU (the bench took over 15 minutes).",
  ""
].join("\n")
process.stdout.write(section + "\n")
if (!quick) {
  const doc = path.join(import.meta.dirname, "..", "docs", "benchmarks.md")
  const text = fs.existsSync(doc) ? fs.readFileSync(doc, "utf8") : "# Benchmarks\n"
  const block = `<!-- memory:begin -->\n${section}<!-- memory:end -->`
  const re = /<!-- memory:begin -->[\s\S]*<!-- memory:end -->/
  fs.writeFileSync(doc, re.test(text) ? text.replace(re, block) : `${text.trimEnd()}\n\n${block}\n`)
}
