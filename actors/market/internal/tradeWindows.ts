/**
 * Rolling trade statistics for one market, bounded and immutable: sparse slot windows (five-minute
 * slots for the last hour, hour slots for the last 24 hours) and a ring of the most recent traders
 * (hashed, packed as small integers: a few hundred bytes per market, not a string per trade).
 *
 * Invariants:
 * - A window is sorted by slot ascending, holds at most `width` entries and none older than its
 *   newest slot − width + 1; a quiet market keeps only what fell in its last active window.
 * - Windows are summed "as of" a slot: entries with asOf − width < slot ≤ asOf. Time is event time
 *   (the chain clock), never the wall clock, so a replay computes the same figures.
 * - Every function returns new arrays; inputs are never mutated.
 */

export interface Slot {
  readonly slot: number
  readonly volumeRaw: bigint
  readonly trades: number
  readonly buys: number
}

export const FIVE_MINUTES_MS = 300_000
export const HOUR_MS = 3_600_000
/** Five-minute slots in the one-hour window. */
export const HOUR_WINDOW_SLOTS = 12
/** Hour slots in the 24-hour window. */
export const DAY_WINDOW_SLOTS = 24
/** Traders remembered per market for the distinct-trader count (the count is capped at this). */
export const RECENT_TRADERS_MAX = 16

export const fiveMinuteSlotOf = (ms: number): number => Math.floor(ms / FIVE_MINUTES_MS)
export const hourSlotOf = (ms: number): number => Math.floor(ms / HOUR_MS)

const slotOf = (slot: number, volumeRaw: bigint, isBuy: boolean): Slot => ({ slot, volumeRaw, trades: 1, buys: isBuy ? 1 : 0 })

const merged = (s: Slot, volumeRaw: bigint, isBuy: boolean): Slot => ({
  slot: s.slot,
  volumeRaw: s.volumeRaw + volumeRaw,
  trades: s.trades + 1,
  buys: s.buys + (isBuy ? 1 : 0)
})

/** Adds one trade at `slot`. A trade older than the window's reach (newest − width) is not counted here. */
export const addToWindow = (
  window: ReadonlyArray<Slot>,
  slot: number,
  width: number,
  volumeRaw: bigint,
  isBuy: boolean
): ReadonlyArray<Slot> => {
  const n = window.length
  if (n === 0) return [slotOf(slot, volumeRaw, isBuy)]
  const last = window[n - 1]!
  if (slot === last.slot) {
    const out = window.slice()
    out[n - 1] = merged(last, volumeRaw, isBuy)
    return out
  }
  if (slot > last.slot) {
    const floor = slot - width
    let start = 0
    while (start < n && window[start]!.slot <= floor) start++
    const out = window.slice(start)
    out.push(slotOf(slot, volumeRaw, isBuy))
    return out
  }
  // Out of time order (an older block time after a newer one): insert in place if still in reach.
  if (slot <= last.slot - width) return window
  const out = window.slice()
  const i = out.findIndex((s) => s.slot >= slot)
  if (out[i]!.slot === slot) out[i] = merged(out[i]!, volumeRaw, isBuy)
  else out.splice(i, 0, slotOf(slot, volumeRaw, isBuy))
  return out
}

export interface WindowTotals {
  readonly volumeRaw: bigint
  readonly trades: number
  readonly buys: number
}

export const EMPTY_TOTALS: WindowTotals = { volumeRaw: 0n, trades: 0, buys: 0 }

/** Sum of the entries with asOf − width < slot ≤ asOf. */
export const windowTotals = (window: ReadonlyArray<Slot>, asOfSlot: number, width: number): WindowTotals => {
  let volumeRaw = 0n
  let trades = 0
  let buys = 0
  const floor = asOfSlot - width
  for (const s of window) {
    if (s.slot > floor && s.slot <= asOfSlot) {
      volumeRaw += s.volumeRaw
      trades += s.trades
      buys += s.buys
    }
  }
  return trades === 0 ? EMPTY_TOTALS : { volumeRaw, trades, buys }
}

/**
 * A trader as a 30-bit FNV-1a hash of the address (a small integer: no string kept per trade).
 * Two of the at most RECENT_TRADERS_MAX remembered traders collide with probability < 1e-7, which
 * would undercount the distinct traders by one.
 */
export const traderHash = (trader: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < trader.length; i++) {
    h ^= trader.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h & 0x3fffffff
}

/** The most recent traders as a packed array `[hash, fiveMinuteSlot, hash, slot, ...]`, oldest first. */
export type RecentTraders = ReadonlyArray<number>

export const addRecentTrader = (recent: RecentTraders, trader: string, atMs: number): RecentTraders => {
  const out = recent.length >= 2 * RECENT_TRADERS_MAX ? recent.slice(recent.length - 2 * RECENT_TRADERS_MAX + 2) : recent.slice()
  out.push(traderHash(trader), fiveMinuteSlotOf(atMs))
  return out
}

/** Distinct traders among the remembered ones whose trade falls in the hour window as of `asOfFiveMinuteSlot` (at most RECENT_TRADERS_MAX). */
export const distinctTradersInHour = (recent: RecentTraders, asOfFiveMinuteSlot: number): number => {
  const floor = asOfFiveMinuteSlot - HOUR_WINDOW_SLOTS
  const seen: Array<number> = []
  for (let i = 0; i < recent.length; i += 2) {
    const slot = recent[i + 1]!
    if (slot > floor && slot <= asOfFiveMinuteSlot && !seen.includes(recent[i]!)) seen.push(recent[i]!)
  }
  return seen.length
}
