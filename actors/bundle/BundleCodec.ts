/**
 * The bundle state as stored (JSON, `bigint`s as decimal strings): what makes the BundleActor
 * durable. `decodeBundleState(encodeBundleState(s))` equals `s` (BundleCodec.test.ts); a stored
 * document that does not decode is a defect of this codec, never silently repaired.
 */
import type { BundleState, BuyRow } from "./BundleActor.js"

type Json = Record<string, unknown>

export const encodeBundleState = (s: BundleState): string =>
  JSON.stringify({
    ...s,
    landedSlot: s.landedSlot === null ? null : s.landedSlot.toString(),
    buys: s.buys.map((b) => ({
      ...b,
      amountInRaw: b.amountInRaw.toString(),
      expectedOutRaw: b.expectedOutRaw.toString(),
      minAmountOutRaw: b.minAmountOutRaw.toString(),
      actualOutRaw: b.actualOutRaw === null ? null : b.actualOutRaw.toString()
    }))
  })

export const decodeBundleState = (text: string): BundleState => {
  const o = JSON.parse(text) as Json & { buys: ReadonlyArray<Json> }
  return {
    ...(o as unknown as BundleState),
    landedSlot: o["landedSlot"] === null ? null : BigInt(o["landedSlot"] as string),
    buys: o.buys.map(
      (b): BuyRow => ({
        ...(b as unknown as BuyRow),
        amountInRaw: BigInt(b["amountInRaw"] as string),
        expectedOutRaw: BigInt(b["expectedOutRaw"] as string),
        minAmountOutRaw: BigInt(b["minAmountOutRaw"] as string),
        actualOutRaw: b["actualOutRaw"] === null ? null : BigInt(b["actualOutRaw"] as string)
      })
    )
  }
}
