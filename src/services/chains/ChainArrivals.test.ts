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
import { type ChainEvent, CurveCompleted, CurveCreated, solanaPosition, Trade } from "../../../ingest/ChainEvent.js"
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

/** `events` as one Solana transaction's: the first one's signature, slot `slot`, transaction index 3, instruction index in order. */
const oneTransaction = (events: ReadonlyArray<ChainEvent>, slot: bigint): Array<ChainEvent> => {
  const signature = events[0]!.signature
  return events.map((e, i) => {
    const at = { signature, position: solanaPosition(slot, 3, i) }
    return e._tag === "Trade" ? new Trade({ ...e, ...at }) : e._tag === "CurveCreated" ? new CurveCreated({ ...e, ...at }) : e._tag === "CurveCompleted" ? new CurveCompleted({ ...e, ...at }) : e
  })
}

/** A `chain.events` batch of these events, as the bus delivers it. */
const batchOf = (events: ReadonlyArray<ChainEvent>) => ({
  topic: "chain.events",
  partition: 0,
  records: events.map((e, offset) => ({ topic: "chain.events", partition: 0, offset, key: `${e.chain}:${e.mint}`, value: encodeChainEvent(e), timestampMs: 0 }))
})

describe("Arrivals.landed: the stream's verdict on a landed Solana transaction", () => {
  it("holds a Solana transaction's slot and its creations and trades in chain order when the stream decides; nothing for Hood or a stream that does not decide", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Landed" })
    const launch = oneTransaction([m.created(), ...m.buy("dev", SOL)], 4242n)
    const arrivals = new Arrivals(4, 8)
    arrivals.feed(batchOf(launch))
    const landed = arrivals.landed(launch[0]!.signature)
    expect(landed).toEqual({
      slot: 4242n,
      events: [
        { _tag: "CurveCreated", mint: "So1Landed", curve: "curve-So1Landed" },
        { _tag: "Trade", mint: "So1Landed", trader: "dev", side: "buy", amountOutRaw: (launch[1] as Trade).amountOutRaw }
      ]
    })
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

    const replica = new Arrivals(8, 8, false)
    const trade = m.buy("dev", SOL)
    replica.feed(batchOf(trade))
    expect(replica.delivered(trade[0]!.signature)).toBe(true)
    expect(replica.landed(trade[0]!.signature)).toBeUndefined()
  })

  it("keeps only creations and trades; a completion alone leaves the transaction landed with no trade to decide from", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Crossing", thresholdRaw: 10n * SOL })
    m.created()
    const crossing = oneTransaction(m.buy("whale", 100n * SOL), 7n)
    expect(crossing.map((e) => e._tag)).toEqual(["Trade", "CurveCompleted"])
    const arrivals = new Arrivals(8, 8)
    arrivals.feed(batchOf(crossing.slice(1))) // the completion first (its trade in a later batch)
    expect(arrivals.landed(crossing[0]!.signature)).toEqual({ slot: 7n, events: [] })
    arrivals.feed(batchOf(crossing.slice(0, 1)))
    expect(streamedTradeOut(arrivals.landed(crossing[0]!.signature)!, "So1Crossing", "whale", "buy")).toBe((crossing[0] as Trade).amountOutRaw)
  })

  it("a position that is not a Solana slot decides nothing; a keeper's event without a signature is not noted", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Odd" })
    const [buy] = m.buy("dev", SOL) as [Trade]
    const arrivals = new Arrivals(8, 8)
    arrivals.seen("sig-odd", new Trade({ ...buy, signature: "sig-odd", position: "s:12x" }))
    arrivals.seen("sig-hood-position", new Trade({ ...buy, signature: "sig-hood-position", position: "h:00000000000000000001:000000:0000" }))
    expect(arrivals.delivered("sig-odd")).toBe(true)
    expect(arrivals.landed("sig-odd")).toBeUndefined()
    expect(arrivals.landed("sig-hood-position")).toBeUndefined()
    arrivals.feed(batchOf([new Trade({ ...buy, signature: "" })]))
    expect(arrivals.stats().seen).toBe(2)
  })

  it("past ARRIVALS_EVENTS_MAX creations and trades a transaction keeps none; one forgotten and delivered again is held anew", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Many" })
    const many = oneTransaction([m.created(), ...Array.from({ length: ARRIVALS_EVENTS_MAX }, () => m.buy("dev", 1_000n)[0]!)], 9n)
    const signature = many[0]!.signature
    const arrivals = new Arrivals(2, 8)
    arrivals.feed(batchOf(many.slice(0, ARRIVALS_EVENTS_MAX)))
    expect(arrivals.landed(signature)?.events).toHaveLength(ARRIVALS_EVENTS_MAX)
    arrivals.feed(batchOf(many.slice(ARRIVALS_EVENTS_MAX)))
    expect(arrivals.landed(signature)).toBeUndefined()
    expect(arrivals.delivered(signature)).toBe(true)
    // Forgotten (the ring holds 2), then delivered again (a replay): held anew from its events.
    arrivals.seen("sig-x")
    arrivals.seen("sig-y")
    expect(arrivals.delivered(signature)).toBe(false)
    arrivals.feed(batchOf(many.slice(0, 2)))
    expect(arrivals.landed(signature)?.events).toHaveLength(2)
    expect(arrivals.stats().seen).toBe(4)
  })

  it.effect("a batch is held whole before its waiters wake: the woken look finds every event of its transaction", () =>
    Effect.gen(function* () {
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1Whole" })
      const launch = oneTransaction([m.created(), ...m.buy("dev", SOL)], 11n)
      const arrivals = new Arrivals(8, 8)
      const waiter = yield* Effect.fork(Effect.zipRight(arrivals.arrived(launch[0]!.signature), Effect.sync(() => arrivals.landed(launch[0]!.signature)?.events.length)))
      yield* Effect.yieldNow()
      arrivals.feed(batchOf(launch))
      expect(yield* Fiber.join(waiter)).toBe(2)
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
