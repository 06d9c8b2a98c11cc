/**
 * The launch failures' spec codes, owned by the error table (`api/ErrorTable.ts` builds its launch
 * rows from `LaunchErrorCode`). The launch services speak reasons only: a `LaunchError` carries a
 * `LaunchErrorReason`, a failed ledger row records the reason it failed with. This module turns
 * them into the words on the wire:
 *
 * - `LaunchErrorCode`: the code each launch reason answers (launch spec section 7);
 * - `launchFailureCode`: the `errorCode` of a failed job read (launch spec 2.7) and of the
 *   `launch.failed` webhook event, from what the row recorded. Rows written before the ledger
 *   recorded reasons hold the spec code itself: a recorded value that is not a launch failure
 *   reason passes through unchanged (docs/decisions.md "Launch failures recorded as reasons").
 */
import { Layer } from "effect"
import { type ErrorCode } from "../src/domain/ErrorCodes.js"
import type { LaunchJobView } from "../src/services/launch/HeadlessLaunch.js"
import type { LaunchError, LaunchErrorReason } from "../src/services/launch/LaunchError.js"
import { LaunchFailureCodes } from "../src/services/launch/LaunchLedger.js"
import { selfBuildExpiredReason } from "../src/services/launch/LaunchLedgerMachine.js"

/** One spec code per launch reason (launch spec section 7). */
export const LaunchErrorCode: { readonly [R in LaunchErrorReason]: ErrorCode } = {
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
}

/** The spec code a launch failure answers. */
export const errorCodeOf = (e: LaunchError): ErrorCode => LaunchErrorCode[e.reason]

/** What a failed ledger row may record beyond the launch reasons: the self-signed sweep's reason (spec 3.1). */
const recordedCodes: Readonly<Record<string, ErrorCode>> = { ...LaunchErrorCode, [selfBuildExpiredReason]: "SELF_BUILD_EXPIRED" }

/**
 * The `errorCode` of a failed launch row, as its job read and its `launch.failed` event say it:
 * the recorded reason's spec code, or, for a row an older version wrote (a spec code), the value
 * as recorded.
 */
export const launchFailureCode = (recorded: string): string => (Object.hasOwn(recordedCodes, recorded) ? recordedCodes[recorded]! : recorded)

/** The job record as the job route answers it: a failed row's `errorCode` in the spec's words. */
export const jobAnswer = (job: LaunchJobView): LaunchJobView => (job.errorCode === undefined ? job : { ...job, errorCode: launchFailureCode(job.errorCode) })

/** The launch services' `LaunchFailureCodes`: the composition root and tests provide this one. */
export const launchFailureCodesLayer = Layer.succeed(LaunchFailureCodes, launchFailureCode)
