/**
 * A fee claim's outcome from the calls it made (spec document 2, 3.7; Solana makes one call, Hood
 * one per asset after an optional LP-fee collection), pure. A call is `not_sent`, sent with its
 * fate unknown (`submitted_unknown`), `confirmed` or `reverted`:
 *
 *   every call not_sent ─────────────────────────────▶ not_started
 *   every call confirmed ────────────────────────────▶ complete
 *   some call submitted_unknown ─────────────────────▶ indeterminate (read fees before retrying)
 *   otherwise (some confirmed, some reverted/not_sent) ▶ partial
 *   none confirmed, some reverted, none unknown ──────▶ partial (nothing paid, nothing pending)
 */
export type CallStatus = "not_sent" | "submitted_unknown" | "confirmed" | "reverted"
export type ClaimOutcome = "complete" | "partial" | "indeterminate" | "not_started"

export const outcomeOf = (calls: ReadonlyArray<{ readonly status: CallStatus }>): ClaimOutcome => {
  if (calls.length === 0 || calls.every((c) => c.status === "not_sent")) return "not_started"
  if (calls.some((c) => c.status === "submitted_unknown")) return "indeterminate"
  if (calls.every((c) => c.status === "confirmed")) return "complete"
  return "partial"
}
