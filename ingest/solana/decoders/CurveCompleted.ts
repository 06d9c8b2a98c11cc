/** svc-curve `CurveCompleted` (event tag 3, logged after the buy that reaches G) → `CurveCompleted`. */
import { Option } from "effect"
import { CurveEventTag, decodeCurveEvent } from "../../../src/chain/solana/program/Events.js"
import { CurveCompleted } from "../../ChainEvent.js"
import { baseFields, type CurveEventContext } from "./EventContext.js"

export const decode = (data: Uint8Array, ctx: CurveEventContext): Option.Option<CurveCompleted> => {
  if (data[0] !== CurveEventTag.CurveCompleted) return Option.none()
  const e = decodeCurveEvent(data)
  if (e === undefined || e.kind !== "CurveCompleted") return Option.none()
  return Option.some(new CurveCompleted({ ...baseFields(ctx, e.mint), curve: e.curve, realQuoteRaw: e.realQuoteRaw }))
}
