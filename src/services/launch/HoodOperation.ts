/**
 * The sequenced Hood TEE launch operation (launch spec 2.3, 2.7 `operation`, general rule 4),
 * pure: `step(operation, event) -> operation`. A TEE wallet's Hood launch is a short sequence of
 * legs the agent signs one at a time through the relay and hands back with `operationId` and
 * `signedTransaction`; the service records each leg's hash BEFORE broadcasting it and advances
 * the operation from what the chain shows. The object is defined here (the spec names only its
 * fields; docs/decisions.md "Self-signed launches").
 *
 * Legs, in order: `createCurve`, then `feeTransfer` when the dev buy carries a platform fee, then
 * `devBuy` (only with `TEE_LAUNCH_BUYS_ENABLED`): the fee leg goes before the buy (rule 4).
 *
 * Invariants:
 * - `nextLeg` is the first leg not settled (mined; or a dev buy that reverted, which is final: rule
 *   4, the fee is not returned and the buy is not retried), or null when every leg is settled.
 * - Only `nextLeg` can be signed, and only while `pending`; a leg moves pending → sent → mined or
 *   reverted (a leg whose nonce another transaction used is `reverted` too: it can never be
 *   mined), and a reverted fee leg may be reissued (pending again, a fresh nonce and claim): 3.4's
 *   "pay only the missing fee"; a later pending leg then moves to the next nonce. A reverted
 *   `createCurve` fails the operation.
 * - A later leg still pending whose relay-signed bytes the agent sent itself and that landed
 *   (seen when the fee leg before it reverted) is `mined` with that hash (`Landed`): it is not
 *   reissued, and only the missing fee leg is (3.4).
 * - The pending `nextLeg` (never `createCurve`) is decided from its sign claim at every confirm
 *   (`pendingLegVerdict`): a claim that can no longer be signed and never was is reissued at the
 *   same nonce (a new claim for the same leg); relay-signed bytes the agent sent itself are
 *   `Landed` when they mined, recorded sent and reverted when they reverted or their nonce was
 *   used; bytes that can still land are never replaced.
 * - A refused event returns the SAME object (nothing to write).
 */
export const HoodLegKinds = ["createCurve", "feeTransfer", "devBuy"] as const
export type HoodLegKind = (typeof HoodLegKinds)[number]

export const HoodLegStatuses = ["pending", "sent", "mined", "reverted"] as const
export type HoodLegStatus = (typeof HoodLegStatuses)[number]

export interface HoodOperationLeg {
  readonly index: number
  readonly kind: HoodLegKind
  readonly to: string
  readonly data: string
  /** Wei, decimal string. */
  readonly value: string
  readonly nonce: number
  /** Serialized unsigned EIP-1559 transaction (0x hex): what the relay signs for this leg. */
  readonly unsignedTransaction: string
  readonly claimId: string
  readonly walletId: string
  readonly status: HoodLegStatus
  readonly txHash: string | null
  /** The signed leg as handed back (0x hex), kept so it can be broadcast again until it is mined. */
  readonly signedTransaction?: string | null
}

export type HoodOperationState = "awaiting_signature" | "confirming" | "confirmed" | "failed"

export interface HoodOperation {
  readonly operationId: string
  readonly state: HoodOperationState
  readonly legs: ReadonlyArray<HoodOperationLeg>
  /** Index of the leg to sign next; null once every leg is mined. */
  readonly nextLeg: number | null
}

export type HoodOperationEvent =
  /** The agent handed back `nextLeg` signed: its hash and bytes are recorded before it is broadcast. */
  | { readonly _tag: "Signed"; readonly leg: number; readonly txHash: string; readonly signedTransaction?: string }
  | { readonly _tag: "Mined"; readonly leg: number }
  | { readonly _tag: "Reverted"; readonly leg: number }
  /**
   * A pending leg (never `createCurve`) whose bytes the relay signed were sent outside the service
   * and mined successfully: it is mined with that hash (the sign claim's signature).
   */
  | { readonly _tag: "Landed"; readonly leg: number; readonly txHash: string }
  /**
   * A reverted fee leg rebuilt on a fresh nonce with a new claim; also a later leg still pending,
   * moved to the nonce after it (so no two legs share a nonce), and the pending next leg whose
   * claim expired unsigned, at its own nonce (`pendingLegVerdict`).
   */
  | { readonly _tag: "Reissued"; readonly leg: number; readonly unsignedTransaction: string; readonly nonce: number; readonly claimId: string }
  /** The launch was recorded (every leg mined and verified). */
  | { readonly _tag: "Recorded" }

/** A leg needing nothing more: mined, or a dev buy that reverted (rule 4: it is not retried; the launch stands). */
const settled = (l: HoodOperationLeg): boolean => l.status === "mined" || (l.status === "reverted" && l.kind === "devBuy")

const nextOf = (legs: ReadonlyArray<HoodOperationLeg>): number | null => {
  const i = legs.findIndex((l) => !settled(l))
  return i === -1 ? null : i
}

const stateOf = (legs: ReadonlyArray<HoodOperationLeg>): HoodOperationState => {
  if (legs[0]?.status === "reverted") return "failed"
  if (legs.every(settled)) return "confirming"
  return legs.some((l) => l.status === "sent") ? "confirming" : "awaiting_signature"
}

