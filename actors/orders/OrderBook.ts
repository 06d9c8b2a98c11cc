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
 *   next to cross at the end) plus O(trailing stops) (each has its own watermark). Placing and
 *   cancelling copy one array (O(n)).
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
  readonly trailing: ReadonlyArray<BookOrder>
}

export const emptyBook: OrderBook = { below: [], above: [], trailing: [] }

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
  num: watermark.num * BigInt(BPS - trailBps),
  den: watermark.den * BigInt(BPS)
})

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

const has = (book: OrderBook, id: string): boolean =>
  book.below.some((o) => o.id === id) || book.above.some((o) => o.id === id) || book.trailing.some((o) => o.id === id)

const expiredAt = (o: BookOrder, atMs: number): boolean => o.expiresAtMs !== null && o.expiresAtMs <= atMs

/** Where an order goes: `below` (price ≤ level), `above` (price ≥ level) or `trailing`. */
const placeOf = (o: BookOrder): keyof OrderBook =>
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

/**
 * What a trade must cross to change a trailing list: its lowest watermark (a price above it raises
 * one), its highest stop (a price at or below it triggers one) and its earliest expiry. Computed
 * once per list (the lists are immutable) and kept beside it, so a trade inside the band they
 * leave, which changes nothing, costs two price comparisons instead of a pass over the orders.
 */
interface TrailingBand {
  readonly lowestWatermark: Price | null
  readonly highestStop: Price | null
  readonly earliestExpiryMs: number
}
const bands = new WeakMap<ReadonlyArray<BookOrder>, TrailingBand>()
const bandOf = (trailing: ReadonlyArray<BookOrder>): TrailingBand => {
  const known = bands.get(trailing)
  if (known !== undefined) return known
  let lowestWatermark: Price | null = null
  let highestStop: Price | null = null
  let earliestExpiryMs = Number.POSITIVE_INFINITY
  let unbounded = false
  for (const o of trailing) {
    if (o.expiresAtMs !== null && o.expiresAtMs < earliestExpiryMs) earliestExpiryMs = o.expiresAtMs
    if (o.watermark === null) {
      unbounded = true // raised by any trade
      continue
    }
    if (lowestWatermark === null || comparePrices(o.watermark, lowestWatermark) < 0) lowestWatermark = o.watermark
    const stop = trailStop(o.watermark, o.trailBps!)
    if (highestStop === null || comparePrices(stop, highestStop) > 0) highestStop = stop
  }
  const band = { lowestWatermark: unbounded ? null : lowestWatermark, highestStop, earliestExpiryMs }
  bands.set(trailing, band)
  return band
}
/** True when the trade raises no watermark, triggers no trailing stop and expires none. */
const insideBand = (trailing: ReadonlyArray<BookOrder>, e: Extract<BookEvent, { _tag: "Traded" }>): boolean => {
  const band = bandOf(trailing)
  return (
    band.lowestWatermark !== null &&
    e.atMs < band.earliestExpiryMs &&
    comparePrices(e.price, band.lowestWatermark) <= 0 &&
    (band.highestStop === null || comparePrices(e.price, band.highestStop) > 0)
  )
}

const trade = (book: OrderBook, e: Extract<BookEvent, { _tag: "Traded" }>): BookResult => {
  const out: Array<BookOutput> = []
  const below = crossEnd(book.below, (o) => compareToLevel(e.price, o.levelE18) <= 0, e, out)
  const above = crossEnd(book.above, (o) => compareToLevel(e.price, o.levelE18) >= 0, e, out)
  let trailing = book.trailing
  if (trailing.length > 0 && !insideBand(trailing, e)) {
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
  const trailing = keep(book.trailing)
  return out.length === 0 ? [book, none] : [{ below, above, trailing }, out]
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

export const step = (book: OrderBook, e: BookEvent): BookResult => {
  switch (e._tag) {
    case "Placed": {
      if (has(book, e.order.id)) return [book, none]
      checkOrder(e.order)
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

export const sizeOf = (book: OrderBook): number => book.below.length + book.above.length + book.trailing.length
