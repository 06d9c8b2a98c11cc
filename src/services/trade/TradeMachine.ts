/**
 * An agent trade's lifecycle (issue 28), pure: `step(state, event) -> [state, outputs]`, the same
 * state object when nothing changes. The attempt runner (`src/services/attempt/AttemptRunner.ts`)
 * saves each new state before it performs the outputs, so a crash between the two is settled from
 * the chain and never resent.
 *
 *   (none) ─Built(linked | tee)──▶ built ─Sent(signature)──▶ sending     (Broadcast: the submit's bytes, or
 *                                                                     none when the caller broadcast it)
 *   (none) ─Signed(main)──▶ sending ─Observed(landed, amountOut)──▶ executed   (RecordExecuted)
 *                             │ Observed(reverted: slippage | other) ──▶ failed
 *                             │ Observed(never_lands) ───────────────▶ failed
 *                             └ Observed(pending) ─────────────────── (unchanged)
 *   sending   ─Signed──▶ (unchanged, Refuse pending)
 *   executed  ─Signed──▶ (unchanged, Replay)
 *   failed    ─Signed──▶ (unchanged, Refuse failed: a new clientTradeId is needed)
 *   built     ─Built──▶ (unchanged, Replay: the build answered again); ─Signed──▶ (unchanged, Refuse built)
 *   sending, executed, failed ─Sent──▶ as Signed (the row answers as it stands; nothing is sent again)
 *   built ─Found(signature)──▶ sending   (Watch: the caller broadcast it itself and never said so;
 *                                         the chain holds a landed transaction carrying the built message)
 *   built ─Lapsed──▶ failed never_landed (its blockhash expired and no landed transaction carries it)
 *   Every entry into executed or failed also emits `SettleClaim` (confirmed, failed): a linked or
 *   TEE build's sign claim follows the trade's outcome, whoever settled it (a request, a recovery
 *   or watch pass); a row without a claim ignores it.
 *   A stored `built` row owes `Trace` when a watch pass looks at it (`traced`): look for it on chain.
 *
 * Invariants: a trade is broadcast at most once (only (none) → sending and built ─Sent→ sending
 * emit `Broadcast`, and a row leaves `built` once); a built trade fails unsent only on `Lapsed`,
 * which its port reports only once the transaction can provably never land;
 * `RecordExecuted` (the settlement writes: the trade's fee in the account's totals and the
 * `trade.executed` event, committed with the state) is emitted exactly once, on entering
 * `executed`; observations of a settled trade change nothing.
 */

/**
 * Why a sent trade failed on chain: the program's minimum out, any other revert, or it never
 * landed. The row records the reason (`agent_trades.error_code`); the spec code its answers say is
 * the API's (`api/TradeCodes.ts`). A row an older version failed holds the code itself.
 */
export const TradeFailureReasons = ["slippage_exceeded", "reverted", "never_landed"] as const
export type TradeFailureReason = (typeof TradeFailureReasons)[number]
/** A failure the chain reported for a landed (or preflight-refused) transaction. */
export type RevertReason = Exclude<TradeFailureReason, "never_landed">

/**
 * The reason a failed row's recorded value means. Pure. A row an older version failed recorded the
 * spec code, the reason upper-cased (its revert as `trade_reverted`): any value that is not
 * `slippage_exceeded` or `never_landed` in either case reads as a revert.
 */
export const failureReasonOf = (recorded: string | null): TradeFailureReason => {
  const reason = recorded?.toLowerCase()
  return reason === "slippage_exceeded" || reason === "never_landed" ? reason : "reverted"
}

export type TradeState =
  /** A linked or TEE payer's transaction, built and claimed, not signed yet (no signature). */
  | { readonly _tag: "built" }
  | { readonly _tag: "sending"; readonly signature: string }
  | { readonly _tag: "executed"; readonly signature: string; readonly amountOutRaw: bigint }
  /** `reason`: as recorded, a `TradeFailureReason` (an older version's row: its spec code; `failureReasonOf` reads both). */
  | { readonly _tag: "failed"; readonly signature: string; readonly reason: string; readonly error: string }

export type TradeObservation =
  | { readonly outcome: "landed"; readonly amountOutRaw: bigint }
  | { readonly outcome: "reverted"; readonly reason: RevertReason; readonly error: string }
  | { readonly outcome: "never_lands" }
  | { readonly outcome: "pending" }

export type TradeEvent =
  /** The embedded payer's signed transaction (recorded before it is sent), or a repeat of the id. */
  | { readonly _tag: "Signed"; readonly signature: string }
  /** A linked or TEE payer's unsigned transaction recorded with its sign claim, or a repeat of its build. */
  | { readonly _tag: "Built" }
  /** The built transaction's signature, proven over the built message: sent by the submit, or already broadcast by the caller (confirm). */
  | { readonly _tag: "Sent"; readonly signature: string }
  /** What the chain says of the transaction sent. */
  | ({ readonly _tag: "Observed" } & TradeObservation)
  /** A built trade's transaction found landed on chain (the caller signed and broadcast it itself): its signature. */
  | { readonly _tag: "Found"; readonly signature: string }
  /** A built trade that can never land: its blockhash expired and no landed transaction carries the built message. */
  | { readonly _tag: "Lapsed" }

