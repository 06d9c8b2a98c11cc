/**
 * OrderBook against a reference (issue 29, the grouped trailing stops): a seeded property over
 * random order sets and event sequences (places, cancels, trades whose positions sometimes go
 * back as a replay does, expiries, sweeps, takes of the raised watermarks) compares the book with
 * a plain one that keeps each order on its own (the book before the groups: every trailing stop
 * carries its watermark, and every trade passes over each). After each event: the same outputs,
 * in the same order, with the same prices, positions, watermarks and stops to the raw unit (`num`
 * and `den`, not only their values); the same orders left in the book, each with the same
 * watermark; and at a take, the same raised watermarks. Trades are fed as the runtime's hook
 * feeds them half of the time: first to `passedAt` with the reserves (the price's numerator and
 * denominator at decimals 0, whose `priceOfReserves` is that same price) and their float, and to
 * `step` only when it cannot decide. Some trades repeat the last trade's price, in the same or
 * other raw units or one raw unit (of a unit 2^60 finer) off it, so a raise kept as reserves meets
 * its neighbours and the exact comparisons of reserves decide.
 *
 * Seed: `FC_SEED`, else random, printed.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { approxReserves } from "./internal/PriceBand.js"
import {
  type BookEvent,
  type BookOrder,
  type BookOutput,
  comparePrices,
  compareToLevel,
  emptyBook,
  type OrderBook,
  passedAt,
  type Price,
  raisedWatermarks,
  settled,
  sizeOf,
  step,
  trailStop
} from "./OrderBook.js"

// -------------------------------------------------------------------------------------------------
// The reference: the book as it was before trailing stops were grouped, without its band.

interface RefBook {
  readonly below: ReadonlyArray<BookOrder>
  readonly above: ReadonlyArray<BookOrder>
  readonly trailing: ReadonlyArray<BookOrder>
}
type RefResult = readonly [RefBook, ReadonlyArray<BookOutput>]
const none: ReadonlyArray<BookOutput> = []

/** Ascending by level, then by id (a total order: equal levels trigger in id order). */
const ascending = (a: BookOrder, b: BookOrder): number =>
  a.levelE18 < b.levelE18 ? -1 : a.levelE18 > b.levelE18 ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
const descending = (a: BookOrder, b: BookOrder): number => -ascending(a, b)

const insertSorted = (list: ReadonlyArray<BookOrder>, order: BookOrder, cmp: (a: BookOrder, b: BookOrder) => number): ReadonlyArray<BookOrder> => {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (cmp(list[mid]!, order) < 0) lo = mid + 1
    else hi = mid
  }
  const next = list.slice()
  next.splice(lo, 0, order)
  return next
}

const without = (list: ReadonlyArray<BookOrder>, id: string): ReadonlyArray<BookOrder> => {
  const i = list.findIndex((o) => o.id === id)
  if (i < 0) return list
  const next = list.slice()
  next.splice(i, 1)
  return next
}

const has = (book: RefBook, id: string): boolean =>
  book.below.some((o) => o.id === id) || book.above.some((o) => o.id === id) || book.trailing.some((o) => o.id === id)

const expiredAt = (o: BookOrder, atMs: number): boolean => o.expiresAtMs !== null && o.expiresAtMs <= atMs

/** Where an order goes: `below` (price ≤ level), `above` (price ≥ level) or `trailing`. */
const placeOf = (o: BookOrder): keyof RefBook =>
  o.trigger === "trailing_stop" ? "trailing" : o.trigger === "stop" || o.side === "buy" ? "below" : "above"

/**
 * Scans a sorted list from its end while the last order crosses: each crossing order that counts
 * this trade leaves (triggered or expired); one that does not (placed after it) stays.
 */
