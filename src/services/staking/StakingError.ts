/**
 * The one failure of the staking service (spec document 2: 3.3, 3.4, 4.2, and section 7's staking
 * status mapping), in the shape every service failure has (`src/domain/ServiceFailure.ts`).
 * `StakingErrorCode` is each reason's spec code and status (the error table answers with it);
 * the spec names statuses, not codes, for most staking refusals: the codes chosen are in
 * docs/decisions.md "Staking".
 */
import { Schema } from "effect"
import type { ErrorCode } from "../../domain/ErrorCodes.js"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const StakingErrorCode = {
  // 402: the wallet cannot pay.
  insufficient_platform_token: { code: "INSUFFICIENT_OWNER_BALANCE" },
  insufficient_staked_receipt: { code: "INSUFFICIENT_OWNER_BALANCE" },
  insufficient_sol: { code: "INSUFFICIENT_OWNER_BALANCE" },
  // 400
  invalid_withdrawal: { code: "VALIDATION_FAILED", field: "withdrawal" },
  // 403: the wallet or its delegation.
  embedded_wallet_not_permitted: { code: "EMBEDDED_WALLET_NOT_PERMITTED" },
  agent_wallet_not_embedded: { code: "AGENT_WALLET_NOT_EMBEDDED" },
  agent_wallet_not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED" },
  delegation_revoked: { code: "DELEGATION_REVOKED" },
  spend_policy_denied: { code: "SPEND_POLICY_DENIED" },
  // 404
  build_not_found: { code: "JOB_NOT_FOUND", field: "clientStakeId" },
  // 409: idempotency and the operation's state.
  idempotency_conflict: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  build_expired: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  pending: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  operation_failed: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  wrong_message: { code: "VALIDATION_FAILED", status: 409, field: "signedTransaction" },
  not_landed: { code: "VALIDATION_FAILED", status: 409, field: "signature" },
  // 409: the pool's rules.
  active_withdrawal_limit: { code: "VALIDATION_FAILED", status: 409 },
  wait_unfinished: { code: "VALIDATION_FAILED", status: 409, field: "withdrawal" },
  withdrawal_finished: { code: "VALIDATION_FAILED", status: 409, field: "withdrawal" },
  pool_paused: { code: "VALIDATION_FAILED", status: 409 },
  // 503
  chain_unavailable: { code: "FEED_UNAVAILABLE" },
  // Reward claims (3.4).
  reward_not_found: { code: "STAKING_REWARD_NOT_FOUND" },
  reward_not_owned: { code: "STAKING_REWARD_NOT_OWNED" },
  reward_already_claimed: { code: "STAKING_REWARD_ALREADY_CLAIMED" },
  reward_claim_pending: { code: "REWARD_CLAIM_PENDING" },
  reward_claim_failed: { code: "STAKING_REWARD_CLAIM_FAILED" },
  /** A paused key cannot claim staking rewards (spec 4.3 rule 5). */
  key_paused: { code: "VALIDATION_FAILED", status: 403 },
  storage: { code: "INTERNAL" }
} as const satisfies Record<string, { readonly code: ErrorCode; readonly status?: number; readonly field?: string }>

export type StakingErrorReason = keyof typeof StakingErrorCode
export const StakingErrorReasons = Object.keys(StakingErrorCode) as ReadonlyArray<StakingErrorReason>

export class StakingError extends Schema.TaggedError<StakingError>()("StakingError", {
  reason: Schema.Literal(...(StakingErrorReasons as [StakingErrorReason, ...Array<StakingErrorReason>])),
  ...failureFields
}) {}

export const stakingError = failureOf<StakingError, StakingErrorReason>(StakingError)