/** `built`: a main-payer repeat of an id whose build waits for its signed transaction. */
export type TradeRefusal = "pending" | "failed" | "built"

export type TradeOutput =
  | { readonly _tag: "Broadcast" }
  /** Await the verdict of a transaction already on chain (nothing to send). */
  | { readonly _tag: "Watch" }
  /** Look on chain for a built trade's transaction: landed (`Found`), can never land (`Lapsed`), or not decided yet (nothing). */
  | { readonly _tag: "Trace" }
  | { readonly _tag: "RecordExecuted"; readonly signature: string; readonly amountOutRaw: bigint }
  /** The trade settled: the build's sign claim (linked, TEE), if it has one, follows its outcome. */
  | { readonly _tag: "SettleClaim"; readonly outcome: "confirmed" | "failed" }
  | { readonly _tag: "Refuse"; readonly reason: TradeRefusal }
  /** A replay of an executed trade: answer it as it stands. */
  | { readonly _tag: "Replay" }

type Step = readonly [TradeState | undefined, ReadonlyArray<TradeOutput>]

export const UNSENT_ERROR = "the built transaction's blockhash expired and no landed transaction carries it; it never will land"

export const NEVER_LANDED_ERROR = "the transaction can no longer land (Solana: its blockhash expired; Hood: its nonce went to another transaction); it never will"

const CLAIM_CONFIRMED: TradeOutput = { _tag: "SettleClaim", outcome: "confirmed" }
const CLAIM_FAILED: TradeOutput = { _tag: "SettleClaim", outcome: "failed" }

/** Pure. `undefined` is "(none)": no row yet. */
export const step = (state: TradeState | undefined, event: TradeEvent): Step => {
  switch (event._tag) {
    case "Signed":
      if (state === undefined) return [{ _tag: "sending", signature: event.signature }, [{ _tag: "Broadcast" }]]
      return [state, answerOf(state, "built")]
    case "Built":
      if (state === undefined) return [{ _tag: "built" }, []]
      return [state, answerOf(state, "replay")]
    case "Sent":
      if (state?._tag === "built") return [{ _tag: "sending", signature: event.signature }, [{ _tag: "Broadcast" }]]
      return [state, state === undefined ? [] : answerOf(state, "built")]
    case "Found":
      if (state?._tag === "built") return [{ _tag: "sending", signature: event.signature }, [{ _tag: "Watch" }]]
      return [state, []]
    case "Lapsed":
      if (state?._tag === "built") return [{ _tag: "failed", signature: "", reason: "never_landed", error: UNSENT_ERROR }, [CLAIM_FAILED]]
      return [state, []]
    case "Observed":
      if (state?._tag !== "sending") return [state, []]
      switch (event.outcome) {
        case "landed":
          return [
            { _tag: "executed", signature: state.signature, amountOutRaw: event.amountOutRaw },
            [{ _tag: "RecordExecuted", signature: state.signature, amountOutRaw: event.amountOutRaw }, CLAIM_CONFIRMED]
          ]
        case "reverted":
          return [{ _tag: "failed", signature: state.signature, reason: event.reason, error: event.error }, [CLAIM_FAILED]]
        case "never_lands":
          return [{ _tag: "failed", signature: state.signature, reason: "never_landed", error: NEVER_LANDED_ERROR }, [CLAIM_FAILED]]
        case "pending":
          return [state, []]
      }
  }
}

/** What a repeat answers for a stored state: in flight, failed, executed (replayed), or built (`onBuilt`: refused, or replayed as the build). */
const answerOf = (state: TradeState, onBuilt: "built" | "replay"): ReadonlyArray<TradeOutput> => {
  switch (state._tag) {
    case "built":
      return onBuilt === "replay" ? [{ _tag: "Replay" }] : [{ _tag: "Refuse", reason: "built" }]
    case "sending":
      return [{ _tag: "Refuse", reason: "pending" }]
    case "executed":
      return [{ _tag: "Replay" }]
    case "failed":
      return [{ _tag: "Refuse", reason: "failed" }]
  }
}

/** What a stored state owes a watch pass: a built trade is looked for on chain; nothing else. Pure. */
export const traced = (state: TradeState): ReadonlyArray<TradeOutput> => (state._tag === "built" ? [{ _tag: "Trace" }] : [])

/** Whether a process must drive the trade (its transaction may still land). */
export const inFlight = (state: TradeState): boolean => state._tag === "sending"
