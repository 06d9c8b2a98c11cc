/**
 * svc-curve `PoolSwap` (event tag 5, a swap on the graduated pool) → `Trade` with venue `pool`.
 * Reserves are the pool's actual reserves after the swap; `realQuoteRaw` is a curve-only figure
 * and is 0 here; a pool swap never crosses graduation.
 */
import { Option } from "effect"
import { CurveEventTag, decodeCurveEvent } from "../../../src/chain/solana/program/Events.js"
import { Trade } from "../../ChainEvent.js"
import { baseFields, type CurveEventContext } from "./EventContext.js"

export const decode = (data: Uint8Array, ctx: CurveEventContext): Option.Option<Trade> => {
  if (data[0] !== CurveEventTag.PoolSwap) return Option.none()
  const e = decodeCurveEvent(data)
  if (e === undefined || e.kind !== "PoolSwap") return Option.none()
  return Option.some(
    new Trade({
      ...baseFields(ctx, e.mint),
      venue: "pool",
      side: e.side,
      trader: e.trader,
      amountInRaw: e.amountInRaw,
      amountOutRaw: e.amountOutRaw,
      feeRaw: e.feeRaw,
      refundRaw: 0n,
      quoteConsumedRaw: e.amountInRaw,
      quoteReserveRaw: e.quoteReserveAfterRaw,
      tokenReserveRaw: e.tokenReserveAfterRaw,
      realQuoteRaw: 0n,
      crossesGraduation: false
    })
  )
}
