/**
 * FeedBuckets: membership and order per bucket (BUCKETS.md), since_seq deltas and resets, bounds,
 * and a property: a reader that follows the deltas always holds exactly the bucket's full list,
 * and every bucket's members are exactly its definition's top `maxRows`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { ChainEvent, ChainId } from "../../ingest/ChainEvent.js"
import { fiveMinuteSlotOf, HOUR_WINDOW_SLOTS, distinctTradersInHour, windowTotals } from "../market/internal/tradeWindows.js"
import { type MarketState, step } from "../market/MarketActor.js"
import { progressBpsOf } from "../market/MarketRecord.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { BUCKETS, type BucketName, FeedBuckets, type FeedOptions } from "./FeedBuckets.js"

const SOL = 1_000_000_000n
const ETH = 10n ** 18n

/** Markets driven through `step`, published into a FeedBuckets as the index does. */
class Harness {
  readonly feeds: FeedBuckets
  readonly states = new Map<string, MarketState>()
  readonly clocks: Record<ChainId, ChainClock> = { solana: new ChainClock("solana"), hood: new ChainClock("hood") }
  readonly sims = new Map<string, SimMarket>()

  constructor(options: Partial<FeedOptions> = {}) {
    this.feeds = new FeedBuckets(options)
  }

  apply(events: ReadonlyArray<ChainEvent>): void {
    for (const e of events) {
      const key = `${e.chain}:${e.mint}`
      const [next] = step(this.states.get(key), e)
      if (next === this.states.get(key)) continue
      if (next === undefined || next.core === undefined) this.states.delete(key)
      else this.states.set(key, next)
      if (next?.core !== undefined) this.feeds.advanceClock(e.chain, next.core.lastEventAtMs)
      this.feeds.update(key, e.chain, next?.core)
    }
  }

  market(chain: ChainId, mint: string): SimMarket {
    let m = this.sims.get(`${chain}:${mint}`)
    if (m === undefined) {
      m = new SimMarket(this.clocks[chain], { mint })
      this.sims.set(`${chain}:${mint}`, m)
      this.apply([m.created()])
    }
    return m
  }

  addresses(bucket: BucketName, chain?: ChainId): Array<string> {
    return this.feeds.read(bucket, chain, undefined).tokens.map((t) => t.address)
  }
}

const unit = (chain: ChainId) => (chain === "solana" ? SOL : ETH / 20n)

