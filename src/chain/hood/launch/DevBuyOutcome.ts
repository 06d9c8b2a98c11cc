/**
 * The outcome of a Hood dev buy (or its platform-fee leg) from what the chain shows (spec
 * document 1, 2.5), pure. The runtime reads the receipt, the sender's mined nonce and the clock,
 * and calls `txOutcome`; the watcher stops at a final outcome or at the deadline.
 *
 *   receipt success ─────────────────────────────▶ landed    (final)
 *   receipt status 0 ────────────────────────────▶ reverted  (final)
 *   no receipt, before the deadline ─────────────▶ pending (hash returned) / unknown (send failed)
 *   no receipt, deadline passed, nonce used ─────▶ lapsed    (final: proves nothing)
 *   no receipt, deadline passed, nonce unused ───▶ pending / unknown (the watcher stops reading)
 */

export const DevBuyOutcomes = ["landed", "reverted", "pending", "lapsed", "unknown"] as const
export type TxOutcome = (typeof DevBuyOutcomes)[number]

/** Spec 2.5: the server keeps reading the chain up to 24 hours. */
export const devBuyWatchMaxMs = 24 * 60 * 60 * 1000

export interface TxObservation {
  /** The receipt's status, or null when the chain has none (yet). */
  readonly receipt: "success" | "reverted" | null
  /** False when the send was attempted but the node never returned the hash. */
  readonly hashReturned: boolean
  /** The transaction's nonce and the sender's mined transaction count now. */
  readonly txNonce: number
  readonly minedNonce: number
  readonly sentAtMs: number
  readonly nowMs: number
  readonly watchMaxMs: number
}

export const txOutcome = (o: TxObservation): TxOutcome => {
  if (o.receipt === "success") return "landed"
  if (o.receipt === "reverted") return "reverted"
  const inFlight: TxOutcome = o.hashReturned ? "pending" : "unknown"
  if (o.nowMs - o.sentAtMs < o.watchMaxMs) return inFlight
  return o.minedNonce > o.txNonce ? "lapsed" : inFlight
}

/** No later read can change it. */
export const isFinal = (outcome: TxOutcome): boolean => outcome === "landed" || outcome === "reverted" || outcome === "lapsed"

/** The watcher reads no more: a final outcome, or the deadline passed. */
export const watchDone = (o: TxObservation, outcome: TxOutcome): boolean => isFinal(outcome) || o.nowMs - o.sentAtMs >= o.watchMaxMs

export const FeeOutcomes = ["not_sent", "forgone", "landed", "pending", "unknown", "reverted", "refused", "lapsed"] as const
export type FeeOutcome = (typeof FeeOutcomes)[number]

/**
 * The headless platform-fee leg is sent only after the dev buy landed within the launch run. A
 * buy that lands later (seen by the watcher) is `forgone`: no fee collected, nothing owed.
 */
export const feeAfterLateBuy = (buy: TxOutcome, fee: FeeOutcome): FeeOutcome => (buy === "landed" && fee === "not_sent" ? "forgone" : fee)
