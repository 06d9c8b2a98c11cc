/**
 * PriceBand: the float "surely not" answers never contradict the exact bigint comparisons they
 * stand in front of (`OrderBook`'s quiet band), and they do answer when values are apart. Seeded
 * properties over rationals from tiny to beyond the doubles' range, with neighbours one raw unit
 * apart, equal values in different raw units, and reserves with up to 22 decimals.
 *
 * Seed: `FC_SEED`, else random, printed.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { comparePrices, compareToLevel, type Price, priceOfReserves, trailStop } from "../OrderBook.js"
import { approxLevel, approxRatio, approxReserves, approxStop, surelyAbove, surelyBelow } from "./PriceBand.js"

const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))

/** Positive bigints of every size: small, around 2^53, up to 2^1100 (past a double's range). */
const big = (min = 1n): fc.Arbitrary<bigint> =>
  fc.oneof(
    fc.bigInt({ min, max: 1000n }),
    fc.bigInt({ min: 2n ** 50n, max: 2n ** 56n }),
    fc.bigInt({ min, max: 2n ** 128n }),
    fc.integer({ min: 0, max: 1100 }).chain((bits) => fc.bigInt({ min, max: 2n ** BigInt(bits) + min }))
  )
const nonNegative = fc.oneof(fc.constant(0n), big())
const price: fc.Arbitrary<Price> = fc.record({ num: nonNegative, den: big() })

/** Pairs of prices that are equal, one raw unit apart, or apart by a factor. */
const pair: fc.Arbitrary<readonly [Price, Price]> = fc.oneof(
  fc.tuple(price, price),
  fc.tuple(price, big(), fc.constantFrom(-1n, 0n, 1n)).map(([p, k, d]): readonly [Price, Price] => [p, { num: p.num * k + d < 0n ? 0n : p.num * k + d, den: p.den * k }]),
  fc.tuple(price, fc.integer({ min: -3, max: 3 })).map(([p, d]): readonly [Price, Price] => [p, { num: p.num * 2n ** 40n + BigInt(d) * p.num, den: p.den * 2n ** 40n }])
)

/** What the floats may say about a and b: never the opposite of the exact order. */
const consistent = (x: number, y: number, exact: -1 | 0 | 1): void => {
  if (surelyBelow(x, y)) expect(exact).toBe(-1)
  if (surelyAbove(x, y)) expect(exact).toBe(1)
}

describe("PriceBand", () => {
  it(`surelyBelow / surelyAbove never contradict the exact comparison of two rationals (seed ${seed})`, () => {
    console.log(`PriceBand property seed ${seed} (replay: FC_SEED=${seed})`)
    fc.assert(
      fc.property(pair, ([a, b]) => {
        consistent(approxRatio(a.num, a.den), approxRatio(b.num, b.den), comparePrices(a, b))
      }),
      { seed, numRuns: 20_000 }
    )
  })

  it(`nor that of a price with a level scaled by 10^18 (seed ${seed})`, () => {
    fc.assert(
      fc.property(price, fc.oneof(big(), fc.constantFrom(-1n, 0n, 1n)), (p, shift) => {
        // A level at the price floored to 18 places, nudged by a unit, or unrelated.
        const floored = (p.num * 10n ** 18n) / p.den
        const level = shift > 1n ? shift : floored + shift > 0n ? floored + shift : 1n
        consistent(approxRatio(p.num, p.den), approxLevel(level), compareToLevel(p, level))
      }),
      { seed, numRuns: 20_000 }
    )
  })

  it(`the reserves' float stands for priceOfReserves, decimals 0..22 (and answers nothing beyond) (seed ${seed})`, () => {
    fc.assert(
      fc.property(nonNegative, big(), fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 24 }), price, (quoteRaw, tokenRaw, decimals, quoteDecimals, other) => {
        const exact = priceOfReserves(quoteRaw, tokenRaw, decimals, quoteDecimals)!
        const x = approxReserves(quoteRaw, tokenRaw, decimals, quoteDecimals)
        if (decimals > 22 || quoteDecimals > 22) expect(x).toBeNaN()
        // Against another price, and against itself written in other raw units.
        consistent(x, approxRatio(other.num, other.den), comparePrices(exact, other))
        consistent(x, approxRatio(exact.num * 3n, exact.den * 3n), 0)
        consistent(x, approxRatio(exact.num * 2n ** 40n + 1n, exact.den * 2n ** 40n), comparePrices(exact, { num: exact.num * 2n ** 40n + 1n, den: exact.den * 2n ** 40n }))
      }),
      { seed, numRuns: 20_000 }
    )
  })

  it("the reserves' float is NaN where priceOfReserves answers no price: a negative reserve or no tokens, even when the quotient is positive", () => {
    for (const [q, t] of [[-3n, -1n], [-3n, 1n], [3n, -1n], [3n, 0n], [0n, 0n]] as const) {
      expect(priceOfReserves(q, t, 6, 9), `${q}/${t}`).toBeNull()
      expect(approxReserves(q, t, 6, 9), `${q}/${t}`).toBeNaN()
    }
  })

  it(`a trailing stop's float stands for trailStop, and a max of them bounds them all (seed ${seed})`, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(price, fc.integer({ min: 1, max: 9999 })), { minLength: 1, maxLength: 8 }), pair, (stops, [p]) => {
        let high = Number.NEGATIVE_INFINITY
        for (const [w, trail] of stops) {
          const exact = trailStop(w, trail)
          const f = approxStop(approxRatio(w.num, w.den), trail)
          consistent(approxRatio(p.num, p.den), f, comparePrices(p, exact))
          high = Math.max(high, f)
        }
        // "Above the bound" means above every stop.
        if (surelyAbove(approxRatio(p.num, p.den), high)) for (const [w, trail] of stops) expect(comparePrices(p, trailStop(w, trail))).toBe(1)
      }),
      { seed, numRuns: 10_000 }
    )
  })

  it("answers when two prices in the normal range are apart by more than 2^-30 of themselves, and never for zero, NaN or out of range", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 2n ** 200n }), fc.bigInt({ min: 1n, max: 2n ** 200n }), (num, den) => {
        const lower = approxRatio(num * 2n ** 30n, den * (2n ** 30n + 1n))
        const x = approxRatio(num, den)
        expect(surelyBelow(lower, x)).toBe(true)
        expect(surelyAbove(x, lower)).toBe(true)
      }),
      { seed, numRuns: 2_000 }
    )
    expect(approxRatio(0n, 5n)).toBeNaN()
    expect(approxRatio(2n ** 1100n, 1n)).toBeNaN()
    expect(approxRatio(1n, 2n ** 1100n)).toBeNaN()
    expect(approxRatio(2n ** 1100n, 2n ** 1100n)).toBeNaN() // ∞ / ∞
    expect(approxLevel(0n)).toBeNaN()
    for (const nan of [Number.NaN, approxRatio(0n, 1n)]) {
      expect(surelyBelow(nan, 1)).toBe(false)
      expect(surelyAbove(nan, 1)).toBe(false)
      expect(surelyBelow(1, nan)).toBe(false)
      expect(surelyAbove(1, nan)).toBe(false)
    }
    // The "no bound" sentinels the book uses.
    expect(surelyBelow(1, Number.POSITIVE_INFINITY)).toBe(true)
    expect(surelyAbove(1, Number.NEGATIVE_INFINITY)).toBe(true)
    expect(surelyBelow(1, Number.NEGATIVE_INFINITY)).toBe(false)
  })
})
