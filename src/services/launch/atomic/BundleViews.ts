/**
 * What the atomic routes answer, computed from a bundle's stored state (launch spec 2.4's submit
 * outcomes, 2.8's bundle record): pure views, so the record a poller reads and the answer a repeat
 * submit gets come from the same state the BundleActor keeps.
 */
import {
  type BundleState,
  buyOperatorStateOf,
  buyRowStatusOf,
  missingItems,
  nextActionOf,
  operatorStateOf,
  revertedLegsOf,
  submitAnswer
} from "../../../../actors/bundle/BundleActor.js"

export interface BundleIdentity {
  readonly bundleId: string
  readonly clientLaunchId: string
  readonly mint: string
  readonly keyPrefix: string
}

/** The bundle record (spec 2.8): what the bundle route answers as `bundle`, inside its envelope. */
export type BundleView = ReturnType<typeof bundleRecord>

/** Spec 2.8, `bundle`. */
export const bundleRecord = (id: BundleIdentity, s: BundleState) => ({
  bundleId: id.bundleId,
  clientLaunchId: id.clientLaunchId,
  mint: id.mint,
  operatorState: operatorStateOf(s),
  signature: s.launchSignature,
  missingPhases: missingItems(s),
  nextAction: nextActionOf(s),
  buys: s.buys.map((b) => ({
    index: b.index,
    clientTradeId: b.clientTradeId,
    operatorState: buyOperatorStateOf(s, b),
    signature: b.signature,
    rowStatus: buyRowStatusOf(s, b),
    errorCode: b.errorCode,
    expiredLabelSuperseded: false
  })),
  attemptState: s.phase,
  keyPrefix: id.keyPrefix,
  chainOutcome:
    s.phase === "landed" || s.phase === "failed"
      ? {
          landed: s.phase === "landed",
          slot: s.landedSlot === null ? null : Number(s.landedSlot),
          revertedLegs: revertedLegsOf(s)
        }
      : null,
  unknownPhases: s.unknownPhases,
  lastError: s.lastError,
  lastErrorPhase: s.lastErrorPhase,
  lastAttemptAt: s.lastAttemptAtMs,
  recoveryAttempts: s.recoveryAttempts
})

/** A sent bundle's submit answer: it landed, or it did not (timed out or failed); the route picks the status. */
export type SubmitOutcome =
  | { readonly landed: true; readonly body: Record<string, unknown> }
  | { readonly landed: false; readonly body: Record<string, unknown> }

/** Spec 2.4's submit answer for a bundle that was sent; undefined while it was not. */
export const submitOutcome = (id: BundleIdentity, s: BundleState): SubmitOutcome | undefined => {
  const answer = submitAnswer(s)
  if (answer === null) return undefined
  if (answer !== "landed") return { landed: false, body: { status: answer, bundleId: id.bundleId, retryable: false } }
  const missing = missingItems(s)
  return {
    landed: true,
    body: {
      status: "landed",
      bundleId: id.bundleId,
      mint: id.mint,
      signatures: [s.launchSignature, ...s.buys.map((b) => b.signature)],
      booking: { state: missing.length === 0 ? "booked" : "landed_pending_booking", missing }
    }
  }
}
