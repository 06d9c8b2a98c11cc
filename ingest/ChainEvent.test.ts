import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { CurveMigrated, hoodPosition, solanaPosition, Trade } from "./ChainEvent.js"
import { decodeChainEvent, encodeChainEvent } from "./ChainEventCodec.js"

describe("ChainEvent", () => {
  it("round-trips through the bus encoding with bigints intact", () => {
    const trade = new Trade({
      id: "solana:sig:0", position: solanaPosition(12n, 3, 1), chain: "solana", mint: "M", timestampMs: 1_700_000_000_000,
      signature: "sig", venue: "curve", side: "buy", trader: "T", amountInRaw: 10n ** 18n + 1n, amountOutRaw: 5n, feeRaw: 1n,
      refundRaw: 0n, quoteConsumedRaw: 10n ** 18n + 1n, quoteReserveRaw: 2n, tokenReserveRaw: 3n, realQuoteRaw: 4n, crossesGraduation: false
    })
    const decoded = Either.getOrThrow(decodeChainEvent(encodeChainEvent(trade)))
    expect(decoded).toEqual(trade)
    const migrated = new CurveMigrated({
      id: "hood:0xab:2", position: hoodPosition(7n, 2), chain: "hood", mint: "0xm", timestampMs: 1, signature: "0xab",
      pool: null, quoteRaw: 1n, tokensRaw: 2n, feeBps: 30
    })
    expect(Either.getOrThrow(decodeChainEvent(encodeChainEvent(migrated)))).toEqual(migrated)
  })

  it("refuses bytes that are not an event without throwing", () => {
    expect(Either.isLeft(decodeChainEvent(new TextEncoder().encode("{}")))).toBe(true)
    expect(Either.isLeft(decodeChainEvent(new Uint8Array([0xff, 0x00])))).toBe(true)
  })

  it("orders positions as the chain does", () => {
    const ps = [solanaPosition(10n, 2, 0), solanaPosition(9n, 100, 3), solanaPosition(10n, 1, 5), solanaPosition(10n, 2, 1)]
    expect([...ps].sort()).toEqual([ps[1], ps[2], ps[0], ps[3]])
    expect(hoodPosition(100n, 1) < hoodPosition(100n, 2)).toBe(true)
    expect(hoodPosition(99n, 9) < hoodPosition(100n, 0)).toBe(true)
  })
})
