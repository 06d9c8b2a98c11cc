/**
 * The ingest stream's deliveries as wakes (`ChainArrivals.ts`): a waiter is woken when its
 * transaction arrives, at once when it arrived before it asked (among the last `recentMax`), once
 * per waiter however many events the transaction carries; an interrupted waiter is unregistered;
 * past `waitersMax` waiters a new one is never woken (its poll decides) and counted; and the layer
 * follows `chain.events` on a real embedded bus from the log's end, leaving no offsets file, and
 * when its subscribe fails (a Kafka topic not created yet) starts anyway and follows once a retry
 * succeeds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Bus, BusError, type BusShape } from "../../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../../ingest/bus/EmbeddedBus.js"
import { ChainClock, SimMarket } from "../../../test/support/marketSim.js"
import { eventuallyEffect } from "../../../test/support/eventually.js"
import { publishEvents } from "../../../test/support/marketWorkload.js"
import { CurveCreated, type ChainEvent, Trade } from "../../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../../ingest/ChainEventCodec.js"
import { ARRIVALS_EVENTS_MAX, Arrivals, ChainArrivals, layer, streamedTradeOut } from "./ChainArrivals.js"

const SOL = 1_000_000_000n

describe("Arrivals", () => {
  it("delivered: whether the stream delivered a transaction among the last recentMax (a Hood hash in any case), without waiting", () => {
    const arrivals = new Arrivals(2, 8)
    expect(arrivals.delivered("sig-a")).toBe(false)
    arrivals.seen("sig-a")
    arrivals.seen("0xABCdef")
    expect(arrivals.delivered("sig-a")).toBe(true)
    expect(arrivals.delivered("SIG-A")).toBe(false) // a Solana signature is base58: case counts
    expect(arrivals.delivered("0xabcDEF")).toBe(true)
    arrivals.seen("sig-c") // the ring holds 2: sig-a is forgotten
    expect(arrivals.delivered("sig-a")).toBe(false)
    expect(arrivals.delivered("sig-c")).toBe(true)
    expect(arrivals.stats().waiting).toBe(0)
  })

  it.effect("wakes a waiter when its transaction arrives, and only that one", () =>
    Effect.gen(function* () {
      const arrivals = new Arrivals(8, 8)
      const a = yield* Effect.fork(arrivals.arrived("sig-a"))
      const b = yield* Effect.fork(arrivals.arrived("sig-b"))
      yield* Effect.yieldNow()
      expect(arrivals.stats().waiting).toBe(2)
      arrivals.seen("sig-a")
      arrivals.seen("sig-a") // a second event of the same transaction
      yield* Fiber.join(a)
      expect(Option.isNone(yield* Fiber.poll(b))).toBe(true)
      expect(arrivals.stats()).toEqual({ seen: 1, woken: 1, waiting: 1, overBound: 0, following: false })
      yield* Fiber.interrupt(b)
      expect(arrivals.stats().waiting).toBe(0)
    })
  )

  it.effect("takes a Hood transaction hash in either case, a Solana signature as written", () =>
    Effect.gen(function* () {
      const arrivals = new Arrivals(8, 8)
      arrivals.seen("0xABCDEF")
      yield* arrivals.arrived("0xabcdef")
      arrivals.seen("5SoLanaSig")
      const other = yield* Effect.fork(arrivals.arrived("5solanasig"))
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(other))).toBe(true)
      yield* Fiber.interrupt(other)
    })
  )

  it.effect("answers at once for a transaction seen before the waiter asked, within the last recentMax", () =>
    Effect.gen(function* () {
      const arrivals = new Arrivals(2, 8)
      arrivals.seen("sig-1")
      yield* arrivals.arrived("sig-1")
      arrivals.seen("sig-2")
      arrivals.seen("sig-3") // evicts sig-1
      const late = yield* Effect.fork(arrivals.arrived("sig-1"))
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(late))).toBe(true)
      yield* Fiber.interrupt(late)
    })
  )

  it("refuses bounds that are not whole numbers in range", () => {
    expect(() => new Arrivals(0, 8)).toThrow(RangeError)
    expect(() => new Arrivals(8, -1)).toThrow(RangeError)
    expect(() => new Arrivals(1.5, 8)).toThrow(RangeError)
  })

  it.effect("past waitersMax a waiter is never woken and is counted; the others still are", () =>
    Effect.gen(function* () {
      const arrivals = new Arrivals(8, 2)
      const fibers = yield* Effect.forEach(["s1", "s2", "s3"], (s) => Effect.fork(arrivals.arrived(s)))
      yield* Effect.yieldNow()
      expect(arrivals.stats()).toMatchObject({ waiting: 2, overBound: 1 })
      for (const s of ["s1", "s2", "s3"]) arrivals.seen(s)
      yield* Fiber.join(fibers[0]!)
      yield* Fiber.join(fibers[1]!)
      expect(Option.isNone(yield* Fiber.poll(fibers[2]!))).toBe(true)
      yield* Fiber.interrupt(fibers[2]!)
    })
  )
})

/** `events` as one transaction's (the first one's signature), as a launch's creation and dev buy are. */
const oneTransaction = (events: ReadonlyArray<ChainEvent>): Array<ChainEvent> => {
  const signature = events[0]!.signature
  return events.map((e) => (e._tag === "Trade" ? new Trade({ ...e, signature }) : e._tag === "CurveCreated" ? new CurveCreated({ ...e, signature }) : e))
}

