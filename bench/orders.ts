/**
 * `npm run bench:orders` (issue 29, item 5): the limit orders' budgets, side by side in one run.
 *
 * 1. The actor step with 1,000 open orders on the market against the same step with none: the
 *    market actor's `step` plus the books' `applied` hook per trade, over the same trades (a
 *    market oscillating in a band, with the orders outside it: limit buys below, limit sells
 *    above, stops below and trailing stops whose stop stays below the band). The variants take
 *    turns every `STEP_CHUNK` trades.
 *    Budget: within 1.2x.
 * 2. Memory: 1,000,000 open orders over 100,000 markets in `OrderBooks` (heap after a full
 *    collection, before and after). Budget: < 200 bytes per order (inside the 1 GiB market budget).
 * 3. A crossing trade → the order's execution handed to the trade rail, embedded: the actors on
 *    the embedded bus and PGlite with the orders' hooks, an order placed just above the price, a
 *    buy published that crosses it; timed from the publish to the `OrderExecution` port's call
 *    (the trigger written in the checkpoint's transaction first), and from the publish to the
 *    trade applied (visible). Budget: p99 < 5 ms.
 *
 * `--quick` runs fewer rounds and samples and writes nothing; `--latency` runs only the third
 * budget (with its samples split at the trigger decided in the drain) and writes nothing (add
 * `--gc` for which hand-offs over 5 ms overlap a main-thread collection, and the bus fsync wait's
 * share of them); `--step`
 * runs only the first (its full rounds; add `--quick` for fewer) and writes nothing;
 * otherwise the section goes into docs/benchmarks.md (about 2.5 minutes on this 2-core VM).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { constants as perfConstants, PerformanceObserver } from "node:perf_hooks"
import * as MarketActors from "../actors/MarketActors.js"
import { defaultConfig, makeStep, type MarketState } from "../actors/market/MarketActor.js"
import { type BookOrder, formatPriceE18, type Price } from "../actors/orders/OrderBook.js"
import { currentPrice, OrderBooks } from "../actors/orders/OrderBooks.js"
import { Bus, type BusError, Topics } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../ingest/ChainEvent.js"
import { encodeChainEvent } from "../ingest/ChainEventCodec.js"
import * as Database from "../src/db/Database.js"
import { createOrder } from "../src/services/orders/OrderStore.js"
import { type OrderHooks, orderTriggerHooks } from "../src/services/orders/OrderTriggers.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import { writeBenchmarkSection } from "./benchmarksDoc.js"

const quick = process.argv.includes("--quick")
const latencyOnly = process.argv.includes("--latency")
const stepOnly = process.argv.includes("--step")
/** With `--latency`: which hand-offs over `SLOW_MS` overlap a collection of this process's main thread, and the bus fsync wait's share of them. */
const gcAttribution = process.argv.includes("--gc")
const SLOW_MS = 5
const STEP_TRADES = quick ? 20_000 : 100_000
const STEP_ROUNDS = quick ? 2 : 4
const STEP_CHUNK = 5_000
const MEMORY_ORDERS = 1_000_000
const MEMORY_MARKETS = 100_000
const LATENCY_SAMPLES = quick ? 100 : 400
const SOL = 1_000_000_000n
const E18 = 10n ** 18n

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc (npm run bench:orders)")

