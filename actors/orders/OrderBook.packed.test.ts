/**
 * OrderBook's packed storage and float band (the budgets of issue 29): the float band answers
 * only what is provably quiet, and prices a float cannot tell apart (one raw unit apart, equal in
 * other raw units) are decided exactly; the shared raise level of the trailing stops, and a raise
 * kept as the reserves (`passedAt`) then read exactly; the bound of `OrderBooks` at `maxOrders`
 * with the packed books.
 */
import { describe, expect, it } from "vitest"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { defaultConfig, makeStep, type MarketState } from "../market/MarketActor.js"
import { approxRatio, approxReserves } from "./internal/PriceBand.js"
import {
  type BookEvent,
  type BookOrder,
  type BookOutput,
  emptyBook,
  type OrderBook,
  parsePriceE18,
  passedAt,
  type Price,
  priceOfReserves,
  quietAt,
  raisedWatermarks,
  settled,
  sizeOf,
  step,
  trailStop
} from "./OrderBook.js"
import { currentPrice, OrderBooks } from "./OrderBooks.js"

const E18 = 10n ** 18n
/** 2^80: a denominator so large that neighbouring prices share one float. */
const K = 2n ** 80n
const pos = (n: number): string => n.toString().padStart(12, "0")
const order = (o: Partial<BookOrder> & Pick<BookOrder, "id">): BookOrder => ({
  side: "buy",
  trigger: "limit",
  levelE18: parsePriceE18("1.5")!,
  trailBps: null,
  watermark: null,
  expiresAtMs: null,
  afterPosition: pos(0),
  ...o
})
const traded = (price: Price, n: number): Extract<BookEvent, { _tag: "Traded" }> => ({ _tag: "Traded", price, position: pos(n), atMs: n * 1000 })
const placeAll = (orders: ReadonlyArray<BookOrder>, book: OrderBook = emptyBook): OrderBook => orders.reduce((b, o) => step(b, { _tag: "Placed", order: o })[0], book)
const ids = (out: ReadonlyArray<BookOutput>) => out.map((o) => [o._tag, o.order.id])
/** `levelE18 / 10^18` plus `units / (10^18 · K)`. */
const nudged = (levelE18: bigint, units: bigint): Price => ({ num: levelE18 * K + units, den: E18 * K })
const comparePriceOf = (a: Price, b: Price): number => (a.num * b.den < b.num * a.den ? -1 : a.num * b.den > b.num * a.den ? 1 : 0)

