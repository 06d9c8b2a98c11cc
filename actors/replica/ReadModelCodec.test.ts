import { describe, expect, it } from "vitest"
import { foldStates, workload } from "../../test/support/marketWorkload.js"
import { decodeFeedRecord, decodeSnapshot, encodeDrain, FEED_RECORD_MAX_BYTES, type MarketChange } from "./ReadModelCodec.js"

const changes: ReadonlyArray<MarketChange> = [...foldStates(workload(8, 6))].map(([key, state], i) => [key, i === 3 ? undefined : state] as const)
const sizes = changes.map(([key, state]) => JSON.stringify([key, state === undefined ? null : new TextDecoder().decode(encodeDrain([[key, state]]).snapshots[0]!.value)]).length)

describe("ReadModelCodec.encodeDrain", () => {
  it("puts a drain under the bound in one feed record, and every snapshot beside it", () => {
    const { feeds, snapshots } = encodeDrain(changes)
    expect(feeds).toHaveLength(1)
    expect(decodeFeedRecord(feeds[0]!)).toEqual(changes)
    expect(snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toEqual(changes)
    expect(FEED_RECORD_MAX_BYTES).toBe(256 * 1024)
  })

  it("splits a drain past the bound into records in order, each within the bound, and sends a change larger than the bound alone", () => {
    const max = Math.max(...sizes) + 2 + Math.min(...sizes)
    const { feeds } = encodeDrain(changes, max)
    expect(feeds.length).toBeGreaterThan(2)
    for (const f of feeds) expect(f.byteLength).toBeLessThanOrEqual(max)
    expect(feeds.flatMap((f) => decodeFeedRecord(f))).toEqual(changes)
    // A bound below every change: one record per change, in order.
    const tiny = encodeDrain(changes, 10).feeds
    expect(tiny).toHaveLength(changes.length)
    expect(tiny.flatMap((f) => decodeFeedRecord(f))).toEqual(changes)
  })

  it("measures the bound in UTF-8 bytes, not characters", () => {
    // Two tombstones whose keys are 2 bytes a character: as characters both fit the bound, as bytes one does.
    const wide = "é".repeat(1000)
    const list: ReadonlyArray<MarketChange> = [[`solana:${wide}`, undefined], [`solana:${wide}x`, undefined]]
    const one = encodeDrain([list[0]!]).feeds[0]!.byteLength
    const { feeds } = encodeDrain(list, one + 500)
    expect(feeds).toHaveLength(2)
    for (const f of feeds) expect(f.byteLength).toBeLessThanOrEqual(one + 500)
    expect(feeds.flatMap((f) => decodeFeedRecord(f))).toEqual(list)
  })

  it("cuts at the bound exactly: two changes whose record is the bound stay together, one byte less splits them", () => {
    const two = changes.slice(0, 2)
    const together = encodeDrain(two).feeds[0]!.byteLength
    expect(encodeDrain(two, together).feeds).toHaveLength(1)
    expect(encodeDrain(two, together - 1).feeds).toHaveLength(2)
  })
})
