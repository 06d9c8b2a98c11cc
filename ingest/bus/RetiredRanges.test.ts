import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { BusBatch, BusRecord, BusShape } from "./Bus.js"
import { RetiredRanges } from "./RetiredRanges.js"

const record = (offset: number, key: string): BusRecord => ({ topic: "t", partition: 3, offset, key, value: new Uint8Array([offset]), timestampMs: 0 })
const batch = (...records: BusRecord[]): BusBatch => ({ topic: "t", partition: 3, records })

const ranges = () => {
  const r = new RetiredRanges()
  r.add({ topic: "t", keyPrefix: "solana:", below: new Map([[3, 10]]) })
  return r
}

describe("RetiredRanges", () => {
  it("drops the prefix's records below the partition's bound, exactly at the bound", () => {
    const r = ranges()
    expect(r.retired("t", 3, 9, "solana:a")).toBe(true)
    expect(r.retired("t", 3, 10, "solana:a")).toBe(false) // the first record after the rebuild
    expect(r.retired("t", 3, 9, "hood:a")).toBe(false) // the other chain
    expect(r.retired("t", 4, 0, "solana:a")).toBe(false) // no bound recorded for that partition
    expect(r.retired("u", 3, 0, "solana:a")).toBe(false)
  })

  it("hands over the rest of a batch with the offset after the whole batch, even when nothing is left", () => {
    const r = ranges()
    const filtered = r.filter(batch(record(8, "solana:a"), record(9, "hood:b"), record(9, "solana:c")))
    expect(filtered.records.map((x) => x.offset)).toEqual([9])
    expect(filtered.nextOffset).toBe(10)
    const empty = r.filter(batch(record(8, "solana:a")))
    expect(empty.records).toEqual([])
    expect(empty.nextOffset).toBe(9)
    const untouched = batch(record(10, "solana:a"))
    expect(r.filter(untouched)).toBe(untouched)
    expect(new RetiredRanges().filter(batch(record(1, "solana:a"))).records).toHaveLength(1)
  })

  it("wraps a bus: subscribers see filtered batches, everything else passes through", async () => {
    const seen: BusBatch[] = []
    const inner = {
      subscribe: (_o: unknown, onBatch: (b: BusBatch) => Effect.Effect<void>) => onBatch(batch(record(1, "solana:a"), record(2, "hood:b"))),
      partitions: 16
    } as unknown as BusShape
    const bus = ranges().wrap(inner)
    expect(bus.partitions).toBe(16)
    await Effect.runPromise(bus.subscribe({ group: "g", topic: "t" }, (b) => Effect.sync(() => seen.push(b))) as Effect.Effect<void>)
    expect(seen.map((b) => b.records.map((x) => x.key))).toEqual([["hood:b"]])
    expect(seen[0]!.nextOffset).toBe(3)
  })
})
