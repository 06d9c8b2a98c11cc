/**
 * The one table from a service failure to the wire. Services fail with their own tagged errors
 * (`KeyError`, ... each a `reason` union, see `src/domain/ServiceFailure.ts`); this module says,
 * for every tag and every reason, which spec `code` answers it, with which HTTP status, `field`,
 * wire `reason` and `retryable`. Routes call `toApiError` / `mapFailure` (or `answerFailure` on
 * the market-data service, whose refusals are plain bodies) and never build a refusal for a
 * service failure themselves. A new subsystem adds its class to `ServiceFailure` and
 * `FailureClasses` and its `Rows<E>` to `ErrorTable`.
 *
 * Invariants:
 * - Exhaustive by construction: `Rows<E>` is a record over `E["reason"]`, so a new reason without
 *   a row does not compile; `test/conformance/errorTable.test.ts` also reads each error class's
 *   reasons from its Schema at run time and every row's code from `ErrorCodes`.
 * - A row's `status` is set only where the spec names a different status for that situation
 *   than the code's usual one (the overrides `ErrorCodes` lists); otherwise the code's status.
 * - The failure's own members win over the row's defaults: `field` (a decoder's path), the
 *   `retryable` flag when it depends on the situation, and `details`, written beside the code.
 * - `SqlError` that reaches a route unconverted (a repository read in auth or a route module)
 *   is `INTERNAL`; services decide their storage failures themselves.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { ApiError, apiError } from "../src/domain/ApiError.js"
import { type ErrorCode, ErrorCodes } from "../src/domain/ErrorCodes.js"
import type { FailureMembers } from "../src/domain/ServiceFailure.js"
import { AccountError } from "../src/services/accounts/AccountError.js"
import { DEVICE_POLL_INTERVAL_SEC } from "../src/services/accounts/Devices.js"
import { KeyError } from "../src/services/keys/KeyError.js"
import { SpendError } from "../src/services/spend/SpendError.js"
import { MarketDataError } from "../src/services/marketdata/MarketData.js"
import { PersonalError } from "../src/services/personal/PersonalStore.js"
import { WebhookError } from "../src/services/webhooks/WebhookService.js"
import { PayerError, RebindError, SignClaimError, WalletError } from "../src/services/wallets/WalletError.js"
import { LaunchError, type LaunchErrorReason } from "../src/services/launch/LaunchError.js"
import { StakingError } from "../src/services/staking/StakingError.js"
import { TradeError } from "../src/services/trade/TradeError.js"
import { FeeError } from "../src/services/fees/FeeError.js"
import { StrategyError } from "../src/services/strategy/Strategies.js"
import { OrderError } from "../src/services/orders/OrderError.js"
import { TransferError } from "../src/services/transfers/TransferError.js"
import { json, type Reply } from "./Http.js"
import { LaunchErrorCode } from "./LaunchCodes.js"
import { tradeRefusalDetails } from "./TradeCodes.js"

export interface Row {
  readonly code: ErrorCode
  /** Only where the spec gives this situation a status other than the code's usual one. */
  readonly status?: number
  /** The field the refusal names when the failure carries none. */
  readonly field?: string
  /** The spec's `reason` member, written beside `code` (a failure's `details.reason` wins). */
  readonly reason?: string
  /** When the failure does not carry its own flag; absent: the code's hint (`ErrorCodes`). */
  readonly retryable?: boolean
  /** Response headers the spec names for this refusal. */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * The market-data service answers this refusal with its plain body `{error: message,
   * ...details}` and the row's status instead of the envelope (spec document 2, section 7).
   */
  readonly plain?: true
  /**
   * How the API words the failure's domain `details` (a recorded reason as its spec code), where
   * they carry one: the failed trade's `errorCode` (`./TradeCodes.ts`).
   */
  readonly details?: (details: { readonly [k: string]: unknown }) => { readonly [k: string]: unknown }
}

/** One row per reason: a missing reason is a compile error. */
export type Rows<E extends { readonly reason: string }> = { readonly [R in E["reason"]]: Row }

