/**
 * OrderBook: the pure trigger machine of one market's open limit orders (issue 29). The market's
 * actor process holds one book per market; `step(book, event) -> [book, outputs]` takes an order
 * placed or cancelled, a trade's price, or an expiry sweep, and answers the orders that trigger.
 *
 * Triggers (prices are quote per whole token, as the market record's `price`):
 * - `limit` buy: the price is at or below the target; `limit` sell: at or above it.
 * - `stop` (sell): the price is at or below the stop price.
 * - `trailing_stop` (sell): the watermark is the highest price seen since the order was placed
 *   (starting at the price it was placed at, when the market had one); the order triggers when the
 *   price is at or below `watermark × (10,000 − trailBps) / 10,000`. The trade that raises the
 *   watermark never triggers it.
 *
 * Invariants:
 * - Pure and deterministic; inputs never mutated; an event that changes nothing returns the SAME
 *   book. Throwing is a defect.
 * - Exact: the market's price is the rational its reserves give (`priceOfReserves`), targets are
 *   decimals at most `PRICE_DECIMALS` fractional digits held as integers scaled by 10^18;
 *   comparisons cross-multiply bigints, never floats.
 * - Each order leaves the book once (triggered, expired or cancelled) and is then never output
 *   again: only orders in the book trigger, and a trigger removes it.
 * - An order counts only trades after the position it was placed at (`afterPosition`, the market's
 *   last applied position then), so a replay of older trades after a restart cannot trigger it.
 * - An order whose `expiresAtMs` is at or before the trade's block time never triggers; it leaves
 *   with `Expired` (which fires nothing) when a trade reaches it or a sweep passes its time.
 * - Cost of a trade: O(triggered) for limit and stop orders (two arrays sorted by level, the
 *   next to cross at the end). Trailing stops are held in groups that share one watermark
 *   (`TrailGroup`, sorted by watermark; inside a group by trail, so the highest stop is first): a
 *   new high relabels the groups below it as one (no order touched when one group, as after any
 *   new high), and a trade that changes nothing compares its price with the lowest watermark and
 *   the highest stop only. One that raises or triggers costs O(groups) (the highest stop again),
 *   and one that triggers O(n) more (the placement order). A trade that reaches an order's expiry, or one at or before
 *   some order's position (a replay), takes the plain path: each trailing stop on its own, then
 *   regrouped (O(n log n)). Placing and cancelling copy one array (O(n)).
 */

/** Fractional digits of a stored order price (the market record's price precision). */
export const PRICE_DECIMALS = 18
const PRICE_SCALE = 10n ** BigInt(PRICE_DECIMALS)
export const BPS = 10_000

export type OrderSide = "buy" | "sell"
export type TriggerKind = "limit" | "stop" | "trailing_stop"

/** A non-negative rational price: `num / den`, `den > 0`. */
export interface Price {
  readonly num: bigint
  readonly den: bigint
}

/** What the book keeps of an open order. */
export interface BookOrder {
  readonly id: string
  readonly side: OrderSide
  readonly trigger: TriggerKind
  /** `limit`: the target; `stop`: the stop price; `trailing_stop`: unused (0n). Scaled by 10^18. */
  readonly levelE18: bigint
  /** `trailing_stop` only: the trail in basis points (1..9,999). */
  readonly trailBps: number | null
  /** `trailing_stop` only: the highest price seen so far (null until the first price). */
  readonly watermark: Price | null
  readonly expiresAtMs: number | null
  /** Trades at or below this position (the market's last one when the order was placed) do not count. */
  readonly afterPosition: string
}

export interface OrderBook {
  /** Limit buys and stops (trigger when price ≤ level), ascending by level: the highest is last. */
  readonly below: ReadonlyArray<BookOrder>
  /** Limit sells (trigger when price ≥ level), descending by level: the lowest is last. */
  readonly above: ReadonlyArray<BookOrder>
  /** The trailing stops, grouped by watermark. */
  readonly trail: TrailingStops
  /** The trailing stops in the order they were placed, each with its watermark now (built on each read). */
  readonly trailing: ReadonlyArray<BookOrder>
}

