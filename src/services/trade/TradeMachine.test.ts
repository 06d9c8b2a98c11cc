/**
 * The agent trade's states through `step`:
 *
 *   (none) ─Signed──▶ sending ─Observed(landed, amountOut)──▶ executed
 *                       │ Observed(reverted | never_lands) ──▶ failed
 *   sending ─Signed──▶ sending (pending)   executed ─Signed──▶ executed (replay)   failed ─Signed──▶ failed
 *
 * Transitions and the tests that cover them:
 * - (none) → sending: "a signed trade is recorded as sending and broadcast once"
 * - sending → executed: "a landing settles the trade once, with the executed amount"
 * - sending → failed: "a revert or an expired blockhash fails the trade with its code"
 * - sending → sending: "a pending observation and a repeated id change nothing and send nothing"
 * - executed → executed, failed → failed: "a settled trade answers a repeat and ignores observations"
 * - (none) → built → sending: "a linked or TEE build is recorded built and leaves it once, on its proven signature"
 * - built → built: "a built trade answers its build again and refuses a main-payer repeat"
 * - built → sending (Found), built → failed (Lapsed): "a built trade the caller sent itself is watched; one that can never land fails unsent"
 * - exhaustive: "every state and event pair is total and sends at most once"
 */
import { describe, expect, it } from "vitest"
import { step, traced, type TradeEvent, type TradeState } from "./TradeMachine.js"

const built: TradeState = { _tag: "built" }
const sending: TradeState = { _tag: "sending", signature: "s1" }
const executed: TradeState = { _tag: "executed", signature: "s1", amountOutRaw: 42n }
const failed: TradeState = { _tag: "failed", signature: "s1", reason: "slippage_exceeded", error: "custom 6000" }

const events: ReadonlyArray<TradeEvent> = [
  { _tag: "Signed", signature: "s2" },
  { _tag: "Built" },
  { _tag: "Sent", signature: "s3" },
  { _tag: "Observed", outcome: "landed", amountOutRaw: 7n },
  { _tag: "Observed", outcome: "reverted", reason: "reverted", error: "e" },
  { _tag: "Observed", outcome: "reverted", reason: "slippage_exceeded", error: "e" },
  { _tag: "Observed", outcome: "never_lands" },
  { _tag: "Observed", outcome: "pending" },
  { _tag: "Found", signature: "s4" },
  { _tag: "Lapsed" }
]

