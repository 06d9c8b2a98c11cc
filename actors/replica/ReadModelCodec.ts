/**
 * The bytes of the read-model topics (docs/architecture.md, "Roles"): `market.snapshots` carries
 * one market's latest state per record (the actors' checkpoint encoding, `MarketCodec`; an empty
 * value is a tombstone: the market is gone), `market.feed` one actors drain per record (its
 * changed markets, in drain order, as `[key, state | null]` pairs of the same encoding).
 *
 * Decoding throws on bytes it did not write (a record from another writer, or corrupt): the
 * follower logs and skips such a record, never guessing.
 */
import { decodeMarketState, encodeMarketState } from "../market/MarketCodec.js"
import type { MarketState } from "../market/MarketActor.js"

/** The key of every `market.feed` record: one key, so one partition holds the whole feed in one order. */
export const FEED_KEY = "feed"

export type MarketChange = readonly [key: string, state: MarketState | undefined]

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

export const encodeSnapshot = (state: MarketState | undefined): Uint8Array =>
  state === undefined ? new Uint8Array(0) : encoder.encode(encodeMarketState(state))

export const decodeSnapshot = (bytes: Uint8Array): MarketState | undefined =>
  bytes.byteLength === 0 ? undefined : decodeMarketState(decoder.decode(bytes))

/**
 * One drain's records: its `market.feed` value and each market's `market.snapshots` value, every
 * state encoded once for both (the drain is on the actors' hot path).
 */
export const encodeDrain = (
  changes: ReadonlyArray<MarketChange>
): { readonly feed: Uint8Array; readonly snapshots: ReadonlyArray<{ readonly key: string; readonly value: Uint8Array }> } => {
  const pairs: Array<readonly [string, string | null]> = new Array(changes.length)
  const snapshots: Array<{ readonly key: string; readonly value: Uint8Array }> = new Array(changes.length)
  for (let i = 0; i < changes.length; i++) {
    const [key, state] = changes[i]!
    const text = state === undefined ? null : encodeMarketState(state)
    pairs[i] = [key, text]
    snapshots[i] = { key, value: text === null ? new Uint8Array(0) : encoder.encode(text) }
  }
  return { feed: encoder.encode(JSON.stringify(pairs)), snapshots }
}

export const decodeFeedRecord = (bytes: Uint8Array): ReadonlyArray<MarketChange> => {
  const parsed: unknown = JSON.parse(decoder.decode(bytes))
  if (!Array.isArray(parsed)) throw new Error("a market.feed record is not an array")
  return parsed.map((pair: unknown): MarketChange => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || (pair[1] !== null && typeof pair[1] !== "string")) {
      throw new Error("a market.feed entry is not [key, state | null]")
    }
    return [pair[0], pair[1] === null ? undefined : decodeMarketState(pair[1])]
  })
}
