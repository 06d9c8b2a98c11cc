/**
 * OrderBooks: the open limit orders of the markets this actors process holds, one `OrderBook` per
 * market key (`chain:mint`, the market actor's key, so the same shard and bus partition). The
 * market runtime calls `applied` for every event it applies, synchronously in the drain that moves
 * the price, so a trade is checked against the book in the same step; the triggers wait in
 * `pending` until the checkpoint flush takes them (`take`) and makes them durable before the
 * checkpoint that passes their trade (so a crash replays the trade and triggers again; the store's
 * conditional update keeps that to once).
 *
 * Invariants:
 * - Bounded: at most `maxOrders` orders across the books (a `place` over it is refused, counted
 *   in `refused`); pending outputs are at most the orders that left the books since the last take.
 * - Only outputs of trades wait for `take` (their trade's checkpoint flush makes them durable); a
 *   wall-clock `sweep` answers what it expired to its caller.
 * - An order is in at most one book (`marketOf`); a cancelled or triggered id placed again (a late
 *   sync) is ignored for `forgetAfter` takes.
 * - A book is evaluated only from the runtime's drain or from `place`'s catch-up, both on the one
 *   JavaScript thread, so they never interleave inside a step.
 */
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { type MarketState } from "../market/MarketActor.js"
import { priceReserves } from "../market/MarketRecord.js"
import { type BookOrder, type BookOutput, comparePrices, emptyBook, type OrderBook, type Price, priceOfReserves, sizeOf, step } from "./OrderBook.js"

export interface PendingOutput {
  readonly marketKey: string
  readonly output: BookOutput
}

export interface Taken {
  readonly outputs: ReadonlyArray<PendingOutput>
  /** Trailing stops whose watermark rose since the last take: id → the newest watermark. */
  readonly watermarks: ReadonlyMap<string, Price>
}

/** The price a market's state shows now, with where it stands; undefined without a price. */
export const currentPrice = (state: MarketState | undefined): { readonly price: Price; readonly position: string; readonly atMs: number } | undefined => {
  const core = state?.core
  if (core === undefined) return undefined
  const { quoteRaw, tokenRaw } = priceReserves(core)
  const price = priceOfReserves(quoteRaw, tokenRaw, core.identity.decimals, core.identity.quoteDecimals)
  return price === null ? undefined : { price, position: core.lastPosition, atMs: core.lastEventAtMs }
}

export class OrderBooks {
  private readonly books = new Map<string, OrderBook>()
  private readonly marketOf = new Map<string, string>()
  private pending: Array<PendingOutput> = []
  private watermarks = new Map<string, Price>()
  /** Ids that left a book recently (cancel, trigger, expiry): a late `place` of one is ignored. */
  private gone = new Set<string>()
  private goneBefore = new Set<string>()
  private orders = 0
  refused = 0

  constructor(private readonly maxOrders: number) {
    if (!Number.isSafeInteger(maxOrders) || maxOrders < 1) throw new RangeError(`OrderBooks: maxOrders must be a positive integer, got ${maxOrders}`)
  }

  size(): number {
    return this.orders
  }

  book(marketKey: string): OrderBook | undefined {
    return this.books.get(marketKey)
  }

  /**
   * Adds an open order to its market's book. When the market has moved past the position the
   * order was placed at (trades applied before this process learned of the order), the book is
   * stepped once with the market's price now, as that trade: every other order in the book has
   * already seen it, so only the new order can trigger on it. Returns false when refused (full).
   */
  place(marketKey: string, order: BookOrder, now: MarketState | undefined): boolean {
    if (this.marketOf.has(order.id) || this.gone.has(order.id) || this.goneBefore.has(order.id)) return true
    if (this.orders >= this.maxOrders) {
      this.refused++
      return false
    }
    const [book] = step(this.books.get(marketKey) ?? emptyBook, { _tag: "Placed", order })
    this.books.set(marketKey, book)
    this.marketOf.set(order.id, marketKey)
    this.orders++
    const current = currentPrice(now)
    if (current !== undefined && current.position > order.afterPosition) {
      this.stepTrade(marketKey, book, { _tag: "Traded", ...current })
    }
    return true
  }

