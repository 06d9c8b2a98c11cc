/**
 * The launch ledger row's state machine (spec document 1, 3.1, with the daily-cap rules of
 * section 8), pure: `step(row, event) -> [row, outputs]`. One row per account and
 * `clientLaunchId`, shared by the three launch paths (headless, self-signed, atomic), which the
 * row carries as `path`. The runtime (`LaunchLedger.ts`) loads and locks the row, steps it,
 * applies the outputs (cap slot takes and refunds) and writes the row, all in one transaction.
 *
 * Invariants:
 * - Pure and deterministic: no clock (time and the UTC day arrive on the events), inputs never
 *   mutated. A step that changes nothing (a refusal, a timeout, a replay, a sweep that does not
 *   apply) returns the SAME row object; the runtime writes only a new one.
 * - A refused event changes nothing and yields exactly one `Refused` output.
 * - The body hash is bound to the id for the row's lifetime: a different body (or another
 *   path) under one id is refused in every state, also after a definitive failure.
 * - `confirmed` is terminal: a same-body `Begin` replays the stored result. `failed` is left
 *   only by a same-body `Begin` (a fresh attempt, `attempt` + 1) or, for a swept Solana
 *   self-signed build from a non-TEE linked wallet, by `ConfirmSwept`.
 * - An unsent self-signed build whose transaction is proven dead (3.3), or an atomic build nothing
 *   was signed for that a same-id build supersedes, is replaced by `Rebuilt`: attempt + 1 in the
 *   same row and slot, its clock restarted.
 * - The row holds at most one daily-cap slot (`slot`): taken on acceptance (`TakeSlot`),
 *   returned on a definitive failure (`RefundSlot`) unless kept (`slot.kept`: a Hood headless
 *   launch that paid for a fee-splitter deploy keeps its admission-day slot); a timeout keeps it.
 * - `confirming` (which 3.1 leaves open) is entered when the transaction is sent (`Sent`); it is
 *   in flight exactly like `submitted`: every transition out of `submitted` applies to it,
 *   except the self-signed sweep, which only fails unsent builds.
 */
import type { Chain } from "../../domain/Chain.js"

export const LaunchPaths = ["headless", "self", "atomic"] as const
export type LaunchPath = (typeof LaunchPaths)[number]

export const LaunchStates = ["submitted", "confirming", "confirmed", "failed"] as const
export type LaunchState = (typeof LaunchStates)[number]

/** Who pays: the embedded wallet, a linked (imported) wallet, or a TEE wallet. */
export const PayerKinds = ["embedded", "linked", "tee"] as const
export type PayerKind = (typeof PayerKinds)[number]

/** The stored launch result (spec 2.5) as JSON; amounts are decimal strings. */
export type StoredResult = Readonly<Record<string, unknown>>

/** Spec section 8: a self-signed build older than this is failed by the lazy sweep. */
export const selfBuildExpiryMs = 30 * 60 * 1000
/** The reason a swept self-signed build is failed with (its job read answers `SELF_BUILD_EXPIRED`, `api/LaunchCodes.ts`). */
export const selfBuildExpiredReason = "self_build_expired"
/** Whether a row was failed by the sweep: its reason, or, swept by an older version, the spec code (the reason upper-cased); both stay revivable. */
const sweptFailure = (recorded: string | null): boolean => recorded?.toLowerCase() === selfBuildExpiredReason

/** A daily-cap slot: the UTC day (`YYYY-MM-DD`) it counts on; `kept` slots are never refunded. */
export interface Slot {
  readonly day: string
  readonly kept: boolean
}

export interface LedgerRow {
  readonly state: LaunchState
  readonly path: LaunchPath
  readonly chain: Chain
  readonly payer: PayerKind
  /** `idempotencyHash` of the canonical body. */
  readonly bodyHash: string
  /** 1 for the first attempt, + 1 for each fresh attempt after a definitive failure. */
  readonly attempt: number
  readonly slot: Slot | null
  /**
   * Set exactly when `failed`: the reason it failed with (a `LaunchErrorReason`, or
   * `selfBuildExpiredReason`); rows failed by an older version hold the spec code instead.
   */
  readonly errorCode: string | null
  readonly mint: string | null
  readonly pool: string | null
  readonly signature: string | null
  /** Set exactly when `confirmed`. */
  readonly result: StoredResult | null
  readonly attemptStartedAtMs: number
  readonly updatedAtMs: number
}

/** Where the transaction stands on chain, as far as the path knows it. */
export interface OnChain {
  readonly mint?: string | null | undefined
  readonly pool?: string | null | undefined
  readonly signature?: string | null | undefined
}

