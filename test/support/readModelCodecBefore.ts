/**
 * `encodeDrain` as it was before the read model carried the core alone in its binary record (main
 * at 9edc7a3, `actors/replica/ReadModelCodec.ts`): each market's whole state (the retract window
 * too) in the checkpoint codec's JSON text as its snapshot, and the feed record
 * `[[key, text | null], ...]` with each text JSON-escaped again inside it. Kept as the writer of
 * the records a topic still holds from before (`ReadModelCodec.test.ts` decodes them) and as the
 * baseline of `bench/readModelCodec.ts`; nothing in production imports it.
 */
import { encodeMarketState } from "../../actors/market/MarketCodec.js"
import { FEED_RECORD_MAX_BYTES, type MarketChange } from "../../actors/replica/ReadModelCodec.js"

const encoder = new TextEncoder()

/** The record of `parts` (`bytes` long): `[`, the parts with a comma between each two, `]`. */
const feedRecord = (parts: ReadonlyArray<Uint8Array>, bytes: number): Uint8Array => {
  const record = new Uint8Array(bytes)
  record[0] = 0x5b
  let at = 1
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) record[at++] = 0x2c
    record.set(parts[i]!, at)
    at += parts[i]!.byteLength
  }
  record[at] = 0x5d
  return record
}

export const encodeDrainBefore = (
  changes: ReadonlyArray<MarketChange>,
  maxFeedBytes: number = FEED_RECORD_MAX_BYTES
): { readonly feeds: ReadonlyArray<Uint8Array>; readonly snapshots: ReadonlyArray<{ readonly key: string; readonly value: Uint8Array }> } => {
  const feeds: Array<Uint8Array> = []
  const snapshots: Array<{ readonly key: string; readonly value: Uint8Array }> = new Array(changes.length)
  const parts: Array<Uint8Array> = []
  let bytes = 2
  for (let i = 0; i < changes.length; i++) {
    const [key, state] = changes[i]!
    const text = state === undefined ? null : encodeMarketState(state)
    snapshots[i] = { key, value: text === null ? new Uint8Array(0) : encoder.encode(text) }
    const part = encoder.encode(JSON.stringify([key, text]))
    if (parts.length > 0 && bytes + 1 + part.byteLength > maxFeedBytes) {
      feeds.push(feedRecord(parts, bytes))
      parts.length = 0
      bytes = 2
    }
    bytes += (parts.length > 0 ? 1 : 0) + part.byteLength
    parts.push(part)
  }
  if (parts.length > 0) feeds.push(feedRecord(parts, bytes))
  return { feeds, snapshots }
}
