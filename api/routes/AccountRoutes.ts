/**
 * Account routes: the admin Max grant (`POST /api/v1/admin/agent-tier`, operator admins only),
 * agent features on (`POST /api/v1/agent/enable`, session only), device authorization (request a
 * code, look it up and approve or deny from a session, exchange for a device token) and device
 * management (session only: a device token cannot list or revoke devices or approve another).
 * The spec leaves the device-flow paths open; ours are under `/api/v1/auth/device`.
 * Each route declares its authentication and its inputs (bodies through `AccountDecoders.ts`), which
 * the router runs before the handler; handlers call the accounts services and map failures
 * through the one table (`ErrorTable.ts`).
 */
import type { SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Schema } from "effect"
import { applyAgentTier, setAgentFeatures } from "../../src/services/accounts/Accounts.js"
import { AccountWallets, type AccountWalletsShape } from "../../src/services/accounts/AccountWallets.js"
import { type DeviceExchange, Devices, type DevicesShape } from "../../src/services/accounts/Devices.js"
import { TierService } from "../../src/services/accounts/TierService.js"
import { KeyService } from "../../src/services/keys/KeyService.js"
import { KeyStore } from "../../src/services/keys/KeyStore.js"
import { makeAgentAuth } from "../auth/AgentKeyAuth.js"
import { makeDataBearerAuth } from "../auth/DataBearerAuth.js"
import { makeOwnerAuth } from "../auth/OwnerAuth.js"
import { keyRoutes, type KeyRoutesDeps } from "./KeyRoutes.js"
import { maxStatus } from "../../src/services/accounts/Tier.js"
import { API_KEY_HEADER } from "../auth/AgentKeyAuth.js"
import { AUTHORIZATION_HEADER, type OwnerAuth } from "../auth/OwnerAuth.js"
import { rowOf } from "../ErrorTable.js"
import type { Request } from "../Http.js"
import { param, stringParam } from "../QueryParams.js"
import { answer, refusal } from "../OpenApi.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import {
  decodeAgentTierBody,
  decodeDeviceCodeBody,
  decodeDeviceDecisionBody,
  decodeDeviceTokenBody,
  decodeEnableBody,
  DeviceDecisionBody,
  DeviceTokenBody,
  EnableBody
} from "./AccountDecoders.js"
import {
  AgentEnabled,
  AgentTierGranted,
  DeviceCode,
  DeviceExchangeAnswer,
  DeviceList,
  DeviceRequestAnswer,
  DeviceRevoked
} from "./KeyResponses.js"
import { reply } from "./ServiceCall.js"

export interface AccountRoutesDeps {
  readonly devices: DevicesShape
  readonly ownerAuth: OwnerAuth
  readonly wallets: AccountWalletsShape
  readonly sql: SqlClient.SqlClient
  readonly nowMs: () => number
}

const HEADERS = [AUTHORIZATION_HEADER, API_KEY_HEADER]

/** The exchange answer; a failed provisioning names the code the table gives its failure. */
const exchangeView = (x: DeviceExchange) => ({
  deviceToken: x.deviceToken,
  devicePrefix: x.devicePrefix,
  accountId: x.accountId,
  scopes: x.scopes,
  ...(x.provisioning.provisioned
    ? // The key exactly as `POST /api/v1/agent/keys` answers it.
      { provisioned: true, key: { success: true, ...x.provisioning.key } }
    : { provisioned: false, code: rowOf(x.provisioning.failure).code, message: x.provisioning.failure.message })
})

const AgentTierBody = Schema.Struct({
  accountId: Schema.String,
  tier: Schema.optional(Schema.Literal("free", "pro", "max")),
  expiresAt: Schema.optional(Schema.Int),
  days: Schema.optional(Schema.Int),
  source: Schema.optional(Schema.Literal("subscription", "trial", "team", "promo"))
}).annotations({ identifier: "AgentTierBody" })
const DeviceCodeBody = Schema.Struct({
  clientName: Schema.optional(Schema.String),
  scopes: Schema.optional(Schema.Array(Schema.String)),
  environment: Schema.optional(Schema.Literal("production", "test"))
}).annotations({ identifier: "DeviceCodeBody" })

