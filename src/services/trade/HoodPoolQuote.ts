/**
 * The Hood graduated pool's quote: the Uniswap v3 pool's state read at ONE block, then
 * `quoteVenue` on it, reading the tick-bitmap words and the ticks the swap walks over as it asks
 * for them (at that same block), so the quote is what `exactInputSingle` executes on that block.
 *
 * Why a chain read: the engine's index keeps a Hood pool as the virtual reserves of its last Swap
 * log (`L·2^96/√P`, `L·√P/2^96`, floored for the record's price), from which √P and L cannot be
 * recovered to the unit; v3's result depends on both and on the ticks crossed. Bounded: at most
 * `READS_MAX` lazy reads per quote (a swap that would walk further is refused as unavailable).
 */
import { type Address, getAddress, type PublicClient } from "viem"
import { uniswapV3PoolAbi } from "../../chain/hood/abi.generated.js"
import type { TickView, V3PoolState } from "../../domain/UniswapV3Math.js"
import { quoteVenue, type Side, type VenueQuote } from "./VenueQuote.js"

/** Lazy reads (bitmap words and ticks) one quote may make beyond the pool's slot0. */
export const READS_MAX = 32

export interface HoodPoolRead {
  readonly blockNumber: bigint
  readonly pool: V3PoolState
  readonly token0: string
}

/** The chain reads a pool quote needs, each at a given block (a port: viem here, a double nowhere). */
export interface HoodPoolSource {
  readonly state: (pool: Address) => Promise<HoodPoolRead>
  readonly word: (pool: Address, wordPos: number, blockNumber: bigint) => Promise<bigint>
  readonly liquidityNet: (pool: Address, tick: number, blockNumber: bigint) => Promise<bigint>
}

export const viemPoolSource = (pc: PublicClient): HoodPoolSource => ({
  state: async (address) => {
    const blockNumber = await pc.getBlockNumber()
    const read = <F extends "slot0" | "liquidity" | "fee" | "tickSpacing" | "token0">(functionName: F) =>
      pc.readContract({ address, abi: uniswapV3PoolAbi, functionName, blockNumber } as never) as Promise<unknown>
    const [slot0, liquidity, fee, tickSpacing, token0] = await Promise.all([read("slot0"), read("liquidity"), read("fee"), read("tickSpacing"), read("token0")])
    const s = slot0 as readonly [bigint, number, ...unknown[]]
    return {
      blockNumber,
      pool: { sqrtPriceX96: s[0], tick: Number(s[1]), liquidity: liquidity as bigint, feePips: Number(fee), tickSpacing: Number(tickSpacing) },
      token0: getAddress(token0 as string)
    }
  },
  word: (address, wordPos, blockNumber) => pc.readContract({ address, abi: uniswapV3PoolAbi, functionName: "tickBitmap", args: [wordPos], blockNumber }),
  liquidityNet: async (address, tick, blockNumber) => {
    const t = await pc.readContract({ address, abi: uniswapV3PoolAbi, functionName: "ticks", args: [tick], blockNumber })
    return t[1]
  }
})

export type HoodPoolQuote =
  | { readonly _tag: "Quoted"; readonly quote: Exclude<VenueQuote, { _tag: "Need" }>; readonly blockNumber: bigint }
  | { readonly _tag: "TooDeep" }

/**
 * Quotes an exact input on the pool at one block. `token` is the launched token's address; the
 * creator share is the fee splitter's streamer share (see VenueQuote). Rejects when a read fails.
 */
export const quoteHoodPool = async (
  source: HoodPoolSource,
  p: { readonly pool: Address; readonly token: string; readonly side: Side; readonly amountIn: bigint; readonly creatorShareBps: bigint }
): Promise<HoodPoolQuote> => {
  const read = await source.state(p.pool)
  const words = new Map<number, bigint>()
  const nets = new Map<number, bigint>()
  const view: TickView = { word: (w) => words.get(w), liquidityNet: (t) => nets.get(t) }
  const state = {
    _tag: "HoodPool" as const,
    pool: read.pool,
    view,
    tokenIsToken0: read.token0.toLowerCase() === p.token.toLowerCase(),
    creatorShareBps: p.creatorShareBps
  }
  for (let reads = 0; ; reads++) {
    const q = quoteVenue(state, p.side, p.amountIn)
    if (q._tag !== "Need") return { _tag: "Quoted", quote: q, blockNumber: read.blockNumber }
    if (reads >= READS_MAX) return { _tag: "TooDeep" }
    if ("word" in q) words.set(q.word, await source.word(p.pool, q.word, read.blockNumber))
    else nets.set(q.tick, await source.liquidityNet(p.pool, q.tick, read.blockNumber))
  }
}
