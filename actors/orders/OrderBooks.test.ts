/**
 * OrderBooks: the books held per market key, fed by the market runtime's `applied` hook. Covers the
 * catch-up of an order learnt after trades it should have seen, the bound, the raised trailing
 * watermarks handed to the flush (only the flushed markets'), expiry sweeps, ids that already
 * left, and a partition handed back (`reload`).
 */
import { describe, expect, it } from "vitest"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { defaultConfig, makeStep, type MarketState } from "../market/MarketActor.js"
import { type BookOrder, formatPrice, parsePriceE18, trailStop } from "./OrderBook.js"
import { currentPrice, OrderBooks } from "./OrderBooks.js"

const SOL = 1_000_000_000n
const step = makeStep(defaultConfig)

/** A market and a runtime stand-in that applies events through the real step and the books' hook. */
const world = (books: OrderBooks, mint = "So1BooksMint") => {
  const m = new SimMarket(new ChainClock("solana"), { mint })
  const key = `solana:${m.mint}`
  let state: MarketState | undefined
  const apply = (events: ReadonlyArray<ChainEvent>) => {
    for (const e of events) {
      const [next] = step(state, e)
      if (next === state) continue
      state = next
      books.applied(key, e, state)
    }
  }
  apply([m.created()])
  return { m, key, apply, state: () => state }
}

const sellAbove = (id: string, level: string, afterPosition: string): BookOrder => ({
  id,
  side: "sell",
  trigger: "limit",
  levelE18: parsePriceE18(level)!,
  trailBps: null,
  watermark: null,
  expiresAtMs: null,
  afterPosition
})