describe("trade machine", () => {
  it("a signed trade is recorded as sending and broadcast once", () => {
    expect(step(undefined, { _tag: "Signed", signature: "s1" })).toEqual([sending, [{ _tag: "Broadcast" }]])
  })

  it("a landing settles the trade once, with the executed amount", () => {
    expect(step(sending, { _tag: "Observed", outcome: "landed", amountOutRaw: 42n })).toEqual([
      executed,
      [{ _tag: "RecordExecuted", signature: "s1", amountOutRaw: 42n }, { _tag: "SettleClaim", outcome: "confirmed" }]
    ])
    const [again, out] = step(executed, { _tag: "Observed", outcome: "landed", amountOutRaw: 42n })
    expect(again).toBe(executed)
    expect(out).toEqual([])
  })

  it("a revert or an expired blockhash fails the trade with its code", () => {
    expect(step(sending, { _tag: "Observed", outcome: "reverted", reason: "slippage_exceeded", error: "custom 6000" })).toEqual([failed, [{ _tag: "SettleClaim", outcome: "failed" }]])
    expect(step(sending, { _tag: "Observed", outcome: "reverted", reason: "reverted", error: "x" })[0]).toEqual({
      _tag: "failed",
      signature: "s1",
      reason: "reverted",
      error: "x"
    })
    expect(step(sending, { _tag: "Observed", outcome: "never_lands" })[0]).toMatchObject({ _tag: "failed", reason: "never_landed", signature: "s1" })
  })

  it("every entry into executed or failed settles the build's sign claim once, with the outcome; nothing else does", () => {
    const settles = (out: ReadonlyArray<{ _tag: string }>) => out.filter((o) => o._tag === "SettleClaim")
    expect(settles(step(sending, { _tag: "Observed", outcome: "landed", amountOutRaw: 1n })[1])).toEqual([{ _tag: "SettleClaim", outcome: "confirmed" }])
    expect(settles(step(sending, { _tag: "Observed", outcome: "reverted", reason: "reverted", error: "x" })[1])).toEqual([{ _tag: "SettleClaim", outcome: "failed" }])
    expect(settles(step(sending, { _tag: "Observed", outcome: "never_lands" })[1])).toEqual([{ _tag: "SettleClaim", outcome: "failed" }])
    expect(settles(step(built, { _tag: "Lapsed" })[1])).toEqual([{ _tag: "SettleClaim", outcome: "failed" }])
    for (const s of [undefined, built, sending, executed, failed]) {
      for (const ev of events) {
        const [next, out] = step(s, ev)
        const entered = next !== undefined && (next._tag === "executed" || next._tag === "failed") && next !== s
        expect(settles(out).length, `${s?._tag ?? "none"} + ${ev._tag}`).toBe(entered ? 1 : 0)
      }
    }
  })

  it("a pending observation and a repeated id change nothing and send nothing", () => {
    const [s, out] = step(sending, { _tag: "Observed", outcome: "pending" })
    expect(s).toBe(sending)
    expect(out).toEqual([])
    const [s2, out2] = step(sending, { _tag: "Signed", signature: "other" })
    expect(s2).toBe(sending)
    expect(out2).toEqual([{ _tag: "Refuse", reason: "pending" }])
  })

  it("a settled trade answers a repeat and ignores observations", () => {
    const [e, eo] = step(executed, { _tag: "Signed", signature: "other" })
    expect(e).toBe(executed)
    expect(eo).toEqual([{ _tag: "Replay" }])
    const [f, fo] = step(failed, { _tag: "Signed", signature: "other" })
    expect(f).toBe(failed)
    expect(fo).toEqual([{ _tag: "Refuse", reason: "failed" }])
    for (const ev of events.filter((x) => x._tag === "Observed")) {
      expect(step(failed, ev)).toEqual([failed, []])
      expect(step(executed, ev)[0]).toBe(executed)
    }
    // Observing a trade that has no row yet records nothing.
    expect(step(undefined, { _tag: "Observed", outcome: "landed", amountOutRaw: 1n })).toEqual([undefined, []])
  })

  it("a linked or TEE build is recorded built and leaves it once, on its proven signature", () => {
    expect(step(undefined, { _tag: "Built" })).toEqual([built, []])
    expect(step(built, { _tag: "Sent", signature: "s1" })).toEqual([sending, [{ _tag: "Broadcast" }]])
    // A second submit (or confirm) of the id finds it sending: answered as it stands, nothing sent.
    expect(step(sending, { _tag: "Sent", signature: "s1" })).toEqual([sending, [{ _tag: "Refuse", reason: "pending" }]])
    expect(step(executed, { _tag: "Sent", signature: "s1" })).toEqual([executed, [{ _tag: "Replay" }]])
    expect(step(failed, { _tag: "Sent", signature: "s1" })).toEqual([failed, [{ _tag: "Refuse", reason: "failed" }]])
    // Nothing to send for an id never built.
    expect(step(undefined, { _tag: "Sent", signature: "s1" })).toEqual([undefined, []])
    // Observations wait for the signature: a built trade has nothing on chain.
    for (const ev of events.filter((x) => x._tag === "Observed")) expect(step(built, ev)).toEqual([built, []])
  })

  it("a built trade answers its build again and refuses a main-payer repeat", () => {
    expect(step(built, { _tag: "Built" })).toEqual([built, [{ _tag: "Replay" }]])
    expect(step(built, { _tag: "Signed", signature: "s1" })).toEqual([built, [{ _tag: "Refuse", reason: "built" }]])
    expect(step(sending, { _tag: "Built" })).toEqual([sending, [{ _tag: "Refuse", reason: "pending" }]])
    expect(step(executed, { _tag: "Built" })).toEqual([executed, [{ _tag: "Replay" }]])
  })

  it("a built trade the caller sent itself is watched; one that can never land fails unsent", () => {
    expect(traced(built)).toEqual([{ _tag: "Trace" }])
    for (const s of [sending, executed, failed]) expect(traced(s)).toEqual([])
    expect(step(built, { _tag: "Found", signature: "s9" })).toEqual([{ _tag: "sending", signature: "s9" }, [{ _tag: "Watch" }]])
    const [lapsed, out] = step(built, { _tag: "Lapsed" })
    expect(lapsed).toMatchObject({ _tag: "failed", reason: "never_landed", signature: "" })
    expect(out).toEqual([{ _tag: "SettleClaim", outcome: "failed" }])
    // Only a built trade is traced: a sent or settled one ignores both.
    for (const s of [sending, executed, failed]) {
      expect(step(s, { _tag: "Found", signature: "s9" })).toEqual([s, []])
      expect(step(s, { _tag: "Lapsed" })).toEqual([s, []])
    }
    expect(step(undefined, { _tag: "Lapsed" })).toEqual([undefined, []])
    expect(step(undefined, { _tag: "Found", signature: "s9" })).toEqual([undefined, []])
  })

  it("every state and event pair is total and sends at most once", () => {
    for (const state of [undefined, built, sending, executed, failed]) {
      for (const ev of events) {
        const [next, out] = step(state, ev)
        const broadcasts = out.filter((o) => o._tag === "Broadcast").length
        // Only the first record of a main id, or a built trade's first proven signature, broadcasts; only entering `executed` records the settlement.
        expect(broadcasts).toBe((state === undefined && ev._tag === "Signed") || (state?._tag === "built" && ev._tag === "Sent") ? 1 : 0)
        expect(out.filter((o) => o._tag === "RecordExecuted").length).toBe(state?._tag === "sending" && next?._tag === "executed" ? 1 : 0)
        if (state !== undefined && state._tag !== "sending" && state._tag !== "built") expect(next).toBe(state)
        if (state?._tag === "built" && ev._tag !== "Sent" && ev._tag !== "Found" && ev._tag !== "Lapsed") expect(next).toBe(state)
        // Leaving `built` without a send: watched when found landed, failed only when it can never land.
        if (state?._tag === "built" && ev._tag === "Found") expect(out).toEqual([{ _tag: "Watch" }])
        if (state?._tag === "built" && ev._tag === "Lapsed") expect(next).toMatchObject({ _tag: "failed", reason: "never_landed" })
      }
    }
  })
})
