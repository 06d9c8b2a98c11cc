/**
 * The launch failures' spec codes, pinned: every launch reason's code, the code each part's
 * reasons answer through `LaunchError.fromX` (request, Solana, Hood, ledger, payer, key cap,
 * images), and the `errorCode` a failed row's recorded value answers, old rows' spec codes included.
 */
import { describe, expect, it } from "vitest"
import { ErrorCodes } from "../src/domain/ErrorCodes.js"
import { selfBuildExpiredReason } from "../src/services/launch/LaunchLedgerMachine.js"
import { errorCodeOf, jobAnswer, LaunchErrorCode, launchFailureCode } from "./LaunchCodes.js"
import { ImageRefusalReasons, imageRefused, ImageRoles } from "../src/services/images/ImageRefused.js"
import { HoodLaunchError, HoodLaunchReasons, type HoodLaunchReason } from "../src/services/launch/HoodHeadlessLaunch.js"
import { checkSpendCap } from "../src/services/keys/KeyRules.js"
import { PayerErrorReason, payerError } from "../src/services/wallets/WalletError.js"
import { fromHood, fromImage, fromKeyCap, fromLedger, fromPayer, fromRequest, fromSolana, LaunchErrorReasons } from "../src/services/launch/LaunchError.js"
import { LaunchLedgerError, LedgerRefusalReasons } from "../src/services/launch/LaunchLedger.js"
import { LaunchRequestRefused, LaunchRequestRefusalReason } from "../src/services/launch/request/LaunchRequest.js"
import { SolanaLaunchError, SolanaLaunchFailureReason, SolanaLaunchReasonTraits } from "../src/services/launch/SolanaLaunchError.js"

/** The spec code each request refusal answers (all 400). */
const LaunchRequestRefusalCode: { readonly [R in LaunchRequestRefusalReason]: string } = {
  body_not_object: "VALIDATION_FAILED",
  test_key_visibility: "VALIDATION_FAILED",
  payer_field_forbidden: "VALIDATION_FAILED",
  required: "VALIDATION_FAILED",
  invalid_type: "VALIDATION_FAILED",
  invalid_value: "VALIDATION_FAILED",
  too_long: "VALIDATION_FAILED",
  not_allowed: "VALIDATION_FAILED",
  quote_pair_unknown: "QUOTE_PAIR_UNKNOWN",
  mode_unknown: "VALIDATION_FAILED",
  mode_unsupported_for_pair: "VALIDATION_FAILED",
  out_of_range: "VALIDATION_FAILED",
  curve_format: "VALIDATION_FAILED",
  curve_precision: "VALIDATION_FAILED",
  virtual_quote_out_of_range: "CURVE_OUT_OF_RANGE",
  threshold_out_of_range: "CURVE_OUT_OF_RANGE",
  price_ceiling: "CURVE_OUT_OF_RANGE",
  curve_dev_buy_cap: "DEV_BUY_TOO_HIGH",
  buy_amount_format: "VALIDATION_FAILED",
  dev_buy_unsupported_for_pair: "DEV_BUY_UNSUPPORTED_FOR_PAIR",
  dev_buy_ceiling: "DEV_BUY_TOO_HIGH",
  name_bytes: "INVALID_NAME_BYTES",
  symbol_bytes: "INVALID_SYMBOL",
  json_unsafe: "VALIDATION_FAILED",
  url_invalid: "VALIDATION_FAILED"
}

/** The spec code each Solana launch failure answers. */
const SolanaLaunchErrorCode: { readonly [R in SolanaLaunchFailureReason]: string } = {
  transaction_too_large: "TRANSACTION_TOO_LARGE",
  dev_buy_unfillable: "VALIDATION_FAILED",
  insufficient_owner_balance: "INSUFFICIENT_OWNER_BALANCE",
  wallet_not_embedded: "AGENT_WALLET_NOT_EMBEDDED",
  wallet_not_delegated: "AGENT_WALLET_NOT_DELEGATED",
  delegation_revoked: "DELEGATION_REVOKED",
  policy_denied: "SPEND_POLICY_DENIED",
  signing_failed: "LAUNCH_FAILED",
  simulation_failed: "LAUNCH_FAILED",
  send_refused: "LAUNCH_FAILED",
  chain_unavailable: "LAUNCH_FAILED",
  build_timeout: "BUILD_TIMEOUT",
  reverted: "LAUNCH_FAILED",
  expired: "LAUNCH_FAILED",
  confirmation_timeout: "LAUNCH_FAILED"
}

