/**
 * Uniswap v3's swap arithmetic, ported from v3-core 1.0 (`TickMath`, `FullMath`, `SqrtPriceMath`,
 * `SwapMath`, `TickBitmap.nextInitializedTickWithinOneWord` and the loop of `UniswapV3Pool.swap`)
 * to `bigint`, so a quote of an exact-input swap equals what the pool executes, to the raw unit.
 * Every rounding and every step boundary is the contract's: the loop stops at each tick-bitmap word
 * boundary as the pool does (a step split there rounds differently from one long step), and the
 * 256-bit overflow checks of `getNextSqrtPriceFromAmount0RoundingUp` choose the same formula.
 *
 * Why a port and not a kept library: the one maintained implementation (`@uniswap/v3-sdk`) computes
 * in JSBI behind `sdk-core`'s currency and price classes; these ~200 lines of bigint are what the
 * contracts execute and are property-tested against the Hood localnet's real pool
 * (test/integration/trade.hoodVenue.test.ts) and pinned to the contracts' constants here.
 *
 * The pool's tick state comes through `TickView`, read lazily: a swap asks for the bitmap words and
 * the initialized ticks it walks over and nothing else. A view that does not hold one yet answers
 * `undefined`; `swapExactInput` then returns `{_tag: "Need", ...}` naming it, so a caller reads it
 * (at the same block) and asks again. Pure: no I/O, no clock.
 */

export const MIN_TICK = -887_272
export const MAX_TICK = 887_272
export const MIN_SQRT_RATIO = 4_295_128_739n
export const MAX_SQRT_RATIO = 1_461_446_703_485_210_103_287_273_052_203_988_822_378_723_970_342n
export const Q96 = 1n << 96n
const Q32 = 1n << 32n
const UINT256 = 1n << 256n
const UINT160_MAX = (1n << 160n) - 1n
const MAX_UINT256 = UINT256 - 1n
const PIPS = 1_000_000n

export const mulDiv = (a: bigint, b: bigint, d: bigint): bigint => {
  if (d === 0n) throw new RangeError("mulDiv by zero")
  const r = (a * b) / d
  if (r > MAX_UINT256) throw new RangeError("mulDiv overflow")
  return r
}

export const mulDivRoundingUp = (a: bigint, b: bigint, d: bigint): bigint => {
  const p = a * b
  const r = p / d + (p % d === 0n ? 0n : 1n)
  if (r > MAX_UINT256) throw new RangeError("mulDiv overflow")
  return r
}

const divRoundingUp = (a: bigint, b: bigint): bigint => a / b + (a % b === 0n ? 0n : 1n)

const toUint160 = (x: bigint): bigint => {
  if (x > UINT160_MAX) throw new RangeError("uint160 overflow")
  return x
}

const RATIO_FACTORS: ReadonlyArray<readonly [number, bigint]> = [
  [0x2, 0xfff97272373d413259a46990580e213an],
  [0x4, 0xfff2e50f5f656932ef12357cf3c7fdccn],
  [0x8, 0xffe5caca7e10e4e61c3624eaa0941cd0n],
  [0x10, 0xffcb9843d60f6159c9db58835c926644n],
  [0x20, 0xff973b41fa98c081472e6896dfb254c0n],
  [0x40, 0xff2ea16466c96a3843ec78b326b52861n],
  [0x80, 0xfe5dee046a99a2a811c461f1969c3053n],
  [0x100, 0xfcbe86c7900a88aedcffc83b479aa3a4n],
  [0x200, 0xf987a7253ac413176f2b074cf7815e54n],
  [0x400, 0xf3392b0822b70005940c7a398e4b70f3n],
  [0x800, 0xe7159475a2c29b7443b29c7fa6e889d9n],
  [0x1000, 0xd097f3bdfd2022b8845ad8f792aa5825n],
  [0x2000, 0xa9f746462d870fdf8a65dc1f90e061e5n],
  [0x4000, 0x70d869a156d2a1b890bb3df62baf32f7n],
  [0x8000, 0x31be135f97d08fd981231505542fcfa6n],
  [0x10000, 0x9aa508b5b7a84e1c677de54f3e99bc9n],
  [0x20000, 0x5d6af8dedb81196699c329225ee604n],
  [0x40000, 0x2216e584f5fa1ea926041bedfe98n],
  [0x80000, 0x48a170391f7dc42444e8fa2n]
]