const KeyRows: Rows<KeyError> = {
  account_gone: { code: "UNAUTHORIZED" },
  agent_features_off: { code: "VALIDATION_FAILED", status: 403 },
  not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED", retryable: true },
  wallets_unreachable: { code: "KEY_ISSUANCE_FAILED", retryable: true },
  issuance_storage: { code: "KEY_ISSUANCE_FAILED", retryable: true },
  active_key_limit: { code: "VALIDATION_FAILED" },
  not_found: { code: "VALIDATION_FAILED", status: 404, field: "prefix" },
  revoked: { code: "VALIDATION_FAILED", status: 409 },
  expired: { code: "VALIDATION_FAILED", status: 409 },
  partner_key: { code: "KEY_ACCESS_PARTNER_KEY" },
  access_stale: { code: "KEY_ACCESS_STALE" },
  loosen_requires_session: { code: "LOOSEN_REQUIRES_SESSION" },
  access_unavailable: { code: "SWAP_FAILED", status: 503, retryable: true },
  spend_limit_exceeded: { code: "SPEND_LIMIT_EXCEEDED" },
  tx_limit_reached: { code: "KEY_LIMIT_REACHED" },
  /** The spec names no code for a paused key: the per-account switch's answer (agent features off), per key. */
  paused: { code: "VALIDATION_FAILED", status: 403, reason: "key_paused", retryable: false },
  storage: { code: "INTERNAL" }
}

/**
 * The spend gate (document 2, 2.1 and 4.1; first document's rows): a per-asset cap is
 * `SPEND_LIMIT_EXCEEDED` (400), the txLimit window `KEY_LIMIT_REACHED` (403, `resetsAt`), and a USD
 * cap that cannot be checked fails closed as `KEY_LIMIT_REACHED` with `reason` `limit_unavailable`.
 */
const SpendRows: Rows<SpendError> = {
  spend_limit_exceeded: { code: "SPEND_LIMIT_EXCEEDED" },
  tx_limit_reached: { code: "KEY_LIMIT_REACHED" },
  limit_unavailable: { code: "KEY_LIMIT_REACHED", reason: "limit_unavailable", retryable: true },
  key_not_found: { code: "UNAUTHORIZED" },
  storage: { code: "INTERNAL" }
}

const AccountRows: Rows<AccountError> = {
  account_not_found: { code: "VALIDATION_FAILED", status: 404, field: "accountId" },
  disable_refused: { code: "VALIDATION_FAILED", status: 403, field: "enabled" },
  solana_wallet_missing: { code: "VALIDATION_FAILED", status: 403, field: "enabled" },
  wallets_unreachable: { code: "KEY_ISSUANCE_FAILED", retryable: true },
  user_code_not_found: { code: "VALIDATION_FAILED", status: 404, field: "userCode" },
  already_decided: { code: "VALIDATION_FAILED", status: 409, field: "userCode" },
  device_not_found: { code: "VALIDATION_FAILED", status: 404, field: "prefix" },
  // RFC 8628 section 3.5 error names, in the spec's `reason` member.
  invalid_grant: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "invalid_grant" },
  access_denied: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "access_denied" },
  expired_token: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "expired_token" },
  authorization_pending: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "authorization_pending", retryable: true },
  slow_down: { code: "RATE_LIMITED", reason: "slow_down", headers: { "Retry-After": String(DEVICE_POLL_INTERVAL_SEC) } },
  storage: { code: "INTERNAL" }
}

const WalletRows: Rows<WalletError> = {
  plan_required: { code: "TIER_REQUIRED" },
  already_linked: { code: "WALLET_ALREADY_LINKED" },
  limit_reached: { code: "WALLET_LIMIT_REACHED" },
  not_found: { code: "VALIDATION_FAILED", status: 404, field: "id" },
  ownership_unproven: { code: "VALIDATION_FAILED", field: "signature" },
  allow_launch_not_tee: { code: "VALIDATION_FAILED", field: "allowLaunch" },
  no_open_import: { code: "VALIDATION_FAILED", field: "ciphertext", reason: "no_open_import" },
  import_not_opened: { code: "VALIDATION_FAILED", field: "ciphertext", reason: "not_opened" },
  import_not_a_key: { code: "VALIDATION_FAILED", field: "ciphertext", reason: "not_a_key" },
  import_address_mismatch: { code: "VALIDATION_FAILED", field: "ciphertext", reason: "address_mismatch" },
  key_not_found: { code: "VALIDATION_FAILED", field: "keyPrefix", reason: "not_found" },
  key_revoked: { code: "VALIDATION_FAILED", field: "keyPrefix", reason: "revoked" },
  key_expired: { code: "VALIDATION_FAILED", field: "keyPrefix", reason: "expired" },
  key_test: { code: "VALIDATION_FAILED", field: "keyPrefix", reason: "test_key" },
  key_missing_scope: { code: "VALIDATION_FAILED", field: "keyPrefix", reason: "missing_scope" },
  storage: { code: "INTERNAL" }
}

