/**
 * What a Hood trade's transaction did, pure: the executed amount from a landed receipt's logs (the
 * trade router's `RoutedTrade`, else the venue's own event), and the failure reason of a revert as
 * a node answers it (`slippage_exceeded` or `reverted`).
 */
import { type Address, BaseError, decodeErrorResult, getAddress, parseEventLogs, type TransactionReceipt } from "viem"
import { bondingCurveAbi, tradeRouterAbi, uniswapV3PoolAbi } from "../../../chain/hood/abi.generated.js"
import { revertAbi, revertDataOf } from "../../../chain/hood/client/HoodSender.js"
import type { RevertReason } from "../TradeMachine.js"

/**
 * What a landed trade executed, from its receipt's logs: the trade router's `RoutedTrade` for
 * `wallet` on `mint` (the venue's output: tokens on a buy, ETH before the platform fee on a sell;
 * only a log emitted by `tradeRouter` counts: any contract the trade calls can emit the same shape),
 * else (a transaction straight to the venue, as the rail built before the router) the curve's
 * `Trade` by `wallet` on `mint`, or the pool's `Swap` output. Pure.
 */
export const executedOutOf = (receipt: TransactionReceipt, tradeRouter: Address, venue: string, mint: Address, wallet: Address): bigint | undefined => {
  // The router this transaction called counts too: a trade built before a restart that configured
  // another router (every trade the engine builds calls a router it was configured with) is read,
  // never left pending; any other emitter's RoutedTrade-shaped log is not.
  const called = receipt.to === null || receipt.to === undefined ? undefined : getAddress(receipt.to)
  const routed = parseEventLogs({ abi: tradeRouterAbi, logs: receipt.logs, eventName: "RoutedTrade" }).find(
    (t) =>
      (getAddress(t.address) === getAddress(tradeRouter) || getAddress(t.address) === called) &&
      getAddress(t.args.token) === getAddress(mint) &&
      getAddress(t.args.trader) === getAddress(wallet)
  )
  if (routed !== undefined) return routed.args.amountOut
  if (venue === "svc-curve") {
    const trade = parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "Trade" }).find(
      (t) => getAddress(t.args.token) === getAddress(mint) && getAddress(t.args.trader) === getAddress(wallet)
    )
    return trade?.args.amountOut
  }
  const swap = parseEventLogs({ abi: uniswapV3PoolAbi, logs: receipt.logs, eventName: "Swap" })[0]
  if (swap === undefined) return undefined
  // The pool's signed deltas: what it paid out is the negative one.
  const { amount0, amount1 } = swap.args
  return amount0 < 0n ? -amount0 : amount1 < 0n ? -amount1 : undefined
}

/**
 * Why a call reverted: the curve's `SlippageExceeded`, the router's "Too little received", or the
 * trade router's `FeeExceedsProceeds` (a sell whose venue output fell below the platform fee: the
 * caller's minimum let it, so it is refused like slippage) are `slippage_exceeded`; any other
 * revert `reverted`. Pure.
 */
export const hoodFailureReasonOf = (e: unknown): RevertReason => {
  const data = revertDataOf(e)
  if (data !== undefined) {
    try {
      const decoded = decodeErrorResult({ abi: revertAbi, data }) as { readonly errorName: string; readonly args?: ReadonlyArray<unknown> }
      if (decoded.errorName === "SlippageExceeded" || decoded.errorName === "FeeExceedsProceeds") return "slippage_exceeded"
      if (decoded.errorName === "Error" && decoded.args?.[0] === "Too little received") return "slippage_exceeded"
      return "reverted"
    } catch {
      // not an error these contracts declare: read the text below
    }
  }
  const text = e instanceof BaseError ? `${e.message} ${e.details}` : String(e)
  return /SlippageExceeded|FeeExceedsProceeds|Too little received/.test(text) ? "slippage_exceeded" : "reverted"
}