describe("FeedBuckets membership and order", () => {
  it("new: trading curves, newest first; leaves on graduation", () => {
    const h = new Harness()
    for (const mint of ["A", "B", "C"]) {
      h.market("solana", mint)
      h.clocks.solana.advance(1000)
    }
    expect(h.addresses("new", "solana")).toEqual(["C", "B", "A"])
    h.apply(h.market("solana", "B").buy("w", 100n * SOL))
    expect(h.addresses("new", "solana")).toEqual(["C", "A"])
  })

  it("graduated: migrated markets, newest migration first", () => {
    const h = new Harness()
    for (const mint of ["A", "B"]) h.apply(h.market("solana", mint).buy("w", 100n * SOL))
    expect(h.addresses("graduated")).toEqual([])
    h.apply([h.market("solana", "B").migrated()])
    h.clocks.solana.advance(1000)
    h.apply([h.market("solana", "A").migrated()])
    expect(h.addresses("graduated", "solana")).toEqual(["A", "B"])
  })

  it("finalstretch: trading curves at 5000 bps or more, highest progress first", () => {
    const h = new Harness()
    h.apply(h.market("solana", "Half").buy("a", 43n * SOL)) // net 42.57 SOL of 85: 5008 bps
    h.apply(h.market("solana", "Most").buy("a", 80n * SOL))
    h.apply(h.market("solana", "Little").buy("a", 10n * SOL))
    expect(h.addresses("finalstretch", "solana")).toEqual(["Most", "Half"])
    expect(h.feeds.read("finalstretch", "solana", undefined).tokens.map((t) => t.progressBps)).toEqual([9317, 5008])
    // Graduating leaves the bucket (no longer trading).
    h.apply(h.market("solana", "Most").buy("a", 10n * SOL))
    expect(h.addresses("finalstretch", "solana")).toEqual(["Half"])
  })

  it("onfire: at least 5 trades by at least 3 traders in the last hour, hottest (volume/G) first; cools as the clock moves", () => {
    const h = new Harness()
    const hot = h.market("solana", "Hot")
    const warm = h.market("solana", "Warm")
    const lonely = h.market("solana", "Lonely")
    for (let i = 0; i < 5; i++) {
      h.apply(hot.buy(`t${i % 3}`, 2n * SOL))
      h.apply(warm.buy(`t${i % 3}`, SOL))
      h.apply(lonely.buy("solo", 5n * SOL)) // one trader only
    }
    expect(h.addresses("onfire", "solana")).toEqual(["Hot", "Warm"])
    // Four trades are not enough.
    const four = h.market("solana", "Four")
    for (let i = 0; i < 4; i++) h.apply(four.buy(`t${i}`, 10n * SOL))
    expect(h.addresses("onfire", "solana")).not.toContain("Four")
    // An hour later (another market's event moves the chain clock) the window is empty.
    h.clocks.solana.advance(61 * 60_000)
    h.apply(h.market("solana", "Tick").buy("x", SOL))
    expect(h.addresses("onfire", "solana")).toEqual([])
  })

  it("per chain and merged: a cross-chain read is the union in bucket order", () => {
    const h = new Harness()
    h.market("solana", "S1")
    h.clocks.hood.advance(500)
    h.market("hood", "0xH1")
    h.clocks.solana.advance(1000)
    h.market("solana", "S2")
    expect(h.addresses("new", "solana")).toEqual(["S2", "S1"])
    expect(h.addresses("new", "hood")).toEqual(["0xH1"])
    expect(h.addresses("new")).toEqual(["S2", "0xH1", "S1"])
  })

  it("bounds: at most maxRows members per chain; the one that drops out re-enters when a member leaves", () => {
    const h = new Harness({ maxRows: 2 })
    for (const mint of ["A", "B", "C"]) {
      h.market("solana", mint)
      h.clocks.solana.advance(1000)
    }
    expect(h.addresses("new", "solana")).toEqual(["C", "B"])
    expect(h.feeds.sizes("new", "solana")).toMatchObject({ members: 2, candidates: 3 })
    h.apply(h.market("solana", "C").buy("w", 100n * SOL))
    expect(h.addresses("new", "solana")).toEqual(["B", "A"])
  })
})

describe("FeedBuckets since_seq", () => {
  it("a delta carries the changed rows and the removed addresses", () => {
    const h = new Harness()
    h.market("solana", "A")
    h.market("solana", "B")
    const first = h.feeds.read("new", "solana", undefined)
    expect(first.reset).toBe(true)
    h.apply(h.market("solana", "A").buy("x", SOL)) // row change
    h.apply(h.market("solana", "B").buy("w", 100n * SOL)) // leaves
    const delta = h.feeds.read("new", "solana", first.seq)
    expect(delta).toMatchObject({ reset: false, removed: ["B"] })
    expect(delta.tokens.map((t) => [t.address, t.tradesTotal])).toEqual([["A", 1]])
    expect(delta.tokensJson).toEqual(delta.tokens.map((t) => JSON.stringify(t)))
    // Nothing changed since: an empty delta.
    expect(h.feeds.read("new", "solana", delta.seq)).toMatchObject({ reset: false, tokens: [], removed: [] })
  })

  it("an event that changes nothing a row shows does not bump the sequence", () => {
    const h = new Harness()
    const m = h.market("solana", "A")
    const seq = h.feeds.seq("new")
    h.apply([m.feeClaimed(5n)])
    expect(h.feeds.seq("new")).toBe(seq)
  })

  it("reset when since_seq is older than the log, ahead of now, or not an integer", () => {
    const h = new Harness({ changeLogSize: 4 })
    const m = h.market("solana", "A")
    const start = h.feeds.seq("new")
    for (let i = 0; i < 5; i++) h.apply(m.buy(`t${i}`, SOL))
    expect(h.feeds.read("new", "solana", start)).toMatchObject({ reset: true })
    expect(h.feeds.read("new", "solana", h.feeds.seq("new") - 4)).toMatchObject({ reset: false })
    expect(h.feeds.read("new", "solana", h.feeds.seq("new") + 1)).toMatchObject({ reset: true })
    expect(h.feeds.read("new", "solana", 1.5)).toMatchObject({ reset: true })
    expect(h.feeds.sizes("new", "solana").log).toBe(4)
  })

  it("finalstretch always answers the whole list (spec rule 14), with asOf", () => {
    const h = new Harness()
    h.apply(h.market("solana", "F").buy("a", 60n * SOL))
    const read = h.feeds.read("finalstretch", "solana", h.feeds.seq("finalstretch"))
    expect(read).toMatchObject({ reset: true, asOf: new Date(h.clocks.solana.nowMs).toISOString() })
    expect(read.tokens.map((t) => t.address)).toEqual(["F"])
  })
})