// The payer rules of a self-signed build (launch document 2.3): the build's `linkedWalletId`.
const PayerRows: Rows<PayerError> = {
  not_found: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "not_found" },
  revoked: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "revoked" },
  wallet_not_signable: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "wallet_not_signable" },
  chain_mismatch: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "chain_mismatch" },
  key_not_bound: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "key_not_bound" },
  launch_not_allowed: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "launch_not_allowed" }
}

const SignClaimRows: Rows<SignClaimError> = {
  build_undecodable: { code: "VALIDATION_FAILED", field: "transaction" },
  wallet_not_found: { code: "VALIDATION_FAILED", status: 404, field: "id" },
  wallet_not_signable: { code: "UNRECOGNIZED_TRANSACTION", reason: "wallet_not_signable" },
  key_not_bound: { code: "UNRECOGNIZED_TRANSACTION", reason: "key_not_bound" },
  undecodable: { code: "UNRECOGNIZED_TRANSACTION", reason: "undecodable" },
  no_matching_claim: { code: "UNRECOGNIZED_TRANSACTION", reason: "no_matching_claim" },
  signer_authorization_failed: { code: "UNRECOGNIZED_TRANSACTION", reason: "signer_authorization_failed" },
  scope_missing: { code: "SCOPE_MISSING" },
  // The rule that denied it (`details.reason`) wins over the generic one.
  policy_denied: { code: "SPEND_POLICY_DENIED", reason: "policy" },
  not_embedded: { code: "AGENT_WALLET_NOT_EMBEDDED" },
  not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED" },
  delegation_revoked: { code: "DELEGATION_REVOKED" },
  not_a_signer: { code: "UNRECOGNIZED_TRANSACTION", reason: "not_a_signer" },
  bad_transaction: { code: "UNRECOGNIZED_TRANSACTION", reason: "bad_transaction" },
  provider_wallet_not_found: { code: "UNRECOGNIZED_TRANSACTION", reason: "not_found" },
  key_unavailable: { code: "INTERNAL" }
}

// Spec document 2, 4.1 "Rebind rules".
const RebindRows: Rows<RebindError> = {
  too_many: { code: "REBIND_TOO_MANY" },
  target_not_found: { code: "REBIND_TARGET_INVALID", reason: "not_found" },
  target_revoked: { code: "REBIND_TARGET_INVALID", reason: "revoked" },
  target_expired: { code: "REBIND_TARGET_INVALID", reason: "expired" },
  target_test_key: { code: "REBIND_TARGET_INVALID", reason: "test_key" },
  target_missing_scope: { code: "REBIND_TARGET_INVALID", reason: "missing_scope" },
  wallet_not_found: { code: "REBIND_WALLET_INVALID", reason: "not_found" },
  wallet_not_tee: { code: "REBIND_WALLET_INVALID", reason: "not_tee" },
  wallet_inactive: { code: "REBIND_WALLET_INVALID", reason: "inactive" },
  wallet_authority_not_verified: { code: "REBIND_WALLET_INVALID", reason: "authority_not_verified" },
  wallet_ambiguous: { code: "REBIND_WALLET_INVALID", reason: "ambiguous" },
  stale: { code: "REBIND_STALE" },
  build_open: { code: "REBIND_BUILD_OPEN" },
  forward_pending: { code: "REBIND_FORWARD_OPEN", reason: "pending" },
  forward_unexpirable: { code: "REBIND_FORWARD_OPEN", reason: "unexpirable" },
  scope_full: { code: "REBIND_SCOPE_FULL" },
  reconcile_incomplete: { code: "REBIND_RECONCILE_INCOMPLETE" }
}

const WebhookRows: Rows<WebhookError> = {
  // `details.reason` carries the public-target check's reason.
  target_refused: { code: "VALIDATION_FAILED", field: "url", reason: "invalid_url" },
  limit_reached: { code: "WEBHOOK_LIMIT_REACHED" },
  not_found: { code: "VALIDATION_FAILED", status: 404, field: "id", reason: "webhook_not_found" },
  revoked: { code: "VALIDATION_FAILED", status: 409, field: "id", reason: "webhook_revoked" },
  storage: { code: "INTERNAL" }
}