export const accountRoutes = (deps: AccountRoutesDeps): ReadonlyArray<RouteDef> => {
  const { devices, ownerAuth, sql } = deps
  const session = (req: Request) => ownerAuth.session(req.headers)

  return [
    route({
      method: "POST",
      path: "/api/v1/admin/agent-tier",
      operationId: "grantAgentTier",
      summary: "Grant Max with an expiry, or end a grant (operator admins only)",
      tags: ["admin"],
      auth: "session",
      headers: HEADERS,
      body: decodedBody({ schema: AgentTierBody, maxBytes: 2048, decode: (body) => decodeAgentTierBody(body, deps.nowMs()) }),
      responses: {
        200: answer("The account's tier state", AgentTierGranted),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED"]),
        403: refusal(["ADMIN_REQUIRED"]),
        404: refusal(["VALIDATION_FAILED"], "no such account")
      },
      authenticate: (req) => ownerAuth.session(req.headers, { admin: true }),
      handler: (_req, { body: grant }) => {
        const nowMs = deps.nowMs()
        return reply(
          Effect.map(applyAgentTier(grant, nowMs).pipe(Effect.provideService(SqlClient.SqlClient, sql)), (account) => {
            const max = maxStatus(account, nowMs)
            return {
              accountId: account.id,
              plan: account.plan,
              maxGrantExpiresAt: account.maxGrantExpiresAtMs,
              maxGrantSource: account.maxGrantSource,
              maxTierExpiresAt: max.maxTierExpiresAt,
              maxExpired: max.maxExpired
            }
          })
        )
      }
    }),
    route({
      method: "POST",
      path: "/api/v1/agent/enable",
      operationId: "enableAgentFeatures",
      summary: "Turn agent features on (session only; needs a linked Solana wallet)",
      tags: ["keys"],
      auth: "session",
      headers: HEADERS,
      body: decodedBody({ schema: EnableBody, maxBytes: 1024, decode: decodeEnableBody }),
      responses: {
        200: answer("Enabled", AgentEnabled),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED"]),
        403: refusal(["VALIDATION_FAILED"], "disabling is refused, or no linked Solana wallet"),
        503: refusal(["KEY_ISSUANCE_FAILED"], "the wallet provider was unreachable")
      },
      authenticate: session,
      handler: (_req, { body: { enabled } }, s) =>
        reply(Effect.as(setAgentFeatures(s.accountId, enabled, deps.wallets).pipe(Effect.provideService(SqlClient.SqlClient, sql)), { enabled: true }))
    }),
    route({
      method: "POST",
      path: "/api/v1/auth/device/code",
      operationId: "requestDeviceCode",
      summary: "Device authorization: request a device code and a user code",
      tags: ["devices"],
      auth: "public",
      body: decodedBody({ schema: DeviceCodeBody, maxBytes: 2048, decode: decodeDeviceCodeBody }),
      responses: { 200: answer("deviceCode, userCode, verificationUri, expiresIn, interval, scopes", DeviceCode), 400: refusal(["VALIDATION_FAILED"]) },
      handler: (_req, { body }) => reply(devices.requestCode(body))
    }),
    route({
      method: "GET",
      path: "/api/v1/auth/device",
      operationId: "describeDeviceRequest",
      summary: "Show a device request's exact scopes before approving (session only)",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      query: {
        user_code: param({
          description: "The code the device shows (without one no request is found: 404)",
          schema: { type: "string" },
          decode: (raw) => raw ?? ""
        })
      },
      responses: { 200: answer("The request", DeviceRequestAnswer), 401: refusal(["UNAUTHORIZED"]), 404: refusal(["VALIDATION_FAILED"], "no pending request with this user code") },
      authenticate: session,
      handler: (_req, { user_code }, s) => reply(devices.describe(s, user_code))
    }),
    route({
      method: "POST",
      path: "/api/v1/auth/device/decision",
      operationId: "decideDeviceRequest",
      summary: "Approve or deny a device request (session only)",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      body: decodedBody({ schema: DeviceDecisionBody, maxBytes: 1024, decode: decodeDeviceDecisionBody }),
      responses: {
        200: answer("The decided request", DeviceRequestAnswer),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED"]),
        404: refusal(["VALIDATION_FAILED"], "no pending request with this user code"),
        409: refusal(["VALIDATION_FAILED"], "already decided")
      },
      authenticate: session,
      handler: (_req, { body }, s) => reply(devices.decide(s, body))
    }),
    route({
      method: "POST",
      path: "/api/v1/auth/device/token",
      operationId: "exchangeDeviceCode",
      summary: "Exchange an approved device code for a device token and a provisioned key",
      tags: ["devices"],
      auth: "public",
      body: decodedBody({ schema: DeviceTokenBody, maxBytes: 1024, decode: decodeDeviceTokenBody }),
      responses: {
        200: answer("deviceToken (shown once) and provisioning", DeviceExchangeAnswer),
        400: refusal(["VALIDATION_FAILED"], "reason: invalid_grant, access_denied, expired_token, authorization_pending (RFC 8628)"),
        429: refusal(["RATE_LIMITED"], "reason slow_down: polled faster than the interval")
      },
      handler: (_req, { body: code }) => reply(Effect.map(devices.exchange(code), exchangeView))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/devices",
      operationId: "listDevices",
      summary: "The account's devices (session only)",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      responses: { 200: answer("Devices", DeviceList), 401: refusal(["UNAUTHORIZED"]) },
      authenticate: session,
      handler: (_req, _input, s) => reply(devices.list(s))
    }),
    route({
      method: "DELETE",
      path: "/api/v1/agent/devices/{prefix}",
      operationId: "revokeDevice",
      summary: "Revoke a device; with revokeKeys=true also every active key it minted, atomically",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      pathParams: { prefix: stringParam("The device's 8-character prefix", { required: true, emptyIsValue: true }) },
      query: {
        revokeKeys: param({
          description: "true to revoke the keys it minted (any other value: false)",
          schema: { type: "boolean", default: false },
          decode: (raw) => raw === "true"
        })
      },
      responses: { 200: answer("Revoked", DeviceRevoked), 401: refusal(["UNAUTHORIZED"]), 404: refusal(["VALIDATION_FAILED"], "no such device on this account") },
      authenticate: session,
      handler: (_req, { prefix, revokeKeys }, s) => reply(devices.revoke(s, prefix, revokeKeys))
    })
  ]
}

