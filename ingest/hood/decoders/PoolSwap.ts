/**
 * A graduated Uniswap v3 pool's `Swap` → `Trade` with venue `pool`, for a pool the ingester knows
 * from its curve's `CurveMigrated` (the caller passes the entry; the emitter is the pool).
 *
 * - Side: the pool paid out the token (its delta < 0) → a buy; it took the token in → a sell.
 * - `amountInRaw`/`amountOutRaw`: what the pool took in and paid out. `quoteConsumedRaw` follows
 *   the ChainEvent convention (a buy's quote used; a sell's amount in); `refundRaw` 0.
 * - `feeRaw`: the LP fee on the amount in, `ceil(amountIn × feePips / 10^6)`, in the asset paid in
 *   (quote on a buy, the token on a sell, as Uniswap charges it). Exact for a swap that stays in one
 *   initialized tick range; a swap crossing ticks charges per step (differences of a unit or so).
 * - Reserves: the pool's virtual reserves at the post-swap price, `L·2^96/√P` of token0 and
 *   `L·√P/2^96` of token1 (floored): their ratio is the pool's spot price, as the curve's reserves
 *   are. With no liquidity in range both are 0. `realQuoteRaw` 0 (as Solana pool swaps).
 * - Trader: the swap's `recipient` (the router's caller names it; `sender` is the router).
 */
import { Option } from "effect"
import type { Address } from "viem"
import { uniswapV3PoolAbi } from "../../../src/chain/hood/abi.generated.js"
import { Trade } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface Args {
  readonly sender: Address
  readonly recipient: Address
  readonly amount0: bigint
  readonly amount1: bigint
  readonly sqrtPriceX96: bigint
  readonly liquidity: bigint
  readonly tick: number
}

export interface SwapPool {
  readonly mint: string
  readonly tokenIsToken0: boolean
  readonly feePips: number
}

const Q96 = 2n ** 96n
const PIPS = 1_000_000n

export const decoder = eventDecoder<Args>(eventItem(uniswapV3PoolAbi, "Swap"))

/** Virtual reserves (token0, token1) at √P (Q64.96) with in-range liquidity L. */
export const virtualReserves = (liquidity: bigint, sqrtPriceX96: bigint): readonly [bigint, bigint] =>
  liquidity === 0n || sqrtPriceX96 === 0n ? [0n, 0n] : [(liquidity * Q96) / sqrtPriceX96, (liquidity * sqrtPriceX96) / Q96]

export const decode = (log: HoodLog, ctx: HoodLogContext, pool: SwapPool): Option.Option<Trade> =>
  Option.flatMap(decoder.decode(log), (a) => {
    const tokenDelta = pool.tokenIsToken0 ? a.amount0 : a.amount1
    const quoteDelta = pool.tokenIsToken0 ? a.amount1 : a.amount0
    // A swap moves one side in and the other out; anything else is not a trade we can describe.
    if (tokenDelta === 0n || quoteDelta === 0n || (tokenDelta > 0n) === (quoteDelta > 0n)) return Option.none()
    const buy = tokenDelta < 0n
    const amountIn = buy ? quoteDelta : tokenDelta
    const amountOut = buy ? -tokenDelta : -quoteDelta
    const fee = (amountIn * BigInt(pool.feePips) + PIPS - 1n) / PIPS
    const [r0, r1] = virtualReserves(a.liquidity, a.sqrtPriceX96)
    return Option.some(
      new Trade({
        ...baseFields(ctx, pool.mint),
        venue: "pool",
        side: buy ? "buy" : "sell",
        trader: a.recipient,
        amountInRaw: amountIn,
        amountOutRaw: amountOut,
        feeRaw: fee,
        refundRaw: 0n,
        quoteConsumedRaw: amountIn,
        quoteReserveRaw: pool.tokenIsToken0 ? r1 : r0,
        tokenReserveRaw: pool.tokenIsToken0 ? r0 : r1,
        realQuoteRaw: 0n,
        crossesGraduation: false
      })
    )
  })
