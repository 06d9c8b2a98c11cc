/**
 * The sequenced Hood TEE operation, driven through `step` (docs/decisions.md "Self-signed launches").
 *
 *   leg state   event                          next                      test
 *   pending  ──Signed (the next leg only)──▶  sent (hash recorded)       "signing"
 *   sent     ──Mined───────────────────────▶  mined, nextLeg advances    "mining"
 *   sent     ──Reverted (createCurve)──────▶  reverted, operation failed "createCurve reverted"
 *   sent     ──Reverted (fee)──────────────▶  reverted                   "fee reverted, reissued"
 *   reverted ──Reissued (fee only)─────────▶  pending, fresh nonce/claim "fee reverted, reissued"
 *   pending  ──Reissued (a later leg)──────▶  pending, next nonce/claim  "a later leg still pending moves ..."
 *   sent     ──Reverted (dev buy)──────────▶  reverted, settled (final)  "dev buy reverted"
 *   pending  ──Landed (not createCurve)────▶  mined, its hash recorded    "landed outside the service"
 *   operation: every leg mined ──Recorded──▶  confirmed                  "recorded"
 *   anything else: the same object                                       "refusals"
 */
import { describe, expect, it } from "vitest"
import { type HoodOperation, newOperation, step } from "./HoodOperation.js"

const leg = (kind: "createCurve" | "feeTransfer" | "devBuy", nonce: number) => ({
  kind,
  to: "0x0000000000000000000000000000000000000001",
  data: "0x",
  value: "0",
  nonce,
  unsignedTransaction: `0x0${nonce}`,
  claimId: `clm_${nonce}`,
  walletId: "wal_1"
})

const op = (): HoodOperation => newOperation("op_1", [leg("createCurve", 0), leg("feeTransfer", 1), leg("devBuy", 2)])

