/** Curve `CurveCompleted` → `CurveCompleted` (the curve is the log's emitter). */
import { Option } from "effect"
import type { Address } from "viem"
import { bondingCurveAbi } from "../../../src/chain/hood/abi.generated.js"
import { CurveCompleted } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface Args {
  readonly token: Address
  readonly realQuote: bigint
  readonly virtualQuoteReserve: bigint
  readonly virtualTokenReserve: bigint
}

export const decoder = eventDecoder<Args>(eventItem(bondingCurveAbi, "CurveCompleted"))

export const decode = (log: HoodLog, ctx: HoodLogContext): Option.Option<CurveCompleted> =>
  Option.map(decoder.decode(log), (a) => new CurveCompleted({ ...baseFields(ctx, a.token), curve: log.address, realQuoteRaw: a.realQuote }))
