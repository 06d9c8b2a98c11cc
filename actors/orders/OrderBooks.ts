/**
 * OrderBooks: the open limit orders of the markets this actors process holds, one `OrderBook` per
 * market key (`chain:mint`, the market actor's key, so the same shard and bus partition). The
 * market runtime calls `applied` for every event it applies, synchronously in the drain that moves
 * the price, so a trade is checked against the book in the same step; the triggers wait in
 * `pending`, and the raised trailing watermarks in their books (marked raised, their markets in
 * `raisedIn`), until the checkpoint flush that takes their market's state takes them (`take`) and writes them in its transaction (so a crash replays the trade from a
 * checkpoint that has not seen it and triggers again; the store's conditional update keeps that to
 * once, and a watermark is never durable ahead of the state it came from).
 *
 * Invariants:
 * - Bounded: at most `maxOrders` orders across the books (a `place` over it is refused, counted
 *   in `refused`); pending outputs are at most the orders that left the books since the last take.
 * - Only outputs of trades wait for `take` (their trade's checkpoint flush makes them durable); a
 *   wall-clock `sweep` answers what it expired to its caller.
 * - An order is in at most one book (its market's: orders never move between markets); a cancelled or triggered id placed again (a late
 *   sync) is ignored for `forgetAfter` takes.
 * - A book is evaluated only from the runtime's drain or from `place`'s catch-up, both on the one
 *   JavaScript thread, so they never interleave inside a step.
 * - The hook's common trades cost no bigint arithmetic and no map operation: the price's float is
 *   the market step's (`MarketCore.priceFloat`), a trade that crosses nothing is answered by
 *   `OrderBook.passedAt` (a new high keeps its raise as the reserves), each book sits in a cell the
 *   hook rewrites in place, and the last market looked up is remembered (`lastKey`, forgotten
 *   whenever a cell is added or dropped).
 */
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { type MarketState } from "../market/MarketActor.js"
import { priceReserves } from "../market/MarketRecord.js"
import { type BookOrder, type BookOutput, emptyBook, hasRaised, holds, type OrderBook, passedAt, type Price, priceOfReserves, quietAt, raisedWatermarks, settled, sizeOf, step } from "./OrderBook.js"

export interface PendingOutput {
  readonly marketKey: string
  readonly output: BookOutput
  /** Its place among every output this object made (1, 2, ...): what `takeTriggers`' writer reports durable. */
  readonly seq: number
}

export interface Taken {
  readonly outputs: ReadonlyArray<PendingOutput>
  /** Trailing stops whose watermark rose since the last take: id → the newest watermark. */
  readonly watermarks: ReadonlyMap<string, Price>
  /** The market of each of those trailing stops. */
  readonly watermarkMarkets: ReadonlyMap<string, string>
}

/** The price a market's state shows now, with where it stands; undefined without a price. */
export const currentPrice = (state: MarketState | undefined): { readonly price: Price; readonly position: string; readonly atMs: number } | undefined => {
  const core = state?.core
  if (core === undefined) return undefined
  const { quoteRaw, tokenRaw } = priceReserves(core)
  const price = priceOfReserves(quoteRaw, tokenRaw, core.identity.decimals, core.identity.quoteDecimals)
  return price === null ? undefined : { price, position: core.lastPosition, atMs: core.lastEventAtMs }
}

/** A market's book, in a cell the hook rewrites without a map write. */
interface Cell {
  book: OrderBook
}

