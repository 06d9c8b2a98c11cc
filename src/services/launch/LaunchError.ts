/**
 * The one failure of the headless launch service (`HeadlessLaunch.ts`), in the shape every service
 * failure has (`src/domain/ServiceFailure.ts`): a `reason` union, the message, the field a refusal
 * is about, the retryable flag where it depends on the situation, and `details` (the facts the
 * spec writes beside the code: `txBytes`, `maxThresholdRaw`, `reason`, ...). The parts it is
 * built from fail with their own errors (`LaunchRequestRefused`, `LaunchLedgerError`,
 * `ImageRefused`, `SolanaLaunchError`, `HoodLaunchError`, `WalletProviderError`); `fromX` here turns
 * each into this one, so the route maps a single class through `api/ErrorTable.ts`.
 *
 * Reasons only: `api/LaunchCodes.ts` (the error table's) gives each reason its spec code. A failed
 * ledger row records the reason; the job read and `launch.failed` answer its code from there.
 */
import { Schema } from "effect"
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

/** One reason per failure the launch path can answer (launch spec section 7; `api/LaunchCodes.ts` gives each its spec code). */
export const LaunchErrorReasons = [
  "validation_failed",
  "invalid_name_bytes",
  "invalid_symbol",
  "quote_pair_unknown",
  "curve_out_of_range",
  "dev_buy_too_high",
  "dev_buy_unsupported_for_pair",
  "image_too_large",
  "image_unreachable",
  "image_redirect_not_allowed",
  "image_wrong_shape",
  "banner_unreachable",
  "banner_wrong_shape",
  "upload_invalid",
  "upload_rate_limited",
  "transaction_too_large",
  "insufficient_owner_balance",
  "embedded_wallet_not_permitted",
  "exclusive_not_eligible",
  "agent_wallet_not_embedded",
  /** An atomic leg's `{type: main}` payer and no embedded wallet on the chain (400; the headless route answers `agent_wallet_not_embedded`). */
  "agent_wallet_missing",
  "agent_wallet_not_delegated",
  "delegation_revoked",
  "spend_policy_denied",
  "job_not_found",
  "idempotency_conflict",
  "daily_cap_reached",
  "launch_failed",
  "hood_launch_unavailable",
  "build_timeout",
  "tier_required",
  "spend_limit_exceeded",
  "signer_mismatch",
  "fee_leg_missing",
  "key_limit_reached",
  "unrecognized_transaction",
  /** Atomic build without `BLOCK_ENGINE_URL` (endpoint rule 10): the table answers it 501. */
  "block_engine_missing"
] as const

export type LaunchErrorReason = (typeof LaunchErrorReasons)[number]

export class LaunchError extends Schema.TaggedError<LaunchError>()("LaunchError", {
  reason: Schema.Literal(...LaunchErrorReasons),
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

