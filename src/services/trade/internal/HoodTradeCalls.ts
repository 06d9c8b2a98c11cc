/**
 * The Hood trade's calls, pure: each venue and side as a call of the engine's trade router (viem's
 * ABI encoding over the generated ABIs; the minimum out and the platform fee in the calldata, a
 * buy's value carrying the fee on top) with its fixed gas limit, a request's tag appended; the one
 * answer to which address a sell approves, and the approval's call. No reads, no sends.
 */
import { type Address, encodeFunctionData, type Hex } from "viem"
import { curveTokenAbi, tradeRouterAbi } from "../../../chain/hood/abi.generated.js"
import { tagged } from "../../../chain/hood/client/RequestTag.js"
import type { HoodCall } from "../../../chain/hood/launch/HeadlessCalls.js"
import type { Side } from "../VenueQuote.js"

/**
 * Gas limits (units), fixed per venue and side. Measured on the localnet (the integration test
 * `trade.hood.test.ts` asserts every trade's `gasUsed` stays under its limit, including the buy
 * that crosses graduation and pool swaps large enough to move the price by half), then given
 * headroom of about 2.5x:
 * - curve buy: 159k the first buy of a wallet (fresh storage), 120k the crossing buy (phase write,
 *   `CurveCompleted`, the refund sent back), before the trade router; the router adds its fee
 *   transfer, the token forward and its event (see docs/decisions.md "The Hood trade router");
 * - curve sell: 99k before the router (which adds the pull, an approval and two ETH payments);
 * - pool buy / sell: 126k / 144k through the SwapRouter within the graduation position; each
 *   initialized tick crossed adds ~20–30k, and a quote reads at most `READS_MAX` (32) words and
 *   ticks, so 1.5M bounds every swap the rail quotes;
 * - approve: 46k.
 * A limit too low mines a revert (the fee is spent, nothing traded): the test is the guard.
 */
export const HOOD_TRADE_GAS = {
  curveBuy: 400_000n,
  curveSell: 300_000n,
  poolBuy: 1_500_000n,
  poolSell: 1_500_000n,
  approve: 100_000n
} as const

/** A pool trade's deadline after its build (the router refuses it later; the curve has none). */
export const HOOD_POOL_DEADLINE_S = 600n

/** What an allowance is raised to before a sell: the max, so a wallet approves each spender once. */
export const MAX_ALLOWANCE = 2n ** 256n - 1n

export type HoodTradeVenue = "svc-curve" | "hood-dex"

export interface HoodTradeBuildInput {
  readonly wallet: Address
  readonly venue: HoodTradeVenue
  readonly side: Side
  readonly mint: Address
  readonly curve: Address
  readonly poolFee: number
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  /** The platform fee the trade router pays the treasury (the quote's `feeRaw`): on top of a buy's value, from a sell's proceeds. */
  readonly platformFeeRaw: bigint
  /** Epoch seconds past which the router refuses a pool trade. */
  readonly deadlineS: bigint
  /** Appended to the calldata (`RequestTag.ts`): makes the build this request's alone. */
  readonly tag?: Hex
}

/** The trade's call (to the trade router): where, what, how much ETH, and its gas limit. Pure. */
export const hoodTradeCall = (tradeRouter: Address, i: HoodTradeBuildInput): HoodCall & { readonly gas: bigint } => {
  const call = untaggedCall(tradeRouter, i)
  return i.tag === undefined ? call : { ...call, data: tagged(call.data, i.tag) }
}

const untaggedCall = (tradeRouter: Address, i: HoodTradeBuildInput): HoodCall & { readonly gas: bigint } => {
  const fee = i.platformFeeRaw
  if (i.venue === "svc-curve") {
    return i.side === "buy"
      ? {
          to: tradeRouter,
          data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "buyOnCurve", args: [i.mint, i.amountInRaw, i.minAmountOutRaw, fee] }),
          value: i.amountInRaw + fee,
          gas: HOOD_TRADE_GAS.curveBuy
        }
      : {
          to: tradeRouter,
          data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "sellOnCurve", args: [i.mint, i.amountInRaw, i.minAmountOutRaw, fee] }),
          value: 0n,
          gas: HOOD_TRADE_GAS.curveSell
        }
  }
  return i.side === "buy"
    ? {
        to: tradeRouter,
        data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "buyOnPool", args: [i.mint, i.poolFee, i.amountInRaw, i.minAmountOutRaw, fee, i.deadlineS] }),
        value: i.amountInRaw + fee,
        gas: HOOD_TRADE_GAS.poolBuy
      }
    : {
        to: tradeRouter,
        data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "sellOnPool", args: [i.mint, i.poolFee, i.amountInRaw, i.minAmountOutRaw, fee, i.deadlineS] }),
        value: 0n,
        gas: HOOD_TRADE_GAS.poolSell
      }
}

/**
 * THE one answer to "which address must a wallet approve before a sell": who pulls the tokens of a
 * sell on `venue` of the market whose curve is `curve`. Every Hood sell goes through the trade
 * router (it collects the platform fee), so it is the trade router on the curve and on the pool
 * alike; the venue and the curve stay parameters so a future venue decides here. Every caller (the
 * embedded wallet's approval, the linked and TEE builds' allowance refusal, a server-built
 * approval) asks this, through `HoodTradeChain.spenderOf`. Pure.
 */
export const hoodSellSpender = (tradeRouter: Address, _venue: HoodTradeVenue, _curve: Address): Address => tradeRouter

/** `approve(spender, max)` on the token, with its gas limit; `tag` appended to the calldata (`RequestTag.ts`). Pure. */
export const approveCall = (token: Address, spender: Address, tag?: Hex): HoodCall & { readonly gas: bigint } => ({
  to: token,
  data: tagged(encodeFunctionData({ abi: curveTokenAbi, functionName: "approve", args: [spender, MAX_ALLOWANCE] }), tag),
  value: 0n,
  gas: HOOD_TRADE_GAS.approve
})
