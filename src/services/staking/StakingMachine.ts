/**
 * A staking operation's lifecycle (spec document 2, 3.3), pure: `step(state, event) -> [state,
 * outputs]`, the same state object when nothing changes. The service's runtime records each new
 * state before it acts on the outputs (`Broadcast`, `RecordConfirmed`), so a crash between the two
 * is resolved from the chain at the next start.
 *
 *   (none) ─Built(main)──▶ sending ─Observed(landed)──▶ confirmed
 *                            │ Observed(reverted | never_lands) ▶ failed
 *   (none) ─Built(linked)─▶ built ─Submit(exact message)──▶ submitted ─Observed(landed)─▶ confirmed
 *                            │ Confirm(landed, exact message) ─────────────────────────▶ confirmed (sends nothing)
 *                            │ Expire (build window over) ▶ expired ─Confirm(landed)──▶ confirmed
 *                            │                                       └ Submit ▶ refused build_expired
 *   submitted ─Observed(reverted | never_lands)─▶ failed
 *
 * Invariants: a transaction is broadcast at most once per operation (only `built` → `submitted`
 * emits `Broadcast`; a repeated submit of a `submitted` row answers pending and sends nothing);
 * `RecordConfirmed` (the activity record) is emitted exactly once, on entering `confirmed`.
 */

export type OperationState =
  | { readonly _tag: "sending"; readonly signature: string }
  | { readonly _tag: "built"; readonly expiresAtMs: number }
  | { readonly _tag: "submitted"; readonly signature: string }
  | { readonly _tag: "confirmed"; readonly signature: string }
  | { readonly _tag: "failed"; readonly signature: string | null; readonly error: string }
  | { readonly _tag: "expired" }

export type Observation = "landed" | "reverted" | "never_lands" | "pending"

export type OperationEvent =
  /** The build: the embedded payer's signed transaction (recorded before it is sent), or a linked build. */
  | { readonly _tag: "Built"; readonly payer: "main"; readonly signature: string }
  | { readonly _tag: "Built"; readonly payer: "linked" | "tee"; readonly expiresAtMs: number }
  /** A signed transaction for a `built` row; `exactMessage`: its message is the built one. */
  | { readonly _tag: "Submit"; readonly signature: string; readonly exactMessage: boolean; readonly nowMs: number }
  /** A landed signature for a `built` or `expired` row; `landed` is what the chain says of it. */
  | { readonly _tag: "Confirm"; readonly signature: string; readonly exactMessage: boolean; readonly landed: Observation }
  /** What the chain says of the transaction sent (`sending`, `submitted`). */
  | { readonly _tag: "Observed"; readonly outcome: Observation; readonly error?: string }
  | { readonly _tag: "Expire"; readonly nowMs: number }

export type Refusal = "build_expired" | "pending" | "wrong_message" | "not_landed" | "already_confirmed" | "failed" | "not_built"

export type Output =
  | { readonly _tag: "Broadcast" }
  | { readonly _tag: "RecordConfirmed"; readonly signature: string }
  | { readonly _tag: "Refuse"; readonly reason: Refusal }
  /** A replay of a finished operation: answer it as it stands. */
  | { readonly _tag: "Replay" }

type Step = readonly [OperationState | undefined, ReadonlyArray<Output>]

const refuse = (state: OperationState | undefined, reason: Refusal): Step => [state, [{ _tag: "Refuse", reason }]]

const confirmed = (signature: string): Step => [{ _tag: "confirmed", signature }, [{ _tag: "RecordConfirmed", signature }]]

/** Pure. `undefined` is "(none)": no row yet. */
export const step = (state: OperationState | undefined, event: OperationEvent): Step => {
  switch (event._tag) {
    case "Built":
      // A repeated build: a failed or expired operation needs a new id (409), anything else is answered as it stands.
      if (state?._tag === "failed") return refuse(state, "failed")
      if (state?._tag === "expired") return refuse(state, "build_expired")
      if (state !== undefined) return [state, [{ _tag: "Replay" }]]
      return event.payer === "main"
        ? [{ _tag: "sending", signature: event.signature }, [{ _tag: "Broadcast" }]]
        : [{ _tag: "built", expiresAtMs: event.expiresAtMs }, []]
    case "Submit":
      if (state === undefined) return refuse(state, "not_built")
      switch (state._tag) {
        case "built":
          if (event.nowMs >= state.expiresAtMs) return refuse({ _tag: "expired" }, "build_expired")
          if (!event.exactMessage) return refuse(state, "wrong_message")
          return [{ _tag: "submitted", signature: event.signature }, [{ _tag: "Broadcast" }]]
        case "submitted":
        case "sending":
          return refuse(state, "pending")
        case "confirmed":
          return [state, [{ _tag: "Replay" }]]
        case "expired":
          return refuse(state, "build_expired")
        case "failed":
          return refuse(state, "failed")
      }
    // falls through (unreachable: every state returns)
    case "Confirm":
      if (state === undefined) return refuse(state, "not_built")
      switch (state._tag) {
        case "built":
        case "expired":
          if (!event.exactMessage) return refuse(state, "wrong_message")
          if (event.landed !== "landed") return refuse(state, event.landed === "pending" ? "pending" : "not_landed")
          return confirmed(event.signature)
        case "submitted":
          if (event.signature !== state.signature) return refuse(state, "wrong_message")
          return event.landed === "landed" ? confirmed(event.signature) : refuse(state, event.landed === "pending" ? "pending" : "not_landed")
        case "sending":
          return refuse(state, "pending")
        case "confirmed":
          return [state, [{ _tag: "Replay" }]]
        case "failed":
          return refuse(state, "failed")
      }
    // falls through (unreachable)
    case "Observed":
      if (state === undefined || (state._tag !== "sending" && state._tag !== "submitted")) return [state, []]
      switch (event.outcome) {
        case "landed":
          return confirmed(state.signature)
        case "reverted":
          return [{ _tag: "failed", signature: state.signature, error: event.error ?? "the transaction failed on chain" }, []]
        case "never_lands":
          return [{ _tag: "failed", signature: state.signature, error: "the transaction's blockhash expired before it landed; it never will" }, []]
        case "pending":
          return [state, []]
      }
    // falls through (unreachable)
    case "Expire":
      return state?._tag === "built" && event.nowMs >= state.expiresAtMs ? [{ _tag: "expired" }, []] : [state, []]
  }
}
