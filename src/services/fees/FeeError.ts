/**
 * The one failure of the creator-fee service (spec document 2: 2.5, 4.3, section 7), in the
 * shape every service failure has; `api/ErrorTable.ts` answers each reason with its spec code.
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const FeeErrorReason = Schema.Literal(
  /** Refused before signing; `details.reason` is one of 4.3 rule 6's reasons. */
  "not_claimable",
  /** Failed after the checks; `details.stage` (`not_broadcast`, `unconfirmed`, `reverted`) and the signature. */
  "claim_failed",
  /** No token this account launched has this mint. */
  "token_not_found",
  "invalid_cursor",
  "chain_unavailable",
  "storage"
)
export type FeeErrorReason = typeof FeeErrorReason.Type

export class FeeError extends Schema.TaggedError<FeeError>()("FeeError", {
  reason: FeeErrorReason,
  ...failureFields
}) {}

export const feeError = failureOf<FeeError, FeeErrorReason>(FeeError)

/** 4.3 rule 6. */
export type NotClaimableReason =
  | "below_dust"
  | "wallet_not_signable"
  | "not_recipient"
  | "delegation_off"
  | "embedded_wallet_not_permitted"
  | "insufficient_gas"
  | "gas_estimate_unavailable"