/**
 * Trailing stops that share one watermark (the same `num` and `den`, or none yet) and whether a
 * trade set it since the book was last `settled` (raised watermarks are written with the market's
 * checkpoint). The orders' own `watermark` fields are the ones they were placed with; the group's
 * is theirs now.
 */
export interface TrailGroup {
  readonly watermark: Price | null
  readonly raised: boolean
  /** Ascending by `trailBps`: the highest stop first. */
  readonly orders: ReadonlyArray<BookOrder>
}

export interface TrailingStops {
  /** Ascending by watermark, those without one first. */
  readonly groups: ReadonlyArray<TrailGroup>
  /** The same orders in the order they were placed (the order they leave in when one trade takes several). */
  readonly placed: ReadonlyArray<BookOrder>
  /** Over every group: the highest stop (null: none), the latest `afterPosition` ("" when empty), the earliest expiry. */
  readonly highestStop: Price | null
  readonly maxAfter: string
  readonly earliestExpiryMs: number
}

const noTrailing: TrailingStops = { groups: [], placed: [], highestStop: null, maxAfter: "", earliestExpiryMs: Number.POSITIVE_INFINITY }

class Book implements OrderBook {
  constructor(
    readonly below: ReadonlyArray<BookOrder>,
    readonly above: ReadonlyArray<BookOrder>,
    readonly trail: TrailingStops
  ) {}
  get trailing(): ReadonlyArray<BookOrder> {
    return entriesOf(this.trail).map(orderNow)
  }
}

export const emptyBook: OrderBook = new Book([], [], noTrailing)

export type BookEvent =
  | { readonly _tag: "Placed"; readonly order: BookOrder }
  | { readonly _tag: "Cancelled"; readonly id: string }
  /** A trade left the market at `price`, at `position`, in a block stamped `atMs`. */
  | { readonly _tag: "Traded"; readonly price: Price; readonly position: string; readonly atMs: number }
  /** Drops every order expired at `atMs` (a chain or wall time the runtime chooses). */
  | { readonly _tag: "Swept"; readonly atMs: number }

export type BookOutput =
  | {
      readonly _tag: "Triggered"
      readonly order: BookOrder
      /** The price the crossing trade left. */
      readonly price: Price
      readonly position: string
      readonly atMs: number
      /** `trailing_stop`: the watermark and the stop price it gave when the order triggered. */
      readonly watermark: Price | null
      readonly stopPrice: Price | null
    }
  | { readonly _tag: "Expired"; readonly order: BookOrder }

export type BookResult = readonly [OrderBook, ReadonlyArray<BookOutput>]

const none: ReadonlyArray<BookOutput> = []

// ---------------------------------------------------------------------------------------------
// Prices

/** The price reserves give: quote per whole token = quoteRaw·10^decimals / (tokenRaw·10^quoteDecimals); null without tokens. */
export const priceOfReserves = (quoteRaw: bigint, tokenRaw: bigint, decimals: number, quoteDecimals: number): Price | null =>
  tokenRaw <= 0n || quoteRaw < 0n ? null : { num: quoteRaw * pow10(decimals), den: tokenRaw * pow10(quoteDecimals) }

/** 10^n for the decimals a token has (0..36 kept; computed beyond), so a trade's price costs no exponentiation. */
const POW10: ReadonlyArray<bigint> = Array.from({ length: 37 }, (_, n) => 10n ** BigInt(n))
const pow10 = (n: number): bigint => POW10[n] ?? 10n ** BigInt(n)

/** -1, 0, 1 as `price` is below, at or above the level (scaled by 10^18). */
export const compareToLevel = (price: Price, levelE18: bigint): -1 | 0 | 1 => {
  const l = price.num * PRICE_SCALE
  const r = levelE18 * price.den
  return l < r ? -1 : l > r ? 1 : 0
}

export const comparePrices = (a: Price, b: Price): -1 | 0 | 1 => {
  const l = a.num * b.den
  const r = b.num * a.den
  return l < r ? -1 : l > r ? 1 : 0
}

