/**
 * Memory per live market (DESIGN.md budget: 100k live markets in under 1 GiB). Builds N markets
 * (Solana and Hood, the latter with its 8-event retract window) through the market actor's `step`,
 * publishes them into a `MarketIndexStore` as the shards do, serializes every record once (what a
 * read caches), and measures the heap after a forced GC.
 *
 * Run: `npm run bench:memory [-- --quick]` (node with `--expose-gc`). Prints a markdown section and,
 * unless --quick, rewrites it between the `memory` markers in docs/benchmarks.md.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeStep, type MarketState, defaultConfig } from "../actors/market/MarketActor.js"
import { MarketIndexStore } from "../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import type { ChainEvent, ChainId } from "../ingest/ChainEvent.js"

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

const measure = (chain: ChainId): { readonly bytesPerMarket: number; readonly totalMiB: number } => {
  const step = makeStep(defaultConfig)
  const before = heap()
  const index = new MarketIndexStore()
  const states = new Map<string, MarketState>()
  const clock = new ChainClock(chain)
  const mintOf = (i: number) => (chain === "hood" ? `0x${i.toString(16).padStart(40, "0")}` : `Mem${String(i).replace(/0/g, "z").padStart(40, "A")}`)
  for (let start = 0; start < MARKETS; start += 1_000) {
    const changes = new Map<string, MarketState | undefined>()
    for (let i = start; i < Math.min(MARKETS, start + 1_000); i++) {
      const market = new SimMarket(clock, { mint: mintOf(i) })
      const events: Array<ChainEvent> = [market.created()]
      for (let t = 0; t < TRADES_PER_MARKET; t++) events.push(...market.buy(`Trader${(i + t) % 997}`.padEnd(44, "x"), 100_000_000n))
      for (const e of events) {
        const key = `${e.chain}:${e.mint}`
        const [next] = step(states.get(key), e)
        if (next === undefined || next === states.get(key)) continue
        states.set(key, next)
        changes.set(key, next)
      }
    }
    index.publish([...changes])
  }
  for (let i = 0; i < MARKETS; i++) index.get(chain, mintOf(i))
  const after = heap()
  if (index.size() !== MARKETS) throw new Error(`expected ${MARKETS} markets, index has ${index.size()}`)
  // Keep both alive until measured.
  if (states.size !== MARKETS) throw new Error("states lost")
  return { bytesPerMarket: Math.round((after - before) / MARKETS), totalMiB: (after - before) / 1048576 }
}

const solana = measure("solana")
const hood = measure("hood")
const section = [
  "## Memory per live market (`bench/memory.ts`)",
  "",
  `- Date: ${new Date().toISOString()}; command: \`npm run bench:memory\`; Node ${process.version}, ${os.cpus().length} cores`,
  `- ${MARKETS.toLocaleString("en")} markets per chain, ${TRADES_PER_MARKET} trades each, applied through the market actor's step, published into the MarketIndex and every record serialized once (the cached JSON); heap after forced GC, shard states and index together (they share the state objects).`,
  "",
  "| Chain | Bytes per market | Total for the run | Budget (DESIGN.md) |",
  "| --- | ---: | ---: | --- |",
  `| solana | ${solana.bytesPerMarket.toLocaleString("en")} | ${solana.totalMiB.toFixed(0)} MiB | 100k markets < 1 GiB (≤ 10,737 bytes each) |`,
  `| hood (8-event retract window) | ${hood.bytesPerMarket.toLocaleString("en")} | ${hood.totalMiB.toFixed(0)} MiB | 100k markets < 1 GiB (≤ 10,737 bytes each) |`,
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
