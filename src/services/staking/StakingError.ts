/**
 * The one failure of the staking service (spec document 2: 3.3, 3.4, 4.2): a reason and the
 * domain facts beside it (`details`: the operation's state and signature, balances, waits), in the
 * shape every service failure has (`src/domain/ServiceFailure.ts`). Which spec code, HTTP status,
 * field, `retryable` and headers answer each reason is decided once, in `api/ErrorTable.ts`
 * (`StakingRows`); the codes chosen where the spec names only a status are in docs/decisions.md
 * "Staking".
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const StakingErrorReasons = [
  // The wallet cannot pay.
  "insufficient_platform_token",
  "insufficient_staked_receipt",
  "insufficient_sol",
  "invalid_withdrawal",
  // The wallet or its delegation.
  "embedded_wallet_not_permitted",
  "agent_wallet_not_embedded",
  "agent_wallet_not_delegated",
  "delegation_revoked",
  "spend_policy_denied",
  "build_not_found",
  // Idempotency and the operation's state.
  "idempotency_conflict",
  "build_expired",
  "pending",
  "operation_failed",
  "wrong_message",
  "not_landed",
  // The pool's rules.
  "active_withdrawal_limit",
  "wait_unfinished",
  "withdrawal_finished",
  "pool_paused",
  "chain_unavailable",
  // Reward claims (3.4).
  "reward_not_found",
  "reward_not_owned",
  "reward_already_claimed",
  "reward_claim_pending",
  "reward_claim_failed",
  /** A paused key cannot claim staking rewards (spec 4.3 rule 5). */
  "key_paused",
  "storage"
] as const

export type StakingErrorReason = (typeof StakingErrorReasons)[number]

export class StakingError extends Schema.TaggedError<StakingError>()("StakingError", {
  reason: Schema.Literal(...StakingErrorReasons),
  ...failureFields
}) {}

export const stakingError = failureOf<StakingError, StakingErrorReason>(StakingError)
