/**
 * The ingest stream's deliveries as wakes (`ChainArrivals.ts`): a waiter is woken when its
 * transaction arrives, at once when it arrived before it asked (among the last `recentMax`), once
 * per waiter however many events the transaction carries; an interrupted waiter is unregistered;
 * past `waitersMax` waiters a new one is never woken (its poll decides) and counted; and the layer
 * follows `chain.events` on a real embedded bus from the log's end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option } from "effect"
import { Bus } from "../../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../../ingest/bus/EmbeddedBus.js"
import { ChainClock, SimMarket } from "../../../test/support/marketSim.js"
import { publishEvents } from "../../../test/support/marketWorkload.js"
import { Arrivals, ChainArrivals, layer } from "./ChainArrivals.js"

const SOL = 1_000_000_000n

describe("Arrivals", () => {
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
      expect(arrivals.stats()).toEqual({ seen: 1, woken: 1, waiting: 1, overBound: 0 })
      yield* Fiber.interrupt(b)
      expect(arrivals.stats().waiting).toBe(0)
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

describe("the ChainArrivals layer", () => {
  it.scopedLive("follows chain.events on the bus from its end: a transaction published after it started wakes its waiter", () =>
    Effect.gen(function* () {
      const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 4 })
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
    })
  )
})
