/**
 * The launch failure's codes agree with the parts' own code maps (what the ledger records on a
 * failed row is what the refusal answers), and the image refusals land on the spec's codes.
 */
import { describe, expect, it } from "vitest"
import { ImageRefusalReasons, imageRefused, ImageRoles } from "../images/ImageRefused.js"
import { HoodLaunchError, HoodLaunchReasons, ledgerErrorCode } from "./HoodHeadlessLaunch.js"
import { checkSpendCap } from "../keys/KeyRules.js"
import { PayerErrorReason, payerError } from "../wallets/WalletError.js"
import { errorCodeOf, fromHood, fromImage, fromKeyCap, fromLedger, fromPayer, fromRequest, fromSolana } from "./LaunchError.js"
import { LaunchLedgerError, LedgerRefusalReasons } from "./LaunchLedger.js"
import { LaunchRequestRefusalCode, LaunchRequestRefused, LaunchRequestRefusalReason } from "./request/LaunchRequest.js"
import { SolanaLaunchError, SolanaLaunchErrorCode, SolanaLaunchFailureReason, SolanaLaunchReasonTraits } from "./SolanaLaunchError.js"

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
})
