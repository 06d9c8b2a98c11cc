/**
 * The one failure of the headless launch service (`HeadlessLaunch.ts`), in the shape every service
 * failure has (`src/domain/ServiceFailure.ts`): a `reason` union, the message, the field a refusal
 * is about, the retryable flag where it depends on the situation, and `details` (the facts the
 * spec writes beside the code: `txBytes`, `maxThresholdRaw`, `reason`, ...). The parts it is
 * built from fail with their own errors (`LaunchRequestRefused`, `LaunchLedgerError`,
 * `ImageRefused`, `SolanaLaunchError`, `HoodLaunchError`, `WalletProviderError`); `fromX` here turns
 * each into this one, so the route maps a single class through `api/ErrorTable.ts`.
 *
 * `LaunchErrorCode` is the spec code of each reason: the error table answers with it, and the
 * ledger records it on a failed row (`errorCode` of the job read), so both say the same.
 */
import { Schema } from "effect"
import type { ErrorCode } from "../../domain/ErrorCodes.js"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"
import type { ImageRefused } from "../images/ImageRefused.js"
import type { KeyError } from "../keys/KeyError.js"
import type { SpendError } from "../spend/SpendError.js"
import type { PayerError, WalletError } from "../wallets/WalletError.js"
import type { WalletProviderError } from "../wallets/WalletProvider.js"
import { type WalletRefusalReason, walletRefusal } from "../wallets/WalletRefusal.js"
import type { HoodLaunchError, HoodLaunchReason } from "./HoodHeadlessLaunch.js"
import type { LaunchLedgerError } from "./LaunchLedger.js"
import type { LaunchRequestRefusalReason, LaunchRequestRefused } from "./request/LaunchRequest.js"
import type { SolanaLaunchError, SolanaLaunchFailureReason } from "./SolanaLaunchError.js"

/** One reason per spec code the launch path can answer (launch spec section 7). */
export const LaunchErrorCode = {
  validation_failed: "VALIDATION_FAILED",
  invalid_name_bytes: "INVALID_NAME_BYTES",
  invalid_symbol: "INVALID_SYMBOL",
  quote_pair_unknown: "QUOTE_PAIR_UNKNOWN",
  curve_out_of_range: "CURVE_OUT_OF_RANGE",
  dev_buy_too_high: "DEV_BUY_TOO_HIGH",
  dev_buy_unsupported_for_pair: "DEV_BUY_UNSUPPORTED_FOR_PAIR",
  image_too_large: "IMAGE_TOO_LARGE",
  image_unreachable: "IMAGE_UNREACHABLE",
  image_redirect_not_allowed: "IMAGE_REDIRECT_NOT_ALLOWED",
  image_wrong_shape: "IMAGE_WRONG_SHAPE",
  banner_unreachable: "BANNER_UNREACHABLE",
  banner_wrong_shape: "BANNER_WRONG_SHAPE",
  upload_invalid: "UPLOAD_INVALID",
  upload_rate_limited: "RATE_LIMITED",
  transaction_too_large: "TRANSACTION_TOO_LARGE",
  insufficient_owner_balance: "INSUFFICIENT_OWNER_BALANCE",
  embedded_wallet_not_permitted: "EMBEDDED_WALLET_NOT_PERMITTED",
  exclusive_not_eligible: "EXCLUSIVE_NOT_ELIGIBLE",
  agent_wallet_not_embedded: "AGENT_WALLET_NOT_EMBEDDED",
  /** An atomic leg's `{type: main}` payer and no embedded wallet on the chain (400; the headless route answers `agent_wallet_not_embedded`). */
  agent_wallet_missing: "AGENT_WALLET_MISSING",
  agent_wallet_not_delegated: "AGENT_WALLET_NOT_DELEGATED",
  delegation_revoked: "DELEGATION_REVOKED",
  spend_policy_denied: "SPEND_POLICY_DENIED",
  job_not_found: "JOB_NOT_FOUND",
  idempotency_conflict: "IDEMPOTENCY_CONFLICT",
  daily_cap_reached: "DAILY_CAP_REACHED",
  launch_failed: "LAUNCH_FAILED",
  hood_launch_unavailable: "HOOD_LAUNCH_UNAVAILABLE",
  build_timeout: "BUILD_TIMEOUT",
  tier_required: "TIER_REQUIRED",
  spend_limit_exceeded: "SPEND_LIMIT_EXCEEDED",
  signer_mismatch: "SIGNER_MISMATCH",
  fee_leg_missing: "FEE_LEG_MISSING",
  key_limit_reached: "KEY_LIMIT_REACHED",
  unrecognized_transaction: "UNRECOGNIZED_TRANSACTION",
  /** Atomic build without `BLOCK_ENGINE_URL` (endpoint rule 10): the table answers it 501. */
  block_engine_missing: "VALIDATION_FAILED"
} as const satisfies Record<string, ErrorCode>