const percentile = (sorted: ReadonlyArray<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const fmt = (n: number, digits = 2) => n.toFixed(digits)
const scaled = (p: Price, num: bigint, den: bigint): bigint => (p.num * E18 * num) / (p.den * den)

// ---------------------------------------------------------------------------------------------
// 1. The step with and without a book

const stepPhase = () => {
  const step = makeStep(defaultConfig)
  const m = new SimMarket(new ChainClock("solana"), { mint: "So1BenchOrdersStep" })
  const key = `solana:${m.mint}`
  const opening = [m.created(), ...m.buy("early", 10n * SOL)]
  let start: MarketState | undefined
  for (const e of opening) start = step(start, e)[0]
  const p0 = currentPrice(start)!
  // Oscillate: a buy of 0.5 SOL and the sell of what it bought, so the price stays in a band.
  const trades: Array<ChainEvent> = []
  while (trades.length < STEP_TRADES) {
    const buy = m.buy("trader", SOL / 2n)[0]!
    trades.push(buy, m.sell("trader", (buy as unknown as { amountOutRaw: bigint }).amountOutRaw))
  }
  const orders: Array<BookOrder> = []
  for (let i = 0; i < 1_000; i++) {
    const base = { id: `o${String(i).padStart(4, "0")}`, trailBps: null, watermark: null, expiresAtMs: null, afterPosition: p0.position }
    const kind = i % 4
    if (kind === 0) orders.push({ ...base, side: "buy", trigger: "limit", levelE18: scaled(p0.price, 50n + BigInt(i % 40), 100n) })
    else if (kind === 1) orders.push({ ...base, side: "sell", trigger: "limit", levelE18: scaled(p0.price, 150n + BigInt(i % 40), 100n) })
    else if (kind === 2) orders.push({ ...base, side: "sell", trigger: "stop", levelE18: scaled(p0.price, 40n + BigInt(i % 40), 100n) })
    else orders.push({ ...base, side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5_000 + (i % 40) * 10, watermark: p0.price })
  }
  const limitsOnly = orders.map((o, i) => (o.trigger === "trailing_stop" ? { ...o, trigger: "stop" as const, trailBps: null, watermark: null, levelE18: scaled(p0.price, 30n + BigInt(i % 40), 100n) } : o))
  // The three variants run side by side over the same trades, in chunks of STEP_CHUNK trades
  // taken in turn (the first variant rotating), so the load of this shared machine falls on each
  // alike: a whole run each (as before) let a load swing of a few hundred milliseconds decide the ratio.
  const variants = [false, orders, limitsOnly] as const
  const round = (): [number, number, number] => {
    const books = variants.map((v) => {
      const b = new OrderBooks(2_000)
      if (v !== false) for (const o of v) b.place(key, o, start)
      return b
    })
    const states = variants.map(() => start)
    const ns = [0, 0, 0]
    for (let c = 0, turn = 0; c < trades.length; c += STEP_CHUNK, turn++) {
      const end = Math.min(trades.length, c + STEP_CHUNK)
      for (let k = 0; k < variants.length; k++) {
        const v = (k + turn) % variants.length
        const books_ = books[v]!
        let state = states[v]
        const t0 = process.hrtime.bigint()
        for (let i = c; i < end; i++) {
          const e = trades[i]!
          const [next] = step(state, e)
          state = next
          books_.applied(key, e, next)
        }
        ns[v]! += Number(process.hrtime.bigint() - t0)
        states[v] = state
      }
    }
    for (let v = 1; v < variants.length; v++)
      if (books[v]!.size() !== orders.length) throw new Error(`bench:orders: ${orders.length - books[v]!.size()} orders triggered; the band is wrong`)
    return [ns[0]! / trades.length, ns[1]! / trades.length, ns[2]! / trades.length]
  }
  round() // warm-up
  const none: Array<number> = []
  const thousand: Array<number> = []
  const limits: Array<number> = []
  for (let r = 0; r < STEP_ROUNDS; r++) {
    const [n, t, l] = round()
    none.push(n)
    thousand.push(t)
    limits.push(l)
  }
  const median = (xs: Array<number>) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  // The same cost taken apart: the market step alone, and the books' hook alone over the states it
  // left (each the fastest of the rounds: the least disturbed by the other tenants' load).
  const states: Array<MarketState | undefined> = []
  {
    let state = start
    for (const e of trades) states.push((state = step(state, e)[0]))
  }
  const fastest = (setup: () => () => void): number => {
    let best = Number.POSITIVE_INFINITY
    for (let r = 0; r < STEP_ROUNDS + 1; r++) {
      const f = setup()
      const t0 = process.hrtime.bigint()
      f()
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / trades.length)
    }
    return best
  }
  const stepAlone = fastest(() => () => {
    let state = start
    for (const e of trades) state = step(state, e)[0]
  })
  const hookAlone = (v: ReadonlyArray<BookOrder>) =>
    fastest(() => {
      const books = new OrderBooks(2_000)
      for (const o of v) books.place(key, o, start)
      return () => {
        for (let i = 0; i < trades.length; i++) books.applied(key, trades[i]!, states[i])
      }
    })
  return { none: median(none), thousand: median(thousand), limits: median(limits), trades: trades.length, stepAlone, hookThousand: hookAlone(orders), hookLimits: hookAlone(limitsOnly) }
}

// ---------------------------------------------------------------------------------------------
// 2. Memory of a million open orders

