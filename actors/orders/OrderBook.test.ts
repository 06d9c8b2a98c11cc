/**
 * OrderBook.step, one order's life:
 *
 *   (absent) ──Placed──▶ open ──Traded (crosses, after its position, before expiry)──▶ triggered  [T1 T2 T3 T4]
 *                         │ ──Traded (does not cross / at or before its position)──▶ open        [N1 N2]
 *                         │ ──Traded (trailing: a new high)──▶ open, watermark raised           [W1]
 *                         │ ──Traded (crosses at or after expiry)──▶ expired                    [E1]
 *                         │ ──Swept (at or after expiry)──▶ expired                            [E2]
 *                         └──Cancelled──▶ cancelled                                            [C1]
 *   open ──Placed (same id)──▶ open, unchanged                                                 [P1]
 *   triggered / expired / cancelled: gone; no event outputs it again                         [property]
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type BookEvent,
  type BookOrder,
  type BookOutput,
  comparePrices,
  compareToLevel,
  emptyBook,
  formatPrice,
  formatPriceE18,
  type OrderBook,
  parsePriceE18,
  type Price,
  priceOfReserves,
  sizeOf,
  step,
  trailStop
} from "./OrderBook.js"

const E18 = 10n ** 18n
const price = (text: string): Price => ({ num: parsePriceE18(text)!, den: E18 })
const pos = (n: number): string => n.toString().padStart(12, "0")

const order = (o: Partial<BookOrder> & Pick<BookOrder, "id">): BookOrder => ({
  side: "buy",
  trigger: "limit",
  levelE18: parsePriceE18("1")!,
  trailBps: null,
  watermark: null,
  expiresAtMs: null,
  afterPosition: pos(0),
  ...o
})
const traded = (p: string, n: number, atMs = n * 1000): BookEvent => ({ _tag: "Traded", price: price(p), position: pos(n), atMs })

const run = (events: ReadonlyArray<BookEvent>, book: OrderBook = emptyBook): readonly [OrderBook, Array<BookOutput>] => {
  const out: Array<BookOutput> = []
  for (const e of events) {
    const [next, o] = step(book, e)
    book = next
    out.push(...o)
  }
  return [book, out]
}
const triggeredIds = (out: ReadonlyArray<BookOutput>) => out.filter((o) => o._tag === "Triggered").map((o) => o.order.id)

describe("prices", () => {
  it("parses and formats exact decimals, refusing what is not one", () => {
    expect(parsePriceE18("0.000000031")).toBe(31_000_000_000n)
    expect(parsePriceE18("12")).toBe(12n * E18)
    expect(formatPriceE18(parsePriceE18("0.000000031")!)).toBe("0.000000031")
    expect(formatPriceE18(parsePriceE18("120.5")!)).toBe("120.5")
    for (const bad of ["", "-1", "1e-9", "0.1234567890123456789", "1.", ".5", " 1", "0x10", "1,5"]) expect(parsePriceE18(bad)).toBeUndefined()
  })

  it("compares the reserves' rational price with a level without rounding", () => {
    // 30 quote raw (6 decimals) for 1e9 token raw (6 decimals): 0.00000003 exactly.
    const p = priceOfReserves(30n, 1_000_000_000n, 6, 6)!
    expect(compareToLevel(p, parsePriceE18("0.00000003")!)).toBe(0)
    expect(compareToLevel(p, parsePriceE18("0.000000030000000001")!)).toBe(-1)
    expect(compareToLevel(p, parsePriceE18("0.000000029999999999")!)).toBe(1)
    // 1/3 is below 0.333333333333333334 and above 0.333333333333333333 (no float could say both).
    const third: Price = { num: 1n, den: 3n }
    expect(compareToLevel(third, parsePriceE18("0.333333333333333334")!)).toBe(-1)
    expect(compareToLevel(third, parsePriceE18("0.333333333333333333")!)).toBe(1)
    expect(formatPrice(third)).toBe("0.333333333333333333")
    expect(priceOfReserves(1n, 0n, 6, 6)).toBeNull()
  })

  it("a trailing stop's stop price is the watermark less trailBps, exact", () => {
    const s = trailStop(price("2"), 250)
    expect(comparePrices(s, price("1.95"))).toBe(0)
  })
})

describe("OrderBook.step", () => {
  it("T1: a limit buy triggers at the first trade at or below its target", () => {
    const [book, out] = run([{ _tag: "Placed", order: order({ id: "a", levelE18: parsePriceE18("1.5")! }) }, traded("1.6", 1), traded("1.5", 2), traded("1.4", 3)])
    expect(out).toHaveLength(1)
    expect(out[0]).toMatchObject({ _tag: "Triggered", order: { id: "a" }, position: pos(2) })
    expect(sizeOf(book)).toBe(0)
  })

  it("T2: a limit sell triggers at the first trade at or above its target", () => {
    const [, out] = run([
      { _tag: "Placed", order: order({ id: "s", side: "sell", levelE18: parsePriceE18("2")! }) },
      traded("1.999999999999999999", 1),
      traded("2.1", 2)
    ])
    expect(out.map((o) => [o._tag, o.order.id, (o as { position: string }).position])).toEqual([["Triggered", "s", pos(2)]])
  })

  it("T3: a stop sells at the first trade at or below its stop price; a rising price never triggers it", () => {
    const placed: BookEvent = { _tag: "Placed", order: order({ id: "st", side: "sell", trigger: "stop", levelE18: parsePriceE18("1")! }) }
    expect(triggeredIds(run([placed, traded("1.1", 1), traded("5", 2)])[1])).toEqual([])
    expect(triggeredIds(run([placed, traded("1.1", 1), traded("0.9", 2)])[1])).toEqual(["st"])
  })

  it("T4 + W1: a trailing stop follows new highs and triggers at the trail below the watermark, naming both", () => {
    const placed: BookEvent = {
      _tag: "Placed",
      order: order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 1000, watermark: price("1") })
    }
    const [b1, o1] = run([placed, traded("2", 1)]) // W1: the watermark rises to 2
    expect(o1).toEqual([])
    expect(b1.trailing[0]!.watermark).toEqual(price("2"))
    const [, o2] = run([traded("1.81", 2)], b1) // 1.81 > 1.8: holds
    expect(o2).toEqual([])
    const [b3, o3] = run([traded("1.8", 3)], b1) // exactly 2 × 0.9: triggers
    expect(o3).toHaveLength(1)
    const t = o3[0]!
    expect(t._tag).toBe("Triggered")
    if (t._tag !== "Triggered") return
    expect(formatPrice(t.watermark!)).toBe("2")
    expect(formatPrice(t.stopPrice!)).toBe("1.8")
    expect(sizeOf(b3)).toBe(0)
  })

  it("W1: a trailing stop placed without a price takes the first trade as its watermark, never triggering on it", () => {
    const [book, out] = run([
      { _tag: "Placed", order: order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 9999 }) },
      traded("0.5", 1)
    ])
    expect(out).toEqual([])
    expect(book.trailing[0]!.watermark).toEqual(price("0.5"))
  })

  it("N1: a trade that does not cross returns the same book and nothing", () => {
    const [book] = run([
      { _tag: "Placed", order: order({ id: "b", levelE18: parsePriceE18("1")! }) },
      { _tag: "Placed", order: order({ id: "s", side: "sell", levelE18: parsePriceE18("3")! }) }
    ])
    const [next, out] = step(book, traded("2", 1))
    expect(next).toBe(book)
    expect(out).toEqual([])
  })

  it("N1: a trade inside the trailing stops' band (no new high, above every stop) returns the same book; one at a stop or above a watermark does not", () => {
    const [book] = run([
      { _tag: "Placed", order: order({ id: "t1", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 1000, watermark: price("2") }) },
      { _tag: "Placed", order: order({ id: "t2", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 2000, watermark: price("3"), expiresAtMs: 50_000 }) }
    ])
    // Band: the lowest watermark 2, the highest stop max(1.8, 2.4) = 2.4: a price in (2.4, 2] is empty, so pick a book where it is not.
    const [wide] = run([{ _tag: "Placed", order: order({ id: "t3", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 5000, watermark: price("2") }) }])
    for (const p of ["1.5", "2"]) {
      const [next, out] = step(wide, traded(p, 1))
      expect(next).toBe(wide)
      expect(out).toEqual([])
    }
    expect(step(wide, traded("2.1", 1))[0].trailing[0]!.watermark).toEqual(price("2.1"))
    expect(step(wide, traded("1", 1))[1].map((o) => o._tag)).toEqual(["Triggered"])
    // Two orders whose band is empty: every trade changes something.
    expect(triggeredIds(step(book, traded("2.4", 1))[1])).toEqual(["t2"])
    expect(step(book, traded("2.5", 1))[0].trailing.map((o) => formatPrice(o.watermark!))).toEqual(["2.5", "3"])
    // The earliest expiry bounds the band too.
    expect(step(book, traded("2.5", 50))[1].map((o) => o._tag)).toEqual(["Expired"])
  })

  it("N2: trades at or before the position an order was placed at do not count (a replay after a restart)", () => {
    const placed: BookEvent = { _tag: "Placed", order: order({ id: "a", levelE18: parsePriceE18("1")!, afterPosition: pos(5) }) }
    const [book, out] = run([placed, traded("0.5", 4), traded("0.5", 5)])
    expect(out).toEqual([])
    expect(sizeOf(book)).toBe(1)
    expect(triggeredIds(run([traded("0.5", 6)], book)[1])).toEqual(["a"])
  })

  it("N2: an order that does not count a trade stays while the others it sorts with trigger", () => {
    const [book, out] = run([
      { _tag: "Placed", order: order({ id: "old", levelE18: parsePriceE18("1")! }) },
      { _tag: "Placed", order: order({ id: "new", levelE18: parsePriceE18("2")!, afterPosition: pos(3) }) },
      { _tag: "Placed", order: order({ id: "lower", levelE18: parsePriceE18("0.1")! }) },
      traded("0.9", 3)
    ])
    expect(triggeredIds(out)).toEqual(["old"])
    expect(book.below.map((o) => o.id)).toEqual(["lower", "new"])
  })

  it("orders at the same level trigger together, in id order", () => {
    const [, out] = run([
      { _tag: "Placed", order: order({ id: "b2" }) },
      { _tag: "Placed", order: order({ id: "b1" }) },
      { _tag: "Placed", order: order({ id: "b3", levelE18: parsePriceE18("0.5")! }) },
      traded("1", 1)
    ])
    expect(triggeredIds(out)).toEqual(["b2", "b1"].sort().reverse())
  })

  it("E1: a crossing trade at or after an order's expiry expires it instead of triggering it", () => {
    const [book, out] = run([{ _tag: "Placed", order: order({ id: "a", expiresAtMs: 2000 }) }, traded("0.5", 2, 2000)])
    expect(out.map((o) => [o._tag, o.order.id])).toEqual([["Expired", "a"]])
    expect(sizeOf(book)).toBe(0)
    const [, before] = run([{ _tag: "Placed", order: order({ id: "a", expiresAtMs: 2000 }) }, traded("0.5", 2, 1999)])
    expect(triggeredIds(before)).toEqual(["a"])
  })

  it("E2: a sweep drops exactly the expired orders; nothing expired returns the same book", () => {
    const [book] = run([
      { _tag: "Placed", order: order({ id: "a", expiresAtMs: 1000 }) },
      { _tag: "Placed", order: order({ id: "b", expiresAtMs: 5000, side: "sell", levelE18: 9n * E18 }) },
      { _tag: "Placed", order: order({ id: "t", side: "sell", trigger: "trailing_stop", levelE18: 0n, trailBps: 10, expiresAtMs: 999 }) }
    ])
    const [same, none] = step(book, { _tag: "Swept", atMs: 998 })
    expect(same).toBe(book)
    expect(none).toEqual([])
    const [next, out] = step(book, { _tag: "Swept", atMs: 1000 })
    expect(out.map((o) => o.order.id).sort()).toEqual(["a", "t"])
    expect(sizeOf(next)).toBe(1)
  })

  it("C1: a cancelled order never triggers; cancelling an unknown id returns the same book", () => {
    const [book, out] = run([{ _tag: "Placed", order: order({ id: "a" }) }, { _tag: "Cancelled", id: "a" }, traded("0.1", 1)])
    expect(out).toEqual([])
    expect(sizeOf(book)).toBe(0)
    const [same] = step(book, { _tag: "Cancelled", id: "zzz" })
    expect(same).toBe(book)
  })

  it("P1: placing an id already in the book changes nothing", () => {
    const [book] = run([{ _tag: "Placed", order: order({ id: "a" }) }])
    const [same] = step(book, { _tag: "Placed", order: order({ id: "a", levelE18: 7n }) })
    expect(same).toBe(book)
  })

  it("refuses, as a defect, an order the service must not accept", () => {
    expect(() => step(emptyBook, { _tag: "Placed", order: order({ id: "x", trigger: "stop", side: "buy" }) })).toThrow(RangeError)
    expect(() => step(emptyBook, { _tag: "Placed", order: order({ id: "x", levelE18: 0n }) })).toThrow(RangeError)
    expect(() => step(emptyBook, { _tag: "Placed", order: order({ id: "x", side: "sell", trigger: "trailing_stop", trailBps: 10_000 }) })).toThrow(RangeError)
    expect(() => step(emptyBook, { _tag: "Placed", order: order({ id: "x", side: "buy", trigger: "trailing_stop", trailBps: 10 }) })).toThrow(RangeError)
  })
})

// -------------------------------------------------------------------------------------------------
// Property: against a reference that follows each order alone, every order triggers exactly once, at
// the first trade after it was placed that crosses, and never after its expiry or its cancel.

/** fast-check seed: fixed by `FC_SEED`, else random; printed so a failure can be replayed. */
const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))

