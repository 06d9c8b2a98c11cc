/**
 * svc-curve `Trade` (event tag 2, a bonding-curve buy or sell) → `Trade` with venue `curve`.
 * Reserves are the curve's virtual reserves after the trade; `realQuoteRaw` the quote raised net
 * of fees. Solana fills a crossing buy in full, so `refundRaw` is 0 and `quoteConsumedRaw` is
 * `amountInRaw` (the contract's "0 and amountIn otherwise", for sells too).
 */
import { Option } from "effect"
import { CurveEventTag, decodeCurveEvent } from "../../../src/chain/solana/program/Events.js"
import { Trade } from "../../ChainEvent.js"
import { baseFields, type CurveEventContext } from "./EventContext.js"

export const decode = (data: Uint8Array, ctx: CurveEventContext): Option.Option<Trade> => {
  if (data[0] !== CurveEventTag.Trade) return Option.none()
  const e = decodeCurveEvent(data)
  if (e === undefined || e.kind !== "Trade") return Option.none()
  return Option.some(
    new Trade({
      ...baseFields(ctx, e.mint),
      venue: "curve",
      side: e.side,
      trader: e.trader,
      amountInRaw: e.amountInRaw,
      amountOutRaw: e.amountOutRaw,
      feeRaw: e.feeRaw,
      refundRaw: 0n,
      quoteConsumedRaw: e.amountInRaw,
      quoteReserveRaw: e.virtualQuoteAfterRaw,
      tokenReserveRaw: e.virtualTokenAfterRaw,
      realQuoteRaw: e.realQuoteAfterRaw,
      crossesGraduation: e.crossesGraduation
    })
  )
}
