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
 * - Pure and deterministic; inputs never mutated (but for two caches: `highStopF`, an upper bound on
 *   the trailing stops that an exact pass may tighten in place; it stays a valid bound, so no
 *   answer changes; and `raisedTo` of a raise kept as reserves, its exact price made once when
 *   first read); an event that changes nothing returns the SAME book. Throwing is a defect.
 * - Exact: the market's price is the rational its reserves give (`priceOfReserves`), targets are
 *   decimals at most `PRICE_DECIMALS` fractional digits held as integers scaled by 10^18;
 *   whether an order triggers is decided by cross-multiplied bigints. Floats only answer "surely
 *   not" (`internal/PriceBand.ts`: a float price off by at most 2^-49 of itself, compared with a
 *   margin of 2^-40; anything nearer, and anything out of the floats' normal range, goes to the
 *   bigints), proved by `PriceBand.test.ts`'s property against the exact comparisons.
 * - Each order leaves the book once (triggered, expired or cancelled) and is then never output
 *   again: only orders in the book trigger, and a trigger removes it.
 * - An order counts only trades after the position it was placed at (`afterPosition`, the market's
 *   last applied position then), so a replay of older trades after a restart cannot trigger it.
 * - An order whose `expiresAtMs` is at or before the trade's block time never triggers; it leaves
 *   with `Expired` (which fires nothing) when a trade reaches it or a sweep passes its time.
 *
 * Storage (budget: < 200 bytes per open order, `bench:orders`): no object per order. A book is one
 * flat array of `STRIDE` slots per order (id, afterPosition, level, watermark, a small-integer
 * kind/trail/raised word, expiry): the limit buys and stops ascending
 * by level (the next to cross last), the limit sells descending (the next to cross last), then the
 * trailing stops in the order they were placed. `BookOrder`s are built only for outputs and reads.
 *
 * Cost of a trade: a trade that provably changes nothing (its float price inside the book's
 * float band: above the highest "below" level and the highest trailing stop, below the lowest
 * "above" level and the lowest watermark, before the earliest trailing expiry) costs a few float
 * comparisons and allocates nothing (`quietAt`, used by `OrderBooks.applied` before it computes the
 * trade's exact price). Otherwise limit and stop orders cost O(triggered) (the ends of the sorted
 * sections). Trailing stops share a raise level `raisedTo`: a trade above the lowest watermark,
 * counted by every trailing stop and reaching no stop, sets it (O(1)), and each trailing stop's
 * watermark is the higher of its own and `raisedTo` (an order's own is below `raisedTo` exactly
 * when that trade raised it). `passedAt` takes such a trade, and a quiet one, from the float the
 * market step keeps (`MarketCore.priceFloat`) and the reserves, without the exact price: its raise
 * is kept as the reserves and priced (`priceOfReserves`, the same `num`/`den` the exact path
 * gives) only when read: an exact pass, a placement, a settle (the flush). A trade near
 * or below some stop checks each trailing stop exactly (O(n)); placing, cancelling, a trade one
 * order does not count (a replay) or one at some expiry copy the book (O(n)) with each watermark
 * written into its order.
 */
import { approxLevel, approxRatio, approxStop, surelyAbove, surelyBelow } from "./internal/PriceBand.js"

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
  /** Limit buys and stops (trigger when price ≤ level), ascending by level: the highest is last (built on each read). */
  readonly below: ReadonlyArray<BookOrder>
  /** Limit sells (trigger when price ≥ level), descending by level: the lowest is last (built on each read). */
  readonly above: ReadonlyArray<BookOrder>
  /** The trailing stops in the order they were placed, each with its watermark now (built on each read). */
  readonly trailing: ReadonlyArray<BookOrder>
}

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
// Packed storage

/** Slots per order in a book's array. */
const STRIDE = 6
const ID = 0
const AFTER = 1
const LEVEL = 2
const WATERMARK = 3
const META = 4
const EXPIRES = 5

/** META: the kind in the low 2 bits, the raised flag, then `trailBps + 1` (0: null). */
const LIMIT_BUY = 0
const LIMIT_SELL = 1
const STOP = 2
const TRAILING = 3
const KIND_MASK = 3
const RAISED = 4
const TRAIL_SHIFT = 3

type Slot = string | bigint | number | Price | null
type Slots = ReadonlyArray<Slot>

