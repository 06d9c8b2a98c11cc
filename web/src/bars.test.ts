import type { UTCTimestamp } from "lightweight-charts"
import { describe, expect, it } from "vitest"
import { type Bar, liveBar } from "./bars.js"

const bar = (time: number, open: number, high: number, low: number, close: number): Bar => ({ time: time as UTCTimestamp, open, high, low, close })

describe("liveBar", () => {
  const last = bar(120, 2, 3, 1, 2)

  it("moves the newest bar's close and widens its range for a trade in its bucket", () => {
    expect(liveBar(last, 5, 150_000, 60)).toEqual(bar(120, 2, 5, 1, 5))
    expect(liveBar(last, 0.5, 179_999, 60)).toEqual(bar(120, 2, 3, 0.5, 0.5))
    expect(liveBar(last, 2.5, 120_000, 60)).toEqual(bar(120, 2, 3, 1, 2.5))
  })

  it("opens a new bar at the previous close for a trade in a later bucket", () => {
    expect(liveBar(last, 4, 180_000, 60)).toEqual(bar(180, 2, 4, 2, 4))
    expect(liveBar(last, 1, 600_000, 300)).toEqual(bar(600, 2, 2, 1, 1))
  })

  it("moves nothing without a bar, without a price, or for a trade older than the newest bar", () => {
    expect(liveBar(undefined, 4, 180_000, 60)).toBeUndefined()
    expect(liveBar(last, Number.NaN, 180_000, 60)).toBeUndefined()
    expect(liveBar(last, 4, 60_000, 60)).toBeUndefined()
  })
})
