/**
 * The staking operation's states (spec document 2, 3.3) through `step`:
 *
 *   (none) ─Built(main)──▶ sending ─Observed(landed)──▶ confirmed
 *                            │ Observed(reverted | never_lands) ▶ failed
 *   (none) ─Built(linked)─▶ built ─Submit(exact message)──▶ submitted ─Observed(landed)─▶ confirmed
 *                            │ Confirm(landed, exact message) ─────────────────────────▶ confirmed
 *                            │ Expire ▶ expired ─Confirm(landed)──▶ confirmed
 *   submitted ─Observed(reverted | never_lands)─▶ failed
 *
 * Transitions and the tests that cover them:
 * - (none) → sending: "an embedded build is recorded as sending and broadcast"
 * - (none) → built: "a linked or TEE build is recorded as built and sends nothing"
 * - built → submitted: "submit with the exact message broadcasts once; a second submit sends nothing"
 * - built → confirmed: "confirm of a landed exact message confirms without sending"
 * - built → expired → confirmed: "an expired build refuses submit, and confirms a late landing"
 * - sending/submitted → confirmed | failed: "the chain's answer settles a sent transaction"
 * - refusals: "wrong message, not landed, pending and failed are refused without a change"
 * - repeated builds: "a repeated build of a failed or expired operation is refused: a new id is needed"
 * - replays: "a replay of a confirmed operation answers it as it stands"
 */
import { describe, expect, it } from "vitest"
import { type OperationState, step } from "./StakingMachine.js"

const built: OperationState = { _tag: "built", expiresAtMs: 1_000 }