const crossEnd = (
  list: ReadonlyArray<BookOrder>,
  crosses: (o: BookOrder) => boolean,
  e: Extract<BookEvent, { _tag: "Traded" }>,
  out: Array<BookOutput>
): ReadonlyArray<BookOrder> => {
  let i = list.length - 1
  if (i < 0 || !crosses(list[i]!)) return list
  const kept: Array<BookOrder> = []
  for (; i >= 0 && crosses(list[i]!); i--) {
    const o = list[i]!
    if (o.afterPosition >= e.position) kept.push(o)
    else if (expiredAt(o, e.atMs)) out.push({ _tag: "Expired", order: o })
    else out.push({ _tag: "Triggered", order: o, price: e.price, position: e.position, atMs: e.atMs, watermark: null, stopPrice: null })
  }
  if (kept.length === list.length - 1 - i) return list
  const next = list.slice(0, i + 1)
  for (let k = kept.length - 1; k >= 0; k--) next.push(kept[k]!)
  return next
}

const trade = (book: RefBook, e: Extract<BookEvent, { _tag: "Traded" }>): RefResult => {
  const out: Array<BookOutput> = []
  const below = crossEnd(book.below, (o) => compareToLevel(e.price, o.levelE18) <= 0, e, out)
  const above = crossEnd(book.above, (o) => compareToLevel(e.price, o.levelE18) >= 0, e, out)
  let trailing = book.trailing
  if (trailing.length > 0) {
    let changed = false
    const next: Array<BookOrder> = []
    for (const o of trailing) {
      if (o.afterPosition >= e.position) {
        next.push(o)
        continue
      }
      if (expiredAt(o, e.atMs)) {
        out.push({ _tag: "Expired", order: o })
        changed = true
        continue
      }
      if (o.watermark === null || comparePrices(e.price, o.watermark) > 0) {
        next.push({ ...o, watermark: e.price })
        changed = true
        continue
      }
      const stop = trailStop(o.watermark, o.trailBps!)
      if (comparePrices(e.price, stop) <= 0) {
        out.push({ _tag: "Triggered", order: o, price: e.price, position: e.position, atMs: e.atMs, watermark: o.watermark, stopPrice: stop })
        changed = true
      } else next.push(o)
    }
    if (changed) trailing = next
  }
  if (below === book.below && above === book.above && trailing === book.trailing) return [book, none]
  return [{ below, above, trailing }, out.length === 0 ? none : out]
}

const sweep = (book: RefBook, atMs: number): RefResult => {
  const out: Array<BookOutput> = []
  const keep = (list: ReadonlyArray<BookOrder>): ReadonlyArray<BookOrder> => {
    if (!list.some((o) => expiredAt(o, atMs))) return list
    return list.filter((o) => {
      if (!expiredAt(o, atMs)) return true
      out.push({ _tag: "Expired", order: o })
      return false
    })
  }
  const below = keep(book.below)
  const above = keep(book.above)
  const trailing = keep(book.trailing)
  return out.length === 0 ? [book, none] : [{ below, above, trailing }, out]
}

const referenceStep = (book: RefBook, e: BookEvent): RefResult => {
  switch (e._tag) {
    case "Placed": {
      if (has(book, e.order.id)) return [book, none]
      const place = placeOf(e.order)
      const list =
        place === "trailing" ? [...book.trailing, e.order] : insertSorted(book[place], e.order, place === "below" ? ascending : descending)
      return [{ ...book, [place]: list }, none]
    }
    case "Cancelled": {
      const below = without(book.below, e.id)
      const above = without(book.above, e.id)
      const trailing = without(book.trailing, e.id)
      return below === book.below && above === book.above && trailing === book.trailing ? [book, none] : [{ below, above, trailing }, none]
    }
    case "Traded":
      return trade(book, e)
    case "Swept":
      return sweep(book, e.atMs)
  }
}


/** What the runtime wrote of the reference's raised watermarks (the old `OrderBooks` bookkeeping): id → the newest. */
const raisedBy = (before: RefBook, after: RefBook, into: Map<string, Price>): void => {
  if (after.trailing === before.trailing) return
  const prior = new Set(before.trailing.map((o) => o.watermark))
  for (const o of after.trailing) if (o.watermark !== null && !prior.has(o.watermark)) into.set(o.id, o.watermark)
}

