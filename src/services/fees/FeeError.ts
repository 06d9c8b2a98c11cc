/**
 * The one failure of the creator-fee service (spec document 2: 2.5, 4.3, section 7), in the
 * shape every service failure has. `FeeErrorCode` is each reason's spec code.
 */
import { Schema } from "effect"
import type { ErrorCode } from "../../domain/ErrorCodes.js"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const FeeErrorCode = {
  /** Refused before signing; `details.reason` is one of 4.3 rule 6's reasons. */
  not_claimable: { code: "FEE_NOT_CLAIMABLE" },
  /** Failed after the checks; `details.stage` (`not_broadcast`, `unconfirmed`, `reverted`) and the signature. */
  claim_failed: { code: "FEE_CLAIM_FAILED" },
  /** No token this account launched has this mint. */
  token_not_found: { code: "MARKET_NOT_FOUND", field: "mint" },
  invalid_cursor: { code: "VALIDATION_FAILED", field: "cursor" },
  chain_unavailable: { code: "FEED_UNAVAILABLE" },
  storage: { code: "INTERNAL" }
} as const satisfies Record<string, { readonly code: ErrorCode; readonly status?: number; readonly field?: string }>

export type FeeErrorReason = keyof typeof FeeErrorCode
export const FeeErrorReasons = Object.keys(FeeErrorCode) as ReadonlyArray<FeeErrorReason>

export class FeeError extends Schema.TaggedError<FeeError>()("FeeError", {
  reason: Schema.Literal(...(FeeErrorReasons as [FeeErrorReason, ...Array<FeeErrorReason>])),
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