describe("staking operation machine", () => {
  it("an embedded build is recorded as sending and broadcast", () => {
    expect(step(undefined, { _tag: "Built", payer: "main", signature: "s1" })).toEqual([{ _tag: "sending", signature: "s1" }, [{ _tag: "Broadcast" }]])
  })

  it("a linked or TEE build is recorded as built and sends nothing", () => {
    for (const payer of ["linked", "tee"] as const) {
      expect(step(undefined, { _tag: "Built", payer, expiresAtMs: 1_000 })).toEqual([built, []])
    }
  })

  it("submit with the exact message broadcasts once; a second submit sends nothing", () => {
    const [s1, out1] = step(built, { _tag: "Submit", signature: "s2", exactMessage: true, nowMs: 999 })
    expect([s1, out1]).toEqual([{ _tag: "submitted", signature: "s2" }, [{ _tag: "Broadcast" }]])
    const [s2, out2] = step(s1, { _tag: "Submit", signature: "s2", exactMessage: true, nowMs: 999 })
    expect(s2).toBe(s1)
    expect(out2).toEqual([{ _tag: "Refuse", reason: "pending" }])
  })

  it("confirm of a landed exact message confirms without sending", () => {
    expect(step(built, { _tag: "Confirm", signature: "s3", exactMessage: true, landed: "landed" })).toEqual([
      { _tag: "confirmed", signature: "s3" },
      [{ _tag: "RecordConfirmed", signature: "s3" }]
    ])
  })

  it("an expired build refuses submit, and confirms a late landing", () => {
    const [expired, out] = step(built, { _tag: "Submit", signature: "s4", exactMessage: true, nowMs: 1_000 })
    expect([expired, out]).toEqual([{ _tag: "expired" }, [{ _tag: "Refuse", reason: "build_expired" }]])
    expect(step(built, { _tag: "Expire", nowMs: 999 })[0]).toBe(built)
    expect(step(built, { _tag: "Expire", nowMs: 1_000 })).toEqual([{ _tag: "expired" }, []])
    expect(step(expired, { _tag: "Submit", signature: "s4", exactMessage: true, nowMs: 1 })[1]).toEqual([{ _tag: "Refuse", reason: "build_expired" }])
    expect(step(expired, { _tag: "Confirm", signature: "s4", exactMessage: true, landed: "landed" })).toEqual([
      { _tag: "confirmed", signature: "s4" },
      [{ _tag: "RecordConfirmed", signature: "s4" }]
    ])
  })

  it("the chain's answer settles a sent transaction", () => {
    for (const sent of [{ _tag: "sending", signature: "s5" }, { _tag: "submitted", signature: "s5" }] as const) {
      expect(step(sent, { _tag: "Observed", outcome: "pending" })[0]).toBe(sent)
      expect(step(sent, { _tag: "Observed", outcome: "landed" })).toEqual([{ _tag: "confirmed", signature: "s5" }, [{ _tag: "RecordConfirmed", signature: "s5" }]])
      expect(step(sent, { _tag: "Observed", outcome: "reverted", error: "custom 6003" })[0]).toEqual({ _tag: "failed", signature: "s5", error: "custom 6003" })
      expect(step(sent, { _tag: "Observed", outcome: "never_lands" })[0]).toMatchObject({ _tag: "failed", signature: "s5" })
    }
    // Observations of anything not in flight change nothing.
    expect(step(built, { _tag: "Observed", outcome: "landed" })[0]).toBe(built)
  })

  it("wrong message, not landed, pending and failed are refused without a change", () => {
    expect(step(built, { _tag: "Submit", signature: "x", exactMessage: false, nowMs: 1 })).toEqual([built, [{ _tag: "Refuse", reason: "wrong_message" }]])
    expect(step(built, { _tag: "Confirm", signature: "x", exactMessage: false, landed: "landed" })).toEqual([built, [{ _tag: "Refuse", reason: "wrong_message" }]])
    expect(step(built, { _tag: "Confirm", signature: "x", exactMessage: true, landed: "reverted" })).toEqual([built, [{ _tag: "Refuse", reason: "not_landed" }]])
    expect(step(built, { _tag: "Confirm", signature: "x", exactMessage: true, landed: "pending" })).toEqual([built, [{ _tag: "Refuse", reason: "pending" }]])
    const sending: OperationState = { _tag: "sending", signature: "s" }
    expect(step(sending, { _tag: "Confirm", signature: "s", exactMessage: true, landed: "landed" })).toEqual([sending, [{ _tag: "Refuse", reason: "pending" }]])
    const failed: OperationState = { _tag: "failed", signature: "s", error: "e" }
    expect(step(failed, { _tag: "Submit", signature: "s", exactMessage: true, nowMs: 1 })).toEqual([failed, [{ _tag: "Refuse", reason: "failed" }]])
    expect(step(undefined, { _tag: "Submit", signature: "s", exactMessage: true, nowMs: 1 })).toEqual([undefined, [{ _tag: "Refuse", reason: "not_built" }]])
    expect(step(undefined, { _tag: "Confirm", signature: "s", exactMessage: true, landed: "landed" })).toEqual([undefined, [{ _tag: "Refuse", reason: "not_built" }]])
  })

  it("a repeated build of a failed or expired operation is refused: a new id is needed", () => {
    const failed: OperationState = { _tag: "failed", signature: "s", error: "e" }
    expect(step(failed, { _tag: "Built", payer: "main", signature: "other" })).toEqual([failed, [{ _tag: "Refuse", reason: "failed" }]])
    const expired: OperationState = { _tag: "expired" }
    expect(step(expired, { _tag: "Built", payer: "linked", expiresAtMs: 5 })).toEqual([expired, [{ _tag: "Refuse", reason: "build_expired" }]])
    const sending: OperationState = { _tag: "sending", signature: "s" }
    expect(step(sending, { _tag: "Built", payer: "main", signature: "other" })).toEqual([sending, [{ _tag: "Replay" }]])
  })

  it("a replay of a confirmed operation answers it as it stands", () => {
    const done: OperationState = { _tag: "confirmed", signature: "s" }
    expect(step(done, { _tag: "Built", payer: "main", signature: "other" })).toEqual([done, [{ _tag: "Replay" }]])
    expect(step(done, { _tag: "Submit", signature: "s", exactMessage: true, nowMs: 1 })).toEqual([done, [{ _tag: "Replay" }]])
    expect(step(done, { _tag: "Confirm", signature: "s", exactMessage: true, landed: "landed" })).toEqual([done, [{ _tag: "Replay" }]])
  })
})