// -------------------------------------------------------------------------------------------------
// The property

const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
const pos = (n: number): string => n.toString().padStart(8, "0")
const E18 = 10n ** 18n

/** A price `v/8` written with a denominator scaled by `k` (equal values, different raw units). */
const priceOf = (v: number, k: number): Price => ({ num: BigInt(v) * BigInt(k), den: 8n * BigInt(k) })
/** A unit so fine that a price one of it off the grid shares the grid price's float. */
const FINE = 2n ** 60n

type Cmd =
  | {
      readonly kind: "place"
      readonly trigger: "limit" | "stop" | "trailing_stop"
      readonly side: "buy" | "sell"
      readonly level: number
      readonly trailBps: number
      readonly watermark: readonly [number, number] | null
      readonly after: number
      readonly ttl: number | null
    }
  | { readonly kind: "cancel"; readonly which: number }
  | {
      readonly kind: "trade"
      readonly price: number
      readonly k: number
      readonly back: number
      readonly dtMs: number
      readonly repeat: boolean
      readonly nudge: number
      readonly viaReserves: boolean
    }
  | { readonly kind: "sweep"; readonly dtMs: number }
  | { readonly kind: "take" }

/**
 * `mixed`: every kind of order and event. `trailing`: mostly trailing stops with a few trails,
 * few expiries and replays, so most trades take the grouped path (new highs merging groups, and
 * drops triggering in several groups at once).
 */
const cmdOf = (mode: "mixed" | "trailing"): fc.Arbitrary<Cmd> => {
  const mixed = mode === "mixed"
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("place" as const),
        trigger: mixed ? fc.constantFrom("limit" as const, "stop" as const, "trailing_stop" as const, "trailing_stop" as const) : fc.constant("trailing_stop" as const),
        side: mixed ? fc.constantFrom("buy" as const, "sell" as const) : fc.constant("sell" as const),
        level: fc.integer({ min: 1, max: 40 }),
        trailBps: mixed ? fc.oneof(fc.constantFrom(1000, 2500, 5000), fc.integer({ min: 1, max: 9999 })) : fc.constantFrom(1000, 2500, 5000, 7500),
        watermark: fc.option(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom(1, 1, 3)), { nil: null, freq: 4 }),
        // The order's position against the trades so far: mostly the last one, sometimes ahead (a later sync) or behind.
        after: fc.oneof({ weight: mixed ? 3 : 20, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -3, max: 3 }) }),
        ttl: fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: null, freq: mixed ? 4 : 20 })
      })
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), which: fc.nat() }) },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("trade" as const),
        price: fc.integer({ min: 1, max: 40 }),
        k: fc.constantFrom(1, 1, 1, 3),
        // Mostly the next position; sometimes a replay from a few trades back.
        back: fc.oneof({ weight: mixed ? 12 : 40, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
        dtMs: fc.integer({ min: 0, max: 1500 }),
        // Sometimes the last trade's price again (`k` may write it in other units), on it or one fine unit off.
        repeat: fc.boolean(),
        nudge: fc.constantFrom(-1, 0, 0, 1),
        viaReserves: fc.boolean()
      })
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("sweep" as const), dtMs: fc.integer({ min: 0, max: 1500 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("take" as const) }) }
  )
}

const watermarkOf = (o: BookOrder) => (o.watermark === null ? null : [o.watermark.num, o.watermark.den])
const contents = (b: { readonly below: ReadonlyArray<BookOrder>; readonly above: ReadonlyArray<BookOrder>; readonly trailing: ReadonlyArray<BookOrder> }) => ({
  below: b.below.map((o) => o.id),
  above: b.above.map((o) => o.id),
  trailing: b.trailing.map((o) => [o.id, watermarkOf(o)])
})

