/**
 * The routed-trade attribution (`RoutedTrade.ts`): a trade the trade router made names the router
 * as its trader, and takes the wallet of the transaction's `RoutedTrade` describing that trade
 * (same side, venue and amount in), each entry used once. Several trades in one transaction: a
 * routed pool buy (whose `Swap` names the wallet itself and uses no entry) does not shift the
 * next trade's wallet; entries of another emitter, another token or another transaction are not used.
 */
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { type Address, encodeAbiParameters, encodeEventTopics, getAddress, type Hex } from "viem"
import { bondingCurveAbi, tradeRouterAbi, uniswapV3PoolAbi } from "../../../src/chain/hood/abi.generated.js"
import type { ChainEvent } from "../../ChainEvent.js"
import { eventItem } from "./decodeLog.js"
import type { HoodLog } from "./EventContext.js"
import * as PoolSwap from "./PoolSwap.js"
import { attributed, routedTradersOf } from "./RoutedTrade.js"
import * as CurveTrade from "./Trade.js"

const ROUTER = getAddress("0x9999999999999999999999999999999999999999")
const CURVE = getAddress("0x1111111111111111111111111111111111111111")
const TOKEN = getAddress("0x2222222222222222222222222222222222222222")
const POOL = getAddress("0x4444444444444444444444444444444444444444")
const ALICE = getAddress("0xA11CE00000000000000000000000000000000001")
const BOB = getAddress("0xB0B0000000000000000000000000000000000002")
const CAROL = getAddress("0xCA70100000000000000000000000000000000003")
const TX: Hex = `0x${"ab".repeat(32)}`
const OTHER_TX: Hex = `0x${"ef".repeat(32)}`
const Q96 = 2n ** 96n

const logOf = (abi: ReadonlyArray<{ readonly type: string; readonly name?: string }>, name: string, address: Address, args: Record<string, unknown>, tx: Hex = TX) => {
  const item = eventItem(abi, name)
  const topics = encodeEventTopics({ abi: [item], eventName: name, args } as never) as Array<Hex>
  const nonIndexed = item.inputs.filter((i) => !i.indexed)
  const data = encodeAbiParameters(nonIndexed, nonIndexed.map((i) => args[i.name!]) as never)
  return { address, topics, data, transactionHash: tx } satisfies HoodLog & { transactionHash: string }
}

const routed = (trader: Address, isBuy: boolean, onPool: boolean, amountIn: bigint, opts: { emitter?: Address; token?: Address; tx?: Hex } = {}) =>
  logOf(tradeRouterAbi, "RoutedTrade", opts.emitter ?? ROUTER, { trader, token: opts.token ?? TOKEN, isBuy, onPool, amountIn, amountOut: 1n, platformFee: 0n, refund: 0n }, opts.tx)

let logIndex = 0
const ctx = () => ({ txHash: TX, blockNumber: 5n, logIndex: logIndex++, timestampMs: 1_700_000_000_000 })

/** The curve's `Trade` as the router makes it: the router is its trader. */
const curveTrade = (isBuy: boolean, amountIn: bigint): ChainEvent =>
  Option.getOrThrow(
    CurveTrade.decode(
      logOf(bondingCurveAbi, "Trade", CURVE, {
        token: TOKEN, trader: ROUTER, isBuy, amountIn, amountOut: 7n, fee: 1n, refund: 0n, quoteConsumed: isBuy ? amountIn : 0n,
        virtualQuoteReserve: 5000n, virtualTokenReserve: 6000n, realQuote: 700n, crossesGraduation: false
      }),
      ctx()
    )
  )

/** The pool's `Swap` (token is token1): a routed buy names the wallet as recipient, a routed sell the router. */
const poolTrade = (isBuy: boolean, amountIn: bigint, recipient: Address): ChainEvent =>
  Option.getOrThrow(
    PoolSwap.decode(
      logOf(uniswapV3PoolAbi, "Swap", POOL, { sender: ROUTER, recipient, amount0: isBuy ? amountIn : -3n, amount1: isBuy ? -3n : amountIn, sqrtPriceX96: 2n * Q96, liquidity: 10n ** 20n, tick: 13_863 }),
      ctx(),
      { mint: TOKEN.toLowerCase(), tokenIsToken0: false, feePips: 3000 }
    )
  )

const traderOf = (e: ChainEvent) => (e._tag === "Trade" ? getAddress(e.trader) : undefined)

describe("routed-trade attribution, several trades in one transaction", () => {
  it("a routed pool buy then a routed pool sell of the same token: the sell is the seller's, the buy keeps its wallet", () => {
    const table = routedTradersOf([routed(ALICE, true, true, 1_000n), routed(BOB, false, true, 500n)], ROUTER)
    const buy = attributed(poolTrade(true, 1_000n, ALICE), ROUTER, table)
    const sell = attributed(poolTrade(false, 500n, ROUTER), ROUTER, table)
    expect(traderOf(buy)).toBe(ALICE)
    expect(traderOf(sell)).toBe(BOB)
  })

  it("matches by side, venue and amount in whatever the log order: a curve sell, a curve buy and a pool sell of one token", () => {
    const table = routedTradersOf([routed(ALICE, true, false, 300n), routed(BOB, false, true, 300n), routed(CAROL, false, false, 300n)], ROUTER)
    expect(traderOf(attributed(curveTrade(false, 300n), ROUTER, table))).toBe(CAROL)
    expect(traderOf(attributed(poolTrade(false, 300n, ROUTER), ROUTER, table))).toBe(BOB)
    expect(traderOf(attributed(curveTrade(true, 300n), ROUTER, table))).toBe(ALICE)
  })

  it("equal trades take their entries in log order, each once; a trade no entry describes keeps the router", () => {
    const table = routedTradersOf([routed(ALICE, true, false, 10n), routed(BOB, true, false, 10n)], ROUTER)
    expect(traderOf(attributed(curveTrade(true, 10n), ROUTER, table))).toBe(ALICE)
    expect(traderOf(attributed(curveTrade(true, 10n), ROUTER, table))).toBe(BOB)
    expect(traderOf(attributed(curveTrade(true, 10n), ROUTER, table))).toBe(ROUTER)
    expect(traderOf(attributed(curveTrade(true, 11n), ROUTER, routedTradersOf([routed(ALICE, true, false, 10n)], ROUTER)))).toBe(ROUTER)
  })

  it("entries of another emitter, another token or another transaction are not used", () => {
    const table = routedTradersOf(
      [
        routed(ALICE, false, false, 50n, { emitter: CURVE }),
        routed(BOB, false, false, 50n, { token: POOL }),
        routed(CAROL, false, false, 50n, { tx: OTHER_TX })
      ],
      ROUTER
    )
    expect(traderOf(attributed(curveTrade(false, 50n), ROUTER, table))).toBe(ROUTER)
  })
})