export type LaunchErrorReason = keyof typeof LaunchErrorCode
export const LaunchErrorReasons = Object.keys(LaunchErrorCode) as ReadonlyArray<LaunchErrorReason>

export class LaunchError extends Schema.TaggedError<LaunchError>()("LaunchError", {
  reason: Schema.Literal(...(LaunchErrorReasons as [LaunchErrorReason, ...Array<LaunchErrorReason>])),
  ...failureFields
}) {}

export const launchFailure = failureOf<LaunchError, LaunchErrorReason>(LaunchError)

/** The launch reason of each request refusal (the spec's field rules, launch spec 2.1, 2.2). */
export const requestLaunchReason: { readonly [R in LaunchRequestRefusalReason]: LaunchErrorReason } = {
  body_not_object: "validation_failed",
  test_key_visibility: "validation_failed",
  payer_field_forbidden: "validation_failed",
  required: "validation_failed",
  invalid_type: "validation_failed",
  invalid_value: "validation_failed",
  too_long: "validation_failed",
  not_allowed: "validation_failed",
  quote_pair_unknown: "quote_pair_unknown",
  mode_unknown: "validation_failed",
  mode_unsupported_for_pair: "validation_failed",
  out_of_range: "validation_failed",
  curve_format: "validation_failed",
  curve_precision: "validation_failed",
  virtual_quote_out_of_range: "curve_out_of_range",
  threshold_out_of_range: "curve_out_of_range",
  price_ceiling: "curve_out_of_range",
  curve_dev_buy_cap: "dev_buy_too_high",
  buy_amount_format: "validation_failed",
  dev_buy_unsupported_for_pair: "dev_buy_unsupported_for_pair",
  dev_buy_ceiling: "dev_buy_too_high",
  name_bytes: "invalid_name_bytes",
  symbol_bytes: "invalid_symbol",
  json_unsafe: "validation_failed",
  url_invalid: "validation_failed"
}

/** The launch reason of each Solana launch failure (the ones no spec code names are `launch_failed`). */
export const solanaLaunchReason: { readonly [R in SolanaLaunchFailureReason]: LaunchErrorReason } = {
  transaction_too_large: "transaction_too_large",
  dev_buy_unfillable: "validation_failed",
  insufficient_owner_balance: "insufficient_owner_balance",
  wallet_not_embedded: "agent_wallet_not_embedded",
  wallet_not_delegated: "agent_wallet_not_delegated",
  delegation_revoked: "delegation_revoked",
  policy_denied: "spend_policy_denied",
  signing_failed: "launch_failed",
  simulation_failed: "launch_failed",
  send_refused: "launch_failed",
  chain_unavailable: "launch_failed",
  build_timeout: "build_timeout",
  reverted: "launch_failed",
  expired: "launch_failed",
  confirmation_timeout: "launch_failed"
}

/** The launch reason of each Hood launch failure: what its ledger row records on a definitive failure. */
export const hoodLaunchReason: { readonly [R in HoodLaunchReason]: LaunchErrorReason } = {
  hood_unavailable: "hood_launch_unavailable",
  no_linked_evm_wallet: "launch_failed",
  not_embedded: "agent_wallet_not_embedded",
  not_delegated: "agent_wallet_not_delegated",
  delegation_revoked: "delegation_revoked",
  policy_denied: "spend_policy_denied",
  signing_failed: "launch_failed",
  insufficient_balance: "insufficient_owner_balance",
  metadata_too_long: "validation_failed",
  not_hood: "validation_failed",
  build_reverted: "launch_failed",
  build_timeout: "build_timeout",
  chain_read_failed: "launch_failed",
  reverted: "launch_failed",
  confirm_timeout: "launch_failed"
}

const defined = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/** The curve rules write their `reason` on the wire (spec 2.2); the other request refusals do not. */
const wireReasons: ReadonlySet<string> = new Set([
  "curve_format",
  "curve_precision",
  "virtual_quote_out_of_range",
  "threshold_out_of_range",
  "price_ceiling",
  "curve_dev_buy_cap"
])

export const fromRequest = (e: LaunchRequestRefused): LaunchError =>
  launchFailure(requestLaunchReason[e.reason], e.message, {
    field: e.field,
    retryable: false,
    details: defined({ reason: wireReasons.has(e.reason) ? e.reason : undefined, maxThresholdRaw: e.maxThresholdRaw })
  })

export const fromLedger = (e: LaunchLedgerError): LaunchError => {
  switch (e.reason) {
    case "different_body":
    case "in_flight":
      return launchFailure("idempotency_conflict", e.message, { retryable: e.retryable, details: defined({ state: e.state }) })
    case "daily_cap_reached":
      return launchFailure("daily_cap_reached", e.message, {
        retryable: true,
        details: defined({ cap: e.cap, used: e.used, resetsAt: e.resetsAtMs })
      })
    default:
      return launchFailure("job_not_found", e.message, { retryable: false })
  }
}

