/**
 * PriceBand: float stand-ins for exact prices, used only to answer "surely not" before the exact
 * bigint comparison (`OrderBook`'s quiet band). Never decides a trigger.
 *
 * Why it is conservative: a float here is built from bigints by at most seven correctly rounded
 * operations (`Number(bigint)` rounds to nearest; `10^k` for k ≤ 22 and 10^18 are exact doubles;
 * each ×, ÷ rounds once), each off by a relative 2^-53 at most, so while every intermediate stays
 * finite and the result is a normal double (checked: anything else is `NaN`, which no comparison
 * below accepts) the float is within a relative 8·2^-53 < 2^-49 of the exact value. `surelyBelow`
 * and `surelyAbove` demand a gap of 2^-40 (with its own rounding), far wider than both errors, so
 * `surelyBelow(approx(a), approx(b))` implies a < b exactly, and likewise above. Property-tested
 * against the exact comparisons in `PriceBand.test.ts` (adjacent rationals, huge and tiny values).
 */

/** Relative gap a float comparison must clear (2^-40, against a float error below 2^-49). */
const MARGIN = 2 ** -40
const BELOW = 1 - MARGIN
const ABOVE = 1 + MARGIN
/** The normal range kept (results outside it, zero included, are `NaN`: ask the bigints). */
const MIN_NORMAL = 2 ** -1000
const MAX_NORMAL = 2 ** 1000

/** 10^k as an exact double (k ≤ 22). */
const POW10F: ReadonlyArray<number> = Array.from({ length: 23 }, (_, k) => 10 ** k)

const inRange = (f: number): number => (f >= MIN_NORMAL && f <= MAX_NORMAL ? f : Number.NaN)

/** `num / den` as a float within 2^-49 of it, or NaN. */
export const approxRatio = (num: bigint, den: bigint): number => inRange(Number(num) / Number(den))

/** A level scaled by 10^18 as a float within 2^-49 of its value, or NaN. */
export const approxLevel = (levelE18: bigint): number => inRange(Number(levelE18) / 1e18)

/**
 * The price reserves give (`priceOfReserves`) as a float within 2^-49 of it, or NaN (also for
 * decimals above 22, and wherever `priceOfReserves` answers no price: a negative reserve or no
 * tokens, including two negative reserves, whose quotient alone would look like a price).
 */
export const approxReserves = (quoteRaw: bigint, tokenRaw: bigint, decimals: number, quoteDecimals: number): number => {
  const up = POW10F[decimals]
  const down = POW10F[quoteDecimals]
  if (up === undefined || down === undefined) return Number.NaN
  const q = Number(quoteRaw)
  const t = Number(tokenRaw)
  if (!(q >= 0 && t > 0)) return Number.NaN
  return inRange((q * up) / (t * down))
}

/** A trailing stop's stop price `watermark × (10,000 − trailBps) / 10,000` from the watermark's float (NaN stays NaN). */
export const approxStop = (watermarkF: number, trailBps: number): number => inRange((watermarkF * (10_000 - trailBps)) / 10_000)

/** True only when the value `x` stands for is surely below the one `y` stands for (false for NaN). */
export const surelyBelow = (x: number, y: number): boolean => x < y * BELOW

/** True only when the value `x` stands for is surely above the one `y` stands for (false for NaN). */
export const surelyAbove = (x: number, y: number): boolean => x > y * ABOVE