/** A `chain.events` batch of these events, as the bus delivers it. */
const batchOf = (events: ReadonlyArray<ChainEvent>) => ({
  topic: "chain.events",
  partition: 0,
  records: events.map((e, offset) => ({ topic: "chain.events", partition: 0, offset, key: `${e.chain}:${e.mint}`, value: encodeChainEvent(e), timestampMs: 0 }))
})

describe("Arrivals.landed: the stream's verdict on a landed Solana transaction", () => {
  it("holds a Solana transaction's slot and events in chain order when the stream decides; nothing for Hood, a processed stream, or once forgotten", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Landed" })
    const launch = oneTransaction([m.created(), ...m.buy("dev", SOL)])
    const arrivals = new Arrivals(2, 8)
    arrivals.feed(batchOf(launch))
    const landed = arrivals.landed(launch[0]!.signature)
    expect(landed?.slot).toBe(BigInt(launch[0]!.position.slice(2, 22)))
    expect(landed?.events.map((e) => e._tag)).toEqual(["CurveCreated", "Trade"])
    expect(streamedTradeOut(landed!, "So1Landed", "dev", "buy")).toBe((launch[1] as Trade).amountOutRaw)
    // Another trader's, another mint's or the other side's trade is not this one.
    expect(streamedTradeOut(landed!, "So1Landed", "someone", "buy")).toBeUndefined()
    expect(streamedTradeOut(landed!, "So1Other", "dev", "buy")).toBeUndefined()
    expect(streamedTradeOut(landed!, "So1Landed", "dev", "sell")).toBeUndefined()
    expect(arrivals.landed("sig-never")).toBeUndefined()

    const h = new SimMarket(new ChainClock("hood"), { mint: "0xhoodmint" })
    const hoodBuy = h.buy("0xtrader", SOL)
    arrivals.feed(batchOf(hoodBuy))
    expect(arrivals.delivered(hoodBuy[0]!.signature)).toBe(true)
    expect(arrivals.landed(hoodBuy[0]!.signature)).toBeUndefined() // a Hood block can be reorged: its receipt decides
    arrivals.feed(batchOf([m.sell("dev", 1n)])) // the ring holds 2: the launch is forgotten
    expect(arrivals.landed(launch[0]!.signature)).toBeUndefined()

    const processed = new Arrivals(8, 8, false)
    const trade = m.buy("dev", SOL)
    processed.feed(batchOf(trade))
    expect(processed.delivered(trade[0]!.signature)).toBe(true)
    expect(processed.landed(trade[0]!.signature)).toBeUndefined()
  })

  it("a transaction with more than ARRIVALS_EVENTS_MAX events keeps none; one seen without its event keeps none", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Many" })
    const created = m.created()
    const many = oneTransaction([created, ...Array.from({ length: ARRIVALS_EVENTS_MAX }, () => m.buy("dev", 1_000n)[0]!)])
    const arrivals = new Arrivals(8, 8)
    arrivals.feed(batchOf(many.slice(0, ARRIVALS_EVENTS_MAX)))
    expect(arrivals.landed(created.signature)?.events).toHaveLength(ARRIVALS_EVENTS_MAX)
    arrivals.feed(batchOf(many.slice(ARRIVALS_EVENTS_MAX)))
    expect(arrivals.landed(created.signature)).toBeUndefined()
    expect(arrivals.delivered(created.signature)).toBe(true)
    arrivals.seen("sig-bare")
    expect(arrivals.landed("sig-bare")).toBeUndefined()
  })

  it.effect("a batch wakes its waiters once it is held whole: the woken look finds every event of its transaction the batch carried", () =>
    Effect.gen(function* () {
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1Whole" })
      const launch = oneTransaction([m.created(), ...m.buy("dev", SOL)])
      const arrivals = new Arrivals(8, 8)
      const seenAtWake: Array<number | undefined> = []
      const waiter = yield* Effect.fork(Effect.tap(arrivals.arrived(launch[0]!.signature), () => Effect.sync(() => seenAtWake.push(arrivals.landed(launch[0]!.signature)?.events.length))))
      yield* Effect.yieldNow()
      // Wake synchronously from inside the feed, as a resume that ran at once would: the batch must be held by then.
      const wakeInline = arrivals as unknown as { wake: (s: string) => void }
      const original = wakeInline.wake.bind(arrivals)
      const atWake: Array<number | undefined> = []
      wakeInline.wake = (s) => {
        atWake.push(arrivals.landed(s)?.events.length)
        original(s)
      }
      arrivals.feed(batchOf(launch))
      yield* Fiber.join(waiter)
      expect(atWake).toEqual([2])
      expect(seenAtWake).toEqual([2])
    })
  )
})