const imageReason = (e: ImageRefused): LaunchErrorReason => {
  const banner = e.role === "banner"
  switch (e.reason) {
    case "too_large":
      return e.role === "upload" ? "upload_invalid" : "image_too_large"
    case "wrong_shape":
      return banner ? "banner_wrong_shape" : "image_wrong_shape"
    case "redirect":
      return "image_redirect_not_allowed"
    case "unreachable":
    case "not_public":
      return banner ? "banner_unreachable" : "image_unreachable"
    case "rate_limited":
      return "upload_rate_limited"
    case "invalid_url":
      return "validation_failed"
    default:
      // empty, unsupported type, undecodable, too many pixels (the field's VALIDATION_FAILED), a bad body, storage full
      return e.role === "upload" ? "upload_invalid" : "validation_failed"
  }
}

export const fromImage = (e: ImageRefused): LaunchError =>
  launchFailure(imageReason(e), e.message, {
    field: e.field,
    retryable: e.retryable,
    details: defined({
      reason: e.reason,
      limitBytes: e.limitBytes,
      width: e.width,
      height: e.height,
      retryAfter: e.retryAfterMs === undefined ? undefined : Math.ceil(e.retryAfterMs / 1000)
    })
  })

export const fromSolana = (e: SolanaLaunchError): LaunchError =>
  launchFailure(solanaLaunchReason[e.reason], e.message, {
    retryable: e.retryable,
    details: defined({
      reason: e.reason,
      txBytes: e.txBytes,
      overBy: e.overBy,
      maxNameBytes: e.maxNameBytes,
      signature: e.signature,
      mint: e.mint,
      rule: e.rule
    })
  })

export const fromHood = (e: HoodLaunchError): LaunchError =>
  launchFailure(hoodLaunchReason[e.reason], e.message, {
    retryable: e.retryable,
    details: defined({ reason: e.reason, revert: e.revert, signature: e.txHash })
  })

/** The wallet refusal's launch reason (`WalletRefusal` decides what the provider's failure means). */
const walletReasons: { readonly [R in WalletRefusalReason]: LaunchErrorReason } = {
  not_embedded: "agent_wallet_not_embedded",
  not_delegated: "agent_wallet_not_delegated",
  delegation_revoked: "delegation_revoked",
  policy_denied: "spend_policy_denied",
  signing_failed: "launch_failed"
}

export const fromProvider = (e: WalletProviderError): LaunchError => {
  const r = walletRefusal(e)
  return launchFailure(walletReasons[r.reason], r.message, { retryable: r.retryable })
}

/** A wallet read the Hood side makes (its linked-wallet list) failed: retryable, nothing sent. */
export const fromWallet = (e: WalletError): LaunchError => launchFailure("launch_failed", e.message, { retryable: true })

/** A self-signed build's payer refused by the payer rules (launch spec 2.3): `VALIDATION_FAILED` on `linkedWalletId`. */
export const fromPayer = (e: PayerError): LaunchError =>
  launchFailure("validation_failed", e.message, { field: "linkedWalletId", retryable: false, details: { reason: e.reason } })

/** The key's per-asset cap refused the dev buy plus its fee (launch endpoint rule 6): `SPEND_LIMIT_EXCEEDED` with `spendLimit`. */
export const fromKeyCap = (e: KeyError): LaunchError => launchFailure("spend_limit_exceeded", e.message, { retryable: false, details: e.details ?? {} })

/**
 * The spend gate refused or failed a launch's dev buy (`src/services/spend`): the per-asset cap is
 * `SPEND_LIMIT_EXCEEDED` with `spendLimit`, the txLimit window `KEY_LIMIT_REACHED` with `resetsAt`,
 * an uncheckable USD cap `KEY_LIMIT_REACHED` with `reason` `limit_unavailable` (retryable), a key
 * gone or storage failing a retryable `LAUNCH_FAILED` (nothing was recorded).
 */
export const fromSpend = (e: SpendError): LaunchError => {
  switch (e.reason) {
    case "spend_limit_exceeded":
      return launchFailure("spend_limit_exceeded", e.message, { retryable: false, details: e.details ?? {} })
    case "tx_limit_reached":
    case "limit_unavailable":
      return launchFailure("key_limit_reached", e.message, { retryable: e.retryable ?? false, details: e.details ?? {} })
    case "key_not_found":
    case "storage":
      return launchFailure("launch_failed", e.message, { retryable: true })
  }
}

/** The code a failed ledger row records for this failure. */
export const errorCodeOf = (e: LaunchError): ErrorCode => LaunchErrorCode[e.reason]