// ---------------------------------------------------------------------------------------------
// Property: deltas reconstruct the list; members equal the definitions' top maxRows.

const MAX_ROWS = 3

/** The definitions in BUCKETS.md, computed from scratch. */
const expectedMembers = (h: Harness, bucket: BucketName, chain: ChainId): Array<string> => {
  const cores = [...h.states.values()].map((s) => s.core!).filter((c) => c.chain === chain)
  const clock = h.feeds.clock(chain)
  type K = { mint: string; k1: bigint; k2: number; k3: string; key: string }
  const ranked: Array<K> = []
  for (const c of cores) {
    const key = `${c.chain}:${c.mint}`
    if (bucket === "graduated") {
      if (c.lifecycle === "migrated") ranked.push({ mint: c.mint, k1: BigInt(c.migration.migratedAtMs!), k2: 0, k3: c.migratedPosition!, key })
      continue
    }
    if (c.lifecycle !== "trading") continue
    if (bucket === "new") ranked.push({ mint: c.mint, k1: BigInt(c.identity.createdAtMs), k2: 0, k3: c.identity.createdPosition, key })
    if (bucket === "finalstretch" && progressBpsOf(c) >= 5000) {
      ranked.push({ mint: c.mint, k1: BigInt(progressBpsOf(c)), k2: -c.identity.createdAtMs, k3: "", key })
    }
    if (bucket === "onfire") {
      const slot = fiveMinuteSlotOf(clock)
      const hour = windowTotals(c.stats.fiveMinutes, slot, HOUR_WINDOW_SLOTS)
      if (hour.trades >= 5 && distinctTradersInHour(c.stats.recentTraders, slot) >= 3) {
        ranked.push({ mint: c.mint, k1: (hour.volumeRaw * 10_000n) / c.params.thresholdRaw, k2: hour.trades, k3: c.identity.createdPosition, key })
      }
    }
  }
  ranked.sort((a, b) => (a.k1 !== b.k1 ? (a.k1 > b.k1 ? -1 : 1) : a.k2 !== b.k2 ? b.k2 - a.k2 : a.k3 !== b.k3 ? (a.k3 > b.k3 ? -1 : 1) : a.key < b.key ? -1 : 1))
  return ranked.slice(0, MAX_ROWS).map((r) => r.mint)
}

type Op = { readonly kind: "create" | "buy" | "sell" | "whale" | "migrate" | "tick"; readonly market: number; readonly n: number }
const arbOp: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom("create", "buy", "buy", "buy", "sell", "whale", "migrate", "tick"),
  market: fc.nat(5),
  n: fc.integer({ min: 1, max: 60 })
}) as fc.Arbitrary<Op>

