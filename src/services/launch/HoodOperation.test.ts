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
 *
 *   the pending nextLeg, from its sign claim (pendingLegVerdict)
 *   unsigned, still signable ──────────────▶  Wait                       "pending claim: signable or in flight"
 *   unsigned, never signable ──────────────▶  Reissue at the same nonce  "pending claim: expired unsigned"
 *   signed, bytes mined ───────────────────▶  Landed                     "pending claim: signed bytes landed"
 *   signed, bytes reverted or nonce used ──▶  Signed + Reverted          "pending claim: signed bytes failed"
 *   signed, bytes can still land ──────────▶  Wait (never reissued)      "pending claim: signable or in flight"
 *   createCurve, not pending, settled op ──▶  Wait                       "pending claim: not decided here"
 *   anything else: the same object                                       "refusals"
 */
import { describe, expect, it } from "vitest"
import { eventsOf, type HoodOperation, newOperation, pendingLegVerdict, step } from "./HoodOperation.js"

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
  describe("the pending next leg's claim (pendingLegVerdict)", () => {
    const createMined = () => step(step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Mined", leg: 0 })
    const feeMined = () => step(step(createMined(), { _tag: "Signed", leg: 1, txHash: "0xbb" }), { _tag: "Mined", leg: 1 })

    it("pending claim: expired unsigned: the fee leg, then the buy leg, reissued at their own nonce; the reissue is a new claim for the same leg", () => {
      const o = createMined()
      const v = pendingLegVerdict(o, { _tag: "Unsigned", signable: false })
      expect(v).toEqual({ _tag: "Reissue", leg: 1, nonce: 1 })
      const reissued = step(o, { _tag: "Reissued", leg: 1, unsignedTransaction: "0x11", nonce: 1, claimId: "clm_new" })
      expect(reissued.legs[1]).toMatchObject({ status: "pending", nonce: 1, claimId: "clm_new", unsignedTransaction: "0x11" })
      expect([reissued.state, reissued.nextLeg, reissued.legs[2]?.nonce]).toEqual(["awaiting_signature", 1, 2])
      expect(pendingLegVerdict(feeMined(), { _tag: "Unsigned", signable: false })).toEqual({ _tag: "Reissue", leg: 2, nonce: 2 })
    })

    it("pending claim: signed bytes landed: Landed, the leg mined with the claim's hash; the last leg landed leaves nothing to sign", () => {
      const v = pendingLegVerdict(feeMined(), { _tag: "Signed", txHash: "0xbuy", onChain: "success" })
      expect(v).toEqual({ _tag: "Landed", leg: 2, txHash: "0xbuy" })
      if (v._tag !== "Landed") throw new Error("not landed")
      const o = eventsOf(v).reduce(step, feeMined())
      expect(o.legs[2]).toMatchObject({ status: "mined", txHash: "0xbuy" })
      expect([o.state, o.nextLeg]).toEqual(["confirming", null])
      const fee = pendingLegVerdict(createMined(), { _tag: "Signed", txHash: "0xfee", onChain: "success" })
      expect(fee).toEqual({ _tag: "Landed", leg: 1, txHash: "0xfee" })
    })

    it("pending claim: signed bytes failed (reverted, or the nonce used on evidence): recorded sent and reverted; a fee leg can then be reissued, a buy is final", () => {
      for (const onChain of ["reverted", "used"] as const) {
        const feeV = pendingLegVerdict(createMined(), { _tag: "Signed", txHash: "0xfee", onChain })
        expect(feeV).toEqual({ _tag: "Failed", leg: 1, txHash: "0xfee" })
        if (feeV._tag !== "Failed") throw new Error("not failed")
        const fee = eventsOf(feeV).reduce(step, createMined())
        expect(fee.legs[1]).toMatchObject({ status: "reverted", txHash: "0xfee" })
        expect(step(fee, { _tag: "Reissued", leg: 1, unsignedTransaction: "0x15", nonce: 5, claimId: "clm_5" }).legs[1]).toMatchObject({ status: "pending", nonce: 5 })
        const buyV = pendingLegVerdict(feeMined(), { _tag: "Signed", txHash: "0xbuy", onChain })
        if (buyV._tag !== "Failed") throw new Error("not failed")
        const buy = eventsOf(buyV).reduce(step, feeMined())
        expect([buy.legs[2]?.status, buy.nextLeg, buy.state]).toEqual(["reverted", null, "confirming"])
      }
    })

    it("pending claim: signable or in flight: a claim the relay can still sign, or signed bytes that can still land, are never replaced", () => {
      expect(pendingLegVerdict(createMined(), { _tag: "Unsigned", signable: true })).toEqual({ _tag: "Wait" })
      expect(pendingLegVerdict(createMined(), { _tag: "Signed", txHash: "0xfee", onChain: "open" })).toEqual({ _tag: "Wait" })
      expect(pendingLegVerdict(feeMined(), { _tag: "Signed", txHash: "0xbuy", onChain: "open" })).toEqual({ _tag: "Wait" })
      expect(pendingLegVerdict(createMined(), undefined)).toEqual({ _tag: "Wait" })
    })

    it("pending claim: not decided here: createCurve (build again decides it), a sent or reverted next leg, a failed or confirmed operation", () => {
      const dead = { _tag: "Unsigned", signable: false } as const
      const landed = { _tag: "Signed", txHash: "0xcc", onChain: "success" } as const
      expect(pendingLegVerdict(op(), dead)).toEqual({ _tag: "Wait" })
      expect(pendingLegVerdict(op(), landed)).toEqual({ _tag: "Wait" })
      const feeSent = step(createMined(), { _tag: "Signed", leg: 1, txHash: "0xbb" })
      expect(pendingLegVerdict(feeSent, dead)).toEqual({ _tag: "Wait" })
      const feeReverted = step(feeSent, { _tag: "Reverted", leg: 1 })
      expect(pendingLegVerdict(feeReverted, dead)).toEqual({ _tag: "Wait" })
      const failed = step(step(op(), { _tag: "Signed", leg: 0, txHash: "0xaa" }), { _tag: "Reverted", leg: 0 })
      expect(pendingLegVerdict(failed, dead)).toEqual({ _tag: "Wait" })
      let done = op()
      for (const i of [0, 1, 2]) done = step(step(done, { _tag: "Signed", leg: i, txHash: `0x${i}` }), { _tag: "Mined", leg: i })
      expect(pendingLegVerdict(step(done, { _tag: "Recorded" }), landed)).toEqual({ _tag: "Wait" })
    })
  })
})