export type LedgerEvent =
  /** A launch request passed its pre-flight gates (also: a same-id repeat). */
  | {
      readonly _tag: "Begin"
      readonly path: LaunchPath
      readonly chain: Chain
      readonly payer: PayerKind
      readonly bodyHash: string
      readonly day: string
      readonly nowMs: number
    }
  /** The attempt's transaction was sent (mint, pool and signature known). */
  | { readonly _tag: "Sent"; readonly attempt: number; readonly onChain: OnChain; readonly nowMs: number }
  /** Confirmation succeeded on chain. */
  | { readonly _tag: "Confirmed"; readonly attempt: number; readonly result: StoredResult; readonly onChain: OnChain; readonly nowMs: number }
  /** Definitive failure: validation, a decoded on-chain revert, insufficient balance. */
  | { readonly _tag: "Failed"; readonly attempt: number; readonly errorCode: string; readonly keepSlot: boolean; readonly nowMs: number }
  /** Confirmation timed out: the transaction may still land. */
  | { readonly _tag: "TimedOut"; readonly attempt: number }
  /** Start of a `/launch/self/build` by the same account: expire its old self-signed builds. */
  | { readonly _tag: "SweepSelfBuild"; readonly nowMs: number }
  /** A repeat `/launch/self/build` proved the attempt's transaction dead (3.3): a new attempt replaces it, same slot. */
  | { readonly _tag: "Rebuilt"; readonly attempt: number; readonly nowMs: number }
  /** `/launch/self/confirm` verified the landed signature of a swept build on chain. */
  | { readonly _tag: "ConfirmSwept"; readonly result: StoredResult; readonly onChain: OnChain; readonly day: string; readonly nowMs: number }

export type RefusalReason =
  /** Another body or path under this id. */
  | "different_body"
  /** The id's attempt is still in flight (`submitted` or `confirming`). */
  | "in_flight"
  /** No row under this id. */
  | "not_found"
  /** The row is not in flight (already confirmed or failed). */
  | "not_in_flight"
  /** The event names an attempt that is no longer the row's row one. */
  | "stale_attempt"
  /** `ConfirmSwept` on a row that is not a swept Solana self-signed build from a linked wallet. */
  | "not_swept"
  /** `Rebuilt` on a row that is not an unsent self-signed or atomic build. */
  | "not_self_build"

export type LedgerOutput =
  /** A new attempt was accepted (the row is `submitted`). */
  | { readonly _tag: "Accepted"; readonly attempt: number; readonly fresh: boolean }
  /** Take one slot of `day`; `force` takes it even at the cap. Refused by the cap: the step is void. */
  | { readonly _tag: "TakeSlot"; readonly day: string; readonly force: boolean }
  | { readonly _tag: "RefundSlot"; readonly day: string }
  /** Same id and body already confirmed: answer the stored result, touch nothing. */
  | { readonly _tag: "Replay"; readonly result: StoredResult }
  /** 3.1 "Also": record the token and the activity, emit `launch.confirmed`. */
  | { readonly _tag: "LaunchConfirmed"; readonly attempt: number }
  /** 3.1 "Also": `launch.failed` (the attempt had been accepted). */
  | { readonly _tag: "LaunchFailed"; readonly attempt: number; readonly errorCode: string }
  | { readonly _tag: "Refused"; readonly reason: RefusalReason; readonly state: LaunchState | null }

export type Step = readonly [LedgerRow | undefined, ReadonlyArray<LedgerOutput>]

export const isInFlight = (state: LaunchState): boolean => state === "submitted" || state === "confirming"

const refused = (row: LedgerRow | undefined, reason: RefusalReason): Step => [
  row,
  [{ _tag: "Refused", reason, state: row?.state ?? null }]
]

const unchanged = (row: LedgerRow | undefined): Step => [row, []]

/** Fields the event knows; unknown ones keep the row's. */
const withOnChain = (row: LedgerRow, onChain: OnChain) => ({
  mint: onChain.mint !== undefined ? onChain.mint : row.mint,
  pool: onChain.pool !== undefined ? onChain.pool : row.pool,
  signature: onChain.signature !== undefined ? onChain.signature : row.signature
})

/** Why an event naming `attempt` cannot act on the row, or undefined when it is the row's current in-flight attempt. */
const notCurrent = (row: LedgerRow | undefined, attempt: number): RefusalReason | undefined =>
  row === undefined ? "not_found" : row.attempt !== attempt ? "stale_attempt" : isInFlight(row.state) ? undefined : "not_in_flight"

type Begin = Extract<LedgerEvent, { _tag: "Begin" }>

/** A new attempt of the request `e`: nothing known on chain yet, started now. */
const newAttempt = (e: Begin, attempt: number, slot: Slot): LedgerRow => ({
  state: "submitted",
  path: e.path,
  chain: e.chain,
  payer: e.payer,
  bodyHash: e.bodyHash,
  attempt,
  slot,
  errorCode: null,
  mint: null,
  pool: null,
  signature: null,
  result: null,
  attemptStartedAtMs: e.nowMs,
  updatedAtMs: e.nowMs
})