/** TickMath.getSqrtRatioAtTick: √(1.0001^tick) as Q64.96, rounded up. */
export const sqrtRatioAtTick = (tick: number): bigint => {
  const absTick = Math.abs(tick)
  if (!Number.isInteger(tick) || absTick > MAX_TICK) throw new RangeError("tick out of range")
  let ratio = (absTick & 0x1) !== 0 ? 0xfffcb933bd6fad37aa2d162d1a594001n : 0x100000000000000000000000000000000n
  for (const [bit, factor] of RATIO_FACTORS) if ((absTick & bit) !== 0) ratio = (ratio * factor) >> 128n
  if (tick > 0) ratio = MAX_UINT256 / ratio
  return (ratio >> 32n) + (ratio % Q32 === 0n ? 0n : 1n)
}

/**
 * TickMath.getTickAtSqrtRatio: the greatest tick whose ratio is ≤ `sqrtPriceX96`. The contract
 * approximates log₂ and then corrects to exactly this definition; a binary search over
 * `sqrtRatioAtTick` (monotone) reaches the same tick.
 */
export const tickAtSqrtRatio = (sqrtPriceX96: bigint): number => {
  if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 >= MAX_SQRT_RATIO) throw new RangeError("sqrt price out of range")
  let lo = MIN_TICK
  let hi = MAX_TICK
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2)
    if (sqrtRatioAtTick(mid) <= sqrtPriceX96) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** SqrtPriceMath.getAmount0Delta (unsigned form). */
