import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  bitmapPosition,
  computeSwapStepExactIn,
  MAX_SQRT_RATIO,
  MAX_TICK,
  maxUsableTick,
  MIN_SQRT_RATIO,
  MIN_TICK,
  Q96,
  sqrtRatioAtTick,
  swapExactInput,
  tickAtSqrtRatio,
  tickViewOf
} from "./UniswapV3Math.js"

const seed = Date.now() % 2 ** 31
console.log(`UniswapV3Math properties: fast-check seed ${seed}`)
const params = { seed, numRuns: 200 }

/** The graduation position: full range, liquidity L (as BondingCurve.migrate seeds it). */
const fullRange = (liquidity: bigint, tickSpacing: number) => {
  const m = maxUsableTick(tickSpacing)
  return tickViewOf(new Map([[-m, liquidity], [m, -liquidity]]), tickSpacing)
}

describe("TickMath", () => {
  it("pins the contract's bounds: MIN_TICK, 0 and MAX_TICK map to MIN_SQRT_RATIO, 2^96 and MAX_SQRT_RATIO", () => {
    expect(sqrtRatioAtTick(MIN_TICK)).toBe(MIN_SQRT_RATIO)
    expect(sqrtRatioAtTick(0)).toBe(Q96)
    expect(sqrtRatioAtTick(MAX_TICK)).toBe(MAX_SQRT_RATIO)
    expect(() => sqrtRatioAtTick(MAX_TICK + 1)).toThrow(RangeError)
    expect(() => tickAtSqrtRatio(MAX_SQRT_RATIO)).toThrow(RangeError)
    expect(tickAtSqrtRatio(MIN_SQRT_RATIO)).toBe(MIN_TICK)
    expect(tickAtSqrtRatio(MAX_SQRT_RATIO - 1n)).toBe(MAX_TICK - 1)
  })

  it("getTickAtSqrtRatio is the greatest tick at or below the price", () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_TICK, max: MAX_TICK - 1 }), (t) => {
        const r = sqrtRatioAtTick(t)
        expect(tickAtSqrtRatio(r)).toBe(t)
        expect(sqrtRatioAtTick(t + 1)).toBeGreaterThan(r)
        expect(tickAtSqrtRatio(sqrtRatioAtTick(t + 1) - 1n)).toBe(t)
      }),
      params
    )
  })

  it("bitmap positions of the full-range ticks (spacing 60: words -58 and 57)", () => {
    expect(maxUsableTick(60)).toBe(887_220)
    expect(bitmapPosition(887_220, 60)).toEqual({ wordPos: 57, bitPos: 195 })
    expect(bitmapPosition(-887_220, 60)).toEqual({ wordPos: -58, bitPos: 61 })
  })
})

