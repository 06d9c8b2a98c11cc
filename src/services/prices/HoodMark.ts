/**
 * The Hood mark (spec 2.9): a token's USD price for carrying positions, read from its deepest
 * Uniswap v3 pool against the market's quote asset (WETH for `eth` markets, the ERC-20 otherwise),
 * with the pool's fees applied to the two sides. Not a trade quote: no price impact is modelled.
 *
 * Pools: the factory's `getPool(token, quote, fee)` for each standard fee tier (so this does not
 * depend on the ingester), then `slot0` and `liquidity` of each pool that exists, all at ONE block.
 * A pool is usable when initialized (sqrtPriceX96 > 0) and holding in-range liquidity; the deepest
 * is the one with the most in-range liquidity (ties: the lower fee). Liquidity of pools of the same
 * pair is comparable (it is √(x·y) of the active range), which is why only the quote asset's pools
 * compete.
 *
 * Math (exact, bigint; a price is USD per WHOLE token, rendered with `MARK_SCALE` fractional digits):
 *   mid (quote raw per token raw) = P²/2^192 when the token is token0, 2^192/P² when it is token1,
 *   P = sqrtPriceX96; whole units: × 10^tokenDecimals / 10^quoteDecimals; USD: × quoteUsd.
 *   priceUsd = mid, rounded down; sellUsd = mid × (1 − fee), rounded down (what a seller keeps);
 *   buyUsd = mid / (1 − fee), rounded up (what a buyer pays), fee = (lpFee + hookFee) / 10^6.
 */
import { type Address, getAddress, type PublicClient, zeroAddress } from "viem"
import { uniswapV3FactoryAbi, uniswapV3PoolAbi } from "../../chain/hood/abi.generated.js"

/** Uniswap v3's standard fee tiers, in hundredths of a bip (pips): 0.01 %, 0.05 %, 0.30 %, 1 %. */
export const STANDARD_FEE_TIERS: ReadonlyArray<number> = [100, 500, 3000, 10_000]
export const MARK_SCALE = 18
const Q192 = 1n << 192n
const PIPS = 1_000_000n

export interface PoolRead {
  readonly address: Address
  readonly feePips: number
  readonly sqrtPriceX96: bigint
  readonly tick: number
  readonly liquidity: bigint
  readonly tokenIsToken0: boolean
}

export interface DeepestPoolRead {
  readonly blockNumber: bigint
  /** Every pool that exists for the pair at that block (usable or not). */
  readonly pools: ReadonlyArray<PoolRead>
  /** The deepest usable pool, or null when none is usable. */
  readonly deepest: PoolRead | null
}

export const isUsable = (p: PoolRead): boolean => p.sqrtPriceX96 > 0n && p.liquidity > 0n

export const pickDeepest = (pools: ReadonlyArray<PoolRead>): PoolRead | null => {
  let best: PoolRead | null = null
  for (const p of pools) {
    if (!isUsable(p)) continue
    if (best === null || p.liquidity > best.liquidity || (p.liquidity === best.liquidity && p.feePips < best.feePips)) best = p
  }
  return best
}

/** Reads the pair's pools at one block (the latest unless given). Rejects on an RPC failure. */
export const readDeepestPool = async (
  pc: PublicClient,
  p: { readonly factory: Address; readonly token: Address; readonly quote: Address; readonly feeTiers?: ReadonlyArray<number>; readonly blockNumber?: bigint }
): Promise<DeepestPoolRead> => {
  const blockNumber = p.blockNumber ?? (await pc.getBlockNumber())
  const tiers = p.feeTiers ?? STANDARD_FEE_TIERS
  const addresses = await Promise.all(
    tiers.map((fee) =>
      pc.readContract({ address: p.factory, abi: uniswapV3FactoryAbi, functionName: "getPool", args: [p.token, p.quote, fee], blockNumber })
    )
  )
  const tokenIsToken0 = p.token.toLowerCase() < p.quote.toLowerCase()
  const pools = await Promise.all(
    addresses.flatMap((address, i) =>
      address === zeroAddress
        ? []
        : [
            Promise.all([
              pc.readContract({ address, abi: uniswapV3PoolAbi, functionName: "slot0", blockNumber }),
              pc.readContract({ address, abi: uniswapV3PoolAbi, functionName: "liquidity", blockNumber })
            ]).then(([slot0, liquidity]): PoolRead => ({
              address: getAddress(address),
              feePips: tiers[i]!,
              sqrtPriceX96: slot0[0],
              tick: slot0[1],
              liquidity,
              tokenIsToken0
            }))
          ]
    )
  )
  return { blockNumber, pools, deepest: pickDeepest(pools) }
}

export interface MarkInput {
  readonly pool: PoolRead
  readonly tokenDecimals: number
  readonly quoteDecimals: number
  /** USD per whole quote unit = quoteUsdRaw / 10^quoteUsdScale. */
  readonly quoteUsdRaw: bigint
  readonly quoteUsdScale: number
  /** A hook's fee on top of the LP fee (pips); 0 on v3. */
  readonly hookFeePips?: number
}

export interface MarkPrices {
  /** Each: USD per whole token × 10^MARK_SCALE. */
  readonly priceUsdRaw: bigint
  readonly sellUsdRaw: bigint
  readonly buyUsdRaw: bigint
  /** Quote per whole token × 10^MARK_SCALE (mid, rounded down). */
  readonly priceQuoteRaw: bigint
  readonly feePips: number
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b

export const markPrices = (i: MarkInput): MarkPrices => {
  const p2 = i.pool.sqrtPriceX96 * i.pool.sqrtPriceX96
  const scale = 10n ** BigInt(MARK_SCALE)
  // mid in whole quote per whole token = midNum / midDen
  const midNum = (i.pool.tokenIsToken0 ? p2 : Q192) * 10n ** BigInt(i.tokenDecimals)
  const midDen = (i.pool.tokenIsToken0 ? Q192 : p2) * 10n ** BigInt(i.quoteDecimals)
  const usdNum = midNum * i.quoteUsdRaw * scale
  const usdDen = midDen * 10n ** BigInt(i.quoteUsdScale)
  const feePips = i.pool.feePips + (i.hookFeePips ?? 0)
  const keep = PIPS - BigInt(feePips)
  if (keep <= 0n) throw new RangeError(`pool fee ${feePips} pips leaves nothing`)
  return {
    priceUsdRaw: usdNum / usdDen,
    sellUsdRaw: (usdNum * keep) / (usdDen * PIPS),
    buyUsdRaw: ceilDiv(usdNum * PIPS, usdDen * keep),
    priceQuoteRaw: (midNum * scale) / midDen,
    feePips
  }
}