const idAt = (s: Slots, i: number): string => s[i * STRIDE + ID] as string
const afterAt = (s: Slots, i: number): string => s[i * STRIDE + AFTER] as string
const levelAt = (s: Slots, i: number): bigint => s[i * STRIDE + LEVEL] as bigint
const ownWatermarkAt = (s: Slots, i: number): Price | null => s[i * STRIDE + WATERMARK] as Price | null
const metaAt = (s: Slots, i: number): number => s[i * STRIDE + META] as number
const expiresAt = (s: Slots, i: number): number | null => s[i * STRIDE + EXPIRES] as number | null
const trailAt = (s: Slots, i: number): number => (metaAt(s, i) >>> TRAIL_SHIFT) - 1

const kindOf = (o: BookOrder): number =>
  o.trigger === "trailing_stop" ? TRAILING : o.trigger === "stop" ? STOP : o.side === "buy" ? LIMIT_BUY : LIMIT_SELL

const packed = (o: BookOrder): ReadonlyArray<Slot> => [
  o.id,
  o.afterPosition,
  o.levelE18,
  o.watermark,
  kindOf(o) | ((o.trailBps === null ? 0 : o.trailBps + 1) << TRAIL_SHIFT),
  o.expiresAtMs
]

/** The order in slot `i`, with `watermark` as its watermark. */
const orderAt = (s: Slots, i: number, watermark: Price | null): BookOrder => {
  const meta = metaAt(s, i)
  const kind = meta & KIND_MASK
  const trail = (meta >>> TRAIL_SHIFT) - 1
  return {
    id: idAt(s, i),
    side: kind === LIMIT_BUY ? "buy" : "sell",
    trigger: kind === TRAILING ? "trailing_stop" : kind === STOP ? "stop" : "limit",
    levelE18: levelAt(s, i),
    trailBps: trail < 0 ? null : trail,
    watermark,
    expiresAtMs: expiresAt(s, i),
    afterPosition: afterAt(s, i)
  }
}

const expiredAt = (s: Slots, i: number, atMs: number): boolean => {
  const x = expiresAt(s, i)
  return x !== null && x <= atMs
}

// ---------------------------------------------------------------------------------------------
// The book

/**
 * `slots`: `nBelow` orders, then `nAbove`, then the trailing stops. The raise level (`raiseOf`):
 * the price the last trade that raised every watermark below it left (none since the watermarks
 * were last written into the orders: `raisedTo` null and `raiseDecimals` −1); a trailing stop's
 * watermark now is the raise level when its own is below it (or none), else its own, and it was
 * raised since the last settle when so or when its RAISED bit is set. A raise from `passedAt` is
 * kept as the reserves the trade left (`raiseQuoteRaw` / `raiseTokenRaw` > 0 at the market's
 * decimals), `raisedTo` caching their exact price once read. While raised, the lowest watermark
 * IS the raise level (a raise needs a trade above the lowest). The rest is derived (`build`):
 * the float band and the trailing stops' bounds.
 */
class Book implements OrderBook {
  constructor(
    readonly slots: Slots,
    readonly nBelow: number,
    readonly nAbove: number,
    /** The raise level, exact (for a raise kept as reserves: null until first read, then their price). */
    public raisedTo: Price | null,
    readonly raiseQuoteRaw: bigint,
    readonly raiseTokenRaw: bigint,
    /** −1: no raise kept as reserves (a number, so the hot checks compare no bigint). */
    readonly raiseDecimals: number,
    readonly raiseQuoteDecimals: number,
    /** The highest "below" level and the lowest "above" level as floats (−∞ / +∞ when none). */
    readonly belowMaxF: number,
    readonly aboveMinF: number,
    /**
     * The lowest watermark now, exact, when no raise is held (`lowWatermarkOf` reads it; null when
     * some trailing stop has none yet or, while raised, always) and its float (−∞ when none).
     */
    readonly lowWatermark: Price | null,
    readonly lowWatermarkF: number,
    /** A float at or above every trailing stop's stop price (as `PriceBand` bounds it; −∞ when none). Tightened after an exact pass. */
    public highStopF: number,
    /** The smallest trail (the stop nearest its watermark); the latest `afterPosition` ("" when none), the earliest expiry, and how many carry the RAISED bit: over the trailing stops. */
    readonly lowTrail: number,
    readonly maxAfter: string,
    readonly earliestExpiryMs: number,
    readonly raisedBits: number
  ) {}
  get size(): number {
    return this.slots.length / STRIDE
  }
  get nTrailing(): number {
    return this.size - this.nBelow - this.nAbove
  }
  get below(): ReadonlyArray<BookOrder> {
    return range(0, this.nBelow).map((i) => orderAt(this.slots, i, ownWatermarkAt(this.slots, i)))
  }
  get above(): ReadonlyArray<BookOrder> {
    return range(this.nBelow, this.nBelow + this.nAbove).map((i) => orderAt(this.slots, i, ownWatermarkAt(this.slots, i)))
  }
  get trailing(): ReadonlyArray<BookOrder> {
    return range(this.nBelow + this.nAbove, this.size).map((i) => orderAt(this.slots, i, watermarkNow(this, i)))
  }
}

