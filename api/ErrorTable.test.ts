/**
 * The one error table: what each kind of row writes on the wire (status, code, field, reason,
 * retryable, details, headers), and the plain bodies of the market-data service. Completeness
 * (every reason of every error class has a row) is `test/conformance/errorTable.test.ts`.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Logger, LogLevel } from "effect"
import { describe, expect, it } from "vitest"
import { accountError } from "../src/services/accounts/AccountError.js"
import { keyError } from "../src/services/keys/KeyError.js"
import { checkSpendCap, checkTxLimit } from "../src/services/keys/KeyRules.js"
import { mapFailure, type ServiceFailure, toApiError } from "./ErrorTable.js"
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

  it("details are written beside the code", () => {
    expect(wire(keyError("access_stale", "stale", { details: { currentScopes: ["account:read"] } })).body).toMatchObject({
      code: "KEY_ACCESS_STALE",
      currentScopes: ["account:read"]
    })
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
})