/**
 * Everything the composition root mounts for accounts and keys, built from the services in
 * context: the routes, and the authenticators other route modules reuse (`agentAuth` for
 * `x-api-key` routes, `ownerAuth` for owner routes, `dataAuth` for the market-data service).
 */
export const accountApi = (options: { readonly nowMs: () => number; readonly sharedLimits?: SharedWindowCounts | undefined }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyService
    const store = yield* KeyStore
    const tiers = yield* TierService
    const devices = yield* Devices
    const wallets = yield* AccountWallets
    const agentAuth = makeAgentAuth({ store, tiers, nowMs: options.nowMs, shared: options.sharedLimits })
    const ownerAuth = makeOwnerAuth({ sql, nowMs: options.nowMs })
    const dataAuth = makeDataBearerAuth({ agentAuth, tiers, nowMs: options.nowMs })
    const routeDeps: AccountApiRouteDeps = {
      keys: { keys, tiers, agentAuth, ownerAuth, nowMs: options.nowMs },
      accounts: { devices, ownerAuth, wallets, sql, nowMs: options.nowMs }
    }
    return { routeDeps, routes: accountApiRoutes(routeDeps), agentAuth, ownerAuth, dataAuth }
  })

/** What the account and key routes are built over. */
export interface AccountApiRouteDeps {
  readonly keys: KeyRoutesDeps
  readonly accounts: AccountRoutesDeps
}

/** The account and key routes, in the order they match. */
export const accountApiRoutes = (d: AccountApiRouteDeps): ReadonlyArray<RouteDef> => [...keyRoutes(d.keys), ...accountRoutes(d.accounts)]

export type AccountApi = Effect.Effect.Success<ReturnType<typeof accountApi>>