/** A trailing stop's stop price: `watermark × (10,000 − trailBps) / 10,000`, exact. */
export const trailStop = (watermark: Price, trailBps: number): Price => ({
  num: watermark.num * (KEPT[trailBps] ??= BigInt(BPS - trailBps)),
  den: watermark.den * BPS_BIG
})
/** `10,000 − trailBps` as a bigint, made once per trail (a trade computes the stops of the groups it passes). */
const KEPT: Array<bigint | undefined> = []
const BPS_BIG = BigInt(BPS)

/** A decimal string (at most 18 fractional digits, no sign or exponent) as an integer scaled by 10^18; undefined otherwise. */
export const parsePriceE18 = (text: string): bigint | undefined => {
  const m = /^(\d{1,30})(?:\.(\d{1,18}))?$/.exec(text)
  if (m === null) return undefined
  return BigInt(m[1]!) * PRICE_SCALE + BigInt((m[2] ?? "").padEnd(PRICE_DECIMALS, "0"))
}

/** A scaled level as the exact decimal string (no trailing zeros). */
export const formatPriceE18 = (levelE18: bigint): string => formatScaled(levelE18)

/** A price as a decimal string floored at 18 fractional digits (the market record's convention). */
export const formatPrice = (p: Price): string => formatScaled((p.num * PRICE_SCALE) / p.den)

const formatScaled = (scaled: bigint): string => {
  const digits = scaled.toString().padStart(PRICE_DECIMALS + 1, "0")
  const whole = digits.slice(0, -PRICE_DECIMALS)
  const fraction = digits.slice(-PRICE_DECIMALS).replace(/0+$/, "")
  return fraction === "" ? whole : `${whole}.${fraction}`
}

// ---------------------------------------------------------------------------------------------
// The step

type Traded = Extract<BookEvent, { _tag: "Traded" }>

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
  return list.toSpliced(lo, 0, order) // exactly as long (a splice into a copy leaves spare capacity)
}

const without = (list: ReadonlyArray<BookOrder>, id: string): ReadonlyArray<BookOrder> => {
  const i = list.findIndex((o) => o.id === id)
  if (i < 0) return list
  return list.toSpliced(i, 1)
}

const expiredAt = (o: BookOrder, atMs: number): boolean => o.expiresAtMs !== null && o.expiresAtMs <= atMs

/**
 * Scans a sorted list from its end while the last order crosses: each crossing order that counts
 * this trade leaves (triggered or expired); one that does not (placed after it) stays. `numE18`
 * is the trade's price numerator scaled by 10^18, so a level costs one multiplication.
 */
