import { describe, expect, it } from "vitest"
import { approvalHashOf, approvalStanding } from "./TradeApprovalStore.js"

const built = { state: "built" as const, signedTransaction: null }
const sending = { state: "sending" as const, signedTransaction: "0xabc" }

describe("approvalStanding", () => {
  it("a settled row stays settled whatever the chain says", () => {
    expect(approvalStanding({ state: "approved", signedTransaction: null }, undefined, { _tag: "NoReceipt", neverLands: true })).toBe("approved")
    expect(approvalStanding({ state: "lapsed", signedTransaction: null }, { state: "open", signature: null }, undefined)).toBe("lapsed")
  })
  it("a receipt decides: succeeded approved, reverted lapsed", () => {
    expect(approvalStanding(built, { state: "signed", signature: "0x1" }, { _tag: "Receipt", success: true })).toBe("approved")
    expect(approvalStanding(sending, { state: "signed", signature: "0x1" }, { _tag: "Receipt", success: false })).toBe("lapsed")
  })
  it("no receipt: lapsed once its nonce passed; else in flight, resent only when the row keeps the signed bytes", () => {
    expect(approvalStanding(built, { state: "signed", signature: "0x1" }, { _tag: "NoReceipt", neverLands: true })).toBe("lapsed")
    expect(approvalStanding(built, { state: "signed", signature: "0x1" }, { _tag: "NoReceipt", neverLands: false })).toBe("in_flight")
    expect(approvalStanding(sending, { state: "signed", signature: "0x1" }, { _tag: "NoReceipt", neverLands: false })).toBe("resend")
  })
  it("nothing signed: an open claim is checked for expiry; an expired or unknown claim lapses", () => {
    expect(approvalStanding(built, { state: "open", signature: null }, undefined)).toBe("expire")
    expect(approvalStanding(built, { state: "expired", signature: null }, undefined)).toBe("lapsed")
    expect(approvalStanding(built, undefined, undefined)).toBe("lapsed")
  })
  it("the verdict's hash: the submitted bytes', else the relay's on the claim, else none", () => {
    expect(approvalHashOf({ signature: "0xa" }, { signature: "0xb" })).toBe("0xa")
    expect(approvalHashOf({ signature: null }, { signature: "0xb" })).toBe("0xb")
    expect(approvalHashOf({ signature: null }, { signature: "" })).toBeUndefined()
    expect(approvalHashOf({ signature: null }, undefined)).toBeUndefined()
  })
})