const memoryPhase = () => {
  const level = 10n ** 12n
  gc!()
  const before = process.memoryUsage().heapUsed
  const books = new OrderBooks(MEMORY_ORDERS)
  for (let i = 0; i < MEMORY_ORDERS; i++) {
    const market = `solana:So1BenchMemory${i % MEMORY_MARKETS}`
    const kind = i % 3
    books.place(
      market,
      {
        id: `ord_${i.toString(36).padStart(8, "0")}`,
        side: kind === 0 ? "buy" : "sell",
        trigger: kind === 2 ? "trailing_stop" : "limit",
        levelE18: kind === 2 ? 0n : level + BigInt(i),
        trailBps: kind === 2 ? 1_000 : null,
        watermark: kind === 2 ? { num: level + BigInt(i), den: E18 } : null,
        expiresAtMs: null,
        afterPosition: "s:00000000000000001000:000000:0000"
      },
      undefined
    )
  }
  gc!()
  const after = process.memoryUsage().heapUsed
  if (books.size() !== MEMORY_ORDERS) throw new Error(`bench:orders: ${books.size()} orders held`)
  return { bytesPerOrder: (after - before) / MEMORY_ORDERS, totalMiB: (after - before) / 1048576 }
}

// ---------------------------------------------------------------------------------------------
// 3. A crossing trade to the execution's hand-off, embedded

