/** The account and device routes' decoders: accepted shapes and the field each refusal names. */
import { describe, expect, it } from "vitest"
import type { ApiError } from "../../src/domain/ApiError.js"
import {
  decodeAgentTierBody,
  decodeDeviceCodeBody,
  decodeDeviceDecisionBody,
  decodeDeviceTokenBody,
  decodeEnableBody
} from "./AccountDecoders.js"

const NOW = Date.UTC(2026, 9, 14)
const field = (x: unknown) => {
  expect((x as ApiError)._tag, JSON.stringify(x)).toBe("ApiError")
  expect((x as ApiError).code).toBe("VALIDATION_FAILED")
  return (x as ApiError).field
}

describe("account decoders", () => {
  it("agent tier: Max needs exactly one expiry; other tiers need none", () => {
    expect(decodeAgentTierBody({ accountId: "a", days: 3650 }, NOW)).toEqual({ accountId: "a", tier: "max", expiresAtMs: NOW + 3650 * 86_400_000, source: "team" })
    expect(decodeAgentTierBody({ accountId: "a", tier: "free" }, NOW)).toEqual({ accountId: "a", tier: "free", expiresAtMs: null, source: "team" })
    expect(field(decodeAgentTierBody({ accountId: "a" }, NOW))).toBe("expiresAt")
    expect(field(decodeAgentTierBody({ accountId: "a", days: 3651 }, NOW))).toBe("days")
    expect(field(decodeAgentTierBody({ accountId: "a", days: 1, expiresAt: NOW + 1 }, NOW))).toBe("expiresAt")
    expect(field(decodeAgentTierBody({ accountId: "a", expiresAt: NOW }, NOW))).toBe("expiresAt")
    expect(field(decodeAgentTierBody({ tier: "max" }, NOW))).toBe("accountId")
    expect(field(decodeAgentTierBody({ accountId: "a", tier: "gold" }, NOW))).toBe("tier")
    expect(field(decodeAgentTierBody({ accountId: "a", tier: "free", source: "gift" }, NOW))).toBe("source")
  })
  it("enable takes a boolean (false is the service's refusal, not a decode error)", () => {
    expect([decodeEnableBody({ enabled: true, other: 1 }), decodeEnableBody({ enabled: false })]).toEqual([{ enabled: true }, { enabled: false }])
    expect(field(decodeEnableBody({ enabled: "yes" }))).toBe("enabled")
    expect(field(decodeEnableBody(undefined))).toBe("enabled")
  })
  it("device code: Write by default, named scopes normalized, transfer:bound refused, client name bounded", () => {
    expect(decodeDeviceCodeBody(undefined)).toMatchObject({ clientName: null, environment: "production" })
    expect(decodeDeviceCodeBody({ scopes: ["swap:write", "account:read"], clientName: " cli " })).toMatchObject({
      clientName: "cli",
      scopes: ["account:read", "swap:write"]
    })
    expect(field(decodeDeviceCodeBody({ scopes: ["transfer:bound"] }))).toBe("scopes")
    expect(field(decodeDeviceCodeBody({ scopes: "x" }))).toBe("scopes")
    expect(field(decodeDeviceCodeBody({ clientName: "x".repeat(65) }))).toBe("clientName")
    expect(decodeDeviceCodeBody({ clientName: "x".repeat(64) })).toMatchObject({ clientName: "x".repeat(64) })
    expect(field(decodeDeviceCodeBody({ environment: "staging" }))).toBe("environment")
  })
  it("decision and token bodies", () => {
    expect(decodeDeviceDecisionBody({ userCode: "ABCD-EFGH" })).toEqual({ userCode: "ABCD-EFGH", approve: true })
    expect(decodeDeviceDecisionBody({ userCode: "A", approve: null })).toEqual({ userCode: "A", approve: true })
    expect(decodeDeviceDecisionBody({ userCode: "A", approve: false })).toEqual({ userCode: "A", approve: false })
    expect(field(decodeDeviceDecisionBody({ approve: "no" }))).toBe("userCode")
    expect(field(decodeDeviceDecisionBody([]))).toBe("body")
    expect(field(decodeDeviceDecisionBody({ userCode: "A", approve: "no" }))).toBe("approve")
    expect(field(decodeDeviceDecisionBody({}))).toBe("userCode")
    expect(decodeDeviceTokenBody({ deviceCode: "d" })).toBe("d")
    expect(field(decodeDeviceTokenBody(["d"]))).toBe("deviceCode")
  })
})