export class OrderBooks {
  private readonly books = new Map<string, Cell>()
  /** The market the last `cellOf` looked up and its cell (undefined: none); reset whenever a cell is added or dropped. */
  private lastKey: string | undefined = undefined
  private lastCell: Cell | undefined = undefined
  private pending: Array<PendingOutput> = []
  private outputsMade = 0
  /** Markets whose books hold watermarks raised since their last take. */
  private raisedIn = new Set<string>()
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
    return this.cellOf(marketKey)?.book
  }

  /** Outputs waiting to be taken (a checkpoint flush's `take`, or `takeTriggers`). */
  pendingCount(): number {
    return this.pending.length
  }

  /** Outputs made so far (the newest `seq`). */
  outputsCount(): number {
    return this.outputsMade
  }

  /** The lowest `seq` of a trigger still pending (Infinity when none). */
  oldestPendingTrigger(): number {
    for (const p of this.pending) if (p.output._tag === "Triggered") return p.seq
    return Number.POSITIVE_INFINITY
  }

  /** Whether an expiry waits for its checkpoint flush (`take`). */
  hasPendingExpiry(): boolean {
    return this.pending.some((p) => p.output._tag === "Expired")
  }

  /**
   * Takes every pending trigger, of every market, oldest first (the trigger writer: a trigger is
   * written on its own, not with its market's checkpoint; the expiries and watermarks wait for
   * `take`).
   */
  takeTriggers(): ReadonlyArray<PendingOutput> {
    const triggers: Array<PendingOutput> = []
    const rest: Array<PendingOutput> = []
    for (const p of this.pending) (p.output._tag === "Triggered" ? triggers : rest).push(p)
    if (triggers.length > 0) this.pending = rest
    return triggers
  }

  /**
   * Adds an open order to its market's book. When the market has moved past the position the
   * order was placed at (trades applied before this process learned of the order), the book is
   * stepped once with the market's price now, as that trade: every other order in the book has
   * already seen it, so only the new order can trigger on it. Returns false when refused (full).
   */
  place(marketKey: string, order: BookOrder, now: MarketState | undefined): boolean {
    if (this.gone.has(order.id) || this.goneBefore.has(order.id)) return true
    const held = this.cellOf(marketKey)?.book ?? emptyBook
    if (holds(held, order.id)) return true
    if (this.orders >= this.maxOrders) {
      this.refused++
      return false
    }
    const [book] = step(held, { _tag: "Placed", order })
    this.setBook(marketKey, book)
    this.orders++
    const current = currentPrice(now)
    if (current !== undefined && current.position > order.afterPosition) {
      this.stepTrade(marketKey, book, { _tag: "Traded", ...current })
    }
    return true
  }

  /** Drops an order from its market's book (`marketKey`, the market it was placed on). */
  cancel(id: string, marketKey: string): void {
    this.gone.add(id)
    const held = this.cellOf(marketKey)?.book
    if (held === undefined) return
    const [book] = step(held, { _tag: "Cancelled", id })
    if (book === held) return
    this.setBook(marketKey, book)
    this.orders--
  }

  /**
   * The market runtime's hook: a trade on a market with a book is checked at the price it left.
   * Answers true when it triggered or expired an order (the runtime then hurries the checkpoint
   * flush that writes it).
   */
  readonly applied = (marketKey: string, event: ChainEvent, state: MarketState | undefined): boolean => {
    if (event._tag !== "Trade") return false
    const cell = this.cellOf(marketKey)
    if (cell === undefined) return false
    const core = state?.core
    if (core === undefined || core.lastPosition !== event.position) return false
    const book = cell.book
    // Most trades cross nothing: the float band answers that from the step's float (no bigint, no allocation).
    if (quietAt(book, core.priceFloat, event.timestampMs)) return false
    // A new high that reaches nothing raises the trailing stops with the reserves kept, not priced.
    const pool = core.lifecycle === "migrated" ? core.pool : null
    const passed = passedAt(
      book,
      core.priceFloat,
      pool === null ? core.curveState.virtualQuoteRaw : pool.quoteReserveRaw,
      pool === null ? core.curveState.virtualTokenRaw : pool.tokenReserveRaw,
      core.identity.decimals,
      core.identity.quoteDecimals,
      event.position,
      event.timestampMs
    )
    if (passed !== undefined) {
      if (passed !== book) {
        // A book already raised has its market in `raisedIn` (the take that settles it removes it).
        if (!hasRaised(book)) this.raisedIn.add(marketKey)
        cell.book = passed
      }
      return false
    }
    const current = currentPrice(state)
    if (current === undefined) return false
    const before = this.pending.length
    this.stepTrade(marketKey, book, { _tag: "Traded", price: current.price, position: event.position, atMs: event.timestampMs })
    return this.pending.length > before
  }

  /**
   * Drops every order expired at `atMs` and answers them (the caller writes them: a sweep runs by
   * the wall clock, not with a trade, so no checkpoint flush may come to take them).
   */
  sweep(atMs: number): ReadonlyArray<BookOrder> {
    const expired: Array<BookOrder> = []
    for (const [marketKey, { book }] of this.books) {
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

  /**
   * Takes the pending outputs and raised watermarks of the markets `of` names (the checkpoint
   * flush's hook, with the markets whose latest states that flush makes durable: what the other
   * markets decided waits for the flush of their states). Without `triggers`, the pending
   * triggers stay for `takeTriggers`.
   */
  take(of: (marketKey: string) => boolean = () => true, triggers = true): Taken {
    const outputs: Array<PendingOutput> = []
    const rest: Array<PendingOutput> = []
    for (const p of this.pending) (of(p.marketKey) && (triggers || p.output._tag !== "Triggered") ? outputs : rest).push(p)
    const watermarks = new Map<string, Price>()
    const watermarkMarkets = new Map<string, string>()
    for (const marketKey of [...this.raisedIn]) {
      if (!of(marketKey)) continue
      this.raisedIn.delete(marketKey)
      const cell = this.books.get(marketKey)
      if (cell === undefined) continue
      for (const [id, watermark] of raisedWatermarks(cell.book)) {
        watermarks.set(id, watermark)
        watermarkMarkets.set(id, marketKey)
      }
      cell.book = settled(cell.book)
    }
    this.pending = rest
    this.goneBefore = this.gone
    this.gone = new Set()
    return { outputs, watermarks, watermarkMarkets }
  }

  /**
   * A partition handed to this process (`RuntimeHooks.assigned`): the books of the markets `holds`
   * names are replaced by their stored open orders (`stored`, with the watermarks their last
   * checkpoint wrote), and what this process decided for them and never wrote is dropped. The
   * partition is replayed from its checkpoints, so the books must stand where those do: a
   * watermark or a trigger held from before (this process owned the partition once) would meet
   * the replay of the trades that made it.
   */
  reload(holds: (marketKey: string) => boolean, stored: ReadonlyArray<readonly [marketKey: string, order: BookOrder]>): void {
    for (const [marketKey, { book }] of [...this.books]) {
      if (!holds(marketKey)) continue
      this.orders -= sizeOf(book)
      this.dropCell(marketKey)
      this.raisedIn.delete(marketKey)
    }
    this.pending = this.pending.filter((p) => !holds(p.marketKey))
    for (const [marketKey, order] of stored) {
      if (!holds(marketKey)) continue
      this.gone.delete(order.id)
      this.goneBefore.delete(order.id)
      this.place(marketKey, order, undefined) // over the bound: refused and counted, as at start
    }
  }

  private stepTrade(marketKey: string, book: OrderBook, e: Extract<Parameters<typeof step>[1], { _tag: "Traded" }>): void {
    const [next, out] = step(book, e)
    if (next === book) return
    if (hasRaised(next)) this.raisedIn.add(marketKey)
    this.leave(marketKey, next, out)
  }

  private leave(marketKey: string, next: OrderBook, out: ReadonlyArray<BookOutput>): void {
    this.setBook(marketKey, next)
    for (const output of out) {
      this.pending.push({ marketKey, output, seq: ++this.outputsMade })
      this.forget(output.order.id)
    }
  }

  private forget(id: string): void {
    this.gone.add(id)
    this.orders--
  }

  /** The cell of a market's book (undefined: no open order there); the last answer is remembered. */
  private cellOf(marketKey: string): Cell | undefined {
    if (marketKey === this.lastKey) return this.lastCell
    const cell = this.books.get(marketKey)
    this.lastKey = marketKey
    this.lastCell = cell
    return cell
  }

  private setBook(marketKey: string, book: OrderBook): void {
    if (sizeOf(book) === 0) {
      this.dropCell(marketKey)
      return
    }
    const cell = this.books.get(marketKey)
    if (cell !== undefined) cell.book = book
    else {
      this.books.set(marketKey, { book })
      this.lastKey = undefined
    }
  }

  private dropCell(marketKey: string): void {
    if (this.books.delete(marketKey)) this.lastKey = undefined
  }
}