const latencyPhase = async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-bench-orders-"))
  const scope = await Effect.runPromise(Scope.make())
  try {
    const storage = await Effect.runPromise(
      Layer.buildWithScope(Layer.mergeAll(EmbeddedBus.layer({ dir: path.join(dir, "bus") }), Database.layer({ url: undefined, dataDir: path.join(dir, "pg") })), scope)
    )
    const bus = Context.get(storage, Bus)
    const sql = Context.get(storage, SqlClient.SqlClient)
    const handedAt = new Map<string, number>()
    // When the drain decided the trigger (the books' hook answered with a trigger waiting): splits a sample in two.
    let decidedAt = 0
    let hooks: OrderHooks | undefined
    /** The pending `waitFor`'s wake-up, called by the hooks. */
    let wake: (() => void) | undefined
    const signal = () => {
      const w = wake
      wake = undefined
      w?.()
    }
    // `--gc`: the main thread's collections (`perf_hooks` gc entries, on `performance.now()`'s
    // timeline; PGlite's worker thread collects on its own and is not seen) and the trigger writer's
    // waits for the crossing trade's bus fsync (`routedDurable`), each `[start, end]` in ms.
    const collections: Array<readonly [start: number, end: number, kind: number]> = []
    const fsyncWaits: Array<readonly [start: number, end: number]> = []
    const observer = gcAttribution
      ? new PerformanceObserver((list) => {
          for (const e of list.getEntries()) collections.push([e.startTime, e.startTime + e.duration, (e as unknown as { readonly detail?: { readonly kind?: number } }).detail?.kind ?? 0])
        })
      : undefined
    observer?.observe({ entryTypes: ["gc"] })
    const timedDurable = (durable: () => Effect.Effect<void, BusError>) => (): Effect.Effect<void, BusError> =>
      gcAttribution
        ? Effect.suspend(() => {
            const start = performance.now()
            return Effect.ensuring(durable(), Effect.sync(() => void fsyncWaits.push([start, performance.now()])))
          })
        : durable()
    const orders = (s: SqlClient.SqlClient, state: (key: string) => MarketState | undefined, hurry: () => void, durable: () => Effect.Effect<void, BusError>) =>
      Effect.map(
        orderTriggerHooks({
          syncIntervalMs: 10,
          execution: {
            execute: (row) =>
              Effect.sync(() => {
                handedAt.set(row.id, performance.now())
                signal()
              })
          }
        })(s, state, hurry, timedDurable(durable)),
        (h): OrderHooks => {
          hooks = h
          return {
            ...h,
            applied: (key, event, next) => {
              const answer = h.applied!(key, event, next)
              if (h.books.oldestPendingTrigger() !== Number.POSITIVE_INFINITY) decidedAt = performance.now()
              signal() // the runtime set the state before calling the hook: `actors.state` shows it
              return answer
            }
          }
        }
      )
    const { actors } = await Effect.runPromise(MarketActors.make({ orders }).pipe(Effect.provide(storage), Scope.extend(scope)))
    const publish = (events: ReadonlyArray<ChainEvent>) =>
      Effect.runPromise(bus.publish(Topics.chainEvents, events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))))
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1BenchOrdersLatency" })
    const opening = [m.created(), ...m.buy("early", SOL)]
    await publish(opening)
    const waitFor = async (what: string, ok: () => boolean) => {
      const deadline = performance.now() + 10_000
      while (!ok()) {
        const remaining = deadline - performance.now()
        if (remaining <= 0) throw new Error(`bench:orders: timed out waiting for ${what}`)
        // Woken by the hooks (a trade applied, an execution handed off), not by spinning the event
        // loop: a spin here burned a core beside PGlite's thread and the fsync's threadpool, and
        // its promises were most of this process's garbage, on the path being measured.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(remaining, 50))
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
    }
    const lastPosition = () => actors.state("solana", m.mint)?.core?.lastPosition
    await waitFor("the opening applied", () => lastPosition() === opening.at(-1)!.position)
    const toHandOff: Array<number> = []
    const toDecided: Array<number> = []
    const decidedToHandOff: Array<number> = []
    const toVisible: Array<number> = []
    /** Each sample's publish, decision and hand-off (ms on `performance.now()`), for `--gc`. */
    const windows: Array<readonly [published: number, decided: number, handed: number]> = []
    for (let i = 0; i < LATENCY_SAMPLES + 20; i++) {
      const now = currentPrice(actors.state("solana", m.mint))!
      const id = `ord_bench_${i}`
      await Effect.runPromise(
        createOrder(
          {
            id,
            accountId: "acct_bench_orders",
            clientOrderId: `c-${i}`,
            keyId: "key_bench",
            requestHash: "h",
            chain: "solana",
            mint: m.mint,
            side: "sell",
            trigger: "limit",
            amountRaw: 1_000_000n,
            level: formatPriceE18(scaled(now.price, 1_001n, 1_000n)),
            trailBps: null,
            watermark: null,
            slippageBps: 100,
            payer: "main",
            expiresAtMs: null,
            afterPosition: now.position
          },
          Date.now()
        ).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      )
      await Effect.runPromise(hooks!.sync)
      const crossing = m.buy("whale", SOL / 20n)
      // Sell back most of it so the curve never nears graduation over the run.
      const back = m.sell("whale", ((crossing[0] as unknown as { amountOutRaw: bigint }).amountOutRaw * 9n) / 10n)
      const t0 = performance.now()
      await publish(crossing)
      await waitFor("the crossing trade applied", () => lastPosition() === crossing[0]!.position)
      const visible = performance.now()
      await waitFor("the execution handed off", () => handedAt.has(id))
      if (i >= 20) {
        toDecided.push(decidedAt - t0)
        decidedToHandOff.push(handedAt.get(id)! - decidedAt)
        toVisible.push(visible - t0)
        toHandOff.push(handedAt.get(id)! - t0)
        windows.push([t0, decidedAt, handedAt.get(id)!])
      }
      await publish([back])
      await waitFor("the sell back applied", () => lastPosition() === back.position)
    }
    const stats = (xs: Array<number>) => {
      const s = xs.slice().sort((a, b) => a - b)
      return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1]! }
    }
    const flushes = actors.stats().checkpoint.flushes
    observer?.disconnect()
    return { handOff: stats(toHandOff), decided: stats(toDecided), written: stats(decidedToHandOff), visible: stats(toVisible), samples: toHandOff.length, flushes, attribution: gcAttribution ? attribute(windows, collections, fsyncWaits) : undefined }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await fs.rm(dir, { recursive: true, force: true })
  }
}

/** How long `[from, to]` and the intervals overlap, in ms (the intervals do not overlap each other). */
const overlapMs = (from: number, to: number, intervals: ReadonlyArray<readonly [number, number, ...Array<number>]>): number =>
  intervals.reduce((sum, [start, end]) => sum + Math.max(0, Math.min(to, end) - Math.max(from, start)), 0)

/**
 * `--gc`: of the hand-offs over `SLOW_MS` (and of the others), how many overlap a scavenge (V8's
 * minor collection) or another collection of the main thread, the collections' pause inside them,
 * and the share of their time the trigger writer spent waiting for the bus fsync.
 */
