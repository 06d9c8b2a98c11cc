import { describe, expect, it } from "vitest"
import { BATCH_HEADER_BYTES, RECORD_FRAMING_BYTES, sendSlices } from "./sendSlices.js"

const bytesOf = (sizes: ReadonlyArray<number>, [from, to]: readonly [number, number]) =>
  BATCH_HEADER_BYTES + sizes.slice(from, to).reduce((n, s) => n + s + RECORD_FRAMING_BYTES, 0)

describe("sendSlices", () => {
  it("keeps a publish under the bound in one send", () => {
    expect(sendSlices([10, 20, 30], 1024)).toEqual([[0, 3]])
    expect(sendSlices([], 1024)).toEqual([])
  })

  it("cuts at the bound exactly: a slice that fits to the byte stays whole, one byte more starts the next", () => {
    const sizes = [100, 100, 100]
    const exact = bytesOf(sizes, [0, 2])
    expect(sendSlices(sizes, exact)).toEqual([[0, 2], [2, 3]])
    expect(sendSlices(sizes, exact - 1)).toEqual([[0, 1], [1, 2], [2, 3]])
  })

  it("covers every record once, in order, every slice within the bound unless it holds one record", () => {
    const sizes = Array.from({ length: 500 }, (_, i) => ((i * 7919) % 9000) + 1)
    const max = 64 * 1024
    const slices = sendSlices(sizes, max)
    expect(slices.flatMap(([from, to]) => Array.from({ length: to - from }, (_, k) => from + k))).toEqual(sizes.map((_, i) => i))
    for (const s of slices) if (s[1] - s[0] > 1) expect(bytesOf(sizes, s)).toBeLessThanOrEqual(max)
    // A record over the bound alone is sent alone (the adapter refuses it before, by maxRecordBytes).
    expect(sendSlices([10, 5000, 10], 1000)).toEqual([[0, 1], [1, 2], [2, 3]])
  })
})
