/**
 * The transfer machine (main payer), each transition by name:
 *
 *   (none) ─Built──▶ sending ─Observed(landed)──────────────▶ confirmed   "built: sending, one Broadcast"
 *                      │                                                  "landed: confirmed, one Executed"
 *                      │ Observed(reverted | never_lands) ─▶ failed       "reverted / never lands: failed, nothing executed"
 *                      │ Observed(pending) ─────────────────▶ (same)      "pending changes nothing"
 *   row ─Built(same)──▶ (same): Pending / Replay / Refuse failed          "a replay never broadcasts again"
 *   row ─Built(other)─▶ (same): Refuse idempotency_conflict               "a changed body under the same id"
 *   settled ─Observed─▶ (same)                                            "a settled transfer never moves"
 *
 * The TEE payer:
 *   (none) ─Recorded──▶ built ─Sent──▶ sending                            "recorded: built, nothing broadcast; sent: sending, one Broadcast"
 *   built ─Recorded(same)──▶ (same): Replay; ─Built(same)──▶ Refuse built  "a repeat of a TEE build"
 *   sending, settled ─Sent──▶ (same), no output                            "a second Sent never broadcasts again"
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { step, type TransferEvent, type TransferState } from "./TransferMachine.js"

const built = (requestHash = "h1", signature = "sig1"): TransferEvent => ({ _tag: "Built", requestHash, signature })
const observed = (outcome: "landed" | "reverted" | "never_lands" | "pending"): TransferEvent => ({ _tag: "Observed", outcome })

describe("TransferMachine", () => {
  it("built: sending, one Broadcast", () => {
    expect(step(undefined, built())).toEqual([{ _tag: "sending", requestHash: "h1", signature: "sig1" }, [{ _tag: "Broadcast" }]])
  })

  it("landed: confirmed, one Executed", () => {
    const [sending] = step(undefined, built())
    expect(step(sending, observed("landed"))).toEqual([{ _tag: "confirmed", requestHash: "h1", signature: "sig1" }, [{ _tag: "Executed", signature: "sig1" }, { _tag: "SettleClaim", outcome: "confirmed" }]])
  })

  it("reverted / never lands: failed, nothing executed", () => {
    const [sending] = step(undefined, built())
    const [r, rOut] = step(sending, { _tag: "Observed", outcome: "reverted", error: "custom program error: 0x1" })
    expect(r).toEqual({ _tag: "failed", requestHash: "h1", signature: "sig1", error: "custom program error: 0x1" })
    expect(rOut).toEqual([{ _tag: "SettleClaim", outcome: "failed" }])
    const [n, nOut] = step(sending, observed("never_lands"))
    expect(n?._tag).toBe("failed")
    expect(nOut).toEqual([{ _tag: "SettleClaim", outcome: "failed" }])
  })

  it("pending changes nothing (the same state object)", () => {
    const [sending] = step(undefined, built())
    const [same, out] = step(sending, observed("pending"))
    expect(same).toBe(sending)
    expect(out).toEqual([])
  })

  it("a replay never broadcasts again: Pending while sending, Replay once confirmed, Refuse failed once failed", () => {
    const [sending] = step(undefined, built())
    expect(step(sending, built("h1", "sig-other"))).toEqual([sending, [{ _tag: "Pending" }]])
    const [confirmed] = step(sending, observed("landed"))
    expect(step(confirmed, built())).toEqual([confirmed, [{ _tag: "Replay" }]])
    const [failed] = step(sending, observed("reverted"))
    expect(step(failed, built())).toEqual([failed, [{ _tag: "Refuse", reason: "failed" }]])
  })

  it("a changed body under the same id: Refuse idempotency_conflict, in every state", () => {
    const [sending] = step(undefined, built())
    const [confirmed] = step(sending, observed("landed"))
    for (const s of [sending, confirmed]) expect(step(s, built("h2"))).toEqual([s, [{ _tag: "Refuse", reason: "idempotency_conflict" }]])
  })

  it("a settled transfer never moves", () => {
    const [sending] = step(undefined, built())
    const [confirmed] = step(sending, observed("landed"))
    for (const o of ["landed", "reverted", "never_lands", "pending"] as const) expect(step(confirmed, observed(o))).toEqual([confirmed, []])
    expect(step(undefined, observed("landed"))).toEqual([undefined, []])
  })

  it("recorded: built, nothing broadcast; sent: sending, one Broadcast", () => {
    const [b, out] = step(undefined, { _tag: "Recorded", requestHash: "h1" })
    expect(b).toEqual({ _tag: "built", requestHash: "h1" })
    expect(out).toEqual([])
    expect(step(b, { _tag: "Sent", signature: "sig1" })).toEqual([{ _tag: "sending", requestHash: "h1", signature: "sig1" }, [{ _tag: "Broadcast" }]])
  })

  it("a repeat of a TEE build: Replay for the build, Refuse built for a main-payer request, conflict for another body", () => {
    const [b] = step(undefined, { _tag: "Recorded", requestHash: "h1" })
    expect(step(b, { _tag: "Recorded", requestHash: "h1" })).toEqual([b, [{ _tag: "Replay" }]])
    expect(step(b, built())).toEqual([b, [{ _tag: "Refuse", reason: "built" }]])
    expect(step(b, { _tag: "Recorded", requestHash: "h2" })).toEqual([b, [{ _tag: "Refuse", reason: "idempotency_conflict" }]])
  })

  it("a second Sent never broadcasts again", () => {
    const [b] = step(undefined, { _tag: "Recorded", requestHash: "h1" })
    const [sending] = step(b, { _tag: "Sent", signature: "sig1" })
    expect(step(sending, { _tag: "Sent", signature: "sig2" })).toEqual([sending, []])
    const [confirmed] = step(sending, observed("landed"))
    expect(step(confirmed, { _tag: "Sent", signature: "sig1" })).toEqual([confirmed, []])
    expect(step(undefined, { _tag: "Sent", signature: "sig1" })).toEqual([undefined, []])
  })

  it("any sequence of events: at most one Broadcast and at most one Executed, Executed only after Broadcast; SettleClaim once, on entering a settled state", () => {
    const event: fc.Arbitrary<TransferEvent> = fc.oneof(
      fc.record({ _tag: fc.constant("Built" as const), requestHash: fc.constantFrom("h1", "h2"), signature: fc.constantFrom("s1", "s2") }),
      fc.record({ _tag: fc.constant("Observed" as const), outcome: fc.constantFrom("landed", "reverted", "never_lands", "pending") }),
      fc.record({ _tag: fc.constant("Recorded" as const), requestHash: fc.constantFrom("h1", "h2") }),
      fc.record({ _tag: fc.constant("Sent" as const), signature: fc.constantFrom("s1", "s2") })
    )
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    console.log(`TransferMachine property: FC_SEED=${seed}`)
    fc.assert(
      fc.property(fc.array(event, { maxLength: 30 }), (events) => {
        let state: TransferState | undefined
        let broadcasts = 0
        let executed = 0
        let settled = 0
        for (const e of events) {
          const [next, out] = step(state, e)
          // A transfer's sign claim follows it: SettleClaim exactly on an entry into confirmed or failed, with that outcome.
          const claims = out.filter((o) => o._tag === "SettleClaim")
          const entered = next !== undefined && next !== state && (next._tag === "confirmed" || next._tag === "failed")
          expect(claims).toEqual(entered ? [{ _tag: "SettleClaim", outcome: next._tag }] : [])
          settled += claims.length
          broadcasts += out.filter((o) => o._tag === "Broadcast").length
          for (const o of out) if (o._tag === "Executed") {
            executed++
            expect(broadcasts).toBe(1)
            expect(state?._tag).toBe("sending")
            expect(o.signature).toBe(state?._tag === "sending" ? state.signature : undefined)
          }
          if (state !== undefined && (state._tag === "confirmed" || state._tag === "failed")) expect(next).toBe(state)
          state = next
        }
        expect(broadcasts).toBeLessThanOrEqual(1)
        expect(executed).toBeLessThanOrEqual(1)
        expect(settled).toBeLessThanOrEqual(1)
      }),
      { seed, verbose: true }
    )
  })
})
