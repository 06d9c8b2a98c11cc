/**
 * The atomic bundle state machine (spec 3.5 `operatorState`, 2.8 booking and buy rows, rule 7
 * holds), driven through `step` directly.
 *
 *   Phase (operatorState)                                                      test
 *   built (null) ──SubmitBegun──────────────────▶ submitting (null)             "submit happy path"
 *   built (null) ──Expire at expiresAt──────────▶ expired (build_expired), attempt failed "expiry releases holds"
 *   built (null) ──Supersede (same-id build)────▶ expired (build_expired)      "a same-id build supersedes"
 *   submitting ──SubmitRefused bytes────────────▶ built (null)                  "bytes refusal"
 *   submitting ──SubmitRefused shape────────────▶ expired (build_expired), attempt failed "shape refusal"
 *   submitting ──Signing────────────────────────▶ signing (null), holds kept    "submit happy path"
 *   signing ──Sent──────────────────────────────▶ sent (execution_unknown)      "submit happy path"
 *   signing ──SendAbandoned (restart)───────────▶ expired (build_expired), kept "interrupted before the send"
 *   sent ──EngineLanded─────────────────────────▶ landed (landed_pending_booking) "submit happy path"
 *   sent ──EngineUnknown────────────────────────▶ sent (execution_unknown)      "unknown resolved by the chain"
 *   sent ──EngineFailed─────────────────────────▶ failed (reverted)             "engine failure"
 *   sent ──ChainRead launch landed──────────────▶ landed (…pending_booking)     "unknown resolved by the chain"
 *   sent ──ChainRead launch failed──────────────▶ failed (reverted)             "launch seen failed"
 *   sent ──ChainRead absent, blockhash expired──▶ expired (build_expired)       "never lands"
 *   sent ──ChainRead absent, blockhash live─────▶ sent (execution_unknown)      "never lands"
 *   landed ──Booked (last item)─────────────────▶ landed (booked)               "submit happy path"
 *   landed ──ChainRead (pending buy readable)───▶ landed, buy booked after      "unreadable buy booked on a later pass"
 *
 *   Buys: engine landing books at the ladder amount ("submit happy path"); a chain landing at the
 *   delivered amount ("unknown resolved by the chain"); a failed leg is reverted with its code and
 *   owes nothing ("a buy reverted inside a landed bundle"). Every event outside its phase changes
 *   nothing ("events out of phase"); a restart re-asks owed items once ("resume").
 */
import { describe, expect, it } from "vitest"
import {
  type BundleEvent,
  type BundleOutput,
  type BundleState,
  buyOperatorStateOf,
  buyRowStatusOf,
  initialBundle,
  missingItems,
  nextActionOf,
  operatorStateOf,
  resume,
  revertedLegsOf,
  step,
  submitAnswer
} from "./BundleActor.js"
import { decodeBundleState, encodeBundleState } from "./BundleCodec.js"

const T0 = 1_000_000
const EXPIRES = T0 + 600_000

const fresh = (legs = 2) =>
  initialBundle(
    "b1",
    EXPIRES,
    Array.from({ length: legs }, (_, i) => ({
      clientTradeId: `t${i + 1}`,
      amountInRaw: 1_000n,
      expectedOutRaw: 500n + BigInt(i),
      minAmountOutRaw: 495n
    }))
  )

const run = (s: BundleState, events: ReadonlyArray<BundleEvent>) => {
  const outputs: BundleOutput[] = []
  for (const e of events) {
    const [next, out] = step(s, e)
    s = next
    outputs.push(...out)
  }
  return { state: s, outputs }
}

const toSent = (legs = 2) =>
  run(fresh(legs), [
    { _tag: "SubmitBegun", atMs: T0 },
    { _tag: "Signing", atMs: T0 + 1 },
    { _tag: "Sent", launchSignature: "L", buySignatures: Array.from({ length: legs }, (_, i) => `B${i + 1}`), atMs: T0 + 2 }
  ])

