/**
 * svc-curve `CurveMigrated` (event tag 4, the keeper's `migrate`) → `CurveMigrated`: the pool
 * account, what moved into it, and the pool's fee as set at migration.
 */
import { Option } from "effect"
import { CurveEventTag, decodeCurveEvent } from "../../../src/chain/solana/program/Events.js"
import { CurveMigrated } from "../../ChainEvent.js"
import { baseFields, type CurveEventContext } from "./EventContext.js"

export const decode = (data: Uint8Array, ctx: CurveEventContext): Option.Option<CurveMigrated> => {
  if (data[0] !== CurveEventTag.CurveMigrated) return Option.none()
  const e = decodeCurveEvent(data)
  if (e === undefined || e.kind !== "CurveMigrated") return Option.none()
  return Option.some(
    new CurveMigrated({
      ...baseFields(ctx, e.mint),
      pool: e.pool,
      quoteRaw: e.quoteMovedRaw,
      tokensRaw: e.tokensMovedRaw,
      feeBps: e.poolFeeBps
    })
  )
}
