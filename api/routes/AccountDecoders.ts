/**
 * Request decoding for the account and device routes (spec document 2, sections 2.2, 5.3): each
 * decoder turns a parsed JSON body into the typed input the accounts services take, or into the
 * field-level `VALIDATION_FAILED` naming the first bad field. Pure; time is a parameter. The
 * simple bodies decode through the Schema the route declares (`schemaDecoder`); the others keep
 * hand-written checks whose order and messages the spec's refusals follow.
 */
import { Schema } from "effect"
import { validationFailed } from "../../src/domain/ApiError.js"
import { PlanIds, type PlanId } from "../../src/domain/Plans.js"
import { type AgentTierRequest, MaxSources } from "../../src/services/accounts/Accounts.js"
import { CLIENT_NAME_MAX, type DeviceCodeRequest, type DeviceDecision } from "../../src/services/accounts/Devices.js"
import type { MaxSource } from "../../src/services/accounts/Tier.js"
import { DeviceDefaultScopes, isPublicScope, normalizeScopes, PublicScopes } from "../../src/services/keys/Scopes.js"
import { isApiError } from "../QueryParams.js"
import { type Decoded, isObject } from "./KeyDecoders.js"
import { schemaDecoder } from "./ServiceCall.js"

const DAY_MS = 86_400_000

/**
 * `{accountId, tier: "max", expiresAt | days, source?}` grants Max until the expiry;
 * `{accountId, tier: "free"}` (or "pro") ends an active grant.
 */
export const decodeAgentTierBody = (body: unknown, nowMs: number): Decoded<AgentTierRequest> => {
  if (!isObject(body)) return validationFailed("body", "Body must be a JSON object")
  const b = body
  if (typeof b.accountId !== "string" || b.accountId === "") return validationFailed("accountId", "accountId is required")
  const tier = b.tier ?? "max"
  if (typeof tier !== "string" || !(PlanIds as ReadonlyArray<string>).includes(tier)) return validationFailed("tier", "tier must be free, pro or max")
  const source = b.source ?? "team"
  if (typeof source !== "string" || !(MaxSources as ReadonlyArray<string>).includes(source)) {
    return validationFailed("source", `source must be one of ${MaxSources.join(", ")}`)
  }
  if (tier !== "max") return { accountId: b.accountId, tier: tier as PlanId, expiresAtMs: null, source: source as MaxSource }
  if (b.expiresAt !== undefined && b.days !== undefined) return validationFailed("expiresAt", "expiresAt and days are mutually exclusive")
  let expiresAtMs: number
  if (b.days !== undefined) {
    if (typeof b.days !== "number" || !Number.isInteger(b.days) || b.days < 1 || b.days > 3650) return validationFailed("days", "days must be an integer from 1 to 3650")
    expiresAtMs = nowMs + b.days * DAY_MS
  } else if (b.expiresAt !== undefined) {
    if (typeof b.expiresAt !== "number" || !Number.isSafeInteger(b.expiresAt) || b.expiresAt <= nowMs) {
      return validationFailed("expiresAt", "expiresAt must be epoch milliseconds in the future")
    }
    expiresAtMs = b.expiresAt
  } else return validationFailed("expiresAt", "A Max grant needs an expiry: expiresAt (epoch ms) or days")
  return { accountId: b.accountId, tier: "max", expiresAtMs, source: source as MaxSource }
}

export const EnableBody = Schema.Struct({ enabled: Schema.Boolean }).annotations({ identifier: "AgentEnableBody" })

/** `{enabled: boolean}`. */
export const decodeEnableBody = schemaDecoder(EnableBody, () => ({ field: "enabled", message: "enabled must be a boolean" }))

/** `{clientName?, scopes?, environment?}`; no scopes named is the Write level; `transfer:bound` is refused. */
export const decodeDeviceCodeBody = (body: unknown): Decoded<DeviceCodeRequest> => {
  if (body === undefined || body === null) body = {}
  if (!isObject(body)) return validationFailed("body", "Body must be a JSON object")
  const b = body
  let clientName: string | null = null
  if (b.clientName !== undefined && b.clientName !== null) {
    if (typeof b.clientName !== "string" || b.clientName.trim() === "" || [...b.clientName.trim()].length > CLIENT_NAME_MAX) {
      return validationFailed("clientName", `clientName must be 1 to ${CLIENT_NAME_MAX} characters`)
    }
    clientName = b.clientName.trim()
  }
  const env = b.environment ?? "production"
  if (env !== "production" && env !== "test") return validationFailed("environment", "environment must be production or test")
  let scopes = DeviceDefaultScopes
  if (b.scopes !== undefined && b.scopes !== null) {
    if (!Array.isArray(b.scopes)) return validationFailed("scopes", "scopes must be an array")
    if (b.scopes.length > 0) {
      const bad = b.scopes.find((s) => !isPublicScope(s))
      if (bad !== undefined) return validationFailed("scopes", `Unknown scope '${String(bad)}'; expected any of ${PublicScopes.join(", ")}`)
      if (b.scopes.includes("transfer:bound")) return validationFailed("scopes", "A device approval cannot grant transfer:bound")
      scopes = normalizeScopes(b.scopes as string[])
    }
  }
  return { clientName, scopes, environment: env }
}

export const DeviceDecisionBody = Schema.Struct({
  userCode: Schema.String,
  approve: Schema.optionalWith(Schema.Boolean, { nullable: true, default: () => true })
}).annotations({ identifier: "DeviceDecisionBody" })

/** `{userCode, approve?}` (approve defaults to true). */
export const decodeDeviceDecisionBody: (body: unknown) => Decoded<DeviceDecision> = schemaDecoder(DeviceDecisionBody, (path) =>
  path[0] === "userCode"
    ? { field: "userCode", message: "userCode is required" }
    : path[0] === "approve"
      ? { field: "approve", message: "approve must be a boolean" }
      : { field: "body", message: "Body must be {userCode, approve}" }
)

export const DeviceTokenBody = Schema.Struct({ deviceCode: Schema.String }).annotations({ identifier: "DeviceTokenBody" })

const decodeDeviceToken = schemaDecoder(DeviceTokenBody, () => ({ field: "deviceCode", message: "deviceCode is required" }))
/** `{deviceCode}`. */
export const decodeDeviceTokenBody = (body: unknown): Decoded<string> => {
  const d = decodeDeviceToken(body)
  return isApiError(d) ? d : d.deviceCode
}