const tempBus = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "arrivals-"))),
    (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
  )
  return { dir, bus: yield* EmbeddedBus.make({ dir, partitions: 4, fsync: false }) }
})

describe("the ChainArrivals layer", () => {
  it.scopedLive("starts when its subscribe fails, retries, and wakes waiters once a retry follows the stream", () =>
    Effect.gen(function* () {
      const { bus: real } = yield* tempBus
      // The real bus, whose first two subscribes fail as a Kafka topic not created yet does.
      let refusals = 2
      let attempts = 0
      const bus: BusShape = {
        ...real,
        subscribe: (options, onBatch) =>
          Effect.suspend(() => {
            attempts++
            return refusals-- > 0
              ? Effect.fail(new BusError({ reason: "UnknownTopic", message: "This server does not host this topic-partition", retryable: true }))
              : real.subscribe(options, onBatch)
          })
      }
      const arrivals = yield* Layer.build(layer({ retryFirstMs: 20, retryMaxMs: 40 })).pipe(
        Effect.provideService(Bus, bus),
        Effect.map((ctx) => Context.get(ctx, ChainArrivals))
      )
      expect(arrivals.stats().following).toBe(false)
      yield* eventuallyEffect(Effect.sync(() => arrivals.stats().following), { what: "a retry to follow chain.events", deadlineMs: 20_000 })
      expect(attempts).toBe(3)
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1ArrivalsRetry" })
      const events = [m.created(), ...m.buy("whale", SOL)]
      const waiter = yield* Effect.fork(arrivals.arrived(events.at(-1)!.signature))
      yield* publishEvents(real, events)
      const exit = yield* Fiber.await(waiter).pipe(Effect.timeout("20 seconds"))
      expect(Exit.isSuccess(exit)).toBe(true)
    })
  )

  it.scopedLive("follows chain.events on the bus from its end: a transaction published after it started wakes its waiter", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "arrivals-"))),
        (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
      )
      const bus = yield* EmbeddedBus.make({ dir, partitions: 4, fsync: false })
      const clock = new ChainClock("solana")
      const m = new SimMarket(clock, { mint: "So1Arrivals" })
      // Before the layer starts: not followed (the group starts at the log's end).
      const before = [m.created(), ...m.buy("early", SOL)]
      yield* publishEvents(bus, before)
      const arrivals = yield* Layer.build(layer()).pipe(
        Effect.provideService(Bus, bus),
        Effect.map((ctx) => Context.get(ctx, ChainArrivals))
      )
      const trade = m.buy("whale", 2n * SOL)
      const waiter = yield* Effect.fork(arrivals.arrived(trade[0]!.signature))
      yield* publishEvents(bus, trade)
      const exit = yield* Fiber.await(waiter).pipe(Effect.timeout("20 seconds"))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(arrivals.stats().seen).toBe(1)
      expect(before.every((e) => e.signature !== trade[0]!.signature)).toBe(true)
      // A second start (another process) follows too; neither leaves offsets on disk (ephemeral groups).
      yield* Layer.build(layer()).pipe(Effect.provideService(Bus, bus))
      const offsets = yield* Effect.promise(() => fs.readdir(path.join(dir, "chain.events", "_offsets")).catch(() => [] as Array<string>))
      expect(offsets.filter((f) => f.startsWith("chain-arrivals-"))).toEqual([])
    })
  )
})
