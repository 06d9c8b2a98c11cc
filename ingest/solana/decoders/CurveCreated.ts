/**
 * svc-curve `CurveCreated` (event tag 1) → `CurveCreated`. The event carries the curve's whole
 * launch record (reserves, fees, mode, decimals and the metadata strings), so no account read is
 * needed. Solana has no dex version or config hash: both are null.
 */
import { Option } from "effect"
import { CurveEventTag, decodeCurveEvent } from "../../../src/chain/solana/program/Events.js"
import { CurveCreated } from "../../ChainEvent.js"
import { baseFields, type CurveEventContext } from "./EventContext.js"

export const decode = (data: Uint8Array, ctx: CurveEventContext): Option.Option<CurveCreated> => {
  if (data[0] !== CurveEventTag.CurveCreated) return Option.none()
  const e = decodeCurveEvent(data)
  if (e === undefined || e.kind !== "CurveCreated") return Option.none()
  return Option.some(
    new CurveCreated({
      ...baseFields(ctx, e.mint),
      curve: e.curve,
      creator: e.creator,
      quoteMint: e.quoteMint,
      quoteDecimals: e.quoteDecimals,
      decimals: e.tokenDecimals,
      virtualQuoteRaw: e.virtualQuoteRaw,
      thresholdRaw: e.thresholdRaw,
      supplyRaw: e.supplyRaw,
      tokenReserveRaw: e.tokenReserveRaw,
      stakerAllocationBps: e.stakerAllocationBps,
      feeBps: e.feeBps,
      creatorFeeBps: e.creatorFeeBps,
      mode: e.mode,
      name: e.name,
      symbol: e.symbol,
      uri: e.uri,
      dexVersion: null,
      configHash: null
    })
  )
}
