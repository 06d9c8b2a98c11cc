/**
 * The calls of a headless Hood launch, built with viem's ABI encoding from the generated ABIs:
 * `createCurve` on the factory, the dev buy on the new curve, the platform-fee transfer, and the
 * decoding of their receipts. Nothing here signs or sends: the launch service prepares each call
 * as an unsigned transaction, has the wallet provider sign it, and broadcasts the signed bytes.
 *
 * Invariants:
 * - The CREATE2 salt of a headless launch is a pure function of (account, clientLaunchId,
 *   attempt) (`headlessSalt`), so the curve address is known before anything is sent
 *   (`predictCurveAddress`) and one attempt can create at most one curve: a second `createCurve`
 *   with the same creator and salt cannot deploy (CREATE2 collision).
 * - The dev buy's `minAmountOut` is CurveMath's Hood quote (capped refund) on the curve state the
 *   buy is built against, less `slippageBps`.
 */
import { type Address, encodeAbiParameters, encodeFunctionData, getAddress, type Hex, keccak256, parseEventLogs, type TransactionReceipt, zeroAddress } from "viem"
import { type BuyQuote, type CurveParams, type CurveState, minAmountOut, quoteBuy } from "../../../domain/CurveMath.js"
import { bondingCurveAbi, curveFactoryAbi } from "../abi.generated.js"
import { type CreateCurveInput, createCurveParams } from "../client/HoodClient.js"

/** An unsigned call: where, what, how much ETH. */
export interface HoodCall {
  readonly to: Address
  readonly data: Hex
  readonly value: bigint
}

/** The salt of one launch attempt on a path: the same attempt always predicts (and can create) one curve. */
export const launchSalt = (path: "headless" | "self", accountId: string, clientLaunchId: string, attempt: number): Hex =>
  keccak256(
    encodeAbiParameters(
      [{ type: "string" }, { type: "string" }, { type: "string" }, { type: "uint256" }],
      [`curvestream:hood:${path}`, accountId, clientLaunchId, BigInt(attempt)]
    )
  )

/** The salt of one headless attempt. */
export const headlessSalt = (accountId: string, clientLaunchId: string, attempt: number): Hex => launchSalt("headless", accountId, clientLaunchId, attempt)

export const createCurveCall = (factory: Address, input: CreateCurveInput & { readonly salt: Hex }): HoodCall => ({
  to: factory,
  data: encodeFunctionData({ abi: curveFactoryAbi, functionName: "createCurve", args: [createCurveParams(input)] }),
  value: 0n
})

export interface CurveCreatedOnChain {
  readonly curve: Address
  readonly token: Address
  readonly creator: Address
  readonly txHash: Hex
  readonly blockNumber: bigint
}

/** The factory's `CurveCreated` in a receipt, or undefined (a reverted or foreign receipt). */
export const curveCreatedIn = (factory: Address, receipt: TransactionReceipt): CurveCreatedOnChain | undefined => {
  const logs = receipt.logs.filter((l) => getAddress(l.address) === getAddress(factory))
  const event = parseEventLogs({ abi: curveFactoryAbi, logs, eventName: "CurveCreated" })[0]
  if (event === undefined) return undefined
  return {
    curve: getAddress(event.args.curve),
    token: getAddress(event.args.token),
    creator: getAddress(event.args.creator),
    txHash: receipt.transactionHash,
    blockNumber: receipt.blockNumber
  }
}

export interface DevBuyPlan {
  readonly call: HoodCall
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  /** CurveMath's fill on the state the buy was built against. */
  readonly quote: BuyQuote
}

/**
 * The ETH dev buy on `curve` against `state`, or undefined when CurveMath refuses it (a complete
 * curve, or an amount whose net is zero): nothing worth sending.
 */
export const devBuyPlan = (curve: Address, params: CurveParams, state: CurveState, amountInRaw: bigint, slippageBps: bigint): DevBuyPlan | undefined => {
  const quote = quoteBuy(params, state, amountInRaw)
  if (quote._tag !== "Filled") return undefined
  const minOut = minAmountOut(quote.amountOut, slippageBps)
  return {
    call: { to: curve, data: encodeFunctionData({ abi: bondingCurveAbi, functionName: "buy", args: [amountInRaw, minOut] }), value: amountInRaw },
    amountInRaw,
    minAmountOutRaw: minOut,
    quote
  }
}

export interface DevBuyFill {
  readonly amountOutRaw: bigint
  readonly feeRaw: bigint
  readonly refundRaw: bigint
  readonly quoteConsumedRaw: bigint
  readonly crossesGraduation: boolean
}

/** The curve's `Trade` in a successful dev-buy receipt. */
export const devBuyFillIn = (curve: Address, receipt: TransactionReceipt): DevBuyFill | undefined => {
  const logs = receipt.logs.filter((l) => getAddress(l.address) === getAddress(curve))
  const trade = parseEventLogs({ abi: bondingCurveAbi, logs, eventName: "Trade" })[0]?.args
  if (trade === undefined) return undefined
  return {
    amountOutRaw: trade.amountOut,
    feeRaw: trade.fee,
    refundRaw: trade.refund,
    quoteConsumedRaw: trade.quoteConsumed,
    crossesGraduation: trade.crossesGraduation
  }
}

/** The platform fee of a dev buy: `floor(amount·bps/10000)` of the quote, a plain ETH transfer. */
export const platformFeeRaw = (amountInRaw: bigint, feeBps: number): bigint => (amountInRaw * BigInt(feeBps)) / 10_000n

export const ethTransferCall = (to: Address, valueRaw: bigint): HoodCall => ({ to, data: "0x", value: valueRaw })

/** The quote token a pair's curve is created with: native ETH is the zero address. */
export const quoteTokenOf = (quoteAsset: "eth" | "usdg", usdg: Address): Address => (quoteAsset === "eth" ? zeroAddress : usdg)
