/**
 * The bundle record (2.8) and submit answers (2.4) read off the BundleActor's state: null and
 * nothing to answer before a send; the same not-landed `timeout` while unknown (the route's 502);
 * `landed` with `booking {state, missing}` while owed and once booked (200); not-landed `failed`
 * after a failed or dead send;
 * reverted legs under `chainOutcome`.
 */
import { describe, expect, it } from "vitest"
import { type BundleEvent, type BundleState, initialBundle, step } from "../../../../actors/bundle/BundleActor.js"
import { bundleRecord, submitOutcome } from "./BundleViews.js"

const id = { bundleId: "b1", clientLaunchId: "c1", mint: "M1", keyPrefix: "abcd1234" }
const at = 1_000
const fold = (events: ReadonlyArray<BundleEvent>, s: BundleState = initialBundle("b1", at + 600_000, [{ clientTradeId: "t1", amountInRaw: 5n, expectedOutRaw: 9n, minAmountOutRaw: 8n }, { clientTradeId: "t2", amountInRaw: 5n, expectedOutRaw: 7n, minAmountOutRaw: 6n }])) =>
  events.reduce((acc, e) => step(acc, e)[0], s)
const sent: BundleEvent[] = [
  { _tag: "SubmitBegun", atMs: at },
  { _tag: "Signing", atMs: at },
  { _tag: "Sent", launchSignature: "L", buySignatures: ["B1", "B2"], atMs: at }
]

describe("bundle views", () => {
  it("a live build: operatorState null, nothing to answer, next action submit", () => {
    const s = fold([])
    expect(submitOutcome(id, s)).toBeUndefined()
    expect(bundleRecord(id, s)).toMatchObject({ bundleId: "b1", clientLaunchId: "c1", mint: "M1", operatorState: null, signature: null, nextAction: "submit", attemptState: "built", chainOutcome: null, keyPrefix: "abcd1234" })
    expect(bundleRecord(id, s).buys).toEqual([
      { index: 1, clientTradeId: "t1", operatorState: null, signature: null, rowStatus: "pending", errorCode: null, expiredLabelSuperseded: false },
      { index: 2, clientTradeId: "t2", operatorState: null, signature: null, rowStatus: "pending", errorCode: null, expiredLabelSuperseded: false }
    ])
  })

  it("sent and unknown: the same 502 timeout on every repeat", () => {
    const s = fold([...sent, { _tag: "EngineUnknown", detail: "lost", atMs: at }])
    expect(submitOutcome(id, s)).toEqual({ landed: false, body: { status: "timeout", bundleId: "b1", retryable: false } })
    expect(bundleRecord(id, s)).toMatchObject({ operatorState: "execution_unknown", unknownPhases: ["send"], lastError: "lost", lastErrorPhase: "engine" })
  })

  it("landed with a reverted leg: 200 landed, booking owed then booked; revertedLegs reported", () => {
    const landed = fold([...sent, { _tag: "EngineLanded", slot: 42n, legErrors: [null, "slippage_exceeded"], atMs: at }])
    expect(submitOutcome(id, landed)).toEqual({
      landed: true,
      body: { status: "landed", bundleId: "b1", mint: "M1", signatures: ["L", "B1", "B2"], booking: { state: "landed_pending_booking", missing: ["token", "finalization", "launch", "buy:t1"] } }
    })
    const booked = fold((["token", "launch", "finalization", "buy:t1"] as const).map((item) => ({ _tag: "Booked", item, atMs: at })), landed)
    expect(submitOutcome(id, booked)?.body).toMatchObject({ booking: { state: "booked", missing: [] } })
    expect(bundleRecord(id, booked)).toMatchObject({
      operatorState: "booked",
      nextAction: "none",
      chainOutcome: { landed: true, slot: 42, revertedLegs: [{ index: 2, signature: "B2", errorCode: "slippage_exceeded" }] }
    })
    expect(bundleRecord(id, booked).buys.map((b) => [b.operatorState, b.rowStatus, b.errorCode])).toEqual([
      ["booked", "confirmed", null],
      ["reverted", "failed", "slippage_exceeded"]
    ])
  })

  it("failed or proven dead: 502 failed", () => {
    expect(submitOutcome(id, fold([...sent, { _tag: "EngineFailed", detail: "x", atMs: at }]))?.body).toEqual({ status: "failed", bundleId: "b1", retryable: false })
    const dead = fold([...sent, { _tag: "ChainRead", launch: "absent", blockhashExpired: true, slot: null, buys: [], atMs: at }])
    expect(submitOutcome(id, dead)?.body).toEqual({ status: "failed", bundleId: "b1", retryable: false })
    expect(bundleRecord(id, dead)).toMatchObject({ operatorState: "build_expired", nextAction: "build_again" })
  })
})