describe("OrderBook against the plain reference", () => {
  it.each(["mixed", "trailing"] as const)(`%s: the same outputs, books and raised watermarks, to the raw unit (seed ${seed})`, (mode) => {
    console.log(`OrderBook reference property (${mode}) seed ${seed} (replay: FC_SEED=${seed})`)
    let viaReserves = 0
    fc.assert(
      fc.property(fc.array(cmdOf(mode), { maxLength: 200 }), (cmds) => {
        let book: OrderBook = emptyBook
        let ref: RefBook = { below: [], above: [], trailing: [] }
        const refRaised = new Map<string, Price>()
        const ids: Array<string> = []
        let n = 0 // the last trade's position
        let atMs = 0
        let lastPrice: number | undefined
        for (const c of cmds) {
          let e: BookEvent
          if (c.kind === "take") {
            const raised = new Map(raisedWatermarks(book))
            expect(new Map([...raised].map(([id, w]) => [id, [w.num, w.den]]))).toEqual(new Map([...refRaised].map(([id, w]) => [id, [w.num, w.den]])))
            refRaised.clear()
            const next = settled(book)
            expect(raisedWatermarks(next)).toEqual([])
            expect(contents(next)).toEqual(contents(book))
            book = next
            continue
          }
          if (c.kind === "place") {
            if (c.trigger !== "limit" && c.side === "buy") continue
            const id = `o${ids.length.toString().padStart(4, "0")}`
            ids.push(id)
            const trailing = c.trigger === "trailing_stop"
            e = {
              _tag: "Placed",
              order: {
                id,
                side: c.side,
                trigger: c.trigger,
                levelE18: trailing ? 0n : (BigInt(c.level) * E18) / 8n,
                trailBps: trailing ? c.trailBps : null,
                watermark: trailing && c.watermark !== null ? priceOf(c.watermark[0], c.watermark[1]) : null,
                expiresAtMs: c.ttl === null ? null : atMs + c.ttl,
                afterPosition: pos(Math.max(0, n + c.after))
              }
            }
          } else if (c.kind === "cancel") {
            // Sometimes an id never placed.
            e = { _tag: "Cancelled", id: ids.length === 0 || c.which % 7 === 6 ? "unknown" : ids[c.which % ids.length]! }
          } else if (c.kind === "sweep") {
            atMs += c.dtMs
            e = { _tag: "Swept", atMs }
          } else {
            atMs += c.dtMs
            n = c.back === 0 ? n + 1 : Math.max(1, n - c.back)
            if (!c.repeat || lastPrice === undefined) lastPrice = c.price
            const grid = priceOf(lastPrice, c.k)
            const price = c.repeat && c.nudge !== 0 ? { num: grid.num * FINE + BigInt(c.nudge), den: grid.den * FINE } : grid
            e = { _tag: "Traded", price, position: pos(n), atMs }
          }
          // As the hook: the reserves path first (it answers only what it can decide, with no outputs).
          const passed =
            e._tag === "Traded" && c.kind === "trade" && c.viaReserves
              ? passedAt(book, approxReserves(e.price.num, e.price.den, 0, 0), e.price.num, e.price.den, 0, 0, e.position, e.atMs)
              : undefined
          if (passed !== undefined) viaReserves++
          const [next, out] = passed !== undefined ? [passed, none] : step(book, e)
          const [refNext, refOut] = referenceStep(ref, e)
          expect(out).toEqual(refOut)
          expect(contents(next)).toEqual(contents(refNext))
          expect(sizeOf(next)).toBe(refNext.below.length + refNext.above.length + refNext.trailing.length)
          // An event that changes nothing answers the same book.
          if (refNext === ref) expect(next).toBe(book)
          // The old runtime noted raised watermarks after trades (a placement's watermark is the stored one).
          if (e._tag === "Traded") raisedBy(ref, refNext, refRaised)
          // What left the book is no longer raised (the old bookkeeping forgot it).
          for (const o of out) refRaised.delete(o.order.id)
          if (e._tag === "Cancelled") refRaised.delete(e.id)
          book = next
          ref = refNext
        }
      }),
      { seed, numRuns: 500 }
    )
    // The reserves path did answer (it is not only ever left to step).
    expect(viaReserves).toBeGreaterThan(100)
  })
})
