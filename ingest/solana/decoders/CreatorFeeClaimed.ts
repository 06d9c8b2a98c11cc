/** svc-curve `CreatorFeeClaimed` (event tag 6) → `CreatorFeeClaimed`: the creator is the recipient. */
import { Option } from "effect"
import { CurveEventTag, decodeCurveEvent } from "../../../src/chain/solana/program/Events.js"
import { CreatorFeeClaimed } from "../../ChainEvent.js"
import { baseFields, type CurveEventContext } from "./EventContext.js"

export const decode = (data: Uint8Array, ctx: CurveEventContext): Option.Option<CreatorFeeClaimed> => {
  if (data[0] !== CurveEventTag.CreatorFeeClaimed) return Option.none()
  const e = decodeCurveEvent(data)
  if (e === undefined || e.kind !== "CreatorFeeClaimed") return Option.none()
  return Option.some(new CreatorFeeClaimed({ ...baseFields(ctx, e.mint), recipient: e.creator, amountRaw: e.amountRaw }))
}
