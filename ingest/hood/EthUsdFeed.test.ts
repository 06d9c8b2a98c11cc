import { describe, expect, it } from "vitest"
import { roundObservation } from "./EthUsdFeed.js"

describe("an AggregatorV3 round as an oracle observation", () => {
  it("is the answer at 10^-decimals, published at updatedAt, trading only when answered in its round with an update time", () => {
    const round = { roundId: 7n, answer: 312_345_678_901n, updatedAt: 1_790_000_000n, answeredInRound: 7n }
    expect(roundObservation(round, 8)).toEqual({ price: 312_345_678_901n, conf: 0n, exponent: -8, publishTimeMs: 1_790_000_000_000, trading: true })
    expect(roundObservation({ ...round, answeredInRound: 6n }, 8).trading).toBe(false)
    expect(roundObservation({ ...round, updatedAt: 0n }, 8).trading).toBe(false)
  })
})