/** The market-data service's personal routes: caps and foreign ids answer its plain bodies. */
const PersonalRows: Rows<PersonalError> = {
  cap: { code: "RATE_LIMITED", plain: true },
  not_found: { code: "VALIDATION_FAILED", status: 404, plain: true },
  storage: { code: "FEED_UNAVAILABLE", retryable: true }
}

/** The market-data reads: history and warm-up outages are the retryable 503, unknown assets its plain 404. */
const MarketDataRows: Rows<MarketDataError> = {
  history_unavailable: { code: "FEED_UNAVAILABLE", retryable: true, headers: { "Retry-After": "2" } },
  markets_loading: { code: "FEED_UNAVAILABLE", retryable: true, headers: { "Retry-After": "2" } },
  market_not_found: { code: "MARKET_NOT_FOUND" },
  not_found: { code: "VALIDATION_FAILED", status: 404, plain: true }
}

/**
 * Launches: each reason answers its spec code (`LaunchErrorCode` in `./LaunchCodes.ts`, which also
 * answers a failed row's recorded reason in the job read, so the job read and the refusal agree); the rate-limited upload names its wait.
 */
const LaunchRows: Rows<LaunchError> = Object.fromEntries(
  Object.entries(LaunchErrorCode).map(([reason, code]) => [reason, reason === "block_engine_missing" ? { code, status: 501, retryable: true } : { code }])
) as Record<LaunchErrorReason, Row>

/**
 * Staking (spec document 2, section 7's staking status mapping): the spec names statuses, not
 * codes, for most staking refusals; the codes chosen are in docs/decisions.md "Staking". The
 * service's failures carry reasons and domain facts only: which are retryable, and the pending
 * reward claim's wait, are decided here.
 */
