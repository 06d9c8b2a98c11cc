import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeMarketState } from "../market/MarketCodec.js"
import { foldStates, workload } from "../../test/support/marketWorkload.js"
import { encodeDrainBefore } from "../../test/support/readModelCodecBefore.js"
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

/** fast-check seed: fixed by `FC_SEED`, else random; printed so a failure can be replayed. */
const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))

describe("ReadModelCodec.encodeDrain against the encoder before it", () => {
  const states = [...foldStates(workload(8, 6)).values()]
  /** Each state's encoding, for the bound's arithmetic (the encoders encode it themselves). */
  const texts = states.map(encodeMarketState)
  /** A change: a key (a market's, any text with multi-byte characters, or any UTF-16 units with lone surrogates) and a state or a tombstone. */
  const change = fc.tuple(
    fc.oneof(fc.constantFrom(...changes.map(([key]) => key)), fc.string({ unit: "grapheme", maxLength: 40 }),
      // fast-check's "binary" unit leaves half surrogate pairs out: lone surrogates are drawn on their own.
      fc.string({ unit: fc.oneof(fc.string({ unit: "binary", minLength: 1, maxLength: 1 }), fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))), maxLength: 40 })),
    fc.option(fc.integer({ min: 0, max: states.length - 1 }), { nil: undefined })
  )

  it(`gives the same records, byte for byte, for random change lists with bounds at, just under and just over a cut (seed ${seed})`, () => {
    console.log(`ReadModelCodec.encodeDrain property seed ${seed} (replay: FC_SEED=${seed})`)
    fc.assert(
      fc.property(fc.array(change, { maxLength: 12 }), fc.nat(), fc.integer({ min: -2, max: 2 }), (picked, at, delta) => {
        const list: ReadonlyArray<MarketChange> = picked.map(([key, i]) => [key, i === undefined ? undefined : states[i]] as const)
        // The bound: the record of the list's first k changes (as the encoder before counted it) plus delta, so cuts land at, under and over it.
        const partBytes = picked.map(([key, i]) => Buffer.byteLength(JSON.stringify([key, i === undefined ? null : texts[i]!])))
        const k = list.length === 0 ? 0 : 1 + (at % list.length)
        const bound = 2 + partBytes.slice(0, k).reduce((sum, b) => sum + b, 0) + Math.max(0, k - 1) + delta
        for (const max of [bound, undefined]) {
          const now = max === undefined ? encodeDrain(list) : encodeDrain(list, max)
          const before = max === undefined ? encodeDrainBefore(list) : encodeDrainBefore(list, max)
          expect(now.feeds.map((f) => Buffer.from(f).toString("hex"))).toEqual(before.feeds.map((f) => Buffer.from(f).toString("hex")))
          const hex = (s: typeof now.snapshots) => s.map(({ key, value }) => [key, Buffer.from(value).toString("hex")])
          expect(hex(now.snapshots)).toEqual(hex(before.snapshots))
          for (const f of now.feeds) expect(f).toBeInstanceOf(Uint8Array)
        }
      }),
      { seed, numRuns: 80 }
    )
  })
})
