/**
 * The bytes of the read-model topics (docs/architecture.md, "Roles"): `market.snapshots` carries
 * one market's latest state per record (the actors' checkpoint encoding, `MarketCodec`; an empty
 * value is a tombstone: the market is gone), `market.feed` one actors drain per record, or several
 * past `FEED_RECORD_MAX_BYTES` (its changed markets, in drain order, as `[key, state | null]` pairs of the same encoding).
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
 * The most bytes one `market.feed` record carries. A drain (up to `drainMax` markets) or a
 * partition's reload (every checkpoint it holds) can hold megabytes of states, and the buses refuse
 * a record over 1 MiB, a refusal the publisher would retry forever; so the change list goes out as
 * several records, in order, each at most this (a quarter of the bound, leaving room for a batch's
 * other records). A replica applies each record's changes as it reads them, so a split drain is
 * only seen a record at a time, each market's state whole. One change larger than this alone still
 * goes out alone.
 */
export const FEED_RECORD_MAX_BYTES = 256 * 1024

const OPEN = 0x5b // [
const COMMA = 0x2c // ,
const CLOSE = 0x5d // ]

/** The record of `parts` (`bytes` long): `[`, the parts with a comma between each two, `]`. */
const feedRecord = (parts: ReadonlyArray<Uint8Array>, bytes: number): Uint8Array => {
  const record = new Uint8Array(bytes)
  record[0] = OPEN
  let at = 1
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) record[at++] = COMMA
    record.set(parts[i]!, at)
    at += parts[i]!.byteLength
  }
  record[at] = CLOSE
  return record
}

/**
 * One drain's records: its `market.feed` values (one, or several in order past `maxFeedBytes`) and
 * each market's `market.snapshots` value, every state encoded once for both (the drain is on the
 * actors' hot path). Each change's feed part (`JSON.stringify([key, state])`) is UTF-8 encoded
 * once: its byte length is what the bound counts, and its bytes are copied into the record, which
 * is `[`, the parts joined by `,`, and `]` (the bytes `JSON.stringify` of the pairs would give).
 */
export const encodeDrain = (
  changes: ReadonlyArray<MarketChange>,
  maxFeedBytes: number = FEED_RECORD_MAX_BYTES
): { readonly feeds: ReadonlyArray<Uint8Array>; readonly snapshots: ReadonlyArray<{ readonly key: string; readonly value: Uint8Array }> } => {
  const feeds: Array<Uint8Array> = []
  const snapshots: Array<{ readonly key: string; readonly value: Uint8Array }> = new Array(changes.length)
  const parts: Array<Uint8Array> = []
  let bytes = 2 // the open record's `[` and `]`, its parts and the commas between them
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