const range = (from: number, to: number): Array<number> => Array.from({ length: to - from }, (_, k) => from + k)

/** Whether the book holds a raise level. */
const hasRaise = (b: Book): boolean => b.raisedTo !== null || b.raiseDecimals >= 0

/** The raise level, exact (a raise kept as reserves is priced here, once: the same `num`/`den` the exact path would have used). */
const raiseOf = (b: Book): Price | null => {
  if (b.raisedTo !== null || b.raiseDecimals < 0) return b.raisedTo
  b.raisedTo = priceOfReserves(b.raiseQuoteRaw, b.raiseTokenRaw, b.raiseDecimals, b.raiseQuoteDecimals)
  return b.raisedTo
}

/** The lowest watermark now (the raise level while raised); null when some trailing stop has none yet. */
const lowWatermarkOf = (b: Book): Price | null => (hasRaise(b) ? raiseOf(b) : b.lowWatermark)

/** Whether the trailing stop in slot `i` takes the raise level as its watermark. */
const underRaise = (b: Book, i: number): boolean => {
  const raise = raiseOf(b)
  if (raise === null) return false
  const own = ownWatermarkAt(b.slots, i)
  return own === null || comparePrices(own, raise) < 0
}
const watermarkNow = (b: Book, i: number): Price | null => (underRaise(b, i) ? raiseOf(b) : ownWatermarkAt(b.slots, i))
const raisedNow = (b: Book, i: number): boolean => (metaAt(b.slots, i) & RAISED) !== 0 || underRaise(b, i)

/** A book over `slots` (watermarks written into the orders), its band and bounds computed: O(n). */
const build = (slots: Slots, nBelow: number, nAbove: number): Book => {
  const n = slots.length / STRIDE
  const belowMaxF = nBelow === 0 ? Number.NEGATIVE_INFINITY : approxLevel(levelAt(slots, nBelow - 1))
  const aboveMinF = nAbove === 0 ? Number.POSITIVE_INFINITY : approxLevel(levelAt(slots, nBelow + nAbove - 1))
  let lowWatermark: Price | null = null
  let unwatched = false
  let highStopF = Number.NEGATIVE_INFINITY
  let lowTrail = BPS
  let maxAfter = ""
  let earliestExpiryMs = Number.POSITIVE_INFINITY
  let raisedBits = 0
  for (let i = nBelow + nAbove; i < n; i++) {
    const w = ownWatermarkAt(slots, i)
    const trail = trailAt(slots, i)
    if (w === null) unwatched = true
    else {
      if (lowWatermark === null || comparePrices(w, lowWatermark) < 0) lowWatermark = w
      highStopF = Math.max(highStopF, approxStop(approxRatio(w.num, w.den), trail))
    }
    if (trail < lowTrail) lowTrail = trail
    const after = afterAt(slots, i)
    if (after > maxAfter) maxAfter = after
    const x = expiresAt(slots, i)
    if (x !== null && x < earliestExpiryMs) earliestExpiryMs = x
    if ((metaAt(slots, i) & RAISED) !== 0) raisedBits++
  }
  if (unwatched) lowWatermark = null
  const lowWatermarkF = lowWatermark === null ? Number.NEGATIVE_INFINITY : approxRatio(lowWatermark.num, lowWatermark.den)
  return new Book(slots, nBelow, nAbove, null, 0n, 0n, -1, 0, belowMaxF, aboveMinF, lowWatermark, lowWatermarkF, highStopF, lowTrail, maxAfter, earliestExpiryMs, raisedBits)
}

