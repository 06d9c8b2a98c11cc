/**
 * The fee claim outcome (spec document 2, 3.7), from the calls' statuses:
 *
 *   all not_sent ▶ not_started ; all confirmed ▶ complete ; any submitted_unknown ▶ indeterminate ;
 *   otherwise ▶ partial
 *
 * Transitions and the tests that cover them:
 * - not_started: "nothing sent is not_started"
 * - complete: "every call confirmed is complete"
 * - indeterminate: "a call whose fate is unknown makes the claim indeterminate"
 * - partial: "some confirmed and some reverted or unsent is partial"
 */
import { describe, expect, it } from "vitest"
import { outcomeOf } from "./FeeClaimOutcome.js"

const calls = (...s: Array<"not_sent" | "submitted_unknown" | "confirmed" | "reverted">) => s.map((status) => ({ status }))

describe("fee claim outcome", () => {
  it("nothing sent is not_started", () => {
    expect(outcomeOf([])).toBe("not_started")
    expect(outcomeOf(calls("not_sent", "not_sent"))).toBe("not_started")
  })
  it("every call confirmed is complete", () => {
    expect(outcomeOf(calls("confirmed"))).toBe("complete")
    expect(outcomeOf(calls("confirmed", "confirmed", "confirmed"))).toBe("complete")
  })
  it("a call whose fate is unknown makes the claim indeterminate", () => {
    expect(outcomeOf(calls("confirmed", "submitted_unknown"))).toBe("indeterminate")
    expect(outcomeOf(calls("submitted_unknown", "not_sent"))).toBe("indeterminate")
  })
  it("some confirmed and some reverted or unsent is partial", () => {
    expect(outcomeOf(calls("confirmed", "reverted"))).toBe("partial")
    expect(outcomeOf(calls("confirmed", "not_sent"))).toBe("partial")
    expect(outcomeOf(calls("reverted"))).toBe("partial")
  })
})