/** The spec code each Hood launch failure answers (and its failed job reads). */
const ledgerErrorCode: { readonly [R in HoodLaunchReason]: string } = {
  hood_unavailable: "HOOD_LAUNCH_UNAVAILABLE",
  no_linked_evm_wallet: "LAUNCH_FAILED",
  not_embedded: "AGENT_WALLET_NOT_EMBEDDED",
  not_delegated: "AGENT_WALLET_NOT_DELEGATED",
  delegation_revoked: "DELEGATION_REVOKED",
  policy_denied: "SPEND_POLICY_DENIED",
  signing_failed: "LAUNCH_FAILED",
  insufficient_balance: "INSUFFICIENT_OWNER_BALANCE",
  metadata_too_long: "VALIDATION_FAILED",
  not_hood: "VALIDATION_FAILED",
  build_reverted: "LAUNCH_FAILED",
  build_timeout: "BUILD_TIMEOUT",
  chain_read_failed: "LAUNCH_FAILED",
  reverted: "LAUNCH_FAILED",
  confirm_timeout: "LAUNCH_FAILED"
}

describe("LaunchError", () => {
  it("answers each request refusal with its code, field and (curve rules) wire reason", () => {
    for (const reason of LaunchRequestRefusalReason.literals) {
      const e = fromRequest(new LaunchRequestRefused({ reason, field: "name", message: "m", ...(reason === "price_ceiling" ? { maxThresholdRaw: "7" } : {}) }))
      expect(errorCodeOf(e)).toBe(LaunchRequestRefusalCode[reason])
      expect(e.field).toBe("name")
      expect(e.retryable).toBe(false)
    }
    const ceiling = fromRequest(new LaunchRequestRefused({ reason: "price_ceiling", field: "curve.threshold", message: "m", maxThresholdRaw: "7" }))
    expect(ceiling.details).toEqual({ reason: "price_ceiling", maxThresholdRaw: "7" })
    expect(fromRequest(new LaunchRequestRefused({ reason: "name_bytes", field: "name", message: "m" })).details).toEqual({})
  })

  it("answers each Solana reason with the code its map gives (the code the ledger records)", () => {
    for (const reason of SolanaLaunchFailureReason.literals) {
      const e = fromSolana(new SolanaLaunchError({ reason, message: "m", ...SolanaLaunchReasonTraits[reason] }))
      expect(errorCodeOf(e)).toBe(SolanaLaunchErrorCode[reason])
    }
    const big = fromSolana(new SolanaLaunchError({ reason: "transaction_too_large", message: "m", retryable: false, definitive: true, txBytes: 1300, overBy: 68, maxNameBytes: 4 }))
    expect(big.details).toMatchObject({ txBytes: 1300, overBy: 68, maxNameBytes: 4 })
  })

  it("answers each Hood reason with the code the ledger records for it", () => {
    for (const reason of HoodLaunchReasons) {
      expect(errorCodeOf(fromHood(new HoodLaunchError({ reason, message: "m", retryable: false })))).toBe(ledgerErrorCode[reason])
    }
  })

  it("maps the ledger's refusals to IDEMPOTENCY_CONFLICT, DAILY_CAP_REACHED or JOB_NOT_FOUND", () => {
    const codes = Object.fromEntries(
      LedgerRefusalReasons.map((reason) => [reason, errorCodeOf(fromLedger(new LaunchLedgerError({ reason, message: "m", retryable: reason === "in_flight" })))])
    )
    expect(codes).toEqual({
      different_body: "IDEMPOTENCY_CONFLICT",
      in_flight: "IDEMPOTENCY_CONFLICT",
      daily_cap_reached: "DAILY_CAP_REACHED",
      not_found: "JOB_NOT_FOUND",
      not_in_flight: "JOB_NOT_FOUND",
      stale_attempt: "JOB_NOT_FOUND",
      not_swept: "JOB_NOT_FOUND",
      not_self_build: "JOB_NOT_FOUND"
    })
    expect(fromLedger(new LaunchLedgerError({ reason: "in_flight", message: "m", retryable: true })).retryable).toBe(true)
    expect(fromLedger(new LaunchLedgerError({ reason: "different_body", message: "m", retryable: false })).retryable).toBe(false)
  })

  it("a self-signed payer refused by the payer rules is VALIDATION_FAILED on linkedWalletId; a key cap is SPEND_LIMIT_EXCEEDED with its figures", () => {
    for (const reason of PayerErrorReason.literals) {
      const e = fromPayer(payerError(reason, "m"))
      expect([errorCodeOf(e), e.field, e.retryable, e.details]).toEqual(["VALIDATION_FAILED", "linkedWalletId", false, { reason }])
    }
    const capped = checkSpendCap([{ asset: "sol", maxPerTxRaw: "1000" }], "abcd1234", "sol", 1001n)!
    const e = fromKeyCap(capped)
    expect([errorCodeOf(e), e.retryable]).toEqual(["SPEND_LIMIT_EXCEEDED", false])
    expect(e.details).toEqual({ spendLimit: { limitSource: "key", keyPrefix: "abcd1234", asset: "sol", capDecimal: "0.000001", attemptedDecimal: "0.000001001" } })
  })

  it("puts every image refusal on a spec code naming the request's field", () => {
    const expected: Record<string, Record<string, string>> = {
      upload: { too_large: "UPLOAD_INVALID", rate_limited: "RATE_LIMITED", invalid_body: "UPLOAD_INVALID", unsupported_type: "UPLOAD_INVALID" },
      image: { too_large: "IMAGE_TOO_LARGE", wrong_shape: "IMAGE_WRONG_SHAPE", redirect: "IMAGE_REDIRECT_NOT_ALLOWED", unreachable: "IMAGE_UNREACHABLE", not_public: "IMAGE_UNREACHABLE", unsupported_type: "VALIDATION_FAILED" },
      banner: { too_large: "IMAGE_TOO_LARGE", wrong_shape: "BANNER_WRONG_SHAPE", redirect: "IMAGE_REDIRECT_NOT_ALLOWED", unreachable: "BANNER_UNREACHABLE", not_public: "BANNER_UNREACHABLE" }
    }
    for (const role of ImageRoles) {
      for (const reason of ImageRefusalReasons) {
        const e = fromImage(imageRefused(role, reason, "m"))
        expect(e.field).toBe(role === "upload" ? "image" : role === "image" ? "imageUrl" : "bannerUrl")
        const want = expected[role]![reason]
        if (want !== undefined) expect(errorCodeOf(e), `${role}/${reason}`).toBe(want)
      }
    }
  })

  it("pins every launch reason's spec code (and each code is in ErrorCodes)", () => {
    const pinned: Record<string, string> = {
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
      block_engine_missing: "VALIDATION_FAILED"
    }
    expect(Object.fromEntries(LaunchErrorReasons.map((r) => [r, LaunchErrorCode[r]]))).toEqual(pinned)
    for (const code of Object.values(LaunchErrorCode)) expect(Object.hasOwn(ErrorCodes, code), code).toBe(true)
  })

  it("a failed row's recorded reason reads as its code; the self-signed sweep's as SELF_BUILD_EXPIRED", () => {
    for (const r of LaunchErrorReasons) expect(launchFailureCode(r)).toBe(LaunchErrorCode[r])
    expect(launchFailureCode(selfBuildExpiredReason)).toBe("SELF_BUILD_EXPIRED")
    for (const reason of HoodLaunchReasons) {
      // What the Hood side records on a definitive failure reads as the code its refusal answers.
      const e = fromHood(new HoodLaunchError({ reason, message: "m", retryable: false }))
      expect(launchFailureCode(e.reason)).toBe(ledgerErrorCode[reason])
    }
  })

  it("a row an older version failed holds the spec code itself: it reads back unchanged", () => {
    for (const stored of ["LAUNCH_FAILED", "INSUFFICIENT_OWNER_BALANCE", "HOOD_LAUNCH_UNAVAILABLE", "DELEGATION_REVOKED", "BUILD_TIMEOUT", "VALIDATION_FAILED", "SELF_BUILD_EXPIRED"]) {
      expect(launchFailureCode(stored)).toBe(stored)
    }
    // The job route answers a failed row an older version wrote exactly as that version did, and a new row the same way.
    const job = { clientLaunchId: "old", chain: "solana" as const, status: "failed" as const, mint: null, pool: null, signature: null, createdAt: 1, updatedAt: 2 }
    expect(jobAnswer({ ...job, errorCode: "INSUFFICIENT_OWNER_BALANCE" })).toEqual({ ...job, errorCode: "INSUFFICIENT_OWNER_BALANCE" })
    expect(jobAnswer({ ...job, errorCode: "insufficient_owner_balance" })).toEqual({ ...job, errorCode: "INSUFFICIENT_OWNER_BALANCE" })
    expect(jobAnswer({ ...job, errorCode: "SELF_BUILD_EXPIRED" })).toEqual({ ...job, errorCode: "SELF_BUILD_EXPIRED" })
    expect(jobAnswer({ ...job, errorCode: selfBuildExpiredReason })).toEqual({ ...job, errorCode: "SELF_BUILD_EXPIRED" })
    expect(jobAnswer({ ...job, status: "submitted" })).toEqual({ ...job, status: "submitted" })
    // Nothing recorded is lost: an unknown value is not rewritten either.
    expect(launchFailureCode("SOMETHING_ELSE")).toBe("SOMETHING_ELSE")
    expect(launchFailureCode("constructor")).toBe("constructor")
  })
})
