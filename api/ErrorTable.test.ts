/**
 * The one error table: what each kind of row writes on the wire (status, code, field, reason,
 * retryable, details, headers), and the plain bodies of the market-data service. Completeness
 * (every reason of every error class has a row) is `test/conformance/errorTable.test.ts`.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Logger, LogLevel } from "effect"
import { describe, expect, it } from "vitest"
import { errorEnvelope } from "../src/domain/ApiError.js"
import { accountError } from "../src/services/accounts/AccountError.js"
import { keyError } from "../src/services/keys/KeyError.js"
import { checkSpendCap, checkTxLimit } from "../src/services/keys/KeyRules.js"
import { feeError } from "../src/services/fees/FeeError.js"
import { personalError } from "../src/services/personal/PersonalStore.js"
import { stakingError, StakingErrorReasons } from "../src/services/staking/StakingError.js"
import { webhookError } from "../src/services/webhooks/WebhookService.js"
import { launchFailure } from "../src/services/launch/LaunchError.js"
import { answerFailure, mapFailure, type ServiceFailure, toApiError } from "./ErrorTable.js"
import { errorReply } from "./Http.js"

const wire = (e: ServiceFailure) => {
  const reply = errorReply(toApiError(e))
  return { status: reply.status, body: JSON.parse(String(reply.body)).error as Record<string, unknown>, headers: Object.fromEntries(reply.headers ?? []) }
}

describe("error table rows on the wire", () => {
  it("a plain row: the code's own status and retryable hint, the failure's message", () => {
    expect(wire(keyError("active_key_limit", "Active key limit reached (max 12 active keys)"))).toEqual({
      status: 400,
      body: { code: "VALIDATION_FAILED", message: "Active key limit reached (max 12 active keys)", retryable: false },
      headers: {}
    })
    expect(wire(keyError("partner_key", "no")).status).toBe(409)
    expect(wire(keyError("loosen_requires_session", "no")).body.code).toBe("LOOSEN_REQUIRES_SESSION")
  })

  it("a status the spec names for the situation, and the row's field unless the failure names one", () => {
    expect(wire(keyError("agent_features_off", "off"))).toMatchObject({ status: 403, body: { code: "VALIDATION_FAILED" } })
    expect(wire(keyError("not_found", "No key", { field: "prefix" }))).toMatchObject({ status: 404, body: { code: "VALIDATION_FAILED", field: "prefix" } })
    expect(wire(keyError("not_found", "No key")).body.field).toBe("prefix")
    expect(wire(keyError("revoked", "Key has been revoked"))).toMatchObject({ status: 409, body: { code: "VALIDATION_FAILED" } })
    expect(wire(keyError("access_unavailable", "x", { retryable: true }))).toMatchObject({ status: 503, body: { code: "SWAP_FAILED", retryable: true } })
    expect(wire(accountError("device_not_found", "No device", { field: "prefix" }))).toMatchObject({ status: 404, body: { field: "prefix" } })
    expect(wire(accountError("user_code_not_found", "Unknown"))).toMatchObject({ status: 404, body: { field: "userCode" } })
  })

  it("storage failures: issuance 503 KEY_ISSUANCE_FAILED retryable; elsewhere INTERNAL; an unconverted SqlError INTERNAL", () => {
    expect(wire(keyError("issuance_storage", "Key issuance failed; nothing was issued"))).toMatchObject({
      status: 503,
      body: { code: "KEY_ISSUANCE_FAILED", retryable: true }
    })
    expect(wire(keyError("wallets_unreachable", "down"))).toMatchObject({ status: 503, body: { code: "KEY_ISSUANCE_FAILED", retryable: true } })
    expect(wire(keyError("storage", "Internal error; nothing was recorded"))).toMatchObject({ status: 500, body: { code: "INTERNAL" } })
    expect(wire(webhookError("storage", "x")).status).toBe(500)
    const sql = new SqlError({ cause: new Error("connection reset"), message: "connection reset" })
    expect(wire(sql)).toMatchObject({ status: 500, body: { code: "INTERNAL", message: "Internal error; nothing was recorded" } })
    expect(JSON.stringify(wire(sql))).not.toContain("connection reset")
    const exit = Effect.runSyncExit(mapFailure(Effect.fail(sql)).pipe(Effect.catchAll((e) => Effect.succeed(e.code)), Logger.withMinimumLogLevel(LogLevel.None)))
    expect(Exit.isSuccess(exit) && exit.value).toBe("INTERNAL")
  })

  it("the spending checks' refusals keep their details (SPEND_LIMIT_EXCEEDED, KEY_LIMIT_REACHED)", () => {
    const spend = checkSpendCap([{ asset: "sol", maxPerTxRaw: "1500000000" }], "ABCDEFGH", "sol", 1_500_000_001n)!
    expect(wire(spend)).toMatchObject({
      status: 400,
      body: {
        code: "SPEND_LIMIT_EXCEEDED",
        spendLimit: { limitSource: "key", keyPrefix: "ABCDEFGH", asset: "sol", capDecimal: "1.5", attemptedDecimal: "1.500000001" }
      }
    })
    const wed = Date.UTC(2026, 9, 14, 15, 30)
    const daily = checkTxLimit({ usdMicros: 100, reset: "daily" }, 60, 41, wed)!
    expect(wire(daily)).toMatchObject({ status: 403, body: { code: "KEY_LIMIT_REACHED", retryable: true, resetsAt: Date.UTC(2026, 9, 15), usedUsdMicros: 60 } })
    const lifetime = checkTxLimit({ usdMicros: 1, reset: "never" }, 1, 1, wed)!
    expect(wire(lifetime)).toMatchObject({ body: { code: "KEY_LIMIT_REACHED", retryable: false, resetsAt: null } })
  })

  it("atomic launches (launch spec 4, rules 9 and 10): no block engine is 501 VALIDATION_FAILED retryable; a re-priced leg 403 UNRECOGNIZED_TRANSACTION; the txLimit KEY_LIMIT_REACHED", () => {
    expect(wire(launchFailure("block_engine_missing", "no block engine", { retryable: true }))).toMatchObject({ status: 501, body: { code: "VALIDATION_FAILED", retryable: true } })
    // Without the failure's own flag the row still says retryable.
    expect(wire(launchFailure("block_engine_missing", "no block engine")).body.retryable).toBe(true)
    // Every other VALIDATION_FAILED stays a 400.
    expect(wire(launchFailure("validation_failed", "bad", { field: "firstBuys[0]" }))).toMatchObject({ status: 400, body: { code: "VALIDATION_FAILED", field: "firstBuys[0]" } })
    expect(wire(launchFailure("unrecognized_transaction", "altered", { field: "signedTxsBase64[0]" }))).toMatchObject({
      status: 403,
      body: { code: "UNRECOGNIZED_TRANSACTION", field: "signedTxsBase64[0]", retryable: false }
    })
    expect(wire(launchFailure("key_limit_reached", "limit", { retryable: true, details: { reason: "limit_unavailable", retryAfter: 30 } }))).toMatchObject({
      status: 403,
      body: { code: "KEY_LIMIT_REACHED", reason: "limit_unavailable", retryAfter: 30, retryable: true }
    })
  })

  it("details are written beside the code; a failure's details.reason wins over the row's reason", () => {
    expect(wire(keyError("access_stale", "stale", { details: { currentScopes: ["account:read"] } })).body).toMatchObject({
      code: "KEY_ACCESS_STALE",
      currentScopes: ["account:read"]
    })
    expect(wire(webhookError("target_refused", "private", { field: "url", details: { reason: "private" } }))).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_FAILED", field: "url", reason: "private" }
    })
    expect(wire(webhookError("not_found", "No webhook endpoint 'x'", { field: "id" }))).toMatchObject({
      status: 404,
      body: { code: "VALIDATION_FAILED", field: "id", reason: "webhook_not_found" }
    })
    expect(wire(webhookError("revoked", "revoked")).body.reason).toBe("webhook_revoked")
    expect(wire(webhookError("limit_reached", "max 3", { details: { limit: 3 } })).body).toMatchObject({ code: "WEBHOOK_LIMIT_REACHED", limit: 3 })
  })

  it("the device flow's poll refusals: RFC 8628 reasons, pending retryable, slow_down 429 with Retry-After", () => {
    expect(wire(accountError("invalid_grant", "Unknown device code", { field: "deviceCode" }))).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_FAILED", field: "deviceCode", reason: "invalid_grant", retryable: false }
    })
    expect(wire(accountError("authorization_pending", "Waiting")).body).toMatchObject({ reason: "authorization_pending", retryable: true, field: "deviceCode" })
    expect(wire(accountError("slow_down", "Poll at most every 5 seconds"))).toMatchObject({
      status: 429,
      body: { code: "RATE_LIMITED", reason: "slow_down" },
      headers: { "Retry-After": "5" }
    })
  })

  it("the staking status mapping (spec document 2, section 7): every staking reason's status; REWARD_CLAIM_PENDING with Retry-After: 2", () => {
    const expected: Record<(typeof StakingErrorReasons)[number], number> = {
      insufficient_platform_token: 402,
      insufficient_staked_receipt: 402,
      insufficient_sol: 402,
      invalid_withdrawal: 400,
      embedded_wallet_not_permitted: 403,
      agent_wallet_not_embedded: 403,
      agent_wallet_not_delegated: 403,
      delegation_revoked: 403,
      spend_policy_denied: 403,
      key_paused: 403,
      reward_not_owned: 403,
      build_not_found: 404,
      reward_not_found: 404,
      idempotency_conflict: 409,
      build_expired: 409,
      pending: 409,
      operation_failed: 409,
      wrong_message: 409,
      not_landed: 409,
      active_withdrawal_limit: 409,
      wait_unfinished: 409,
      withdrawal_finished: 409,
      pool_paused: 409,
      reward_already_claimed: 409,
      reward_claim_pending: 409,
      chain_unavailable: 503,
      reward_claim_failed: 503,
      storage: 500
    }
    for (const reason of StakingErrorReasons) expect([reason, wire(stakingError(reason, "x")).status]).toEqual([reason, expected[reason]])
    expect(wire(stakingError("reward_claim_pending", "in progress", { retryable: true }))).toMatchObject({
      status: 409,
      body: { code: "REWARD_CLAIM_PENDING", retryable: true },
      headers: { "Retry-After": "2" }
    })
    expect(wire(stakingError("reward_claim_failed", "retry", { retryable: true })).body).toMatchObject({ code: "STAKING_REWARD_CLAIM_FAILED", retryable: true })
    expect(wire(feeError("not_claimable", "no", { details: { reason: "delegation_off" } }))).toMatchObject({ status: 409, body: { code: "FEE_NOT_CLAIMABLE", reason: "delegation_off" } })
    expect(wire(feeError("claim_failed", "no", { details: { stage: "unconfirmed", signature: "sig" } }))).toMatchObject({
      status: 500,
      body: { code: "FEE_CLAIM_FAILED", stage: "unconfirmed", signature: "sig" }
    })
  })

  it("the market-data service's plain rows answer plain bodies; storage is the FEED_UNAVAILABLE envelope", async () => {
    const cap = await Effect.runPromise(answerFailure(personalError("cap", "follow limit reached", { details: { quota: 25, used: 25 } })))
    expect([cap.status, JSON.parse(String(cap.body))]).toEqual([429, { error: "follow limit reached", quota: 25, used: 25 }])
    const missing = await Effect.runPromise(answerFailure(personalError("not_found", "rule not found")))
    expect([missing.status, JSON.parse(String(missing.body))]).toEqual([404, { error: "rule not found" }])
    const down = await Effect.runPromise(Effect.flip(answerFailure(personalError("storage", "Personal data unavailable: x", { retryable: true }))))
    expect([down.httpStatus, errorEnvelope(down).error]).toEqual([503, { code: "FEED_UNAVAILABLE", message: "Personal data unavailable: x", retryable: true }])
  })
})
