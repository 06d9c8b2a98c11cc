/**
 * A staking reward claim's states (spec document 2, 3.4) through `step`:
 *
 *   (none) ─Claim(unclaimed)─▶ NewAttempt ─Attempt─▶ claiming ─Observed(landed)─▶ claimed
 *   claiming ─Claim─▶ Observe ─ pending ▶ refused pending (REWARD_CLAIM_PENDING)
 *   claiming ─Observed(reverted | never_lands)─▶ retry ─Claim(unclaimed)─▶ NewAttempt
 *   claimed ─Claim─▶ the saved signature ; (none)/retry ─Claim(chain claimed)─▶ already claimed
 *
 * Transitions and the tests that cover them:
 * - (none) → claiming: "a first claim is a new attempt, recorded before it is sent"
 * - claiming → claimed: "a landed claim is claimed and answers its signature"
 * - claiming (retry of the same id): "a retry while claiming observes the stored signature; pending is refused"
 * - claiming → retry → claiming: "a claim that can no longer pay makes room for one new attempt"
 * - claimed: "a claimed reward answers the saved signature; one claimed elsewhere is already claimed"
 */
import { describe, expect, it } from "vitest"
import { type ClaimState, step } from "./RewardClaimMachine.js"

describe("reward claim machine", () => {
  it("a first claim is a new attempt, recorded before it is sent", () => {
    expect(step(undefined, { _tag: "Claim", chainClaimed: false })).toEqual([undefined, [{ _tag: "NewAttempt" }]])
    expect(step(undefined, { _tag: "Attempt", signature: "s1" })).toEqual([{ _tag: "claiming", signature: "s1" }, [{ _tag: "Send" }]])
    // A second attempt on a claiming row changes nothing and sends nothing.
    const claiming: ClaimState = { _tag: "claiming", signature: "s1" }
    expect(step(claiming, { _tag: "Attempt", signature: "s2" })).toEqual([claiming, []])
  })

  it("a landed claim is claimed and answers its signature", () => {
    expect(step({ _tag: "claiming", signature: "s1" }, { _tag: "Observed", outcome: "landed" })).toEqual([
      { _tag: "claimed", signature: "s1" },
      [{ _tag: "Answer", signature: "s1" }]
    ])
  })

  it("a retry while claiming observes the stored signature; pending is refused", () => {
    const claiming: ClaimState = { _tag: "claiming", signature: "s1" }
    expect(step(claiming, { _tag: "Claim", chainClaimed: false })).toEqual([claiming, [{ _tag: "Observe", signature: "s1" }]])
    expect(step(claiming, { _tag: "Claim", chainClaimed: true })).toEqual([claiming, [{ _tag: "Observe", signature: "s1" }]])
    expect(step(claiming, { _tag: "Observed", outcome: "pending" })).toEqual([claiming, [{ _tag: "Refuse", reason: "pending" }]])
  })

  it("a claim that can no longer pay makes room for one new attempt", () => {
    for (const outcome of ["reverted", "never_lands"] as const) {
      const [retry, out] = step({ _tag: "claiming", signature: "s1" }, { _tag: "Observed", outcome })
      expect([retry, out]).toEqual([{ _tag: "retry", signature: "s1" }, [{ _tag: "Refuse", reason: "claim_failed" }]])
      expect(step(retry, { _tag: "Claim", chainClaimed: false })).toEqual([retry, [{ _tag: "NewAttempt" }]])
      expect(step(retry, { _tag: "Attempt", signature: "s2" })).toEqual([{ _tag: "claiming", signature: "s2" }, [{ _tag: "Send" }]])
      expect(step(retry, { _tag: "Claim", chainClaimed: true })).toEqual([retry, [{ _tag: "Refuse", reason: "already_claimed" }]])
    }
  })

  it("a claimed reward answers the saved signature; one claimed elsewhere is already claimed", () => {
    const claimed: ClaimState = { _tag: "claimed", signature: "s1" }
    expect(step(claimed, { _tag: "Claim", chainClaimed: true })).toEqual([claimed, [{ _tag: "Answer", signature: "s1" }]])
    expect(step(claimed, { _tag: "Observed", outcome: "reverted" })).toEqual([claimed, []])
    expect(step(undefined, { _tag: "Claim", chainClaimed: true })).toEqual([undefined, [{ _tag: "Refuse", reason: "already_claimed" }]])
  })
})