describe("HoodOperation", () => {
  it("a new operation awaits the first leg's signature", () => {
    expect(op()).toMatchObject({ state: "awaiting_signature", nextLeg: 0 })
    expect(op().legs.map((l) => [l.index, l.status, l.txHash])).toEqual([[0, "pending", null], [1, "pending", null], [2, "pending", null]])
  })

  it("signing: only the next leg, only while pending, records its hash", () => {
    const signed = step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa" })
    expect(signed).toMatchObject({ state: "confirming", nextLeg: 0 })
    expect(signed.legs[0]).toMatchObject({ status: "sent", txHash: "0xaa" })
    const o = op()
    expect(step(o, { _tag: "Signed", leg: 1, txHash: "0xbb" })).toBe(o)
    expect(step(signed, { _tag: "Signed", leg: 0, txHash: "0xcc" })).toBe(signed)
  })

  it("mining: a sent leg mined moves nextLeg on; every leg mined leaves nextLeg null", () => {
    let o = op()
    for (const i of [0, 1, 2]) {
      o = step(step(o, { _tag: "Signed", leg: i, txHash: `0x${i}` }), { _tag: "Mined", leg: i })
      expect(o.nextLeg).toBe(i === 2 ? null : i + 1)
    }
    expect(o.state).toBe("confirming")
  })

  it("createCurve reverted: the operation fails and nothing moves it again", () => {
    const failed = step(step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Reverted", leg: 0 })
    expect(failed.state).toBe("failed")
    expect(step(failed, { _tag: "Mined", leg: 0 })).toBe(failed)
    expect(step(failed, { _tag: "Reissued", leg: 0, unsignedTransaction: "0x09", nonce: 9, claimId: "clm_9" })).toBe(failed)
  })

  it("fee reverted, reissued: pending again on a fresh nonce and claim, then it can be signed", () => {
    let o = step(step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Mined", leg: 0 })
    o = step(step(o, { _tag: "Signed", leg: 1, txHash: "0xbb" }), { _tag: "Reverted", leg: 1 })
    expect([o.state, o.nextLeg, o.legs[1]?.status]).toEqual(["awaiting_signature", 1, "reverted"])
    expect(step(o, { _tag: "Signed", leg: 1, txHash: "0xcc" })).toBe(o)
    o = step(o, { _tag: "Reissued", leg: 1, unsignedTransaction: "0x05", nonce: 5, claimId: "clm_5" })
    expect(o.legs[1]).toMatchObject({ status: "pending", txHash: null, nonce: 5, claimId: "clm_5", unsignedTransaction: "0x05" })
    expect(step(o, { _tag: "Signed", leg: 1, txHash: "0xdd" }).legs[1]).toMatchObject({ status: "sent", txHash: "0xdd" })
  })

  it("a later leg still pending moves to a new nonce and claim when the fee before it is reissued", () => {
    const o = step(op(), { _tag: "Reissued", leg: 2, unsignedTransaction: "0x07", nonce: 7, claimId: "clm_7" })
    expect(o.legs[2]).toMatchObject({ status: "pending", nonce: 7, claimId: "clm_7" })
    // createCurve is never reissued.
    const first = op()
    expect(step(first, { _tag: "Reissued", leg: 0, unsignedTransaction: "0x07", nonce: 7, claimId: "clm_7" })).toBe(first)
  })

  it("signing records the signed bytes beside the hash (rebroadcast after a crash)", () => {
    expect(step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa", signedTransaction: "0xsigned" }).legs[0]).toMatchObject({ txHash: "0xaa", signedTransaction: "0xsigned" })
  })

  it("dev buy reverted: final (rule 4), the operation can be recorded; it is never reissued", () => {
    let o = op()
    for (const i of [0, 1]) o = step(step(o, { _tag: "Signed", leg: i, txHash: `0x${i}` }), { _tag: "Mined", leg: i })
    o = step(step(o, { _tag: "Signed", leg: 2, txHash: "0x2" }), { _tag: "Reverted", leg: 2 })
    expect([o.state, o.nextLeg]).toEqual(["confirming", null])
    expect(step(o, { _tag: "Reissued", leg: 2, unsignedTransaction: "0x09", nonce: 9, claimId: "clm_9" })).toBe(o)
    expect(step(o, { _tag: "Recorded" }).state).toBe("confirmed")
  })

  it("landed outside the service: a pending later leg the relay signed mined with its hash; only the reverted fee is reissued, then the operation records", () => {
    let o = step(step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Mined", leg: 0 })
    o = step(step(o, { _tag: "Signed", leg: 1, txHash: "0xbb" }), { _tag: "Reverted", leg: 1 })
    o = step(o, { _tag: "Landed", leg: 2, txHash: "0xbuy" })
    expect(o.legs[2]).toMatchObject({ status: "mined", txHash: "0xbuy" })
    expect([o.state, o.nextLeg]).toEqual(["awaiting_signature", 1])
    // A mined leg is never reissued; the fee is.
    expect(step(o, { _tag: "Reissued", leg: 2, unsignedTransaction: "0x09", nonce: 9, claimId: "clm_9" })).toBe(o)
    o = step(o, { _tag: "Reissued", leg: 1, unsignedTransaction: "0x05", nonce: 5, claimId: "clm_5" })
    o = step(step(o, { _tag: "Signed", leg: 1, txHash: "0xdd" }), { _tag: "Mined", leg: 1 })
    expect([o.state, o.nextLeg]).toEqual(["confirming", null])
    expect(step(o, { _tag: "Recorded" }).state).toBe("confirmed")
  })

  it("landed: refused for createCurve and for a leg not pending (the same object)", () => {
    const o = op()
    expect(step(o, { _tag: "Landed", leg: 0, txHash: "0xaa" })).toBe(o)
    const sent = step(step(o, { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Mined", leg: 0 })
    const feeSent = step(sent, { _tag: "Signed", leg: 1, txHash: "0xbb" })
    expect(step(feeSent, { _tag: "Landed", leg: 1, txHash: "0xcc" })).toBe(feeSent)
    expect(step(feeSent, { _tag: "Landed", leg: 7, txHash: "0xcc" })).toBe(feeSent)
  })

  it("recorded: only once every leg is mined", () => {
    const o = op()
    expect(step(o, { _tag: "Recorded" })).toBe(o)
    let done = o
    for (const i of [0, 1, 2]) done = step(step(done, { _tag: "Signed", leg: i, txHash: `0x${i}` }), { _tag: "Mined", leg: i })
    expect(step(done, { _tag: "Recorded" }).state).toBe("confirmed")
  })

  it("refusals: an unknown leg, mining a pending leg, reverting a mined one: the same object", () => {
    const o = op()
    expect(step(o, { _tag: "Mined", leg: 7 })).toBe(o)
    expect(step(o, { _tag: "Mined", leg: 0 })).toBe(o)
    const mined = step(step(o, { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Mined", leg: 0 })
    expect(step(mined, { _tag: "Reverted", leg: 0 })).toBe(mined)
  })
})
