/**
 * How the spend gate refuses or fails (spec document 2, 2.1 key spend limits and 4.1
 * "Transaction-limit rules"; first document's `SPEND_LIMIT_EXCEEDED` and `KEY_LIMIT_REACHED`
 * rows), as one tagged error with a `reason`. The gate decides; `api/ErrorTable.ts` says what the
 * wire answers. A rail that speaks its own error (a launch's `LaunchError`) maps these reasons to
 * its own (`fromSpend` in `LaunchError.ts`).
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const SpendErrorReason = Schema.Literal(
  /** Amount plus fee over the key's per-asset cap (`details.spendLimit`). */
  "spend_limit_exceeded",
  /** The key's txLimit window would be exceeded (`details.resetsAt`; retryable unless a lifetime cap). */
  "tx_limit_reached",
  /** A USD cap with no usable price or usage: fails closed (`details.reason` = `limit_unavailable`, `retryAfter`). */
  "limit_unavailable",
  /** The key is gone from the account (revoked and deleted meanwhile): nothing can be gated. */
  "key_not_found",
  /** Storage failed; nothing was reserved or booked. */
  "storage"
)
export type SpendErrorReason = typeof SpendErrorReason.Type

export class SpendError extends Schema.TaggedError<SpendError>()("SpendError", { reason: SpendErrorReason, ...failureFields }) {}

export const spendError = failureOf<SpendError, SpendErrorReason>(SpendError)