describe("swapExactInput", () => {
  it("asks for the bitmap word it needs before it has it", () => {
    const none = { word: () => undefined, liquidityNet: () => undefined }
    const at = (tick: number) => ({ sqrtPriceX96: sqrtRatioAtTick(tick), tick, liquidity: 10n ** 18n, feePips: 3000, tickSpacing: 60 })
    // Compressed tick floor(tick/60): -1 → -1 (word -1); 0 → 0 (word 0); a sell of token1 looks from compressed + 1.
    expect(swapExactInput(at(-1), none, true, 1000n)).toEqual({ _tag: "Need", word: -1 })
    expect(swapExactInput(at(0), none, true, 1000n)).toEqual({ _tag: "Need", word: 0 })
    expect(swapExactInput(at(-15_481), none, false, 1000n)).toEqual({ _tag: "Need", word: -2 })
  })

  it("takes the whole input, charges the fee on it, never pays out more than the spot value, and moves the price the right way", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -200_000, max: 200_000 }),
        fc.bigInt({ min: 10n ** 6n, max: 10n ** 30n }),
        fc.bigInt({ min: 1n, max: 10n ** 24n }),
        fc.boolean(),
        fc.constantFrom(500, 3000, 10_000),
        (tick, liquidity, amountIn, zeroForOne, feePips) => {
          const tickSpacing = feePips === 500 ? 10 : feePips === 3000 ? 60 : 200
          const pool = { sqrtPriceX96: sqrtRatioAtTick(tick), tick, liquidity, feePips, tickSpacing }
          const s = swapExactInput(pool, fullRange(liquidity, tickSpacing), zeroForOne, amountIn)
          if (s._tag !== "Swapped") throw new Error("the full-range view holds every word")
          if (s.partial) return
          expect(s.amountIn).toBe(amountIn)
          expect(s.feeAmount).toBeGreaterThanOrEqual((amountIn * BigInt(feePips)) / 1_000_000n)
          // Out is at most the input (less the fee) at the starting price.
          const p2 = pool.sqrtPriceX96 * pool.sqrtPriceX96
          const spotOut = zeroForOne ? ((amountIn - s.feeAmount) * p2) >> 192n : ((amountIn - s.feeAmount) << 192n) / p2
          expect(s.amountOut).toBeLessThanOrEqual(spotOut)
          if (zeroForOne) expect(s.sqrtPriceX96After).toBeLessThanOrEqual(pool.sqrtPriceX96)
          else expect(s.sqrtPriceX96After).toBeGreaterThanOrEqual(pool.sqrtPriceX96)
          expect(s.liquidityAfter).toBe(liquidity)
          expect(s.tickAfter).toBe(tickAtSqrtRatio(s.sqrtPriceX96After) - (zeroForOne && sqrtRatioAtTick(s.tickAfter + 1) === s.sqrtPriceX96After ? 1 : 0))
        }
      ),
      params
    )
  })

  it("is monotone: more in never gives less out", () => {
    fc.assert(
      fc.property(fc.integer({ min: -100_000, max: 100_000 }), fc.bigInt({ min: 1n, max: 10n ** 22n }), fc.bigInt({ min: 1n, max: 10n ** 22n }), fc.boolean(), (tick, a, b, zeroForOne) => {
        const liquidity = 10n ** 21n
        const pool = { sqrtPriceX96: sqrtRatioAtTick(tick), tick, liquidity, feePips: 3000, tickSpacing: 60 }
        const view = fullRange(liquidity, 60)
        const [lo, hi] = a < b ? [a, b] : [b, a]
        const x = swapExactInput(pool, view, zeroForOne, lo)
        const y = swapExactInput(pool, view, zeroForOne, hi)
        if (x._tag !== "Swapped" || y._tag !== "Swapped") throw new Error("unexpected Need")
        expect(y.amountOut).toBeGreaterThanOrEqual(x.amountOut)
      }),
      params
    )
  })

  it("a step that reaches its target charges ceil(amountIn·fee/(1e6−fee)); one that stops short keeps the remainder as fee", () => {
    const L = 2n * 10n ** 18n
    const capped = computeSwapStepExactIn(Q96, sqrtRatioAtTick(-100), L, 10n ** 18n, 600n)
    expect(capped.sqrtNextX96).toBe(sqrtRatioAtTick(-100))
    expect(capped.feeAmount).toBe((capped.amountIn * 600n + 999_400n - 1n) / 999_400n)
    const short = computeSwapStepExactIn(Q96, sqrtRatioAtTick(-100_000), L, 10n ** 15n, 600n)
    expect(short.sqrtNextX96).toBeGreaterThan(sqrtRatioAtTick(-100_000))
    expect(short.amountIn + short.feeAmount).toBe(10n ** 15n)
  })

  it("refuses to spend past the price range: a swap of more than the pool can absorb is partial", () => {
    const pool = { sqrtPriceX96: Q96, tick: 0, liquidity: 1000n, feePips: 3000, tickSpacing: 60 }
    const s = swapExactInput(pool, fullRange(1000n, 60), false, 10n ** 40n)
    expect(s._tag === "Swapped" && s.partial).toBe(true)
  })
})