const attribute = (
  windows: ReadonlyArray<readonly [number, number, number]>,
  collections: ReadonlyArray<readonly [number, number, number]>,
  fsyncWaits: ReadonlyArray<readonly [number, number]>
) => {
  const scavenges = collections.filter((c) => c[2] === perfConstants.NODE_PERFORMANCE_GC_MINOR)
  const others = collections.filter((c) => c[2] !== perfConstants.NODE_PERFORMANCE_GC_MINOR)
  const of = (ws: ReadonlyArray<readonly [number, number, number]>) => {
    const total = ws.reduce((sum, [t0, , handed]) => sum + (handed - t0), 0)
    const fsync = ws.reduce((sum, [t0, , handed]) => sum + overlapMs(t0, handed, fsyncWaits), 0)
    const paused = ws.reduce((sum, [t0, , handed]) => sum + overlapMs(t0, handed, collections), 0)
    return {
      n: ws.length,
      withScavenge: ws.filter(([t0, , handed]) => overlapMs(t0, handed, scavenges) > 0).length,
      withOther: ws.filter(([t0, , handed]) => overlapMs(t0, handed, others) > 0).length,
      pauseMsPer: ws.length === 0 ? 0 : paused / ws.length,
      pauseShare: total === 0 ? 0 : paused / total,
      msPer: ws.length === 0 ? 0 : total / ws.length,
      fsyncShare: total === 0 ? 0 : fsync / total,
      fsyncMsPer: ws.length === 0 ? 0 : fsync / ws.length
    }
  }
  const sorted = (xs: Array<number>) => xs.sort((a, b) => a - b)
  const pauses = sorted(scavenges.map(([start, end]) => end - start))
  const waits = sorted(fsyncWaits.map(([start, end]) => end - start))
  const bySpan = [...windows].sort((a, b) => b[2] - b[0] - (a[2] - a[0]))
  return {
    slow: of(windows.filter(([t0, , handed]) => handed - t0 > SLOW_MS)),
    tail: of(bySpan.slice(0, Math.max(1, Math.ceil(windows.length / 100)))),
    fast: of(windows.filter(([t0, , handed]) => handed - t0 <= SLOW_MS)),
    scavenges: { n: scavenges.length, p50: pauses.length === 0 ? 0 : percentile(pauses, 50), max: pauses.at(-1) ?? 0 },
    otherCollections: others.length,
    fsync: { n: waits.length, p50: waits.length === 0 ? 0 : percentile(waits, 50), p99: waits.length === 0 ? 0 : percentile(waits, 99) }
  }
}

// ---------------------------------------------------------------------------------------------

const startedAt = performance.now()
const load = os.loadavg().map((l) => l.toFixed(2)).join(", ")
if (latencyOnly) {
  const latency = await latencyPhase()
  const line = (what: string, s: { p50: number; p99: number; max: number }) => console.log(`${what}: p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms, max ${fmt(s.max)} ms`)
  console.log(`load average ${load} at the start; ${latency.samples} triggers`)
  line("published → handed off", latency.handOff)
  line("published → trigger decided in the drain", latency.decided)
  line("decided → written and handed off", latency.written)
  line("published → applied (visible)", latency.visible)
  const a = latency.attribution
  if (a !== undefined) {
    const group = (what: string, g: NonNullable<typeof a>["slow"]) =>
      console.log(
        `${what}: ${g.n}, ${fmt(g.msPer)} ms each on average; with a scavenge inside ${g.withScavenge}, with another collection ${g.withOther}; collection pause inside ${fmt(g.pauseMsPer)} ms per hand-off (${fmt(100 * g.pauseShare, 1)}% of their time); bus fsync wait ${fmt(g.fsyncMsPer)} ms per hand-off (${fmt(100 * g.fsyncShare, 1)}%)`
      )
    group(`hand-offs over ${SLOW_MS} ms`, a.slow)
    group("the others", a.fast)
    group("the slowest 1% (the p99 tail)", a.tail)
    console.log(`main thread: ${a.scavenges.n} scavenges (pause p50 ${fmt(a.scavenges.p50)} ms, max ${fmt(a.scavenges.max)} ms), ${a.otherCollections} other collections; bus fsync waits: ${a.fsync.n}, p50 ${fmt(a.fsync.p50)} ms, p99 ${fmt(a.fsync.p99)} ms`)
  }
  process.exit(0)
}
const steps = stepPhase()
if (stepOnly) console.log(`load average ${load} at the start`)
console.log(`step: ${fmt(steps.none, 0)} ns/trade with no book, ${fmt(steps.thousand, 0)} ns with 1,000 orders (${fmt(steps.thousand / steps.none)}x), ${fmt(steps.limits, 0)} ns with 1,000 limit and stop orders (${fmt(steps.limits / steps.none)}x)`)
console.log(`apart: the market step alone ${fmt(steps.stepAlone, 0)} ns/trade; the books' hook alone ${fmt(steps.hookThousand, 0)} ns with 1,000 orders, ${fmt(steps.hookLimits, 0)} ns with 1,000 limit and stop orders`)
if (stepOnly) process.exit(0)
const memory = memoryPhase()
console.log(`memory: ${fmt(memory.bytesPerOrder, 0)} bytes per order (${fmt(memory.totalMiB, 0)} MiB for 1,000,000 over 100,000 markets)`)
const latency = await latencyPhase()
console.log(`crossing trade → execution handed off: p50 ${fmt(latency.handOff.p50)} ms, p99 ${fmt(latency.handOff.p99)} ms; → applied p50 ${fmt(latency.visible.p50)} ms, p99 ${fmt(latency.visible.p99)} ms`)
const minutes = (performance.now() - startedAt) / 60_000

