/**
 * The staking operation as the runner sees it (`operationMachine`): the machine's `Broadcast`
 * becomes `Send` only when the signed bytes travel with the event, and a stored in-flight row owes
 * only `Await` (a crash after `sending` is saved is settled from the chain, never resent).
 */
import { describe, expect, it } from "vitest"
import type { OperationRow } from "../StakingStore.js"
import { operationMachine } from "./OperationAttempt.js"

const row = (over: Partial<OperationRow> = {}): OperationRow => ({
  accountId: "acct",
  clientStakeId: "id-1",
  action: "stake",
  payer: "main",
  walletId: null,
  wallet: "W",
  keyId: null,
  bodyHash: "h",
  state: "sending",
  amountRaw: "1",
  withdrawal: null,
  signature: "sig-1",
  transaction: null,
  messageHash: "m",
  claimId: null,
  lastValidBlockHeight: 10n,
  builtAtMs: 0,
  expiresAtMs: null,
  error: null,
  ...over
})

describe("operationMachine", () => {
  it("a main build inserts `sending` and asks to send its bytes once, then await the verdict", () => {
    const [next, outputs] = operationMachine.step(undefined, { event: { _tag: "Built", payer: "main", signature: "sig-1" }, insert: row(), wire: "AAAA" })
    expect(next).toMatchObject({ state: "sending", signature: "sig-1" })
    expect(outputs).toEqual([{ _tag: "Send", wire: "AAAA" }, { _tag: "Await" }])
    // Without the bytes nothing can be sent: only the wait.
    expect(operationMachine.step(undefined, { event: { _tag: "Built", payer: "main", signature: "sig-1" }, insert: row() })[1]).toEqual([{ _tag: "Await" }])
  })

  it("a stored in-flight row owes only the wait; a settled one owes nothing", () => {
    expect(operationMachine.owed(row({ state: "sending" }))).toEqual([{ _tag: "Await" }])
    expect(operationMachine.owed(row({ state: "submitted" }))).toEqual([{ _tag: "Await" }])
    for (const state of ["built", "confirmed", "failed", "expired"] as const) {
      expect(operationMachine.owed(row({ state }))).toEqual([])
      expect(operationMachine.inFlight(row({ state }))).toBe(false)
    }
  })

  it("the verdict moves the row (failed with the chain's error), and a pending one returns the same row", () => {
    const sending = row()
    const [failed, none] = operationMachine.step(sending, { event: { _tag: "Observed", outcome: "reverted", error: "boom" } })
    expect(failed).toMatchObject({ state: "failed", signature: "sig-1", error: "boom" })
    expect(none).toEqual([])
    expect(operationMachine.step(sending, { event: { _tag: "Observed", outcome: "pending" } })[0]).toBe(sending)
    expect(operationMachine.step(sending, { event: { _tag: "Observed", outcome: "landed" } })).toEqual([
      { ...sending, state: "confirmed" },
      [{ _tag: "RecordConfirmed", signature: "sig-1" }]
    ])
  })

  it("a repeated submit of a submitted row refuses pending and sends nothing", () => {
    const submitted = row({ state: "submitted", payer: "tee" })
    const [same, outputs] = operationMachine.step(submitted, { event: { _tag: "Submit", signature: "sig-1", exactMessage: true, nowMs: 0 }, wire: "AAAA" })
    expect(same).toBe(submitted)
    expect(outputs).toEqual([{ _tag: "Refuse", reason: "pending" }])
  })
})