describe("OrderBook float band", () => {
  it("prices one raw unit off a level share its float, so the exact comparison decides", () => {
    const level = parsePriceE18("1.5")!
    const book = placeAll([order({ id: "buy" }), order({ id: "sell", side: "sell", levelE18: level })])
    for (const units of [-1n, 0n, 1n]) expect(approxRatio(nudged(level, units).num, nudged(level, units).den)).toBe(1.5)
    // At the level: both cross. One unit above: only the sell. One unit below: only the buy.
    expect(ids(step(book, traded(nudged(level, 0n), 1))[1]).sort()).toEqual([["Triggered", "buy"], ["Triggered", "sell"]])
    expect(ids(step(book, traded(nudged(level, 1n), 1))[1])).toEqual([["Triggered", "sell"]])
    expect(ids(step(book, traded(nudged(level, -1n), 1))[1])).toEqual([["Triggered", "buy"]])
    expect(quietAt(book, 1.5, 1000)).toBe(false)
  })

  it("a trade the band calls quiet returns the same book; one near an edge is not called quiet", () => {
    const book = placeAll([order({ id: "b", levelE18: parsePriceE18("1")! }), order({ id: "s", side: "sell", levelE18: parsePriceE18("3")! })])
    expect(quietAt(book, 2, 0)).toBe(true)
    const [same, out] = step(book, traded({ num: 2n, den: 1n }, 1))
    expect(same).toBe(book)
    expect(out).toEqual([])
    expect(quietAt(book, 1 + 2 ** -45, 0)).toBe(false)
    expect(quietAt(book, 3 - 2 ** -45, 0)).toBe(false)
    expect(quietAt(book, Number.NaN, 0)).toBe(false)
    expect(quietAt(emptyBook, 1, 0)).toBe(true)
  })

  it("trailing stops: a watermark equal in other raw units is not raised, one unit above is; the stop itself triggers", () => {
    const w: Price = { num: 2n * K, den: K }
    const book = placeAll([order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 1000, watermark: w })])
    const [same] = step(book, traded({ num: 2n * 3n, den: 3n }, 1))
    expect(same).toBe(book)
    const [raised, none] = step(book, traded({ num: 2n * K + 1n, den: K }, 1))
    expect(none).toEqual([])
    expect(raised.trailing[0]!.watermark).toEqual({ num: 2n * K + 1n, den: K })
    // The stop is (2 + 2^-80) × 0.9: at it, it triggers; one unit (of a finer denominator) above, it does not.
    const stop: Price = { num: (2n * K + 1n) * 9000n, den: K * 10_000n }
    expect(step(raised, traded({ num: stop.num * 2n + 1n, den: stop.den * 2n }, 2))[0]).toBe(raised)
    expect(ids(step(raised, traded(stop, 2))[1])).toEqual([["Triggered", "t"]])
  })

  it("the raise level covers the watermarks below it only: an order placed after a raise keeps its own, and a settle writes them", () => {
    const t1 = order({ id: "t1", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: { num: 1n, den: 1n } })
    const t2 = order({ id: "t2", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: { num: 6n, den: 1n } })
    let book = placeAll([t1, t2])
    book = step(book, traded({ num: 4n, den: 1n }, 1))[0] // raises t1 to 4, not t2 (6, its stop 3)
    expect(raisedWatermarks(book).map(([id, w]) => [id, w.num, w.den])).toEqual([["t1", 4n, 1n]])
    book = step(book, { _tag: "Placed", order: order({ id: "t3", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: { num: 3n, den: 1n }, afterPosition: pos(1) }) })[0]
    expect(book.trailing.map((o) => [o.id, o.watermark!.num])).toEqual([["t1", 4n], ["t2", 6n], ["t3", 3n]])
    expect(raisedWatermarks(book).map(([id]) => id)).toEqual(["t1"])
    book = settled(book)
    expect(raisedWatermarks(book)).toEqual([])
    expect(book.trailing.map((o) => [o.id, o.watermark!.num])).toEqual([["t1", 4n], ["t2", 6n], ["t3", 3n]])
    book = step(book, traded({ num: 5n, den: 1n }, 2))[0] // raises t1 and t3 to 5
    expect(raisedWatermarks(book).map(([id, w]) => [id, w.num])).toEqual([["t1", 5n], ["t3", 5n]])
    // 3 is at t2's stop (6 × 0.5): it triggers t2 alone (t1 and t3 stop at 2.5).
    const [after, out] = step(book, traded({ num: 3n, den: 1n }, 3))
    expect(ids(out)).toEqual([["Triggered", "t2"]])
    expect(sizeOf(after)).toBe(2)
    expect(raisedWatermarks(after).map(([id, w]) => [id, w.num])).toEqual([["t1", 5n], ["t3", 5n]])
  })

  it("a raise kept as the reserves: passedAt raises without pricing, the flush reads the exact price, and a trigger is decided exactly from it", () => {
    // A Solana-like market: 6 token decimals, 9 quote decimals; reserves so large that neighbours share a float.
    const D = 6
    const QD = 9
    const at = (q: bigint, t: bigint, n: number) => [approxReserves(q, t, D, QD), q, t, D, QD, pos(n), n * 1000] as const
    const q0 = 30n * 10n ** 9n * K
    const t0 = 10n ** 15n * K
    const w = priceOfReserves(q0, t0, D, QD)!
    const book = placeAll([
      order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 1000, watermark: w }),
      order({ id: "far", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 9000, watermark: w })
    ])
    // Equal to the watermark in other raw units, and one raw unit below: nothing changes (decided exactly, the floats are equal).
    expect(approxReserves(q0 * 2n, t0 * 2n, D, QD)).toBe(approxReserves(q0 + 1n, t0, D, QD))
    expect(passedAt(book, ...at(q0 * 2n, t0 * 2n, 1))).toBe(book)
    expect(passedAt(book, ...at(q0 - 1n, t0, 1))).toBe(book)
    expect(passedAt(book, ...at(q0, t0 + 1n, 1))).toBe(book)
    // One raw unit above: raised, kept as reserves; the watermarks read give their exact price, to the raw unit.
    const raised = passedAt(book, ...at(q0 + 1n, t0, 1))!
    expect(raised).not.toBe(book)
    expect(raised).not.toBe(undefined)
    const high = priceOfReserves(q0 + 1n, t0, D, QD)!
    expect(raisedWatermarks(raised).map(([id, p]) => [id, p.num, p.den])).toEqual([
      ["t", high.num, high.den],
      ["far", high.num, high.den]
    ])
    // What step with the exact price answers for the same trade: the same watermarks, no outputs.
    const [viaStep, none] = step(book, traded(high, 1))
    expect(none).toEqual([])
    expect(viaStep.trailing).toEqual(raised.trailing)
    // Against a raise kept as reserves, the next trade's neighbours: equal in other units and one unit
    // below change nothing; one unit above raises again.
    expect(passedAt(raised, ...at((q0 + 1n) * 3n, t0 * 3n, 2))).toBe(raised)
    expect(passedAt(raised, ...at(q0, t0, 2))).toBe(raised)
    const again = passedAt(raised, ...at(q0 + 2n, t0, 2))!
    expect(raisedWatermarks(again).map(([, p]) => p)).toEqual([priceOfReserves(q0 + 2n, t0, D, QD), priceOfReserves(q0 + 2n, t0, D, QD)])
    // A trade at t's stop (0.9 × the raise kept as reserves) is not passed: step decides it exactly.
    const stop = trailStop(high, 1000)
    const qs = (q0 + 1n) * 9000n
    const ts = t0 * 10_000n
    expect(comparePriceOf(priceOfReserves(qs, ts, D, QD)!, stop)).toBe(0)
    expect(passedAt(raised, ...at(qs, ts, 3))).toBe(undefined)
    const [after, out] = step(raised, traded(priceOfReserves(qs, ts, D, QD)!, 3))
    expect(out).toEqual([
      expect.objectContaining({ _tag: "Triggered", order: expect.objectContaining({ id: "t" }), watermark: high, stopPrice: stop })
    ])
    expect(after.trailing.map((o) => [o.id, o.watermark])).toEqual([["far", high]])
    // One raw unit above the stop (in a finer unit): nothing triggers; one below: it does.
    expect(step(raised, traded(priceOfReserves(qs * 2n + 1n, ts * 2n, D, QD)!, 3))[1]).toEqual([])
    expect(ids(step(raised, traded(priceOfReserves(qs * 2n - 1n, ts * 2n, D, QD)!, 3))[1])).toEqual([["Triggered", "t"]])
    // A settle (the flush) writes the exact raise into the orders.
    expect(settled(raised).trailing.map((o) => o.watermark)).toEqual([high, high])
  })

  it("passedAt leaves to step what it cannot decide: a level or stop near, a replayed position, an expiry reached, no price", () => {
    const book = placeAll([
      order({ id: "b", levelE18: parsePriceE18("1")! }),
      order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: { num: 2n, den: 1n }, afterPosition: pos(5), expiresAtMs: 60_000 })
    ])
    const at = (q: bigint, t: bigint, n: number, atMs = n * 1000) => [approxReserves(q, t, 0, 0), q, t, 0, 0, pos(n), atMs] as const
    expect(passedAt(book, ...at(3n, 1n, 6))).not.toBe(undefined) // a new high: raised
    expect(passedAt(book, ...at(3n, 2n, 6))).toBe(book) // 1.5: inside every band
    expect(passedAt(book, ...at(K + 1n, K, 6))).toBe(undefined) // one unit above the buy's level
    expect(passedAt(book, ...at(K - 1n, K, 6))).toBe(undefined) // one unit below it
    expect(passedAt(book, ...at(3n, 1n, 5))).toBe(undefined) // a position the trailing stop does not count
    expect(passedAt(book, ...at(3n, 1n, 6, 60_000))).toBe(undefined) // at its expiry
    expect(passedAt(book, ...at(0n, 1n, 6))).toBe(undefined) // no price (NaN)
    // Reserves no chain gives but a malformed bus record can carry: both negative make a positive
    // quotient, yet priceOfReserves answers no price, so the exact step does nothing; neither may this.
    expect(passedAt(book, ...at(-3n, -1n, 6))).toBe(undefined)
    expect(passedAt(book, ...at(-3n, -2n, 6))).toBe(undefined)
    expect(passedAt(book, Number.NaN, 3n, 1n, 0, 0, pos(6), 6000)).toBe(undefined)
    expect(passedAt(book, ...at(2n * K + 1n, K, 6))).not.toBe(book) // one unit above the watermark, exactly
    expect(passedAt(book, ...at(2n * K * 5_000n + 1n, K * 10_000n, 6))).toBe(undefined) // at the stop (2 × 0.5 = 1): near
  })

  it("an order round-trips through the packed book unchanged (every field, both limits and trailing stops)", () => {
    const orders: Array<BookOrder> = [
      order({ id: "b", levelE18: 7n, expiresAtMs: 1_700_000_000_123, afterPosition: "s:1" }),
      order({ id: "s", side: "sell", levelE18: 10n ** 40n }),
      order({ id: "st", side: "sell", trigger: "stop", levelE18: 3n }),
      order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 9999, watermark: { num: 5n, den: 7n } })
    ]
    const book = placeAll(orders)
    expect([...book.below, ...book.above, ...book.trailing].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual([...orders].sort((a, b) => (a.id < b.id ? -1 : 1)))
    expect(() => step(emptyBook, { _tag: "Placed", order: order({ id: "x", trailBps: 10 }) })).toThrow(RangeError)
  })
})