type Cmd =
  | { readonly kind: "place"; readonly trigger: "limit" | "stop" | "trailing_stop"; readonly side: "buy" | "sell"; readonly level: number; readonly trailBps: number; readonly ttl: number | null }
  | { readonly kind: "cancel"; readonly which: number }
  | { readonly kind: "trade"; readonly price: number; readonly dtMs: number }
  | { readonly kind: "sweep" }

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({
    kind: fc.constant("place" as const),
    trigger: fc.constantFrom("limit" as const, "stop" as const, "trailing_stop" as const),
    side: fc.constantFrom("buy" as const, "sell" as const),
    level: fc.integer({ min: 1, max: 40 }),
    trailBps: fc.oneof(fc.constantFrom(1250, 2500, 5000), fc.integer({ min: 1, max: 9999 })),
    ttl: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: null })
  }),
  fc.record({ kind: fc.constant("cancel" as const), which: fc.nat() }),
  fc.record({ kind: fc.constant("trade" as const), price: fc.integer({ min: 1, max: 40 }), dtMs: fc.integer({ min: 0, max: 1500 }) }),
  fc.record({ kind: fc.constant("sweep" as const) })
)

describe("OrderBook.step property", () => {
  it(`every order triggers once, at the first crossing trade after it, never after expiry or cancel (seed ${seed})`, () => {
    console.log(`OrderBook property seed ${seed} (replay: FC_SEED=${seed})`)
    fc.assert(
      fc.property(fc.array(cmd, { maxLength: 120 }), (cmds) => {
        let book = emptyBook
        let n = 0
        let atMs = 0
        let last: Price | null = null
        // Prices are level/8 (so levels and prices meet exactly, and trails land between them).
        const asPrice = (v: number): Price => ({ num: BigInt(v), den: 8n })
        const placed: Array<{ o: BookOrder; cancelledAt: number | null; sweptAt: number | null }> = []
        const outs: Array<readonly [BookOutput, number]> = [] // with the trade index (n) it came at
        const feed = (e: BookEvent) => {
          const [next, out] = step(book, e)
          book = next
          for (const o of out) outs.push([o, n])
        }
        for (const c of cmds) {
          if (c.kind === "place") {
            if (c.trigger !== "limit" && c.side === "buy") continue
            const o: BookOrder = {
              id: `o${placed.length.toString().padStart(4, "0")}`,
              side: c.side,
              trigger: c.trigger,
              levelE18: c.trigger === "trailing_stop" ? 0n : (BigInt(c.level) * E18) / 8n,
              trailBps: c.trigger === "trailing_stop" ? c.trailBps : null,
              watermark: c.trigger === "trailing_stop" ? last : null,
              expiresAtMs: c.ttl === null ? null : atMs + c.ttl,
              afterPosition: pos(n)
            }
            placed.push({ o, cancelledAt: null, sweptAt: null })
            feed({ _tag: "Placed", order: o })
          } else if (c.kind === "cancel") {
            if (placed.length === 0) continue
            const p = placed[c.which % placed.length]!
            if (p.cancelledAt === null) p.cancelledAt = n
            feed({ _tag: "Cancelled", id: p.o.id })
          } else if (c.kind === "sweep") {
            for (const p of placed) if (p.sweptAt === null && p.o.expiresAtMs !== null && p.o.expiresAtMs <= atMs) p.sweptAt = n
            feed({ _tag: "Swept", atMs })
          } else {
            n++
            atMs += c.dtMs
            last = asPrice(c.price)
            feed({ _tag: "Traded", price: last, position: pos(n), atMs })
          }
        }
        // The reference: follow each order alone over the trades that came after it.
        const trades: Array<{ n: number; price: Price; atMs: number }> = []
        {
          let k = 0
          let t = 0
          for (const c of cmds) if (c.kind === "trade") trades.push({ n: ++k, price: asPrice(c.price), atMs: (t += c.dtMs) })
        }
        for (const { o, cancelledAt, sweptAt } of placed) {
          const after = Number(o.afterPosition)
          let expected: number | null = null
          let wm = o.watermark
          for (const t of trades) {
            if (t.n <= after) continue
            if (cancelledAt !== null && cancelledAt < t.n) break
            if (sweptAt !== null && sweptAt < t.n) break
            if (o.expiresAtMs !== null && o.expiresAtMs <= t.atMs) break
            let crosses: boolean
            if (o.trigger === "trailing_stop") {
              if (wm === null || comparePrices(t.price, wm) > 0) {
                wm = t.price
                crosses = false
              } else crosses = comparePrices(t.price, trailStop(wm, o.trailBps!)) <= 0
            } else crosses = o.trigger === "stop" || o.side === "buy" ? compareToLevel(t.price, o.levelE18) <= 0 : compareToLevel(t.price, o.levelE18) >= 0
            if (crosses) {
              expected = t.n
              break
            }
          }
          const mine = outs.filter(([out]) => out.order.id === o.id)
          const triggers = mine.filter(([out]) => out._tag === "Triggered")
          expect(mine.length).toBeLessThanOrEqual(1)
          expect(triggers.map(([, at]) => at)).toEqual(expected === null ? [] : [expected])
          for (const [out] of triggers) {
            if (out._tag !== "Triggered") continue
            expect(out.position).toBe(pos(expected!))
            if (o.expiresAtMs !== null) expect(out.atMs).toBeLessThan(o.expiresAtMs)
          }
        }
        // Whatever is still in the book never left it.
        const inBook = new Set([...book.below, ...book.above, ...book.trailing].map((o) => o.id))
        for (const [out] of outs) expect(inBook.has(out.order.id)).toBe(false)
      }),
      { seed, numRuns: 400 }
    )
  })
})