const StakingRows: Rows<StakingError> = {
  // 402: the wallet cannot pay.
  insufficient_platform_token: { code: "INSUFFICIENT_OWNER_BALANCE" },
  insufficient_staked_receipt: { code: "INSUFFICIENT_OWNER_BALANCE" },
  insufficient_sol: { code: "INSUFFICIENT_OWNER_BALANCE" },
  // 400
  invalid_withdrawal: { code: "VALIDATION_FAILED", field: "withdrawal" },
  // 403: the wallet or its delegation.
  embedded_wallet_not_permitted: { code: "EMBEDDED_WALLET_NOT_PERMITTED" },
  agent_wallet_not_embedded: { code: "AGENT_WALLET_NOT_EMBEDDED" },
  agent_wallet_not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED", retryable: true },
  delegation_revoked: { code: "DELEGATION_REVOKED", retryable: true },
  spend_policy_denied: { code: "SPEND_POLICY_DENIED" },
  // 404
  build_not_found: { code: "JOB_NOT_FOUND", field: "clientStakeId" },
  // 409: idempotency and the operation's state.
  idempotency_conflict: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  build_expired: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  pending: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId", retryable: true },
  operation_failed: { code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId" },
  wrong_message: { code: "VALIDATION_FAILED", status: 409, field: "signedTransaction" },
  not_landed: { code: "VALIDATION_FAILED", status: 409, field: "signature" },
  // 409: the pool's rules.
  active_withdrawal_limit: { code: "VALIDATION_FAILED", status: 409 },
  wait_unfinished: { code: "VALIDATION_FAILED", status: 409, field: "withdrawal" },
  withdrawal_finished: { code: "VALIDATION_FAILED", status: 409, field: "withdrawal" },
  pool_paused: { code: "VALIDATION_FAILED", status: 409 },
  // 503
  chain_unavailable: { code: "FEED_UNAVAILABLE", retryable: true },
  // Reward claims (3.4).
  reward_not_found: { code: "STAKING_REWARD_NOT_FOUND" },
  reward_not_owned: { code: "STAKING_REWARD_NOT_OWNED" },
  reward_already_claimed: { code: "STAKING_REWARD_ALREADY_CLAIMED" },
  reward_claim_pending: { code: "REWARD_CLAIM_PENDING", retryable: true, headers: { "Retry-After": "2" } },
  reward_claim_failed: { code: "STAKING_REWARD_CLAIM_FAILED", retryable: true },
  /** A paused key cannot claim staking rewards (spec 4.3 rule 5). */
  key_paused: { code: "VALIDATION_FAILED", status: 403 },
  storage: { code: "INTERNAL" }
}

/**
 * The trade rail (issue 28): the spec names the codes (launch spec section 7, document 2 section
 * 7) but rarely a status for a trade; the choices are in docs/decisions.md "Trade rail". A trade
 * the chain refused on its minimum out is SLIPPAGE_EXCEEDED (the trade row code, at its status).
 * A failed trade's refusal carries the row's recorded reason as `details.errorCode`: its code on
 * the wire (`./TradeCodes.ts`, an older row's code unchanged).
 */
const TradeRows: Rows<TradeError> = {
  zero_amount: { code: "VALIDATION_FAILED", field: "amountIn" },
  exceeds_curve_supply: { code: "VALIDATION_FAILED", field: "amountIn" },
  exceeds_pool_liquidity: { code: "VALIDATION_FAILED", field: "amountIn" },
  external_token: { code: "MARKET_NOT_FOUND", field: "mint" },
  market_not_tradable: { code: "MARKET_NOT_TRADABLE" },
  chain_unsupported: { code: "VALIDATION_FAILED", field: "chain" },
  slippage_exceeded: { code: "SLIPPAGE_EXCEEDED", field: "minAmountOut" },
  embedded_wallet_not_permitted: { code: "EMBEDDED_WALLET_NOT_PERMITTED" },
  agent_wallet_missing: { code: "AGENT_WALLET_MISSING", field: "payer" },
  agent_wallet_not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED", retryable: true },
  delegation_revoked: { code: "DELEGATION_REVOKED", retryable: true },
  spend_policy_denied: { code: "SPEND_POLICY_DENIED" },
  insufficient_balance: { code: "INSUFFICIENT_OWNER_BALANCE" },
  idempotency_conflict: { code: "IDEMPOTENCY_CONFLICT", field: "clientTradeId" },
  pending: { code: "IDEMPOTENCY_CONFLICT", field: "clientTradeId", retryable: true, headers: { "Retry-After": "2" } },
  trade_not_found: { code: "JOB_NOT_FOUND", field: "clientTradeId" },
  wrong_transaction: { code: "VALIDATION_FAILED", status: 409, field: "signedTransaction" },
  trade_slippage: { code: "SLIPPAGE_EXCEEDED", field: "minAmountOut", details: tradeRefusalDetails },
  trade_reverted: { code: "TRADE_REVERTED", details: tradeRefusalDetails },
  never_landed: { code: "SWAP_FAILED", retryable: false, details: tradeRefusalDetails },
  invalid_cursor: { code: "VALIDATION_FAILED", field: "cursor" },
  chain_unavailable: { code: "QUOTE_UNAVAILABLE", retryable: true, headers: { "Retry-After": "2" } },
  storage: { code: "INTERNAL" }
}

/** Creator fees (spec document 2, 4.3): each reason's code; `details` carries `reason` or `stage`. */
const FeeRows: Rows<FeeError> = {
  not_claimable: { code: "FEE_NOT_CLAIMABLE" },
  claim_failed: { code: "FEE_CLAIM_FAILED" },
  token_not_found: { code: "MARKET_NOT_FOUND", field: "mint" },
  invalid_cursor: { code: "VALIDATION_FAILED", field: "cursor" },
  chain_unavailable: { code: "FEED_UNAVAILABLE" },
  storage: { code: "INTERNAL" }
}

/**
 * The strategy lab's saved strategies (spec document 2, 4.5): an unknown or foreign id is the
 * plain 404; the daily save quota names its wait (`Retry-After` from the failure's `retryAfterMs`).
 */
const StrategyRows: Rows<StrategyError> = {
  not_found: { code: "VALIDATION_FAILED", status: 404, plain: true },
  quota: { code: "RATE_LIMITED" },
  invalid: { code: "VALIDATION_FAILED", field: "body" },
  retired: { code: "VALIDATION_FAILED", status: 409, field: "status", reason: "retired" },
  unavailable: { code: "FEED_UNAVAILABLE", retryable: true, headers: { "Retry-After": "2" } }
}

/** Limit orders (issue 29): the codes chosen where the spec names none are in docs/decisions.md "Limit orders". */
const OrderRows: Rows<OrderError> = {
  plan_required: { code: "TIER_REQUIRED" },
  market_not_found: { code: "MARKET_NOT_FOUND", field: "mint" },
  market_not_tradable: { code: "MARKET_NOT_TRADABLE" },
  open_order_limit: { code: "VALIDATION_FAILED", status: 409, reason: "open_orders_limit" },
  invalid_expiry: { code: "VALIDATION_FAILED", field: "expiresAt" },
  idempotency_conflict: { code: "IDEMPOTENCY_CONFLICT", field: "clientOrderId" },
  order_not_found: { code: "VALIDATION_FAILED", status: 404, field: "orderId" },
  order_not_open: { code: "VALIDATION_FAILED", status: 409, field: "orderId", reason: "not_open" },
  invalid_cursor: { code: "VALIDATION_FAILED", field: "cursor" },
  storage: { code: "INTERNAL" }
}

// Withdrawal addresses, trusted wallets and the transfer rail (document 2: 2.1, section 5 rule 7).
const TransferRows: Rows<TransferError> = {
  loosen_requires_session: { code: "LOOSEN_REQUIRES_SESSION" },
  address_invalid: { code: "VALIDATION_FAILED", field: "address" },
  /** The spec names no code for this bound; the wallet count's code reads as "limit reached" with `details.limit`. */
  address_limit: { code: "VALIDATION_FAILED", status: 409, reason: "withdrawal_address_limit" },
  address_not_found: { code: "VALIDATION_FAILED", status: 404, field: "id" },
  wallet_not_found: { code: "VALIDATION_FAILED", status: 404, field: "walletIds", reason: "wallet_not_found" },
  batch_invalid: { code: "VALIDATION_FAILED", field: "walletIds" },
  destination_not_allowed: { code: "VALIDATION_FAILED", field: "to", reason: "destination_not_allowed" },
  same_wallet: { code: "VALIDATION_FAILED", field: "to", reason: "same_wallet" },
  embedded_wallet_not_permitted: { code: "EMBEDDED_WALLET_NOT_PERMITTED" },
  wallet_not_embedded: { code: "AGENT_WALLET_NOT_EMBEDDED" },
  wallet_not_delegated: { code: "AGENT_WALLET_NOT_DELEGATED" },
  delegation_revoked: { code: "DELEGATION_REVOKED" },
  signing_refused: { code: "SPEND_POLICY_DENIED" },
  asset_unsupported: { code: "VALIDATION_FAILED", field: "asset", reason: "asset_unsupported" },
  insufficient_balance: { code: "INSUFFICIENT_OWNER_BALANCE" },
  idempotency_conflict: { code: "IDEMPOTENCY_CONFLICT", field: "clientTransferId", retryable: false },
  transfer_failed: { code: "IDEMPOTENCY_CONFLICT", field: "clientTransferId", reason: "failed", retryable: false },
  chain_unavailable: { code: "FEED_UNAVAILABLE", retryable: true },
  chain_unsupported: { code: "VALIDATION_FAILED", field: "chain", reason: "chain_unsupported" },
  scope_missing: { code: "SCOPE_MISSING" },
  payer_not_tee: { code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "not_tee" },
  transfer_not_found: { code: "JOB_NOT_FOUND", field: "clientTransferId" },
  wrong_transaction: { code: "VALIDATION_FAILED", status: 409, field: "signedTransaction" },
  storage: { code: "INTERNAL" }
}

/** Every service failure a route may see. */
export type ServiceFailure =
  | KeyError
  | SpendError
  | AccountError
  | WebhookError
  | PersonalError
  | MarketDataError
  | WalletError
  | PayerError
  | SignClaimError
  | RebindError
  | LaunchError
  | StakingError
  | TradeError
  | FeeError
  | StrategyError
  | OrderError
  | TransferError
  | SqlError

/** The error classes whose reasons the table covers (the conformance test reads their Schemas). */
export const FailureClasses = [
  KeyError,
  SpendError,
  AccountError,
  WebhookError,
  PersonalError,
  MarketDataError,
  WalletError,
  PayerError,
  SignClaimError,
  RebindError,
  LaunchError,
  StakingError,
  TradeError,
  FeeError,
  StrategyError,
  OrderError,
  TransferError
] as const

type ReasonedTag = Exclude<ServiceFailure, SqlError>["_tag"]

export const ErrorTable: { readonly [T in ReasonedTag]: Rows<Extract<ServiceFailure, { readonly _tag: T }>> } & { readonly SqlError: Row } = {
  KeyError: KeyRows,
  SpendError: SpendRows,
  AccountError: AccountRows,
  WebhookError: WebhookRows,
  PersonalError: PersonalRows,
  MarketDataError: MarketDataRows,
  WalletError: WalletRows,
  PayerError: PayerRows,
  SignClaimError: SignClaimRows,
  RebindError: RebindRows,
  LaunchError: LaunchRows,
  StakingError: StakingRows,
  TradeError: TradeRows,
  FeeError: FeeRows,
  StrategyError: StrategyRows,
  OrderError: OrderRows,
  TransferError: TransferRows,
  SqlError: { code: "INTERNAL" }
}

const sqlMessage = "Internal error; nothing was recorded"

/** The row that answers `e`. */
export const rowOf = (e: ServiceFailure): Row =>
  e._tag === "SqlError" ? ErrorTable.SqlError : (ErrorTable[e._tag] as Readonly<Record<string, Row>>)[e.reason]!

/** The wire error for a service failure (the envelope refusal). */
export const toApiError = (e: ServiceFailure): ApiError => {
  const row = rowOf(e)
  if (e._tag === "SqlError") return apiError(row.code, sqlMessage)
  const f: FailureMembers = e
  const details = f.details !== undefined && row.details !== undefined ? row.details(f.details) : f.details
  const extra = { ...(row.reason !== undefined ? { reason: row.reason } : {}), ...details }
  const field = f.field ?? row.field
  const retryable = f.retryable ?? row.retryable
  const headers =
    f.retryAfterMs !== undefined ? { ...row.headers, "Retry-After": String(Math.max(1, Math.ceil(f.retryAfterMs / 1000))) } : row.headers
  return new ApiError({
    code: row.code,
    message: f.message,
    ...(field !== undefined ? { field } : {}),
    ...(row.status !== undefined ? { status: row.status } : {}),
    ...(retryable !== undefined ? { retryable } : {}),
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
    ...(headers !== undefined ? { headers: { ...headers } } : {})
  })
}

/**
 * What a market-data route answers for a failure: the plain reply for a plain row (a success of
 * the handler), the envelope refusal otherwise.
 */
export const answerFailure = (e: ServiceFailure): Effect.Effect<Reply, ApiError> => {
  const row = rowOf(e)
  if (row.plain === true && e._tag !== "SqlError") {
    const f: FailureMembers = e
    return Effect.succeed(json(row.status ?? ErrorCodes[row.code].status, { error: f.message, ...f.details }))
  }
  return Effect.fail(toApiError(e))
}

/** An unconverted storage failure (a repository read in auth or a route module): logged, then its row. */
export const storageRefusal = (e: SqlError): Effect.Effect<never, ApiError> =>
  Effect.zipRight(Effect.logError("storage failure", e), Effect.fail(toApiError(e)))

/** Maps an effect's failures through the table. */
export const mapFailure = <A, R>(self: Effect.Effect<A, ServiceFailure, R>): Effect.Effect<A, ApiError, R> =>
  Effect.catchAll(self, (e) => (e._tag === "SqlError" ? storageRefusal(e) : Effect.fail(toApiError(e))))

/** The status a row answers: its own where the spec names one, else its code's usual status. */
export const statusOf = (row: Row): number => row.status ?? ErrorCodes[row.code].status

/**
 * The envelope codes `tables` answer at `status` (plain rows left out: they are not the envelope),
 * in table order, each once: a route documents its refusals from the rows of the failures its
 * service can fail with, so the document follows the table. Throws at construction when no row
 * answers `status` (a route documenting a status its failures never reach).
 */
export const codesAt = (status: number, ...tables: ReadonlyArray<Readonly<Record<string, Row>>>): readonly [ErrorCode, ...ErrorCode[]] => {
  const codes = [...new Set(tables.flatMap((t) => Object.values(t).filter((r) => r.plain !== true && statusOf(r) === status).map((r) => r.code)))]
  if (codes.length === 0) throw new Error(`No row of these tables answers ${status}`)
  return codes as unknown as readonly [ErrorCode, ...ErrorCode[]]
}
