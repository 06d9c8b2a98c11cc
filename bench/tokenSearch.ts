/**
 * Token search (`GET /v1/market/token-search`), in process, over a real `MarketIndexStore`: the
 * ranking as the route computed it before (a scan of `index.markets()` that normalized the query's
 * address and lower-cased every market's ticker and name, once per market per request) against
 * `TokenSearch.searchTokens` (the query normalized once; a scan of the index's `searchKeys`, kept
 * by the index's writer, looking up the cores of the matches only). Same index, same queries; the
 * two must agree on every result before either is timed.
 *
 * Markets: `MARKETS` per chain, built through the market actor's `step`, named from a small
 * vocabulary so a word query matches a few percent of them. Queries: a word on Solana, a ticker
 * with `$`, and a Hood address in upper case (the case the old path lower-cased per market).
 *
 * Timing: a calibrated batch repeated for 1.5 s, timed with `process.hrtime.bigint`; the median
 * round is reported. Run: `npx tsx bench/tokenSearch.ts [markets-per-chain]`.
 */
import { actorKey, type MarketCore, type MarketState, step } from "../actors/market/MarketActor.js"
import { MarketIndexStore } from "../actors/MarketIndex.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import type { ChainId } from "../ingest/ChainEvent.js"
import { normalizeAddress } from "../src/domain/Chain.js"
import { SEARCH_MATCHES, searchTokens } from "../src/services/marketdata/TokenSearch.js"

const MARKETS = Number(process.argv[2] ?? 10_000)
const LIMIT = 20
const WORDS = ["dog", "cat", "frog", "moon", "pepe", "based", "chad", "wojak", "ape", "doge", "sun", "rocket", "cash", "gold", "king", "queen"]

const build = (chain: ChainId, i: number): MarketCore => {
  const mint = chain === "solana" ? `So${i.toString(36).padStart(8, "1")}`.padEnd(44, "1") : `0x${i.toString(16).padStart(40, "a")}`
  const w1 = WORDS[i % WORDS.length]!
  const w2 = WORDS[Math.floor(i / WORDS.length) % WORDS.length]!
  const m = new SimMarket(new ChainClock(chain), { mint, name: `${w1[0]!.toUpperCase()}${w1.slice(1)} ${w2} ${i}`, symbol: `${w2.slice(0, 3).toUpperCase()}${i % 997}` })
  let s: MarketState | undefined = undefined
  ;[s] = step(s, m.created())
  const core = s!.core!
  return { ...core, stats: { ...core.stats, volumeTotalRaw: BigInt((i * 7919) % 100_003) } }
}

/** The route's ranking before this change, verbatim. */
const searchBefore = (markets: Iterable<MarketCore>, chain: ChainId, text: string, limit: number) => {
  const needle = text.toLowerCase().replace(/^\$/, "")
  const scored: Array<{ core: MarketCore; rank: number; volume: bigint }> = []
  for (const core of markets) {
    if (core.chain !== chain) continue
    const sym = core.identity.symbol.toLowerCase()
    const name = core.identity.name.toLowerCase()
    const rank =
      normalizeAddress(chain, text) === core.mint ? 0
      : sym === needle ? 1
      : name === needle ? 2
      : sym.startsWith(needle) ? 3
      : name.startsWith(needle) ? 4
      : sym.includes(needle) || name.includes(needle) ? 5
      : -1
    if (rank >= 0) scored.push({ core, rank, volume: core.stats.volumeTotalRaw })
  }
  scored.sort((a, b) => a.rank - b.rank || (b.volume > a.volume ? 1 : b.volume < a.volume ? -1 : 0) || (a.core.mint < b.core.mint ? -1 : 1))
  return { matched: scored.length, hits: scored.slice(0, limit).map((s) => ({ core: s.core, match: SEARCH_MATCHES[s.rank]! })) }
}

const markets: Array<MarketCore> = []
for (let i = 0; i < MARKETS; i++) markets.push(build("solana", i), build("hood", i))
const index = new MarketIndexStore()
index.publish(markets.map((core) => [actorKey(core.chain, core.mint), { core, window: null }] as const))
const hoodAddress = markets.find((c) => c.chain === "hood" && c.mint.endsWith("7"))!.mint

const queries: ReadonlyArray<{ readonly name: string; readonly chain: ChainId; readonly text: string }> = [
  { name: "solana word 'dog'", chain: "solana", text: "dog" },
  { name: "solana ticker '$MOO4'", chain: "solana", text: "$MOO4" },
  { name: "hood address (upper case)", chain: "hood", text: hoodAddress.toUpperCase().replace("0X", "0x") }
]

let sink = 0
const timeBatch = (f: () => { matched: number }, n: number): bigint => {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink ^= f().matched
  return process.hrtime.bigint() - t0
}

const measure = (f: () => { matched: number }): number => {
  let batch = 4
  for (;;) {
    const ns = Number(timeBatch(f, batch))
    if (ns >= 50e6 || batch >= 1 << 20) break
    batch = Math.max(batch * 2, Math.ceil((batch * 50e6) / Math.max(ns, 1)))
  }
  const perOp: number[] = []
  const end = process.hrtime.bigint() + 1_500_000_000n
  while (perOp.length < 7 || process.hrtime.bigint() < end) perOp.push(Number(timeBatch(f, batch)) / batch)
  perOp.sort((a, b) => a - b)
  return perOp[perOp.length >> 1]!
}

console.log(`token search: ${MARKETS} markets per chain (${markets.length} in all), limit ${LIMIT}; median µs per search`)
console.log(["query", "matched", "before µs", "after µs", "after/before"].join(" | "))
for (const q of queries) {
  const before = () => searchBefore(index.markets(), q.chain, q.text, LIMIT)
  const after = () => searchTokens(index, q.chain, q.text, LIMIT)
  const a = before()
  const b = after()
  const same = a.matched === b.matched && a.hits.length === b.hits.length && a.hits.every((h, i) => h.core === b.hits[i]!.core && h.match === b.hits[i]!.match)
  if (!same) throw new Error(`the two rankings disagree on ${q.name}`)
  const tb = measure(before) / 1000
  const ta = measure(after) / 1000
  console.log([q.name, String(b.matched), tb.toFixed(1), ta.toFixed(1), (ta / tb).toFixed(2)].join(" | "))
}
if (sink === 0.5) console.log(sink)