/** The trailing stops' slots with `raisedTo` written into each order it covers (RAISED set): the same array when none. */
const written = (b: Book): Slots => {
  const raise = raiseOf(b)
  if (raise === null) return b.slots
  const slots = b.slots.slice()
  for (let i = b.nBelow + b.nAbove; i < b.size; i++)
    if (underRaise(b, i)) {
      slots[i * STRIDE + WATERMARK] = raise
      slots[i * STRIDE + META] = metaAt(b.slots, i) | RAISED
    }
  return slots
}

/**
 * The same book after a trade above the lowest watermark (every trailing stop counting it, none
 * reached): O(1). The raise is `raisedTo` exact, or (null) the reserves the trade left, priced only
 * when read; `priceF` is the raise's float either way.
 */
const withRaise = (
  b: Book,
  raisedTo: Price | null,
  quoteRaw: bigint,
  tokenRaw: bigint,
  decimals: number,
  quoteDecimals: number,
  priceF: number
): Book =>
  new Book(
    b.slots,
    b.nBelow,
    b.nAbove,
    raisedTo,
    quoteRaw,
    tokenRaw,
    decimals,
    quoteDecimals,
    b.belowMaxF,
    b.aboveMinF,
    null,
    priceF,
    // The raised stops are at most `price × (1 − lowTrail)`; the others keep theirs.
    Math.max(b.highStopF, approxStop(priceF, b.lowTrail)),
    b.lowTrail,
    b.maxAfter,
    b.earliestExpiryMs,
    b.raisedBits
  )

/** The raise at an exact `price` (no reserves kept: `raiseDecimals` −1). */
const raisedBook = (b: Book, price: Price, priceF: number): Book => withRaise(b, price, 0n, 0n, -1, 0, priceF)

/**
 * The raise kept as the reserves the trade left (its price made only when read): no bigint
 * arithmetic. `priceF` is `approxReserves` of them (five correctly rounded operations); the stop
 * bound built on it adds two (`approxStop`): seven, within `PriceBand`'s bound.
 */
const reservesRaisedBook = (b: Book, quoteRaw: bigint, tokenRaw: bigint, decimals: number, quoteDecimals: number, priceF: number): Book =>
  withRaise(b, null, quoteRaw, tokenRaw, decimals, quoteDecimals, priceF)

export const emptyBook: OrderBook = build([], 0, 0)

const asBook = (book: OrderBook): Book => book as Book

// ---------------------------------------------------------------------------------------------
// The step

type Traded = Extract<BookEvent, { _tag: "Traded" }>

/**
 * True when a trade whose price is within `PriceBand`'s error of the float `priceF`, at `atMs`,
 * provably changes nothing in the book (whatever its position). O(1), allocates nothing.
 */
export const quietAt = (book: OrderBook, priceF: number, atMs: number): boolean => {
  const b = asBook(book)
  return (
    surelyAbove(priceF, b.belowMaxF) &&
    surelyBelow(priceF, b.aboveMinF) &&
    (b.nTrailing === 0 || (atMs < b.earliestExpiryMs && surelyBelow(priceF, b.lowWatermarkF) && surelyAbove(priceF, b.highStopF)))
  )
}

/**
 * The book after a trade that provably triggers and expires nothing, decided without its exact
 * price: the trade left the reserves `quoteRaw` / `tokenRaw` (a market with these decimals, whose
 * price is `priceOfReserves` of them) and `priceF` is that price's float (`PriceBand`:
 * `approxReserves` of them, as `MarketCore.priceFloat`; a float in its normal range, which every
 * answer but undefined needs, implies a positive quote reserve and a positive token reserve:
 * `approxReserves` is NaN for any negative one, two negatives included). Answers the SAME book when the trade
 * changes nothing, and a raised one (O(1)) when every trailing stop counts it, none has expired
 * at `atMs`, it is surely above every stop and above the lowest watermark: the raise is kept as
 * the reserves (`reservesRaisedBook`). Whether it is above the lowest watermark when the floats
 * cannot tell is decided exactly: cross-multiplied reserves against a raise kept as reserves, else
 * against the exact watermark. Undefined when only `step` with the exact price can decide (a
 * level or stop within the floats' error, a replayed position, an expiry reached): what this
 * answers is always what `step` answers for the same trade, with no outputs.
 */