const withLeg = (op: HoodOperation, index: number, patch: Partial<HoodOperationLeg>): HoodOperation => {
  const legs = op.legs.map((l) => (l.index === index ? { ...l, ...patch } : l))
  return { ...op, legs, nextLeg: nextOf(legs), state: stateOf(legs) }
}

/** Pure. Returns the SAME object when the event does not apply. */
export const step = (op: HoodOperation, e: HoodOperationEvent): HoodOperation => {
  if (op.state === "confirmed" || op.state === "failed") return op
  if (e._tag === "Recorded") return op.nextLeg === null ? { ...op, state: "confirmed" } : op
  const leg = op.legs[e.leg]
  if (leg === undefined) return op
  switch (e._tag) {
    case "Signed":
      return e.leg === op.nextLeg && leg.status === "pending"
        ? withLeg(op, e.leg, { status: "sent", txHash: e.txHash, signedTransaction: e.signedTransaction ?? null })
        : op
    case "Mined":
      return leg.status === "sent" ? withLeg(op, e.leg, { status: "mined" }) : op
    case "Reverted":
      return leg.status === "sent" ? withLeg(op, e.leg, { status: "reverted" }) : op
    case "Landed":
      return leg.status === "pending" && leg.kind !== "createCurve" ? withLeg(op, e.leg, { status: "mined", txHash: e.txHash }) : op
    case "Reissued":
      return (leg.status === "reverted" && leg.kind === "feeTransfer") || (leg.status === "pending" && leg.kind !== "createCurve")
        ? withLeg(op, e.leg, { status: "pending", txHash: null, signedTransaction: null, unsignedTransaction: e.unsignedTransaction, nonce: e.nonce, claimId: e.claimId })
        : op
  }
}

/**
 * What a confirm reads of the pending `nextLeg`'s sign claim: never signed by the relay
 * (`signable` while it still can be: open and within its lifetime; a claim past its lifetime is
 * expired before this is said), or signed, with its bytes as the chain shows them
 * (`HoodSelfChain.legOnChain`: `used` only on evidence that another transaction took the nonce).
 */
export type PendingClaimSeen =
  | { readonly _tag: "Unsigned"; readonly signable: boolean }
  | { readonly _tag: "Signed"; readonly txHash: string; readonly onChain: "success" | "reverted" | "used" | "open" }

/**
 * What becomes of the pending `nextLeg`:
 * - `Wait`: nothing (its claim can still be signed, its signed bytes can still land, or the leg is
 *   not one this decides: `createCurve`, a leg not pending, a settled operation);
 * - `Reissue` at `nonce`, the leg's own: its claim was never signed and never can be, so no bytes of
 *   it exist; a new claim for the same leg (the same nonce, so the order and nonces of the legs are
 *   kept and at most one transaction at that nonce can ever land);
 * - `Landed`: the relay-signed bytes mined successfully (the `Landed` event);
 * - `Failed`: the relay-signed bytes reverted, or their nonce was used (they can never land): the
 *   leg is recorded sent with that hash and reverted (`eventsOf`), as a sent leg would be: a fee leg
 *   is then reissued on a fresh nonce, a dev buy is final (rule 4).
 */
export type PendingLegVerdict =
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Reissue"; readonly leg: number; readonly nonce: number }
  | { readonly _tag: "Landed"; readonly leg: number; readonly txHash: string }
  | { readonly _tag: "Failed"; readonly leg: number; readonly txHash: string }

const wait: PendingLegVerdict = { _tag: "Wait" }

/** Pure. The pending `nextLeg`'s verdict from what its claim shows (`PendingClaimSeen`); `Wait` for anything it does not decide. */
export const pendingLegVerdict = (op: HoodOperation, seen: PendingClaimSeen | undefined): PendingLegVerdict => {
  if (seen === undefined || op.state === "confirmed" || op.state === "failed" || op.nextLeg === null) return wait
  const leg = op.legs[op.nextLeg]
  if (leg === undefined || leg.status !== "pending" || leg.kind === "createCurve") return wait
  if (seen._tag === "Unsigned") return seen.signable ? wait : { _tag: "Reissue", leg: leg.index, nonce: leg.nonce }
  if (seen.onChain === "open") return wait
  return seen.onChain === "success" ? { _tag: "Landed", leg: leg.index, txHash: seen.txHash } : { _tag: "Failed", leg: leg.index, txHash: seen.txHash }
}

/** The events a `Landed` or `Failed` verdict applies (a `Reissue` needs the new claim: the runner's `Reissued`). */
export const eventsOf = (v: Extract<PendingLegVerdict, { _tag: "Landed" | "Failed" }>): ReadonlyArray<HoodOperationEvent> =>
  v._tag === "Landed"
    ? [{ _tag: "Landed", leg: v.leg, txHash: v.txHash }]
    : [{ _tag: "Signed", leg: v.leg, txHash: v.txHash }, { _tag: "Reverted", leg: v.leg }]

/** A new operation over `legs` (all pending). */
export const newOperation = (operationId: string, legs: ReadonlyArray<Omit<HoodOperationLeg, "status" | "txHash" | "index">>): HoodOperation => {
  const all = legs.map((l, index) => ({ ...l, index, status: "pending" as const, txHash: null }))
  return { operationId, state: "awaiting_signature", legs: all, nextLeg: nextOf(all) }
}
