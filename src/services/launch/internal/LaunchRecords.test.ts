/**
 * The stored Hood launch result read back as a typed view: the dev buy's outcomes and the platform
 * fee it paid (counted only when the fee leg landed); a result without a dev buy, or of another
 * shape, reads as none.
 */
import { describe, expect, it } from "vitest"
import { hoodFeePaid, storedDevBuy } from "./LaunchRecords.js"

const devBuy = { outcome: "landed", pendingSignature: null, feeOutcome: "landed", fee: { bps: 100, feeRaw: "12345", treasury: "0xT" }, amountInRaw: "1000" }

describe("the stored dev buy", () => {
  it("reads the outcomes and the fee of a stored result", () => {
    const read = storedDevBuy({ chain: "hood", devBuy })
    expect(read).toEqual({ outcome: "landed", pendingSignature: null, feeOutcome: "landed", fee: { feeRaw: "12345" } })
    expect(hoodFeePaid(read)).toEqual({ quoteAsset: "eth", feeRaw: 12345n })
  })

  it("a fee leg that did not land pays nothing; no dev buy, or one of another shape, is none", () => {
    expect(hoodFeePaid(storedDevBuy({ devBuy: { ...devBuy, feeOutcome: "not_sent" } }))).toBeNull()
    expect(storedDevBuy({ chain: "hood" })).toBeUndefined()
    expect(storedDevBuy(null)).toBeUndefined()
    expect(storedDevBuy({ devBuy: { outcome: 7 } })).toBeUndefined()
    expect(hoodFeePaid(undefined)).toBeNull()
  })
})
