/**
 * A staking reward claim (spec document 2, 3.4), pure: `step(state, event) -> [state, outputs]`.
 * The claim is recorded (`claiming`, with the signature and the blockhash's last valid height)
 * before its transaction leaves; the runtime records each new state before acting on the outputs.
 *
 *   (none) ─Claim(chain: unclaimed)─▶ claiming ─Observed(landed)──────────▶ claimed
 *      │ Claim(chain: claimed) → refused already_claimed (no signature stored)
 *   claiming ─Claim─▶ Observe the stored signature: landed ▶ claimed; pending ▶ refused pending
 *   claiming ─Observed(reverted | never_lands)─▶ retry (refused claim_failed, retryable)
 *   retry ─Claim(chain: unclaimed)─▶ claiming (a new transaction) ; Claim(chain: claimed) ▶ refused already_claimed
 *   claimed ─Claim─▶ answers the saved signature
 *
 * Invariants: a reward pays at most once: a new transaction is built only from (none) or `retry`,
 * and `retry` is entered only when the previous transaction can no longer pay (it reverted, or its
 * blockhash expired without it landing); the program refuses a second payment regardless.
 */

export type ClaimState =
  | { readonly _tag: "claiming"; readonly signature: string }
  | { readonly _tag: "retry"; readonly signature: string }
  | { readonly _tag: "claimed"; readonly signature: string }

export type ClaimEvent =
  /** A claim request; `chainClaimed`: the reward account says it was paid. */
  | { readonly _tag: "Claim"; readonly chainClaimed: boolean }
  | { readonly _tag: "Attempt"; readonly signature: string }
  | { readonly _tag: "Observed"; readonly outcome: "landed" | "reverted" | "never_lands" | "pending" }

export type ClaimOutput =
  /** Build, record (`Attempt`) and send a new claim transaction. */
  | { readonly _tag: "NewAttempt" }
  /** Look at the stored signature's fate. */
  | { readonly _tag: "Observe"; readonly signature: string }
  | { readonly _tag: "Send" }
  | { readonly _tag: "Answer"; readonly signature: string }
  | { readonly _tag: "Refuse"; readonly reason: "already_claimed" | "pending" | "claim_failed" }

type Step = readonly [ClaimState | undefined, ReadonlyArray<ClaimOutput>]

/** Pure. `undefined` is "(none)": no claim recorded. */
export const step = (state: ClaimState | undefined, event: ClaimEvent): Step => {
  switch (event._tag) {
    case "Claim":
      if (state === undefined || state._tag === "retry") {
        return event.chainClaimed ? [state, [{ _tag: "Refuse", reason: "already_claimed" }]] : [state, [{ _tag: "NewAttempt" }]]
      }
      return state._tag === "claimed" ? [state, [{ _tag: "Answer", signature: state.signature }]] : [state, [{ _tag: "Observe", signature: state.signature }]]
    case "Attempt":
      return state === undefined || state._tag === "retry" ? [{ _tag: "claiming", signature: event.signature }, [{ _tag: "Send" }]] : [state, []]
    case "Observed":
      if (state?._tag !== "claiming") return [state, []]
      switch (event.outcome) {
        case "landed":
          return [{ _tag: "claimed", signature: state.signature }, [{ _tag: "Answer", signature: state.signature }]]
        case "pending":
          return [state, [{ _tag: "Refuse", reason: "pending" }]]
        case "reverted":
        case "never_lands":
          return [{ _tag: "retry", signature: state.signature }, [{ _tag: "Refuse", reason: "claim_failed" }]]
      }
  }
}
