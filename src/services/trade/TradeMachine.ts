/**
 * An agent trade's lifecycle (issue 28), pure: `step(state, event) -> [state, outputs]`, the same
 * state object when nothing changes. The attempt runner (`src/services/attempt/AttemptRunner.ts`)
 * saves each new state before it performs the outputs, so a crash between the two is settled from
 * the chain and never resent.
 *
 *   (none) ─Signed(main)──▶ sending ─Observed(landed, amountOut)──▶ executed   (RecordExecuted)
 *                             │ Observed(reverted: slippage | other) ──▶ failed
 *                             │ Observed(never_lands) ───────────────▶ failed
 *                             └ Observed(pending) ─────────────────── (unchanged)
 *   sending   ─Signed──▶ (unchanged, Refuse pending)
 *   executed  ─Signed──▶ (unchanged, Replay)
 *   failed    ─Signed──▶ (unchanged, Refuse failed: a new clientTradeId is needed)
 *
 * Invariants: a trade is broadcast at most once (only (none) → sending emits `Broadcast`);
 * `RecordExecuted` (the settlement writes: the trade's fee in the account's totals and the
 * `trade.executed` event, committed with the state) is emitted exactly once, on entering
 * `executed`; observations of a settled trade change nothing.
 */

/** Why a sent trade failed on chain: the program's minimum out, any other revert, or it never landed. */
export type TradeFailureCode = "SLIPPAGE_EXCEEDED" | "TRADE_REVERTED" | "NEVER_LANDED"

export type TradeState =
  | { readonly _tag: "sending"; readonly signature: string }
  | { readonly _tag: "executed"; readonly signature: string; readonly amountOutRaw: bigint }
  | { readonly _tag: "failed"; readonly signature: string; readonly code: TradeFailureCode; readonly error: string }

export type TradeObservation =
  | { readonly outcome: "landed"; readonly amountOutRaw: bigint }
  | { readonly outcome: "reverted"; readonly code: "SLIPPAGE_EXCEEDED" | "TRADE_REVERTED"; readonly error: string }
  | { readonly outcome: "never_lands" }
  | { readonly outcome: "pending" }

export type TradeEvent =
  /** The embedded payer's signed transaction (recorded before it is sent), or a repeat of the id. */
  | { readonly _tag: "Signed"; readonly signature: string }
  /** What the chain says of the transaction sent. */
  | ({ readonly _tag: "Observed" } & TradeObservation)

export type TradeRefusal = "pending" | "failed"

export type TradeOutput =
  | { readonly _tag: "Broadcast" }
  | { readonly _tag: "RecordExecuted"; readonly signature: string; readonly amountOutRaw: bigint }
  | { readonly _tag: "Refuse"; readonly reason: TradeRefusal }
  /** A replay of an executed trade: answer it as it stands. */
  | { readonly _tag: "Replay" }

type Step = readonly [TradeState | undefined, ReadonlyArray<TradeOutput>]

export const NEVER_LANDED_ERROR = "the transaction can no longer land (Solana: its blockhash expired; Hood: its nonce went to another transaction); it never will"

/** Pure. `undefined` is "(none)": no row yet. */
export const step = (state: TradeState | undefined, event: TradeEvent): Step => {
  switch (event._tag) {
    case "Signed":
      if (state === undefined) return [{ _tag: "sending", signature: event.signature }, [{ _tag: "Broadcast" }]]
      switch (state._tag) {
        case "sending":
          return [state, [{ _tag: "Refuse", reason: "pending" }]]
        case "executed":
          return [state, [{ _tag: "Replay" }]]
        case "failed":
          return [state, [{ _tag: "Refuse", reason: "failed" }]]
      }
    // falls through (unreachable: every state returns)
    case "Observed":
      if (state?._tag !== "sending") return [state, []]
      switch (event.outcome) {
        case "landed":
          return [
            { _tag: "executed", signature: state.signature, amountOutRaw: event.amountOutRaw },
            [{ _tag: "RecordExecuted", signature: state.signature, amountOutRaw: event.amountOutRaw }]
          ]
        case "reverted":
          return [{ _tag: "failed", signature: state.signature, code: event.code, error: event.error }, []]
        case "never_lands":
          return [{ _tag: "failed", signature: state.signature, code: "NEVER_LANDED", error: NEVER_LANDED_ERROR }, []]
        case "pending":
          return [state, []]
      }
  }
}

/** Whether a process must drive the trade (its transaction may still land). */
export const inFlight = (state: TradeState): boolean => state._tag === "sending"