describe("FeedBuckets property", () => {
  it("a reader following since_seq deltas holds the full list; members are the definitions' top maxRows", () => {
    // Coverage across runs, so the property cannot pass vacuously.
    const seen = { members: new Set<BucketName>(), deltas: 0, removed: 0, resets: 0 }
    fc.assert(
      fc.property(fc.array(arbOp, { minLength: 20, maxLength: 120, size: "large" }), fc.integer({ min: 2, max: 64 }), (ops, logSize) => {
        const h = new Harness({ maxRows: MAX_ROWS, changeLogSize: logSize })
        const readers = new Map<string, { seq: number; rows: Map<string, string> }>()
        const follow = (bucket: BucketName, chain: ChainId | undefined) => {
          const id = `${bucket}/${chain}`
          const reader = readers.get(id)
          const read = h.feeds.read(bucket, chain, reader?.seq)
          if (reader !== undefined) {
            if (read.reset) seen.resets++
            else if (read.tokens.length > 0) seen.deltas++
            if (read.removed.length > 0) seen.removed++
          }
          const rows = read.reset ? new Map<string, string>() : reader!.rows
          for (const address of read.removed) {
            for (const k of [...rows.keys()]) if (k.endsWith(`:${address}`)) rows.delete(k)
          }
          read.tokens.forEach((t, i) => rows.set(`${t.chain}:${t.address}`, read.tokensJson[i]!))
          readers.set(id, { seq: read.seq, rows })
          const full = h.feeds.read(bucket, chain, undefined)
          expect(new Map(full.tokens.map((t, i) => [`${t.chain}:${t.address}`, full.tokensJson[i]!]))).toEqual(rows)
        }
        const act = (op: Op): void => {
          const chain: ChainId = op.market % 2 === 0 ? "solana" : "hood"
          const mint = `${chain === "solana" ? "S" : "0xh"}${op.market}`
          if (op.kind === "tick") {
            h.clocks.solana.advance(op.n * 60_000)
            h.clocks.hood.advance(op.n * 60_000)
            return
          }
          const exists = h.sims.has(`${chain}:${mint}`)
          const m = h.market(chain, mint)
          if (op.kind === "create" || !exists) return
          const core = h.states.get(`${chain}:${mint}`)!.core!
          if (op.kind === "migrate") {
            if (core.lifecycle === "completed") h.apply([m.migrated()])
            return
          }
          if (core.lifecycle === "migrated") {
            h.apply([m.poolBuy(`t${op.n % 4}`, unit(chain))])
            return
          }
          if (core.lifecycle !== "trading") return
          if (op.kind === "whale") h.apply(m.buy("whale", 100n * unit(chain)))
          else if (op.kind === "sell" && m.curve.virtualTokenRaw < m.params.tokenReserveRaw) h.apply([m.sell(`t${op.n % 4}`, (m.params.tokenReserveRaw - m.curve.virtualTokenRaw) / 3n)])
          else if (op.kind === "buy") h.apply(m.buy(`t${op.n % 4}`, (unit(chain) * BigInt(op.n)) / 6n))
        }
        for (const op of ops) {
          act(op)
          for (const bucket of BUCKETS) {
            for (const c of ["solana", "hood"] as const) {
              const members = h.addresses(bucket, c)
              expect(members).toEqual(expectedMembers(h, bucket, c))
              if (members.length > 0) seen.members.add(bucket)
            }
            if (op.n % 3 === 0) follow(bucket, op.market % 2 === 0 ? "solana" : "hood")
            if (op.n % 5 === 0) follow(bucket, undefined)
          }
        }
      }),
      {
        numRuns: 100,
        // Besides the random runs, one that surely fills every bucket (six 10-SOL buys: ~70%
        // progress; a whale graduates another market), so the coverage below never depends on the draw.
        examples: [
          [
            [
              { kind: "create", market: 0, n: 1 },
              ...Array.from({ length: 6 }, (): Op => ({ kind: "buy", market: 0, n: 60 })),
              { kind: "tick", market: 0, n: 15 },
              { kind: "sell", market: 0, n: 30 },
              ...Array.from({ length: 11 }, (_, i): Op => ({ kind: "buy", market: 2, n: 30 + i })),
              { kind: "create", market: 4, n: 1 },
              { kind: "whale", market: 4, n: 1 },
              { kind: "migrate", market: 4, n: 15 }
            ],
            8
          ]
        ]
      }
    )
    expect([...seen.members].sort()).toEqual([...BUCKETS].sort())
    expect(seen.deltas).toBeGreaterThan(0)
    expect(seen.removed).toBeGreaterThan(0)
    expect(seen.resets).toBeGreaterThan(0)
  })
})