const begin = (row: LedgerRow | undefined, e: Begin): Step => {
  const take: LedgerOutput = { _tag: "TakeSlot", day: e.day, force: false }
  if (row === undefined) {
    return [newAttempt(e, 1, { day: e.day, kept: false }), [take, { _tag: "Accepted", attempt: 1, fresh: false }]]
  }
  if (row.bodyHash !== e.bodyHash || row.path !== e.path) return refused(row, "different_body")
  switch (row.state) {
    case "submitted":
    case "confirming":
      return refused(row, "in_flight")
    case "confirmed":
      return [row, [{ _tag: "Replay", result: row.result ?? {} }]]
    case "failed": {
      // A slot kept on this same day (fee-splitter deploy) serves the retry; otherwise the
      // retry takes today's slot and must pass today's cap.
      const kept = row.slot !== null && row.slot.day === e.day ? row.slot : null
      const attempt = row.attempt + 1
      const accepted: LedgerOutput = { _tag: "Accepted", attempt, fresh: true }
      return kept !== null
        ? [newAttempt(e, attempt, kept), [accepted]]
        : [newAttempt(e, attempt, { day: e.day, kept: false }), [take, accepted]]
    }
  }
}

/** The slot after a definitive failure, and the refund it implies. */
const failSlot = (slot: Slot | null, keepSlot: boolean): readonly [Slot | null, ReadonlyArray<LedgerOutput>] => {
  if (slot === null) return [null, []]
  if (slot.kept) return [slot, []]
  if (keepSlot) return [{ day: slot.day, kept: true }, []]
  return [null, [{ _tag: "RefundSlot", day: slot.day }]]
}

const fail = (row: LedgerRow, errorCode: string, keepSlot: boolean, nowMs: number): Step => {
  const [slot, refund] = failSlot(row.slot, keepSlot)
  return [
    { ...row, state: "failed", errorCode, slot, updatedAtMs: nowMs },
    [...refund, { _tag: "LaunchFailed", attempt: row.attempt, errorCode }]
  ]
}

/** The row confirmed with the event's result, holding `slot`. */
const confirmed = (
  row: LedgerRow,
  e: { readonly result: StoredResult; readonly onChain: OnChain; readonly nowMs: number },
  slot: Slot | null
): LedgerRow => ({ ...row, state: "confirmed", ...withOnChain(row, e.onChain), result: e.result, errorCode: null, slot, updatedAtMs: e.nowMs })

/**
 * A swept self-signed build the chain may still prove landed: on Solana from a non-TEE linked
 * wallet (3.1), and on Hood from any wallet (3.4: a mined `createCurve` is always recorded, never
 * built again; docs/decisions.md "Self-signed launches").
 */
export const isRevivable = (row: LedgerRow): boolean =>
  row.state === "failed" &&
  sweptFailure(row.errorCode) &&
  row.path === "self" &&
  (row.chain === "hood" || row.payer === "linked")

/** Pure. Returns the SAME row when the event changes nothing. Throwing is a defect. */
export const step = (row: LedgerRow | undefined, event: LedgerEvent): Step => {
  switch (event._tag) {
    case "Begin":
      return begin(row, event)
    case "Sent": {
      const why = notCurrent(row, event.attempt)
      if (why !== undefined || row === undefined) return refused(row, why ?? "not_found")
      return [{ ...row, state: "confirming", ...withOnChain(row, event.onChain), updatedAtMs: event.nowMs }, []]
    }
    case "Confirmed": {
      const why = notCurrent(row, event.attempt)
      if (why !== undefined || row === undefined) return refused(row, why ?? "not_found")
      return [confirmed(row, event, row.slot), [{ _tag: "LaunchConfirmed", attempt: row.attempt }]]
    }
    case "Failed": {
      const why = notCurrent(row, event.attempt)
      if (why !== undefined || row === undefined) return refused(row, why ?? "not_found")
      return fail(row, event.errorCode, event.keepSlot, event.nowMs)
    }
    case "TimedOut": {
      const why = notCurrent(row, event.attempt)
      if (why !== undefined || row === undefined) return refused(row, why ?? "not_found")
      // The transaction may still land: the row stays in flight and keeps its slot.
      return unchanged(row)
    }
    case "Rebuilt": {
      const why = notCurrent(row, event.attempt)
      if (why !== undefined || row === undefined) return refused(row, why ?? "not_found")
      if ((row.path !== "self" && row.path !== "atomic") || row.state !== "submitted") return refused(row, "not_self_build")
      // The dead transaction is replaced: a new attempt (new mint, new 30-minute clock) in the same slot.
      const attempt = row.attempt + 1
      return [
        { ...row, attempt, mint: null, pool: null, signature: null, errorCode: null, attemptStartedAtMs: event.nowMs, updatedAtMs: event.nowMs },
        [{ _tag: "Accepted", attempt, fresh: true }]
      ]
    }
    case "SweepSelfBuild": {
      if (row === undefined || row.path !== "self" || row.state !== "submitted") return unchanged(row)
      if (event.nowMs - row.attemptStartedAtMs <= selfBuildExpiryMs) return unchanged(row)
      return fail(row, selfBuildExpiredReason, false, event.nowMs)
    }
    case "ConfirmSwept": {
      if (row === undefined) return refused(row, "not_found")
      if (!isRevivable(row)) return refused(row, "not_swept")
      return [
        confirmed(row, event, { day: event.day, kept: false }),
        [
          // The launch is recorded after all: its slot is taken again, even at the cap.
          { _tag: "TakeSlot", day: event.day, force: true },
          { _tag: "LaunchConfirmed", attempt: row.attempt }
        ]
      ]
    }
  }
}
