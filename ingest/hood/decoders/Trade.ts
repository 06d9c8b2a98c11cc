/**
 * Curve `Trade` → `Trade` with venue `curve`. Reserves are the curve's virtual reserves after the
 * trade, `realQuoteRaw` the quote raised net of fees. A crossing buy is capped at the threshold
 * (spec: capped-refund): `refundRaw` is what went back, `quoteConsumedRaw` what was used (fee
 * included). Sells follow the ChainEvent convention: refund 0, quoteConsumed = amountIn.
 */
import { Option } from "effect"
import type { Address } from "viem"
import { bondingCurveAbi } from "../../../src/chain/hood/abi.generated.js"
import { Trade } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface Args {
  readonly token: Address
  readonly trader: Address
  readonly isBuy: boolean
  readonly amountIn: bigint
  readonly amountOut: bigint
  readonly fee: bigint
  readonly refund: bigint
  readonly quoteConsumed: bigint
  readonly virtualQuoteReserve: bigint
  readonly virtualTokenReserve: bigint
  readonly realQuote: bigint
  readonly crossesGraduation: boolean
}

export const decoder = eventDecoder<Args>(eventItem(bondingCurveAbi, "Trade"))

export const decode = (log: HoodLog, ctx: HoodLogContext): Option.Option<Trade> =>
  Option.map(
    decoder.decode(log),
    (a) =>
      new Trade({
        ...baseFields(ctx, a.token),
        venue: "curve",
        side: a.isBuy ? "buy" : "sell",
        trader: a.trader,
        amountInRaw: a.amountIn,
        amountOutRaw: a.amountOut,
        feeRaw: a.fee,
        refundRaw: a.isBuy ? a.refund : 0n,
        quoteConsumedRaw: a.isBuy ? a.quoteConsumed : a.amountIn,
        quoteReserveRaw: a.virtualQuoteReserve,
        tokenReserveRaw: a.virtualTokenReserve,
        realQuoteRaw: a.realQuote,
        crossesGraduation: a.crossesGraduation
      })
  )