export const passedAt = (
  book: OrderBook,
  priceF: number,
  quoteRaw: bigint,
  tokenRaw: bigint,
  decimals: number,
  quoteDecimals: number,
  position: string,
  atMs: number
): OrderBook | undefined => {
  const b = asBook(book)
  // NaN (no price, or out of the floats' range) fails here, whatever the band.
  if (!surelyAbove(priceF, b.belowMaxF) || !surelyBelow(priceF, b.aboveMinF)) return undefined
  if (b.nTrailing === 0) return b
  if (position <= b.maxAfter || atMs >= b.earliestExpiryMs || !surelyAbove(priceF, b.highStopF)) return undefined
  const above =
    (!hasRaise(b) && b.lowWatermark === null) ||
    surelyAbove(priceF, b.lowWatermarkF) ||
    (!surelyBelow(priceF, b.lowWatermarkF) && reservesAboveLow(b, quoteRaw, tokenRaw, decimals, quoteDecimals))
  return above ? reservesRaisedBook(b, quoteRaw, tokenRaw, decimals, quoteDecimals, priceF) : b
}

/** Exactly: the price of these reserves is above the book's lowest watermark (which it has). */
const reservesAboveLow = (b: Book, quoteRaw: bigint, tokenRaw: bigint, decimals: number, quoteDecimals: number): boolean => {
  if (b.raiseDecimals === decimals && b.raiseQuoteDecimals === quoteDecimals) {
    // Both prices at the same decimals: q·10^d / (t·10^qd) against rq·10^d / (rt·10^qd), the powers cancel.
    return quoteRaw * b.raiseTokenRaw > b.raiseQuoteRaw * tokenRaw
  }
  const low = lowWatermarkOf(b)!
  return quoteRaw * pow10(decimals) * low.den > low.num * tokenRaw * pow10(quoteDecimals)
}

/** Ascending by level, then by id (a total order: equal levels trigger in id order). */
const ascendingAt = (s: Slots, i: number, o: BookOrder): number => {
  const l = levelAt(s, i)
  const id = idAt(s, i)
  return l < o.levelE18 ? -1 : l > o.levelE18 ? 1 : id < o.id ? -1 : id > o.id ? 1 : 0
}

