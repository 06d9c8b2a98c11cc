import { describe, expect, it } from "vitest"
import { devBuyWatchMaxMs, feeAfterLateBuy, txOutcome, type TxObservation, watchDone } from "./DevBuyOutcome.js"

const base: TxObservation = { receipt: null, hashReturned: true, txNonce: 3, minedNonce: 3, sentAtMs: 1_000, nowMs: 2_000, watchMaxMs: devBuyWatchMaxMs }
const late = { nowMs: base.sentAtMs + devBuyWatchMaxMs }

describe("txOutcome (spec 2.5 devBuy.outcome)", () => {
  it("landed: a success receipt, at any time", () => {
    expect(txOutcome({ ...base, receipt: "success" })).toBe("landed")
    expect(txOutcome({ ...base, ...late, receipt: "success", minedNonce: 9 })).toBe("landed")
  })
  it("reverted: a status-0 receipt", () => {
    expect(txOutcome({ ...base, receipt: "reverted", minedNonce: 4 })).toBe("reverted")
  })
  it("pending: sent with its hash, no receipt yet, before the deadline (even once the nonce moved on)", () => {
    expect(txOutcome(base)).toBe("pending")
    expect(txOutcome({ ...base, minedNonce: 4, nowMs: base.sentAtMs + devBuyWatchMaxMs - 1 })).toBe("pending")
  })
  it("unknown: the send was attempted but no hash came back, no receipt", () => {
    expect(txOutcome({ ...base, hashReturned: false })).toBe("unknown")
  })
  it("lapsed: the nonce was used and no receipt within the 24 hours", () => {
    expect(txOutcome({ ...base, ...late, minedNonce: 4 })).toBe("lapsed")
    expect(txOutcome({ ...base, ...late, hashReturned: false, minedNonce: 4 })).toBe("lapsed")
  })
  it("an unused nonce at the deadline proves nothing: still pending or unknown, and the watcher stops", () => {
    const o = { ...base, ...late }
    expect(txOutcome(o)).toBe("pending")
    expect(txOutcome({ ...o, hashReturned: false })).toBe("unknown")
    expect(watchDone(o, txOutcome(o))).toBe(true)
    expect(watchDone(base, txOutcome(base))).toBe(false)
  })
  it("a buy that lands after the run forgoes a fee that was never sent; a sent fee keeps its outcome", () => {
    expect(feeAfterLateBuy("landed", "not_sent")).toBe("forgone")
    expect(feeAfterLateBuy("landed", "landed")).toBe("landed")
    expect(feeAfterLateBuy("reverted", "not_sent")).toBe("not_sent")
  })
})