describe("OrderBooks with packed books", () => {
  const marketStep = makeStep(defaultConfig)
  const SOL = 1_000_000_000n

  it("at maxOrders a place is refused and the book stays the same object; a trigger frees room a place then takes; a quiet trade leaves the book as it was", () => {
    const books = new OrderBooks(3)
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1PackedBound" })
    const key = `solana:${m.mint}`
    let state: MarketState | undefined
    const apply = (events: ReadonlyArray<ChainEvent>) => {
      for (const e of events) {
        state = marketStep(state, e)[0]
        books.applied(key, e, state)
      }
    }
    apply([m.created(), ...m.buy("early", SOL)])
    const p = currentPrice(state)!
    const level = (num: bigint, den: bigint) => (p.price.num * E18 * num) / (p.price.den * den)
    expect(books.place(key, order({ id: "far", side: "sell", levelE18: level(10n, 1n), afterPosition: p.position }), state)).toBe(true)
    expect(books.place(key, order({ id: "near", side: "sell", levelE18: level(101n, 100n), afterPosition: p.position }), state)).toBe(true)
    expect(books.place(key, order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: p.price, afterPosition: p.position }), state)).toBe(true)
    const full = books.book(key)!
    expect(books.place(key, order({ id: "over", levelE18: level(1n, 2n), afterPosition: p.position }), state)).toBe(false)
    expect(books.refused).toBe(1)
    expect(books.book(key)).toBe(full)
    expect(books.size()).toBe(3)
    // A small sell: below every watermark, above every stop and below both sells: quiet.
    const sell = m.sell("early", 1_000n)
    state = marketStep(state, sell)[0]
    expect(books.applied(key, sell, state)).toBe(false)
    expect(books.book(key)).toBe(full)
    // A buy crossing "near" (and raising t) frees one place.
    const [buy] = m.buy("whale", SOL)
    state = marketStep(state, buy!)[0]
    expect(books.applied(key, buy!, state)).toBe(true)
    expect(books.size()).toBe(2)
    expect(books.take().outputs.map((o) => o.output.order.id)).toEqual(["near"])
    expect(books.place(key, order({ id: "over", levelE18: level(1n, 2n), afterPosition: buy!.position }), state)).toBe(true)
    expect(books.place(key, order({ id: "again", levelE18: level(1n, 3n), afterPosition: buy!.position }), state)).toBe(false)
    expect(books.refused).toBe(2)
    expect(books.size()).toBe(3)
  })
})