describe("OrderBooks", () => {
  it("a trade applied by the runtime triggers the book's crossing order, once, at the price the trade left", () => {
    const books = new OrderBooks(10)
    const w = world(books)
    const p0 = currentPrice(w.state())!
    books.place(w.key, sellAbove("a", formatPrice({ num: p0.price.num * 11n, den: p0.price.den * 10n }), p0.position), w.state())
    w.apply(w.m.buy("whale", 10n * SOL))
    const { outputs } = books.take()
    expect(outputs.map((o) => [o.marketKey, o.output._tag, o.output.order.id])).toEqual([[w.key, "Triggered", "a"]])
    const t = outputs[0]!.output
    expect(t._tag === "Triggered" && formatPrice(t.price)).toBe(formatPrice(currentPrice(w.state())!.price))
    w.apply(w.m.buy("whale", SOL))
    expect(books.take().outputs).toEqual([])
    expect(books.size()).toBe(0)
  })

  it("an order learnt after trades past its position is caught up on the price now", () => {
    const books = new OrderBooks(10)
    const w = world(books)
    const placedAt = currentPrice(w.state())!
    w.apply(w.m.buy("whale", 10n * SOL)) // applied before this process knew of the order
    books.place(w.key, sellAbove("late", formatPrice({ num: placedAt.price.num * 11n, den: placedAt.price.den * 10n }), placedAt.position), w.state())
    expect(books.take().outputs.map((o) => o.output.order.id)).toEqual(["late"])
    // Placed at the position now: nothing to catch up.
    books.place(w.key, sellAbove("now", "0.000000000000000001", currentPrice(w.state())!.position), w.state())
    expect(books.take().outputs).toEqual([])
    expect(books.size()).toBe(1)
  })

  it("holds at most maxOrders, refusing and counting the rest; ids that left are not placed again", () => {
    const books = new OrderBooks(2)
    const w = world(books)
    const at = currentPrice(w.state())!.position
    expect(books.place(w.key, sellAbove("a", "9", at), w.state())).toBe(true)
    expect(books.place(w.key, sellAbove("b", "9", at), w.state())).toBe(true)
    expect(books.place(w.key, sellAbove("c", "9", at), w.state())).toBe(false)
    expect(books.refused).toBe(1)
    books.cancel("a", w.key)
    expect(books.size()).toBe(1)
    expect(books.place(w.key, sellAbove("a", "9", at), w.state())).toBe(true)
    expect(books.size()).toBe(1)
    expect(() => new OrderBooks(0)).toThrow(RangeError)
  })

  it("hands raised trailing watermarks to the flush, and sweeps expired orders", () => {
    const books = new OrderBooks(10)
    const w = world(books)
    const p0 = currentPrice(w.state())!
    books.place(
      w.key,
      { id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: p0.price, expiresAtMs: null, afterPosition: p0.position },
      w.state()
    )
    books.place(w.key, { ...sellAbove("x", "9", p0.position), expiresAtMs: 1_000 }, w.state())
    w.apply(w.m.buy("whale", SOL))
    const taken = books.take()
    expect(taken.outputs).toEqual([])
    expect(formatPrice(taken.watermarks.get("t")!)).toBe(formatPrice(currentPrice(w.state())!.price))
    expect(books.sweep(999)).toEqual([])
    expect(books.sweep(1_000).map((o) => o.id)).toEqual(["x"])
    expect(books.take().outputs).toEqual([])
    expect(books.size()).toBe(1)
  })

  it("the hook keeps a new high as the reserves; the flush takes its exact price (num and den), and a drop to the stop triggers with it", () => {
    const books = new OrderBooks(10)
    const w = world(books)
    const p0 = currentPrice(w.state())!
    books.place(
      w.key,
      { id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 500, watermark: p0.price, expiresAtMs: null, afterPosition: p0.position },
      w.state()
    )
    const bought = w.m.buy("whale", SOL)
    w.apply(bought)
    const high = currentPrice(w.state())!.price
    expect(books.pendingCount()).toBe(0)
    // Read before any flush: the raise kept as the reserves, priced to the raw unit of the exact path.
    expect(books.book(w.key)!.trailing.map((o) => o.watermark)).toEqual([high])
    const taken = books.take()
    expect(taken.watermarks.get("t")).toEqual(high)
    // Selling it all back drops the price more than 5% below the high: triggered, with that watermark and its exact stop.
    w.apply([w.m.sell("whale", (bought[0] as unknown as { amountOutRaw: bigint }).amountOutRaw)])
    const [trigger] = books.takeTriggers()
    expect(trigger?.output).toEqual(
      expect.objectContaining({ _tag: "Triggered", watermark: high, stopPrice: trailStop(high, 500), price: currentPrice(w.state())!.price })
    )
    expect(books.size()).toBe(0)
  })

  it("the market the hook remembers follows books added and dropped: a book placed on a market just looked up is checked, one emptied is gone", () => {
    const books = new OrderBooks(10)
    const a = world(books, "So1BooksA")
    const b = world(books, "So1BooksB")
    b.apply(b.m.buy("trader", SOL)) // b looked up last, without a book
    const pb = currentPrice(b.state())!
    books.place(b.key, sellAbove("b1", formatPrice({ num: pb.price.num * 11n, den: pb.price.den * 10n }), pb.position), b.state())
    b.apply(b.m.buy("whale", 10n * SOL))
    expect(books.takeTriggers().map((p) => p.output.order.id)).toEqual(["b1"])
    expect(books.book(b.key)).toBe(undefined)
    const pb2 = currentPrice(b.state())!
    books.place(b.key, sellAbove("b2", formatPrice({ num: pb2.price.num * 11n, den: pb2.price.den * 10n }), pb2.position), b.state())
    a.apply(a.m.buy("trader", SOL))
    b.apply(b.m.buy("whale", 10n * SOL))
    expect(books.takeTriggers().map((p) => p.output.order.id)).toEqual(["b2"])
  })

  it("a flush takes only the outputs and watermarks of the markets whose states it writes; the others wait for theirs", () => {
    const books = new OrderBooks(10)
    const a = world(books, "So1BooksA")
    const b = world(books, "So1BooksB")
    const pa = currentPrice(a.state())!
    const pb = currentPrice(b.state())!
    books.place(a.key, sellAbove("a", formatPrice({ num: pa.price.num * 11n, den: pa.price.den * 10n }), pa.position), a.state())
    books.place(b.key, { id: "tb", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: pb.price, expiresAtMs: null, afterPosition: pb.position }, b.state())
    a.apply(a.m.buy("whale", 10n * SOL))
    b.apply(b.m.buy("whale", SOL))
    const first = books.take((key) => key === a.key)
    expect(first.outputs.map((o) => o.output.order.id)).toEqual(["a"])
    expect([...first.watermarks.keys()]).toEqual([])
    const second = books.take((key) => key === b.key)
    expect(second.outputs).toEqual([])
    expect([...second.watermarks.keys()]).toEqual(["tb"])
    expect(books.take().watermarks.size).toBe(0)
  })

  it("reload: a market handed back is rebuilt from the stored orders; what was decided for it and not written is dropped, other markets keep theirs", () => {
    const books = new OrderBooks(10)
    const a = world(books, "So1BooksA")
    const b = world(books, "So1BooksB")
    const pa = currentPrice(a.state())!
    const pb = currentPrice(b.state())!
    const stored: BookOrder = { id: "ta", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: pa.price, expiresAtMs: null, afterPosition: pa.position }
    books.place(a.key, stored, a.state())
    books.place(b.key, sellAbove("b", formatPrice({ num: pb.price.num * 11n, den: pb.price.den * 10n }), pb.position), b.state())
    a.apply(a.m.buy("whale", 10n * SOL)) // raises ta's watermark in memory
    b.apply(b.m.buy("whale", 10n * SOL)) // triggers b in memory
    books.reload((key) => key === a.key, [[a.key, stored], [b.key, sellAbove("other", "9", pb.position)]])
    // a's book stands where the store does: the watermark it was placed with, nothing pending.
    expect(books.book(a.key)!.trailing.map((o) => [o.id, formatPrice(o.watermark!)])).toEqual([["ta", formatPrice(pa.price)]])
    const taken = books.take()
    expect(taken.watermarks.size).toBe(0)
    // b was not handed over: its trigger is still there, and a stored order of b is not placed.
    expect(taken.outputs.map((o) => o.output.order.id)).toEqual(["b"])
    expect(books.size()).toBe(1)
  })
})