const bookAll = (s: BundleState, outputs: ReadonlyArray<BundleOutput>) => {
  const items = outputs.flatMap((o) =>
    o._tag === "BookToken" ? ["token" as const] : o._tag === "BookLaunch" ? ["launch" as const] : o._tag === "Finalize" ? ["finalization" as const] : o._tag === "BookBuy" ? [`buy:${o.clientTradeId}` as const] : []
  )
  return run(s, items.map((item) => ({ _tag: "Booked", item, atMs: T0 + 10 })))
}

describe("BundleActor", () => {
  it("submit happy path: built → submitting → signing → sent → landed → booked, buys at their ladder amounts", () => {
    let { state } = run(fresh(), [{ _tag: "SubmitBegun", atMs: T0 }])
    expect([state.phase, operatorStateOf(state), nextActionOf(state)]).toEqual(["submitting", null, "wait"])
    ;({ state } = run(state, [{ _tag: "Signing", atMs: T0 + 1 }]))
    expect(state.holdsKept).toBe(true)
    const sent = toSent()
    expect([operatorStateOf(sent.state), submitAnswer(sent.state)]).toEqual(["execution_unknown", "timeout"])
    expect(sent.state.buys.map((b) => b.signature)).toEqual(["B1", "B2"])
    const landed = run(sent.state, [{ _tag: "EngineLanded", slot: 7n, legErrors: [null, null], atMs: T0 + 3 }])
    expect(operatorStateOf(landed.state)).toBe("landed_pending_booking")
    expect(missingItems(landed.state)).toEqual(["token", "finalization", "launch", "buy:t1", "buy:t2"])
    expect(landed.outputs).toEqual([
      { _tag: "BookToken", slot: 7n },
      { _tag: "BookLaunch", slot: 7n },
      { _tag: "BookBuy", index: 1, clientTradeId: "t1", amountOutRaw: 500n, source: "engine" },
      { _tag: "BookBuy", index: 2, clientTradeId: "t2", amountOutRaw: 501n, source: "engine" },
      { _tag: "Finalize", landedBuyIndexes: [1, 2] }
    ])
    expect(landed.state.buys.map((b) => buyOperatorStateOf(landed.state, b))).toEqual(["landed_pending_booking", "landed_pending_booking"])
    const done = bookAll(landed.state, landed.outputs)
    expect(done.outputs).toEqual([])
    expect([operatorStateOf(done.state), missingItems(done.state), nextActionOf(done.state), submitAnswer(done.state)]).toEqual(["booked", [], "none", "landed"])
    expect(done.state.buys.map((b) => [buyOperatorStateOf(done.state, b), buyRowStatusOf(done.state, b)])).toEqual([
      ["booked", "confirmed"],
      ["booked", "confirmed"]
    ])
  })

  it("each item is asked for once: a duplicate Booked or a repeated landing changes nothing", () => {
    const landed = run(toSent().state, [{ _tag: "EngineLanded", slot: 7n, legErrors: [null, null], atMs: T0 + 3 }])
    const again = step(landed.state, { _tag: "EngineLanded", slot: 7n, legErrors: [null, null], atMs: T0 + 4 })
    expect(again[0]).toBe(landed.state)
    expect(again[1]).toEqual([])
    const once = step(landed.state, { _tag: "Booked", item: "launch", atMs: T0 + 5 })
    expect(once[1]).toEqual([])
    const twice = step(once[0], { _tag: "Booked", item: "launch", atMs: T0 + 6 })
    expect(twice[0]).toBe(once[0])
  })

  it("a buy reverted inside a landed bundle is final, owes nothing, and the bundle still reaches booked", () => {
    const landed = run(toSent(3).state, [{ _tag: "EngineLanded", slot: 9n, legErrors: [null, "slippage_exceeded", "reverted"], atMs: T0 + 3 }])
    expect(missingItems(landed.state)).toEqual(["token", "finalization", "launch", "buy:t1"])
    expect(revertedLegsOf(landed.state)).toEqual([
      { index: 2, signature: "B2", errorCode: "slippage_exceeded" },
      { index: 3, signature: "B3", errorCode: "reverted" }
    ])
    expect(landed.outputs).toContainEqual({ _tag: "Finalize", landedBuyIndexes: [1] })
    const done = bookAll(landed.state, landed.outputs)
    expect(operatorStateOf(done.state)).toBe("booked")
    expect(done.state.buys.map((b) => [buyOperatorStateOf(done.state, b), buyRowStatusOf(done.state, b), b.errorCode])).toEqual([
      ["booked", "confirmed", null],
      ["reverted", "failed", "slippage_exceeded"],
      ["reverted", "failed", "reverted"]
    ])
  })

  it("expiry releases holds: a live build past expiresAt is build_expired; before it, nothing", () => {
    const s = fresh()
    expect(step(s, { _tag: "Expire", atMs: EXPIRES - 1 })[0]).toBe(s)
    const [expired, out] = step(s, { _tag: "Expire", atMs: EXPIRES })
    expect([expired.phase, operatorStateOf(expired), nextActionOf(expired), submitAnswer(expired)]).toEqual(["expired", "build_expired", "build_again", null])
    // The holds return and the ledger attempt fails (the job reads failed; the daily-cap slot is refunded).
    expect(out).toEqual([{ _tag: "ReleaseHolds" }, { _tag: "FailLaunch", detail: "the build expired before it was submitted" }])
    // A submit at or after expiry does not consume it.
    expect(step(s, { _tag: "SubmitBegun", atMs: EXPIRES })[0]).toBe(s)
  })

  it("a same-id build supersedes a live build before its expiry: build_expired, holds released; nothing else can be superseded", () => {
    const s = fresh()
    const [superseded, out] = step(s, { _tag: "Supersede", atMs: T0 + 1 })
    expect([superseded.phase, operatorStateOf(superseded), nextActionOf(superseded), superseded.holdsReleased, superseded.lastErrorPhase]).toEqual([
      "expired",
      "build_expired",
      "build_again",
      true,
      "build"
    ])
    expect(out).toEqual([{ _tag: "ReleaseHolds" }])
    // Once consumed or sent, a build is never superseded (a submit may be signing it).
    const submitting = step(s, { _tag: "SubmitBegun", atMs: T0 + 1 })[0]
    expect(step(submitting, { _tag: "Supersede", atMs: T0 + 2 })[0]).toBe(submitting)
    const sent = toSent().state
    expect(step(sent, { _tag: "Supersede", atMs: T0 + 2 })[0]).toBe(sent)
    expect(step(superseded, { _tag: "Supersede", atMs: T0 + 3 })[0]).toBe(superseded)
  })

  it("bytes refusal returns the build for a corrected submit; holds stay", () => {
    const { state, outputs } = run(fresh(), [
      { _tag: "SubmitBegun", atMs: T0 },
      { _tag: "SubmitRefused", kind: "bytes", detail: "leg 1 altered", atMs: T0 + 1 }
    ])
    expect([state.phase, operatorStateOf(state), nextActionOf(state), state.lastError]).toEqual(["built", null, "submit", "leg 1 altered"])
    expect(outputs).toEqual([])
    expect(step(state, { _tag: "SubmitBegun", atMs: T0 + 2 })[0].phase).toBe("submitting")
  })

  it("shape refusal consumes the build and releases the holds (nothing was signed)", () => {
    const { state, outputs } = run(fresh(), [
      { _tag: "SubmitBegun", atMs: T0 },
      { _tag: "SubmitRefused", kind: "shape", detail: "expected 2 signed legs, got 1", atMs: T0 + 1 }
    ])
    expect([state.phase, operatorStateOf(state), state.holdsKept]).toEqual(["expired", "build_expired", false])
    expect(outputs).toEqual([{ _tag: "ReleaseHolds" }, { _tag: "FailLaunch", detail: "submit refused: expected 2 signed legs, got 1" }])
    expect(step(state, { _tag: "SubmitBegun", atMs: T0 + 2 })[0]).toBe(state)
  })

  it("engine failure: the launch failed, nothing landed; holds kept, the ledger attempt failed", () => {
    const { state, outputs } = run(toSent().state, [{ _tag: "EngineFailed", detail: "transaction 0 failed", atMs: T0 + 3 }])
    expect([state.phase, operatorStateOf(state), submitAnswer(state), nextActionOf(state), state.holdsKept]).toEqual(["failed", "reverted", "failed", "build_again", true])
    expect(outputs).toEqual([{ _tag: "FailLaunch", detail: "transaction 0 failed" }])
    expect(state.buys.map((b) => buyRowStatusOf(state, b))).toEqual(["failed", "failed"])
  })

  it("unknown resolved by the chain: an unknown answer keeps execution_unknown; a chain read books buys at what they delivered", () => {
    const unknown = run(toSent().state, [{ _tag: "EngineUnknown", detail: "connection reset", atMs: T0 + 3 }])
    expect([operatorStateOf(unknown.state), submitAnswer(unknown.state), unknown.state.unknownPhases, unknown.outputs]).toEqual(["execution_unknown", "timeout", ["send"], []])
    const read = run(unknown.state, [
      {
        _tag: "ChainRead",
        launch: "landed",
        blockhashExpired: false,
        slot: 11n,
        buys: [{ status: "landed", deliveredRaw: 499n }, { status: "landed", deliveredRaw: 501n }],
        atMs: T0 + 4
      }
    ])
    expect([operatorStateOf(read.state), read.state.landedBy, read.state.recoveryAttempts]).toEqual(["landed_pending_booking", "chain", 1])
    expect(read.outputs.filter((o) => o._tag === "BookBuy")).toEqual([
      { _tag: "BookBuy", index: 1, clientTradeId: "t1", amountOutRaw: 499n, source: "chain" },
      { _tag: "BookBuy", index: 2, clientTradeId: "t2", amountOutRaw: 501n, source: "chain" }
    ])
    expect(operatorStateOf(bookAll(read.state, read.outputs).state)).toBe("booked")
  })

  it("unreadable buy booked on a later pass: stays landed_pending_booking, finalization waits for it", () => {
    const first = run(toSent().state, [
      { _tag: "ChainRead", launch: "landed", blockhashExpired: false, slot: 11n, buys: [{ status: "landed", deliveredRaw: 500n }, { status: "unreadable" }], atMs: T0 + 4 }
    ])
    expect(first.outputs.map((o) => o._tag)).toEqual(["BookToken", "BookLaunch", "BookBuy"])
    const afterBooking = bookAll(first.state, first.outputs).state
    expect(missingItems(afterBooking)).toEqual(["finalization", "buy:t2"])
    expect(afterBooking.unknownPhases).toEqual(["buy:t2"])
    expect(buyOperatorStateOf(afterBooking, afterBooking.buys[1]!)).toBe("landed_pending_booking")
    const second = run(afterBooking, [
      { _tag: "ChainRead", launch: "landed", blockhashExpired: false, slot: 11n, buys: [{ status: "landed", deliveredRaw: 500n }, { status: "landed", deliveredRaw: 510n }], atMs: T0 + 5 }
    ])
    expect(second.outputs).toEqual([
      { _tag: "BookBuy", index: 2, clientTradeId: "t2", amountOutRaw: 510n, source: "chain" },
      { _tag: "Finalize", landedBuyIndexes: [1, 2] }
    ])
    expect([second.state.recoveryAttempts, operatorStateOf(bookAll(second.state, second.outputs).state)]).toEqual([2, "booked"])
  })

  it("launch seen failed on chain: reverted, the attempt failed", () => {
    const { state, outputs } = run(toSent().state, [{ _tag: "ChainRead", launch: "failed", blockhashExpired: false, slot: 11n, buys: [], atMs: T0 + 4 }])
    expect([operatorStateOf(state), submitAnswer(state)]).toEqual(["reverted", "failed"])
    expect(outputs).toEqual([{ _tag: "FailLaunch", detail: "launch transaction failed on chain" }])
  })

  it("never lands: absent with a live blockhash stays unknown; absent past it is build_expired and failed", () => {
    const live = run(toSent().state, [{ _tag: "ChainRead", launch: "absent", blockhashExpired: false, slot: null, buys: [], atMs: T0 + 4 }])
    expect([operatorStateOf(live.state), live.outputs, live.state.recoveryAttempts]).toEqual(["execution_unknown", [], 1])
    const dead = run(live.state, [{ _tag: "ChainRead", launch: "absent", blockhashExpired: true, slot: null, buys: [], atMs: T0 + 5 }])
    expect([operatorStateOf(dead.state), submitAnswer(dead.state), dead.state.holdsKept]).toEqual(["build_expired", "failed", true])
    expect(dead.outputs).toEqual([{ _tag: "FailLaunch", detail: "bundle never landed" }])
  })

  it("interrupted before the send: signed but never sent is build_expired, holds kept, the attempt failed", () => {
    const signing = run(fresh(), [
      { _tag: "SubmitBegun", atMs: T0 },
      { _tag: "Signing", atMs: T0 + 1 }
    ]).state
    const [s, out] = step(signing, { _tag: "SendAbandoned", atMs: T0 + 2 })
    expect([s.phase, operatorStateOf(s), s.holdsKept, submitAnswer(s), nextActionOf(s)]).toEqual(["expired", "build_expired", true, null, "build_again"])
    expect(out).toEqual([{ _tag: "FailLaunch", detail: "bundle never sent" }])
    expect(step(toSent().state, { _tag: "SendAbandoned", atMs: T0 })[1]).toEqual([])
  })

  it("events out of phase change nothing and return the same state", () => {
    const s = fresh()
    const outOfPhase: BundleEvent[] = [
      { _tag: "Signing", atMs: T0 },
      { _tag: "Sent", launchSignature: "L", buySignatures: [], atMs: T0 },
      { _tag: "EngineLanded", slot: 1n, legErrors: [], atMs: T0 },
      { _tag: "EngineFailed", detail: "x", atMs: T0 },
      { _tag: "EngineUnknown", detail: "x", atMs: T0 },
      { _tag: "SubmitRefused", kind: "shape", detail: "x", atMs: T0 },
      { _tag: "ChainRead", launch: "landed", blockhashExpired: false, slot: 1n, buys: [], atMs: T0 },
      { _tag: "Booked", item: "launch", atMs: T0 },
      { _tag: "BookFailed", item: "launch", detail: "x", atMs: T0 },
      { _tag: "SendAbandoned", atMs: T0 }
    ]
    for (const e of outOfPhase) expect(step(s, e)).toEqual([s, []])
    for (const e of outOfPhase) expect(step(s, e)[0]).toBe(s)
    const sent = toSent().state
    expect(step(sent, { _tag: "SubmitBegun", atMs: T0 + 5 })[0]).toBe(sent) // never sent twice
    expect(step(sent, { _tag: "Expire", atMs: EXPIRES + 1 })[0]).toBe(sent)
  })

  it("resume: a restart re-asks every owed item once; a failed booking is asked for again", () => {
    const landed = run(toSent().state, [{ _tag: "EngineLanded", slot: 7n, legErrors: [null, null], atMs: T0 + 3 }])
    const [afterFail] = step(landed.state, { _tag: "BookFailed", item: "buy:t1", detail: "storage", atMs: T0 + 4 })
    expect(afterFail.requested).not.toContain("buy:t1")
    const [, reasked] = resume(afterFail)
    expect(reasked).toHaveLength(5)
    const done = bookAll(landed.state, landed.outputs).state
    expect(resume(done)[1]).toEqual([])
  })
})

describe("BundleCodec", () => {
  it("round-trips every state the happy path and a recovery pass go through", () => {
    const states: BundleState[] = [fresh(), toSent().state]
    const landed = run(toSent(3).state, [
      { _tag: "ChainRead", launch: "landed", blockhashExpired: false, slot: 2n ** 63n, buys: [{ status: "landed", deliveredRaw: 10n ** 30n }, { status: "failed", errorCode: "reverted" }, { status: "unreadable" }], atMs: T0 + 4 }
    ])
    states.push(landed.state, bookAll(landed.state, landed.outputs).state)
    for (const s of states) expect(decodeBundleState(encodeBundleState(s))).toEqual(s)
  })
})