const ratio = steps.thousand / steps.none
const section = `## Limit orders (\`npm run bench:orders\`, \`bench/orders.ts\`)

${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, load average ${load} at the start, Node ${process.version}${quick ? ", `--quick`" : ""}; the run took ${fmt(minutes, 1)} min.

| Budget (issue 29) | Target | Measured | |
|---|---|---|---|
| Actor step (market \`step\` + the books' \`applied\`) with 1,000 open orders on the market vs none | within 1.2x | ${fmt(steps.thousand, 0)} vs ${fmt(steps.none, 0)} ns per trade (${fmt(ratio)}x; median of ${STEP_ROUNDS} rounds of ${steps.trades.toLocaleString("en-US")} trades, the variants taking turns every ${STEP_CHUNK.toLocaleString("en-US")} trades; a quarter each limit buys, limit sells, stops, trailing stops, none crossed); with 1,000 limit and stop orders and no trailing stop ${fmt(steps.limits, 0)} ns (${fmt(steps.limits / steps.none)}x). Taken apart (fastest of ${STEP_ROUNDS + 1} runs each): the market step alone ${fmt(steps.stepAlone, 0)} ns, the books' hook alone over the states it left ${fmt(steps.hookThousand, 0)} ns with 1,000 orders (${fmt((steps.stepAlone + steps.hookThousand) / steps.stepAlone)}x) and ${fmt(steps.hookLimits, 0)} ns with limit and stop orders only (${fmt((steps.stepAlone + steps.hookLimits) / steps.stepAlone)}x) | ${ratio <= 1.2 ? "**met**" : "**not met**"} |
| 1,000,000 open orders over 100,000 markets in memory | < 200 bytes per order | ${fmt(memory.bytesPerOrder, 0)} bytes per order (${fmt(memory.totalMiB, 0)} MiB; heap after full collections) | ${memory.bytesPerOrder < 200 ? "**met**" : "**not met**"} |
| Crossing trade published → order execution handed to the trade rail, embedded (bus + PGlite), one market | p99 < 5 ms | p50 ${fmt(latency.handOff.p50)} ms, p99 ${fmt(latency.handOff.p99)} ms, max ${fmt(latency.handOff.max)} ms over ${latency.samples} triggers (the trigger written by its own statement first); split at the trigger decided in the drain: published → decided p50 ${fmt(latency.decided.p50)} ms, p99 ${fmt(latency.decided.p99)} ms, decided → written and handed off p50 ${fmt(latency.written.p50)} ms, p99 ${fmt(latency.written.p99)} ms; the trade applied (visible) p50 ${fmt(latency.visible.p50)} ms, p99 ${fmt(latency.visible.p99)} ms | ${latency.handOff.p99 < 5 ? "**met**" : "**not met**"} |

What changed for the first two budgets (\`actors/orders/OrderBook.ts\`; before it, on the same
branch, this bench measured 1912 vs 624 ns, 3.06x, limit and stop orders only 2.14x, and 253 bytes
per order, load average 4.50, 2.62, 3.08; the old books under this bench's turn-taking, \`--quick\`,
1.44x): a book holds no object per order but one flat array of six slots per order (id, position,
level, watermark, a small integer for kind, trail and the raised flag, expiry), limit buys and stops
ascending, limit sells descending, then the trailing stops in placement order; \`BookOrder\`s are
built only for outputs and reads. A trade is first put to a float band (\`internal/PriceBand.ts\`):
its price as a float (the market step's) against the highest "below" level and stop, the lowest
"above" level and watermark, and the earliest trailing expiry; inside it the trade provably changes
nothing and \`OrderBooks.applied\` answers without the exact price, no bigint and no allocation.
The floats only ever say "surely not": each is within 2^-49 of its exact value and a comparison
needs a gap of 2^-40, anything nearer or out of the normal range goes to the exact bigint
comparison, and \`PriceBand.test.ts\` checks that against the exact comparisons (neighbours one raw
unit apart, equal values in other units, up to 2^1100). A new high sets one raise level shared by
every trailing stop whose watermark is below it (O(1)); a trade near a stop checks each trailing
stop exactly. Then (the follow-up for this row): the market step keeps its price as a float
(\`MarketCore.priceFloat\`: the two BigInt-to-Number conversions are now paid once by the step,
with or without books; derived, never in a checkpoint), the books' hook reads it instead of
converting the reserves, and a trade that crosses nothing is answered by \`OrderBook.passedAt\`
without the exact price: a new high (half of this workload's trades) allocates only the raised
book, its raise kept as the reserves and priced (\`priceOfReserves\`, the exact path's \`num\` and
\`den\`) only when read (the flush, an exact pass, a placement); near the lowest watermark the
reserves are cross-multiplied exactly. Each book sits in a cell the hook rewrites (no map write),
and the last market looked up is remembered (no lookup while one market's trades come in a row;
a drain interleaving markets pays one per trade). The step is timed with the variants taking
turns every 5,000 trades instead of whole runs, so a swing of this shared machine's load falls on
all three alike. Before the follow-up, runs at load averages 6 to 9 gave 1.16x to 2.43x with 1,000
orders (\`--step\` at load 2.4: 1359 vs 654 ns, 2.08x; the hook alone 272 ns). After it, \`--step\`
(the row alone, nothing written) at load averages 6.1 to 10: 1.00x, 1.11x, 1.12x, 1.13x, 1.16x,
1.20x, 1.21x, 1.22x, 1.33x, the hook alone 155 to 281 ns, the limit and stop orders' quiet path
alone 97 to 160 ns (the floor of any book: a cell, the core's float, five float comparisons). So
the row is met in six of those nine runs and missed in three (1.21x, 1.22x, 1.33x): under 1.2x in every run is not shown at this load, and the row's own verdict rests on one run; what is left
of the hook above that floor is the raised book a new high allocates (a new high keeps the book
immutable: the step is pure).

What changed for the third budget (\`src/services/orders/OrderTriggers.ts\`, \`OrderStore.markTriggeredAll\`):
before, a trade that triggered hurried the checkpoint flush (after its 1 ms linger) and the
trigger, its outbox row and the market's state committed in one PGlite transaction (BEGIN, a
savepoint, the update, the outbox insert, the checkpoint upsert, COMMIT), behind the flush's wait
for the bus record's fsync. Split by phase (\`--latency\`, load average 6 to 7): linger p50 1.2 ms,
the bus fsync wait p50 0.6 ms (p99 58 ms), the transaction p50 10.5 ms (p99 140 ms): p50 14.5 ms,
p99 150 ms in all. Now the drain wakes a trigger writer (no linger) that writes every trigger taken
at once in ONE statement, its own implicit transaction: the partition's fence read \`FOR SHARE\`,
the conditional \`open → triggered\` update and the outbox rows (payload built by the statement),
then hands off; the checkpoint flush waits for the triggers decided before it instead
(\`beforeCheckpoint\`), so a trigger is never behind the checkpoint that passes its trade, and a
replay after a crash finds it no longer open. \`--latency\` at load average 6.4: p50 5.54 ms, p99
28.18 ms; the statement alone on PGlite (a loopback socket to its worker thread) p50 2.2 to 4 ms
at load 3 to 8 against 1 ms for a bare update, and the rest is the wake and this machine's
scheduling: under this load a p99 under 5 ms is out of reach of any PGlite commit (the trade's own
apply, published → visible, has a p99 above it), while the trigger now costs one statement (in the full runs of this bench the other phases' load
leaves even the trade's own apply at p50 above 10 ms, so the row's figures move with the machine). The
hand-off is to the \`OrderExecution\` port (in \`--role all\` the in-process queue to the executor);
the trade rail's own build and send are \`bench:trade\`'s.

`
if (!quick) writeBenchmarkSection("bench-orders", section)
console.log(section)
