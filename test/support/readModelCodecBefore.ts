/**
 * `encodeDrain` as it was before each change's feed part was encoded once (main at c31bf38,
 * `actors/replica/ReadModelCodec.ts`): the part stringified, its bytes counted with
 * `Buffer.byteLength`, the record joined as a string and encoded again. Kept only as the oracle of
 * `ReadModelCodec.test.ts`'s property (the same records, byte for byte) and the baseline of
 * `bench/readModelCodec.ts`; nothing in production imports it.
 */
import { encodeMarketState } from "../../actors/market/MarketCodec.js"
import { FEED_RECORD_MAX_BYTES, type MarketChange } from "../../actors/replica/ReadModelCodec.js"

const encoder = new TextEncoder()

export const encodeDrainBefore = (
  changes: ReadonlyArray<MarketChange>,
  maxFeedBytes: number = FEED_RECORD_MAX_BYTES
): { readonly feeds: ReadonlyArray<Uint8Array>; readonly snapshots: ReadonlyArray<{ readonly key: string; readonly value: Uint8Array }> } => {
  const feeds: Array<Uint8Array> = []
  const snapshots: Array<{ readonly key: string; readonly value: Uint8Array }> = new Array(changes.length)
  let parts: Array<string> = []
  let bytes = 2 // the record's `[` and `]`
  for (let i = 0; i < changes.length; i++) {
    const [key, state] = changes[i]!
    const text = state === undefined ? null : encodeMarketState(state)
    const value = text === null ? new Uint8Array(0) : encoder.encode(text)
    snapshots[i] = { key, value }
    const part = JSON.stringify([key, text])
    const partBytes = Buffer.byteLength(part)
    if (parts.length > 0 && bytes + 1 + partBytes > maxFeedBytes) {
      feeds.push(encoder.encode(`[${parts.join(",")}]`))
      parts = []
      bytes = 2
    }
    bytes += (parts.length > 0 ? 1 : 0) + partBytes
    parts.push(part)
  }
  if (parts.length > 0) feeds.push(encoder.encode(`[${parts.join(",")}]`))
  return { feeds, snapshots }
}