/** Where `o` goes in the section [from, to) sorted ascending (or descending) by level then id. */
const insertionPoint = (s: Slots, from: number, to: number, o: BookOrder, descending: boolean): number => {
  let lo = from
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const c = ascendingAt(s, mid, o)
    if (descending ? c > 0 : c < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Scans the section [from, to) from its end while the last order crosses: each crossing order that
 * counts this trade leaves (triggered or expired); one that does not (placed after it) stays.
 * Answers the indices that leave (none: the section is unchanged). `numE18` is the trade's price
 * numerator scaled by 10^18, so a level costs one multiplication.
 */
const crossEnd = (s: Slots, from: number, to: number, below: boolean, numE18: bigint, e: Traded, out: Array<BookOutput>, leaving: Array<number>): void => {
  for (let i = to - 1; i >= from; i--) {
    const level = levelAt(s, i) * e.price.den
    if (below ? numE18 > level : numE18 < level) return
    if (afterAt(s, i) >= e.position) continue
    leaving.push(i)
    const order = orderAt(s, i, ownWatermarkAt(s, i))
    if (expiredAt(s, i, e.atMs)) out.push({ _tag: "Expired", order })
    else out.push({ _tag: "Triggered", order, price: e.price, position: e.position, atMs: e.atMs, watermark: null, stopPrice: null })
  }
}

/** `slots` without the orders at `gone` (indices, any order). */
const removing = (s: Slots, gone: ReadonlyArray<number>): Array<Slot> => {
  const drop = new Set(gone)
  const next: Array<Slot> = []
  const n = s.length / STRIDE
  for (let i = 0; i < n; i++) if (!drop.has(i)) for (let k = 0; k < STRIDE; k++) next.push(s[i * STRIDE + k]!)
  return next
}

/**
 * The trailing stops against a trade, each on its own, in placement order: one that does not count
 * the trade stays, one expired at it leaves (`Expired`), one the trade rises above (or without a
 * watermark) takes it (RAISED), one whose stop it reaches triggers. Answers the new trailing
 * slots (watermarks written) or undefined when none changed.
 */
const tradeEach = (b: Book, e: Traded, out: Array<BookOutput>, counts: boolean): Array<Slot> | undefined => {
  let changed = false
  const next: Array<Slot> = []
  const s = b.slots
  for (let i = b.nBelow + b.nAbove; i < b.size; i++) {
    const w = watermarkNow(b, i)
    let meta = metaAt(s, i) | (raisedNow(b, i) ? RAISED : 0)
    let watermark = w
    if (counts || afterAt(s, i) < e.position) {
      if (!counts && expiredAt(s, i, e.atMs)) {
        out.push({ _tag: "Expired", order: orderAt(s, i, w) })
        changed = true
        continue
      }
      if (w === null || comparePrices(e.price, w) > 0) {
        watermark = e.price
        meta |= RAISED
        changed = true
      } else {
        const stop = trailStop(w, trailAt(s, i))
        if (comparePrices(e.price, stop) <= 0) {
          out.push({ _tag: "Triggered", order: orderAt(s, i, w), price: e.price, position: e.position, atMs: e.atMs, watermark: w, stopPrice: stop })
          changed = true
          continue
        }
      }
    }
    next.push(idAt(s, i), afterAt(s, i), levelAt(s, i), watermark, meta, expiresAt(s, i))
  }
  return changed ? next : undefined
}

const noIndices: Array<number> = []

const trade = (book: Book, e: Traded): BookResult => {
  const priceF = approxRatio(e.price.num, e.price.den)
  if (quietAt(book, priceF, e.atMs)) return [book, none]
  // Allocated only when something leaves (a raise alone allocates the new book and its result).
  let out = none as Array<BookOutput>
  let leaving = noIndices
  const s = book.slots
  if (!surelyAbove(priceF, book.belowMaxF) || !surelyBelow(priceF, book.aboveMinF)) {
    out = []
    leaving = []
    const numE18 = e.price.num * PRICE_SCALE
    crossEnd(s, 0, book.nBelow, true, numE18, e, out, leaving)
    crossEnd(s, book.nBelow, book.nBelow + book.nAbove, false, numE18, e, out, leaving)
  }
  let trailing: Array<Slot> | undefined
  let raise = false
  if (book.nTrailing > 0) {
    if (e.position <= book.maxAfter || e.atMs >= book.earliestExpiryMs) {
      if (out === none) out = []
      trailing = tradeEach(book, e, out, false)
    } else {
      // Every trailing stop counts the trade and none has expired: it raises them all when above the
      // lowest watermark (none then triggers), and checks each exactly only when near some stop.
      const above =
        (!hasRaise(book) && book.lowWatermark === null) ||
        surelyAbove(priceF, book.lowWatermarkF) ||
        (!surelyBelow(priceF, book.lowWatermarkF) && comparePrices(e.price, lowWatermarkOf(book)!) > 0)
      if (!surelyAbove(priceF, book.highStopF)) {
        if (out === none) out = []
        const before = out.length
        trailing = tradeEach(book, e, out, true)
        if (out.length === before) {
          // Nothing reached: a raise alone is O(1); the exact pass leaves a tight bound behind.
          trailing = undefined
          raise = above
          if (!above) book.highStopF = tightStopF(book)
        }
      } else raise = above
    }
  }
  const outputs = out.length === 0 ? none : out
  if (leaving.length === 0 && trailing === undefined) return raise ? [raisedBook(book, e.price, priceF), outputs] : [book, none]
  // Something left: the book is written out (its watermarks into its orders) and rebuilt.
  let nBelow = book.nBelow
  for (const i of leaving) if (i < book.nBelow) nBelow--
  const nAbove = book.nAbove - (leaving.length - (book.nBelow - nBelow))
  const limits = removing(s.slice(0, (book.nBelow + book.nAbove) * STRIDE), leaving)
  const rest = trailing ?? (raise ? written(raisedBook(book, e.price, priceF)) : written(book)).slice((book.nBelow + book.nAbove) * STRIDE)
  return [build(limits.concat(rest), nBelow, nAbove), outputs]
}

/** The float bound of the trailing stops' stop prices now, from each one's watermark (an O(n) pass). */
const tightStopF = (b: Book): number => {
  let high = Number.NEGATIVE_INFINITY
  for (let i = b.nBelow + b.nAbove; i < b.size; i++) {
    const w = watermarkNow(b, i)
    if (w !== null) high = Math.max(high, approxStop(approxRatio(w.num, w.den), trailAt(b.slots, i)))
  }
  return high
}

const sweep = (book: Book, atMs: number): BookResult => {
  const s = written(book)
  const out: Array<BookOutput> = []
  const gone: Array<number> = []
  let nBelow = book.nBelow
  let nAbove = book.nAbove
  for (let i = 0; i < book.size; i++) {
    if (!expiredAt(s, i, atMs)) continue
    gone.push(i)
    out.push({ _tag: "Expired", order: orderAt(s, i, ownWatermarkAt(s, i)) })
    if (i < book.nBelow) nBelow--
    else if (i < book.nBelow + book.nAbove) nAbove--
  }
  return out.length === 0 ? [book, none] : [build(removing(s, gone), nBelow, nAbove), out]
}

/** Throws (a defect) on an order the service should never have accepted. */
const checkOrder = (o: BookOrder): void => {
  if (o.trigger === "trailing_stop") {
    if (o.side !== "sell" || o.trailBps === null || !Number.isInteger(o.trailBps) || o.trailBps < 1 || o.trailBps >= BPS)
      throw new RangeError(`order ${o.id}: a trailing stop sells with trailBps in 1..9999`)
  } else {
    if (o.trigger === "stop" && o.side !== "sell") throw new RangeError(`order ${o.id}: a stop sells`)
    if (o.levelE18 <= 0n) throw new RangeError(`order ${o.id}: the price must be positive`)
    if (o.trailBps !== null) throw new RangeError(`order ${o.id}: only a trailing stop has a trail`)
  }
}

const indexOf = (b: Book, id: string): number => {
  for (let i = 0; i < b.size; i++) if (idAt(b.slots, i) === id) return i
  return -1
}

/** True when the book holds an open order `id`. */
export const holds = (book: OrderBook, id: string): boolean => indexOf(asBook(book), id) >= 0

export const step = (book: OrderBook, e: BookEvent): BookResult => {
  const b = asBook(book)
  switch (e._tag) {
    case "Placed": {
      const o = e.order
      if (holds(b, o.id)) return [b, none]
      checkOrder(o)
      const s = written(b)
      const kind = kindOf(o)
      if (kind === TRAILING) return [build(s.concat(packed(o)), b.nBelow, b.nAbove), none]
      const at = kind === LIMIT_SELL ? insertionPoint(s, b.nBelow, b.nBelow + b.nAbove, o, true) : insertionPoint(s, 0, b.nBelow, o, false)
      const next = s.toSpliced(at * STRIDE, 0, ...packed(o)) // exactly as long (a splice into a copy leaves spare capacity)
      return [build(next, b.nBelow + (kind === LIMIT_SELL ? 0 : 1), b.nAbove + (kind === LIMIT_SELL ? 1 : 0)), none]
    }
    case "Cancelled": {
      const i = indexOf(b, e.id)
      if (i < 0) return [b, none]
      return [build(written(b).toSpliced(i * STRIDE, STRIDE), b.nBelow - (i < b.nBelow ? 1 : 0), b.nAbove - (i >= b.nBelow && i < b.nBelow + b.nAbove ? 1 : 0)), none]
    }
    case "Traded":
      return trade(b, e)
    case "Swept":
      return sweep(b, e.atMs)
  }
}

export const sizeOf = (book: OrderBook): number => asBook(book).size

// ---------------------------------------------------------------------------------------------
// Raised watermarks (written with the market's checkpoint)

/** The trailing stops whose watermark a trade set since the book was last settled, with it. */
export const raisedWatermarks = (book: OrderBook): ReadonlyArray<readonly [id: string, watermark: Price]> => {
  const b = asBook(book)
  const raised: Array<readonly [string, Price]> = []
  for (let i = b.nBelow + b.nAbove; i < b.size; i++) if (raisedNow(b, i)) raised.push([idAt(b.slots, i), watermarkNow(b, i)!])
  return raised
}

/** True when some trailing stop's watermark was set by a trade since the book was last settled. */
export const hasRaised = (book: OrderBook): boolean => hasRaise(asBook(book)) || asBook(book).raisedBits > 0

/** The same book with its raised watermarks taken (written): the same book when none was raised. */
export const settled = (book: OrderBook): OrderBook => {
  const b = asBook(book)
  if (!hasRaised(b)) return b
  const s = written(b).slice()
  for (let i = b.nBelow + b.nAbove; i < b.size; i++) s[i * STRIDE + META] = metaAt(s, i) & ~RAISED
  return build(s, b.nBelow, b.nAbove)
}