  cancel(id: string): void {
    const marketKey = this.marketOf.get(id)
    this.gone.add(id)
    if (marketKey === undefined) return
    const [book] = step(this.books.get(marketKey)!, { _tag: "Cancelled", id })
    this.setBook(marketKey, book)
    this.marketOf.delete(id)
    this.watermarks.delete(id)
    this.orders--
  }

  /** The market runtime's hook: a trade on a market with a book is checked at the price it left. */
  readonly applied = (marketKey: string, event: ChainEvent, state: MarketState | undefined): void => {
    if (event._tag !== "Trade") return
    const book = this.books.get(marketKey)
    if (book === undefined) return
    const core = state?.core
    if (core === undefined || core.lastPosition !== event.position) return
    const current = currentPrice(state)
    if (current === undefined) return
    this.stepTrade(marketKey, book, { _tag: "Traded", price: current.price, position: event.position, atMs: event.timestampMs })
  }

  /**
   * Takes a trailing stop's stored watermark when it is above the one held (a partition handed over
   * from another process, whose trades this one never saw). Answers whether it changed.
   */
  raiseWatermark(id: string, watermark: Price): boolean {
    const marketKey = this.marketOf.get(id)
    if (marketKey === undefined) return false
    const book = this.books.get(marketKey)!
    const i = book.trailing.findIndex((o) => o.id === id)
    if (i < 0) return false
    const held = book.trailing[i]!
    if (held.watermark !== null && comparePrices(watermark, held.watermark) <= 0) return false
    const trailing = book.trailing.slice()
    trailing[i] = { ...held, watermark }
    this.books.set(marketKey, { ...book, trailing })
    return true
  }

  /** Ids of the trailing stops held for the markets `holds` names. */
  trailingIn(holds: (marketKey: string) => boolean): ReadonlyArray<string> {
    const ids: Array<string> = []
    for (const [marketKey, book] of this.books) if (holds(marketKey)) for (const o of book.trailing) ids.push(o.id)
    return ids
  }

  /**
   * Drops every order expired at `atMs` and answers them (the caller writes them: a sweep runs by
   * the wall clock, not with a trade, so no checkpoint flush may come to take them).
   */
  sweep(atMs: number): ReadonlyArray<BookOrder> {
    const expired: Array<BookOrder> = []
    for (const [marketKey, book] of this.books) {
      const [next, out] = step(book, { _tag: "Swept", atMs })
      if (next === book) continue
      this.setBook(marketKey, next)
      for (const o of out) {
        expired.push(o.order)
        this.forget(o.order.id)
      }
    }
    return expired
  }

  /** Takes every pending output and raised watermark (the checkpoint flush's hook). */
  take(): Taken {
    const taken: Taken = { outputs: this.pending, watermarks: this.watermarks }
    this.pending = []
    this.watermarks = new Map()
    this.goneBefore = this.gone
    this.gone = new Set()
    return taken
  }

  private stepTrade(marketKey: string, book: OrderBook, e: Extract<Parameters<typeof step>[1], { _tag: "Traded" }>): void {
    const [next, out] = step(book, e)
    if (next === book) return
    if (next.trailing !== book.trailing) {
      // A raised watermark is the trade's price object, never one an order held before.
      const prior = new Set(book.trailing.map((o) => o.watermark))
      for (const o of next.trailing) if (o.watermark !== null && !prior.has(o.watermark)) this.watermarks.set(o.id, o.watermark)
    }
    this.leave(marketKey, next, out)
  }

  private leave(marketKey: string, next: OrderBook, out: ReadonlyArray<BookOutput>): void {
    this.setBook(marketKey, next)
    for (const output of out) {
      this.pending.push({ marketKey, output })
      this.forget(output.order.id)
    }
  }

  private forget(id: string): void {
    this.marketOf.delete(id)
    this.watermarks.delete(id)
    this.gone.add(id)
    this.orders--
  }

  private setBook(marketKey: string, book: OrderBook): void {
    if (sizeOf(book) === 0) this.books.delete(marketKey)
    else this.books.set(marketKey, book)
  }
}