export const amount0Delta = (sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint => {
  const [lo, hi] = sqrtA > sqrtB ? [sqrtB, sqrtA] : [sqrtA, sqrtB]
  const numerator1 = liquidity << 96n
  const numerator2 = hi - lo
  if (lo <= 0n) throw new RangeError("sqrt price must be positive")
  return roundUp ? divRoundingUp(mulDivRoundingUp(numerator1, numerator2, hi), lo) : mulDiv(numerator1, numerator2, hi) / lo
}

/** SqrtPriceMath.getAmount1Delta (unsigned form). */
export const amount1Delta = (sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint => {
  const [lo, hi] = sqrtA > sqrtB ? [sqrtB, sqrtA] : [sqrtA, sqrtB]
  return roundUp ? mulDivRoundingUp(liquidity, hi - lo, Q96) : mulDiv(liquidity, hi - lo, Q96)
}

/** SqrtPriceMath.getNextSqrtPriceFromAmount0RoundingUp with `add` (exact input of token0). */
const nextSqrtFromAmount0Add = (sqrtP: bigint, liquidity: bigint, amount: bigint): bigint => {
  if (amount === 0n) return sqrtP
  const numerator1 = liquidity << 96n
  const product = amount * sqrtP
  // The contract's overflow checks, in 256-bit words: the precise formula when it fits.
  if (product < UINT256) {
    const denominator = numerator1 + product
    if (denominator < UINT256) return mulDivRoundingUp(numerator1, sqrtP, denominator)
  }
  const sum = numerator1 / sqrtP + amount
  if (sum > MAX_UINT256) throw new RangeError("add overflow")
  return divRoundingUp(numerator1, sum)
}

/** SqrtPriceMath.getNextSqrtPriceFromAmount1RoundingDown with `add` (exact input of token1). */
const nextSqrtFromAmount1Add = (sqrtP: bigint, liquidity: bigint, amount: bigint): bigint => {
  // amount ≤ uint160.max: (amount << 96) / L; otherwise FullMath.mulDiv(amount, Q96, L): the same floor.
  const quotient = amount <= UINT160_MAX ? (amount << 96n) / liquidity : mulDiv(amount, Q96, liquidity)
  return toUint160(sqrtP + quotient)
}

export interface SwapStep {
  readonly sqrtNextX96: bigint
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly feeAmount: bigint
}

/** SwapMath.computeSwapStep for an exact input (`amountRemaining` > 0). */
export const computeSwapStepExactIn = (
  sqrtCurrentX96: bigint,
  sqrtTargetX96: bigint,
  liquidity: bigint,
  amountRemaining: bigint,
  feePips: bigint
): SwapStep => {
  const zeroForOne = sqrtCurrentX96 >= sqrtTargetX96
  const lessFee = mulDiv(amountRemaining, PIPS - feePips, PIPS)
  let amountIn = zeroForOne
    ? amount0Delta(sqrtTargetX96, sqrtCurrentX96, liquidity, true)
    : amount1Delta(sqrtCurrentX96, sqrtTargetX96, liquidity, true)
  const sqrtNextX96 =
    lessFee >= amountIn
      ? sqrtTargetX96
      : zeroForOne
        ? nextSqrtFromAmount0Add(sqrtCurrentX96, liquidity, lessFee)
        : nextSqrtFromAmount1Add(sqrtCurrentX96, liquidity, lessFee)
  const max = sqrtTargetX96 === sqrtNextX96
  let amountOut: bigint
  if (zeroForOne) {
    if (!max) amountIn = amount0Delta(sqrtNextX96, sqrtCurrentX96, liquidity, true)
    amountOut = amount1Delta(sqrtNextX96, sqrtCurrentX96, liquidity, false)
  } else {
    if (!max) amountIn = amount1Delta(sqrtCurrentX96, sqrtNextX96, liquidity, true)
    amountOut = amount0Delta(sqrtCurrentX96, sqrtNextX96, liquidity, false)
  }
  const feeAmount = sqrtNextX96 !== sqrtTargetX96 ? amountRemaining - amountIn : mulDivRoundingUp(amountIn, feePips, PIPS - feePips)
  return { sqrtNextX96, amountIn, amountOut, feeAmount }
}

/** The pool's `slot0` price and tick, its in-range liquidity, fee and tick spacing. */
export interface V3PoolState {
  readonly sqrtPriceX96: bigint
  readonly tick: number
  readonly liquidity: bigint
  readonly feePips: number
  readonly tickSpacing: number
}

/** The pool's tick state, read lazily: `undefined` when not (yet) read. */
export interface TickView {
  /** `tickBitmap(wordPos)`. */
  readonly word: (wordPos: number) => bigint | undefined
  /** `ticks(tick).liquidityNet` of an initialized tick. */
  readonly liquidityNet: (tick: number) => bigint | undefined
}

export type V3SwapResult =
  | {
      readonly _tag: "Swapped"
      /** What the pool takes from the trader (fees included): less than asked when the price limit stops it. */
      readonly amountIn: bigint
      readonly amountOut: bigint
      /** LP fee, in the input asset: the sum of the steps' fees. */
      readonly feeAmount: bigint
      readonly sqrtPriceX96After: bigint
      readonly tickAfter: number
      readonly liquidityAfter: bigint
      /** The price limit stopped the swap before `amountIn` was used up. */
      readonly partial: boolean
    }
  | { readonly _tag: "Need"; readonly word: number }
  | { readonly _tag: "Need"; readonly tick: number }

const lowestBit = (x: bigint): number => {
  let i = 0
  while (((x >> BigInt(i)) & 1n) === 0n) i++
  return i
}

const highestBit = (x: bigint): number => x.toString(2).length - 1

/** TickBitmap.nextInitializedTickWithinOneWord, over the view's words. */
const nextInitializedTick = (
  view: TickView,
  tick: number,
  tickSpacing: number,
  lte: boolean
): { readonly tickNext: number; readonly initialized: boolean } | { readonly need: number } => {
  let compressed = Math.trunc(tick / tickSpacing)
  if (tick < 0 && tick % tickSpacing !== 0) compressed--
  const c = lte ? compressed : compressed + 1
  const wordPos = Math.floor(c / 256)
  const bitPos = c - wordPos * 256
  const word = view.word(wordPos)
  if (word === undefined) return { need: wordPos }
  if (lte) {
    const mask = (1n << BigInt(bitPos)) - 1n + (1n << BigInt(bitPos))
    const masked = word & mask
    return masked !== 0n
      ? { tickNext: (compressed - (bitPos - highestBit(masked))) * tickSpacing, initialized: true }
      : { tickNext: (compressed - bitPos) * tickSpacing, initialized: false }
  }
  const mask = ~((1n << BigInt(bitPos)) - 1n) & ((1n << 256n) - 1n)
  const masked = word & mask
  return masked !== 0n
    ? { tickNext: (compressed + 1 + (lowestBit(masked) - bitPos)) * tickSpacing, initialized: true }
    : { tickNext: (compressed + 1 + (255 - bitPos)) * tickSpacing, initialized: false }
}

/** The SwapRouter's default limits (`sqrtPriceLimitX96` 0): just inside the pool's price range. */
export const defaultPriceLimit = (zeroForOne: boolean): bigint => (zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n)

/**
 * `UniswapV3Pool.swap` for an exact input of `amountIn` (> 0), with the router's default price
 * limit unless one is given. Token0 in when `zeroForOne`.
 */
export const swapExactInput = (
  pool: V3PoolState,
  view: TickView,
  zeroForOne: boolean,
  amountIn: bigint,
  sqrtPriceLimitX96: bigint = defaultPriceLimit(zeroForOne)
): V3SwapResult => {
  if (amountIn <= 0n) throw new RangeError("amountIn must be positive")
  const fee = BigInt(pool.feePips)
  let remaining = amountIn
  let out = 0n
  let feeTotal = 0n
  let sqrtP = pool.sqrtPriceX96
  let tick = pool.tick
  let liquidity = pool.liquidity
  while (remaining !== 0n && sqrtP !== sqrtPriceLimitX96) {
    const start = sqrtP
    const next = nextInitializedTick(view, tick, pool.tickSpacing, zeroForOne)
    if ("need" in next) return { _tag: "Need", word: next.need }
    const tickNext = Math.min(Math.max(next.tickNext, MIN_TICK), MAX_TICK)
    const sqrtNext = sqrtRatioAtTick(tickNext)
    const target = (zeroForOne ? sqrtNext < sqrtPriceLimitX96 : sqrtNext > sqrtPriceLimitX96) ? sqrtPriceLimitX96 : sqrtNext
    const step = computeSwapStepExactIn(sqrtP, target, liquidity, remaining, fee)
    sqrtP = step.sqrtNextX96
    remaining -= step.amountIn + step.feeAmount
    out += step.amountOut
    feeTotal += step.feeAmount
    if (sqrtP === sqrtNext) {
      if (next.initialized) {
        const net = view.liquidityNet(tickNext)
        if (net === undefined) return { _tag: "Need", tick: tickNext }
        liquidity += zeroForOne ? -net : net
        if (liquidity < 0n) throw new RangeError("liquidity underflow")
      }
      tick = zeroForOne ? tickNext - 1 : tickNext
    } else if (sqrtP !== start) {
      tick = tickAtSqrtRatio(sqrtP)
    }
  }
  return {
    _tag: "Swapped",
    amountIn: amountIn - remaining,
    amountOut: out,
    feeAmount: feeTotal,
    sqrtPriceX96After: sqrtP,
    tickAfter: tick,
    liquidityAfter: liquidity,
    partial: remaining !== 0n
  }
}

/** The largest usable tick for a spacing (the full-range position's upper tick; its lower is the negative). */
export const maxUsableTick = (tickSpacing: number): number => Math.trunc(MAX_TICK / tickSpacing) * tickSpacing

/** The bitmap word and bit of an initialized tick (TickBitmap.position of the compressed tick). */
export const bitmapPosition = (tick: number, tickSpacing: number): { readonly wordPos: number; readonly bitPos: number } => {
  if (tick % tickSpacing !== 0) throw new RangeError("tick not on the spacing")
  const compressed = tick / tickSpacing
  const wordPos = Math.floor(compressed / 256)
  return { wordPos, bitPos: compressed - wordPos * 256 }
}

/** A `TickView` over known initialized ticks (tick → liquidityNet), e.g. a full-range position alone. */
export const tickViewOf = (ticks: ReadonlyMap<number, bigint>, tickSpacing: number): TickView => {
  const words = new Map<number, bigint>()
  for (const t of ticks.keys()) {
    const { bitPos, wordPos } = bitmapPosition(t, tickSpacing)
    words.set(wordPos, (words.get(wordPos) ?? 0n) | (1n << BigInt(bitPos)))
  }
  return { word: (w) => words.get(w) ?? 0n, liquidityNet: (t) => ticks.get(t) }
}
