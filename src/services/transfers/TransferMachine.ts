/**
 * A transfer's lifecycle on the agent transfer rail, main (embedded, server-signed) payer, pure:
 * `step(state, event) -> [state, outputs]`, the same state object when nothing changes. The one
 * attempt runner (`src/services/attempt/AttemptRunner.ts`) saves each new state before it acts
 * on the outputs, so a crash after `sending` is saved is settled from the chain, never resent.
 *
 *   (none) ─Recorded(tee, unsigned)──▶ built ─Sent(signature)──▶ sending  [Broadcast: the submit's bytes]
 *   (none) ─Built(signed)──▶ sending ─Observed(landed)──────────────▶ confirmed  [Executed once]
 *                              │ Observed(reverted | never_lands) ──▶ failed
 *                              │ Observed(pending) ─────────────────▶ sending (unchanged)
 *   any row ─Built(same request)──▶ unchanged: Replay (confirmed) · Pending (sending) · Refuse failed
 *   any row ─Built(other request)─▶ unchanged: Refuse idempotency_conflict
 *   built ─Built(same request)──▶ unchanged: Refuse built (a main-payer repeat of a TEE build)
 *   any row ─Recorded──▶ as Built, except built answers Replay (the build answered again)
 *   sending, confirmed, failed ─Sent──▶ unchanged, no output (the row answers as it stands)
 *   Every entry into confirmed or failed also emits `SettleClaim` (confirmed, failed): a TEE
 *   build's sign claim follows the transfer's outcome, whoever settled it (the submit, a recovery
 *   or reconcile pass); a row without a claim ignores it.
 *
 * Invariants: `Broadcast` is emitted once per transfer, on the only transitions into `sending`
 * ((none) → sending, built → sending; a row leaves `built` once);
 * `Executed` (the `transfer.executed` event, written in the same transaction as the state) once,
 * on entering `confirmed`; a settled transfer never moves again.
 */

export type TransferState =
  /** A TEE payer's transaction, built and claimed, not signed yet (no signature). */
  | { readonly _tag: "built"; readonly requestHash: string }
  | { readonly _tag: "sending"; readonly requestHash: string; readonly signature: string }
  | { readonly _tag: "confirmed"; readonly requestHash: string; readonly signature: string }
  | { readonly _tag: "failed"; readonly requestHash: string; readonly signature: string; readonly error: string }

export type Observation = "landed" | "reverted" | "never_lands" | "pending"

export type TransferEvent =
  /** A request under a `clientTransferId`: its body's hash and the signed transaction's signature (recorded before it is sent). */
  | { readonly _tag: "Built"; readonly requestHash: string; readonly signature: string }
  /** A TEE payer's unsigned transaction recorded with its sign claim, or a repeat of its build. */
  | { readonly _tag: "Recorded"; readonly requestHash: string }
  /** The built transaction's signature, proven over the built message (the submit sends the signed bytes). */
  | { readonly _tag: "Sent"; readonly signature: string }
  /** What the chain says of the transaction sent. */
  | { readonly _tag: "Observed"; readonly outcome: Observation; readonly error?: string }

/** `built`: a main-payer repeat of an id whose TEE build waits for its signed transaction. */
export type TransferRefusal = "idempotency_conflict" | "failed" | "built"

export type TransferOutput =
  | { readonly _tag: "Broadcast" }
  | { readonly _tag: "Executed"; readonly signature: string }
  /** The transfer settled: its sign claim (a TEE build's), if it has one, follows its outcome. */
  | { readonly _tag: "SettleClaim"; readonly outcome: "confirmed" | "failed" }
  | { readonly _tag: "Refuse"; readonly reason: TransferRefusal }
  /** The same request again, settled: answer the transfer as it stands. */
  | { readonly _tag: "Replay" }
  /** The same request again while it is in flight: answer pending; nothing is sent again. */
  | { readonly _tag: "Pending" }

type Step = readonly [TransferState | undefined, ReadonlyArray<TransferOutput>]

const CLAIM_CONFIRMED: TransferOutput = { _tag: "SettleClaim", outcome: "confirmed" }
const CLAIM_FAILED: TransferOutput = { _tag: "SettleClaim", outcome: "failed" }

export const isInFlight = (state: TransferState): boolean => state._tag === "sending"

/** Pure. `undefined` is "(none)": no row yet. */
export const step = (state: TransferState | undefined, event: TransferEvent): Step => {
  switch (event._tag) {
    case "Built":
      if (state === undefined) {
        return [{ _tag: "sending", requestHash: event.requestHash, signature: event.signature }, [{ _tag: "Broadcast" }]]
      }
      return [state, answerOf(state, event.requestHash, "built")]
    case "Recorded":
      if (state === undefined) return [{ _tag: "built", requestHash: event.requestHash }, []]
      return [state, answerOf(state, event.requestHash, "replay")]
    case "Sent":
      if (state?._tag === "built") return [{ _tag: "sending", requestHash: state.requestHash, signature: event.signature }, [{ _tag: "Broadcast" }]]
      return [state, []]
    case "Observed": {
      if (state === undefined || state._tag !== "sending") return [state, []]
      switch (event.outcome) {
        case "landed":
          return [{ _tag: "confirmed", requestHash: state.requestHash, signature: state.signature }, [{ _tag: "Executed", signature: state.signature }, CLAIM_CONFIRMED]]
        case "reverted":
          return [{ _tag: "failed", requestHash: state.requestHash, signature: state.signature, error: event.error ?? "the transaction failed on chain" }, [CLAIM_FAILED]]
        case "never_lands":
          return [
            { _tag: "failed", requestHash: state.requestHash, signature: state.signature, error: "the transaction expired before it landed; it never will" },
            [CLAIM_FAILED]
          ]
        case "pending":
          return [state, []]
      }
    }
  }
}

/** What a repeat under a stored id answers: another body is a conflict; else in flight, settled, or built (`onBuilt`). */
const answerOf = (state: TransferState, requestHash: string, onBuilt: "built" | "replay"): ReadonlyArray<TransferOutput> => {
  if (state.requestHash !== requestHash) return [{ _tag: "Refuse", reason: "idempotency_conflict" }]
  switch (state._tag) {
    case "built":
      return onBuilt === "replay" ? [{ _tag: "Replay" }] : [{ _tag: "Refuse", reason: "built" }]
    case "sending":
      return [{ _tag: "Pending" }]
    case "confirmed":
      return [{ _tag: "Replay" }]
    case "failed":
      return [{ _tag: "Refuse", reason: "failed" }]
  }
}