const crossEnd = (list: ReadonlyArray<BookOrder>, below: boolean, numE18: bigint, e: Traded, out: Array<BookOutput>): ReadonlyArray<BookOrder> => {
  let i = list.length - 1
  if (i < 0 || !crosses(list[i]!, below, numE18, e.price.den)) return list
  const kept: Array<BookOrder> = []
  for (; i >= 0 && crosses(list[i]!, below, numE18, e.price.den); i--) {
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

/** Whether a trade at `numE18 / 10^18 / den` crosses a level: at or below it (`below`), or at or above it. */
const crosses = (o: BookOrder, below: boolean, numE18: bigint, den: bigint): boolean => {
  const level = o.levelE18 * den
  return below ? numE18 <= level : numE18 >= level
}

// ---------------------------------------------------------------------------------------------
// Trailing stops, grouped by watermark

/** One trailing stop with its watermark now and whether a trade set it since the last settle. */
interface Entry {
  readonly order: BookOrder
  readonly watermark: Price | null
  readonly raised: boolean
}

/** The order as the book holds it now (its watermark the group's). */
const withWatermark = (o: BookOrder, watermark: Price | null): BookOrder =>
  o.watermark === watermark ? o : { ...o, watermark }
const orderNow = (e: Entry): BookOrder => withWatermark(e.order, e.watermark)

const sameWatermark = (a: Price | null, b: Price | null): boolean =>
  a === b || (a !== null && b !== null && a.num === b.num && a.den === b.den)

/** Ascending by watermark value, none first. */
const byWatermark = (a: Price | null, b: Price | null): number => (a === null ? (b === null ? 0 : -1) : b === null ? 1 : comparePrices(a, b))

/** Ascending by trail: the highest stop first. */
const byTrail = (a: BookOrder, b: BookOrder): number => a.trailBps! - b.trailBps!

/** Every trailing stop, in placement order. */
const entriesOf = (t: TrailingStops): Array<Entry> => {
  const groupOfOrder = new Map<BookOrder, TrailGroup>()
  for (const g of t.groups) for (const o of g.orders) groupOfOrder.set(o, g)
  return t.placed.map((order) => {
    const g = groupOfOrder.get(order)!
    return { order, watermark: g.watermark, raised: g.raised }
  })
}

/** A group's highest stop (its first order's); null without a watermark. Not kept: a group per order placed at its own price would carry one more price. */
const stopOf = (g: TrailGroup): Price | null => (g.watermark === null ? null : trailStop(g.watermark, g.orders[0]!.trailBps!))

/**
 * Groups (each non-empty, sorted by `byWatermark`) and the same orders in placement order as the
 * book's trailing stops; `bounds` when the set of orders is the one `bounds` was computed for.
 */
const trailingOf = (groups: ReadonlyArray<TrailGroup>, placed: ReadonlyArray<BookOrder>, bounds?: TrailingStops): TrailingStops => {
  if (groups.length === 0) return noTrailing
  let highestStop: Price | null = null
  for (const g of groups) {
    const stop = stopOf(g)
    if (stop !== null && (highestStop === null || comparePrices(stop, highestStop) > 0)) highestStop = stop
  }
  let maxAfter = ""
  let earliestExpiryMs = Number.POSITIVE_INFINITY
  if (bounds !== undefined) {
    maxAfter = bounds.maxAfter
    earliestExpiryMs = bounds.earliestExpiryMs
  } else
    for (const o of placed) {
      if (o.afterPosition > maxAfter) maxAfter = o.afterPosition
      if (o.expiresAtMs !== null && o.expiresAtMs < earliestExpiryMs) earliestExpiryMs = o.expiresAtMs
    }
  return { groups, placed, highestStop, maxAfter, earliestExpiryMs }
}

/** Groups entries (in placement order) by watermark (`num` and `den`) and raised flag. */
const regroup = (entries: ReadonlyArray<Entry>): TrailingStops => {
  const groups: Array<{ watermark: Price | null; raised: boolean; orders: Array<BookOrder> }> = []
  const index = new Map<string, Array<BookOrder>>()
  for (const e of entries) {
    const key = `${e.raised ? "r" : "s"}${e.watermark === null ? "" : `${e.watermark.num}/${e.watermark.den}`}`
    let orders = index.get(key)
    if (orders === undefined) {
      orders = []
      index.set(key, orders)
      groups.push({ watermark: e.watermark, raised: e.raised, orders })
    }
    orders.push(e.order)
  }
  for (const g of groups) g.orders.sort(byTrail)
  return trailingOf(groups.sort((a, b) => byWatermark(a.watermark, b.watermark)), entries.map((e) => e.order))
}

const placeTrailing = (t: TrailingStops, order: BookOrder): TrailingStops => {
  const at = t.groups.findIndex((g) => !g.raised && sameWatermark(g.watermark, order.watermark))
  let groups: ReadonlyArray<TrailGroup>
  if (at >= 0) {
    const g = t.groups[at]!
    let i = g.orders.length
    while (i > 0 && g.orders[i - 1]!.trailBps! > order.trailBps!) i--
    groups = t.groups.with(at, { watermark: g.watermark, raised: false, orders: g.orders.toSpliced(i, 0, order) })
  } else {
    let i = t.groups.length
    while (i > 0 && byWatermark(t.groups[i - 1]!.watermark, order.watermark) > 0) i--
    groups = t.groups.toSpliced(i, 0, { watermark: order.watermark, raised: false, orders: [order] })
  }
  return trailingOf(groups, t.placed.concat([order]))
}

/** The trailing stops without `gone` (orders that left): groups emptied are dropped. */
const withoutOrders = (t: TrailingStops, gone: ReadonlySet<BookOrder>): TrailingStops => {
  const groups: Array<TrailGroup> = []
  for (const g of t.groups) {
    if (!g.orders.some((o) => gone.has(o))) groups.push(g)
    else {
      const orders = g.orders.filter((o) => !gone.has(o))
      if (orders.length > 0) groups.push({ watermark: g.watermark, raised: g.raised, orders })
    }
  }
  return trailingOf(groups, t.placed.filter((o) => !gone.has(o)))
}

const cancelTrailing = (t: TrailingStops, id: string): TrailingStops => {
  const o = t.placed.find((o) => o.id === id)
  return o === undefined ? t : withoutOrders(t, new Set([o]))
}

/**
 * The plain path: each trailing stop on its own, in placement order (a trade that reaches an
 * expiry, or one some order does not count), then regrouped.
 */
const tradeEach = (t: TrailingStops, e: Traded, out: Array<BookOutput>): TrailingStops => {
  let changed = false
  const next: Array<Entry> = []
  for (const entry of entriesOf(t)) {
    const o = entry.order
    const w = entry.watermark
    if (o.afterPosition >= e.position) next.push(entry)
    else if (expiredAt(o, e.atMs)) {
      out.push({ _tag: "Expired", order: orderNow(entry) })
      changed = true
    } else if (w === null || comparePrices(e.price, w) > 0) {
      next.push({ order: o, watermark: e.price, raised: true })
      changed = true
    } else {
      const stop = trailStop(w, o.trailBps!)
      if (comparePrices(e.price, stop) <= 0) {
        out.push({ _tag: "Triggered", order: orderNow(entry), price: e.price, position: e.position, atMs: e.atMs, watermark: w, stopPrice: stop })
        changed = true
      } else next.push(entry)
    }
  }
  return changed ? regroup(next) : t
}

/**
 * A trade every trailing stop counts and none has expired at: the groups whose watermark it
 * passes become one group under the trade's price (none of them triggers), and in the others the
 * orders whose stop it reaches (a prefix of each, by trail) trigger, in placement order.
 */
const tradeGroups = (t: TrailingStops, e: Traded, out: Array<BookOutput>): TrailingStops => {
  const p = e.price
  const groups = t.groups
  let raised = 0
  while (raised < groups.length && (groups[raised]!.watermark === null || comparePrices(p, groups[raised]!.watermark!) > 0)) raised++
  const reaches = t.highestStop !== null && comparePrices(p, t.highestStop) <= 0
  if (raised === 0 && !reaches) return t
  const next: Array<TrailGroup> = []
  if (raised === 1) next.push({ watermark: p, raised: true, orders: groups[0]!.orders })
  else if (raised > 1) {
    const merged: Array<BookOrder> = []
    for (let k = 0; k < raised; k++) for (const o of groups[k]!.orders) merged.push(o)
    next.push({ watermark: p, raised: true, orders: merged.sort(byTrail) })
  }
  const triggered = new Map<BookOrder, BookOutput>()
  for (let k = raised; k < groups.length; k++) {
    const g = groups[k]!
    if (!reaches || comparePrices(p, stopOf(g)!) > 0) {
      next.push(g)
      continue
    }
    const w = g.watermark!
    let n = 0
    for (; n < g.orders.length; n++) {
      const o = g.orders[n]!
      const stop = trailStop(w, o.trailBps!)
      if (comparePrices(p, stop) > 0) break
      triggered.set(o, { _tag: "Triggered", order: withWatermark(o, w), price: p, position: e.position, atMs: e.atMs, watermark: w, stopPrice: stop })
    }
    if (n < g.orders.length) next.push({ watermark: w, raised: g.raised, orders: g.orders.slice(n) })
  }
  if (triggered.size === 0) return trailingOf(next, t.placed, t)
  for (const o of t.placed) {
    const output = triggered.get(o)
    if (output !== undefined) out.push(output)
  }
  return trailingOf(next, t.placed.filter((o) => !triggered.has(o)))
}

const trade = (book: OrderBook, e: Traded): BookResult => {
  const out: Array<BookOutput> = []
  const numE18 = e.price.num * PRICE_SCALE
  const below = crossEnd(book.below, true, numE18, e, out)
  const above = crossEnd(book.above, false, numE18, e, out)
  const t = book.trail
  const trail = t.placed.length === 0 ? t : e.position <= t.maxAfter || e.atMs >= t.earliestExpiryMs ? tradeEach(t, e, out) : tradeGroups(t, e, out)
  if (below === book.below && above === book.above && trail === book.trail) return [book, none]
  return [new Book(below, above, trail), out.length === 0 ? none : out]
}

const sweep = (book: OrderBook, atMs: number): BookResult => {
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
  let trail = book.trail
  if (atMs >= trail.earliestExpiryMs) {
    const kept: Array<Entry> = []
    for (const entry of entriesOf(trail)) {
      if (expiredAt(entry.order, atMs)) out.push({ _tag: "Expired", order: orderNow(entry) })
      else kept.push(entry)
    }
    trail = regroup(kept)
  }
  return out.length === 0 ? [book, none] : [new Book(below, above, trail), out]
}

/** Throws (a defect) on an order the service should never have accepted. */
const checkOrder = (o: BookOrder): void => {
  if (o.trigger === "trailing_stop") {
    if (o.side !== "sell" || o.trailBps === null || !Number.isInteger(o.trailBps) || o.trailBps < 1 || o.trailBps >= BPS)
      throw new RangeError(`order ${o.id}: a trailing stop sells with trailBps in 1..9999`)
  } else {
    if (o.trigger === "stop" && o.side !== "sell") throw new RangeError(`order ${o.id}: a stop sells`)
    if (o.levelE18 <= 0n) throw new RangeError(`order ${o.id}: the price must be positive`)
  }
}

/** True when the book holds an open order `id`. */
export const holds = (book: OrderBook, id: string): boolean =>
  book.below.some((o) => o.id === id) || book.above.some((o) => o.id === id) || book.trail.groups.some((g) => g.orders.some((o) => o.id === id))

export const step = (book: OrderBook, e: BookEvent): BookResult => {
  switch (e._tag) {
    case "Placed": {
      const o = e.order
      if (holds(book, o.id)) return [book, none]
      checkOrder(o)
      if (o.trigger === "trailing_stop") return [new Book(book.below, book.above, placeTrailing(book.trail, o)), none]
      if (o.trigger === "stop" || o.side === "buy") return [new Book(insertSorted(book.below, o, ascending), book.above, book.trail), none]
      return [new Book(book.below, insertSorted(book.above, o, descending), book.trail), none]
    }
    case "Cancelled": {
      const below = without(book.below, e.id)
      const above = without(book.above, e.id)
      const trail = cancelTrailing(book.trail, e.id)
      return below === book.below && above === book.above && trail === book.trail ? [book, none] : [new Book(below, above, trail), none]
    }
    case "Traded":
      return trade(book, e)
    case "Swept":
      return sweep(book, e.atMs)
  }
}

export const sizeOf = (book: OrderBook): number => book.below.length + book.above.length + book.trail.placed.length

// ---------------------------------------------------------------------------------------------
// Raised watermarks (written with the market's checkpoint)

/** The trailing stops whose watermark a trade set since the book was last settled, with it. */
export const raisedWatermarks = (book: OrderBook): ReadonlyArray<readonly [id: string, watermark: Price]> => {
  const raised: Array<readonly [string, Price]> = []
  for (const g of book.trail.groups) if (g.raised) for (const o of g.orders) raised.push([o.id, g.watermark!])
  return raised
}

/** True when some trailing stop's watermark was set by a trade since the book was last settled. */
export const hasRaised = (book: OrderBook): boolean => book.trail.groups.some((g) => g.raised)

/** The same book with its raised watermarks taken (written): the same book when none was raised. */
export const settled = (book: OrderBook): OrderBook =>
  hasRaised(book)
    ? new Book(book.below, book.above, trailingOf(book.trail.groups.map((g) => (g.raised ? { ...g, raised: false } : g)), book.trail.placed, book.trail))
    : book
