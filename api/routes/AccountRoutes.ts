/**
 * Account routes: the admin Max grant (`POST /api/v1/admin/agent-tier`, operator admins only),
 * agent features on (`POST /api/v1/agent/enable`, session only), device authorization (request a
 * code, look it up and approve or deny from a session, exchange for a device token) and device
 * management (session only: a device token cannot list or revoke devices or approve another).
 * The spec leaves the device-flow paths open; ours are under `/api/v1/auth/device`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { apiError, type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import { applyAgentTier, parseAgentTierRequest } from "../../src/services/accounts/Accounts.js"
import { setAgentEnabled } from "../../src/services/accounts/AccountRepository.js"
import { AccountWallets, type AccountWalletsShape } from "../../src/services/accounts/AccountWallets.js"
import { Devices, type DevicesShape } from "../../src/services/accounts/Devices.js"
import { TierService } from "../../src/services/accounts/TierService.js"
import { KeyService } from "../../src/services/keys/KeyService.js"
import { KeyStore } from "../../src/services/keys/KeyStore.js"
import { makeAgentAuth } from "../auth/AgentKeyAuth.js"
import { makeDataBearerAuth } from "../auth/DataBearerAuth.js"
import { makeOwnerAuth } from "../auth/OwnerAuth.js"
import { keyRoutes } from "./KeyRoutes.js"
import { maxStatus } from "../../src/services/accounts/Tier.js"
import { API_KEY_HEADER } from "../auth/AgentKeyAuth.js"
import { AUTHORIZATION_HEADER, type OwnerAuth } from "../auth/OwnerAuth.js"
import { json, type Reply, type Request } from "../Http.js"
import type { ResponseDoc, RouteDef } from "../Router.js"

export interface AccountRoutesDeps {
  readonly devices: DevicesShape
  readonly ownerAuth: OwnerAuth
  readonly wallets: AccountWalletsShape
  readonly sql: SqlClient.SqlClient
  readonly nowMs: () => number
}

const HEADERS = [AUTHORIZATION_HEADER, API_KEY_HEADER]
const ok = (description: string): ResponseDoc => ({ description })
const errors = (...statuses: number[]): Record<number, ResponseDoc> => Object.fromEntries(statuses.map((s) => [s, { description: "Refused (error envelope)" }]))

const reply = (e: Effect.Effect<unknown, ApiError | SqlError>): Effect.Effect<Reply, ApiError> =>
  e.pipe(
    Effect.map((body) => json(200, body)),
    Effect.catchIf(
      (x): x is SqlError => x._tag === "SqlError",
      (x) => Effect.zipRight(Effect.logError("account route storage failure", x), Effect.fail(apiError("INTERNAL", "Internal error; nothing was recorded")))
    )
  ) as Effect.Effect<Reply, ApiError>

const AgentTierBody = Schema.Struct({
  accountId: Schema.String,
  tier: Schema.optional(Schema.Literal("free", "pro", "max")),
  expiresAt: Schema.optional(Schema.Int),
  days: Schema.optional(Schema.Int),
  source: Schema.optional(Schema.Literal("subscription", "trial", "team", "promo"))
}).annotations({ identifier: "AgentTierBody" })
const EnableBody = Schema.Struct({ enabled: Schema.Boolean }).annotations({ identifier: "AgentEnableBody" })
const DeviceCodeBody = Schema.Struct({
  clientName: Schema.optional(Schema.String),
  scopes: Schema.optional(Schema.Array(Schema.String)),
  environment: Schema.optional(Schema.Literal("production", "test"))
}).annotations({ identifier: "DeviceCodeBody" })
const DeviceDecisionBody = Schema.Struct({ userCode: Schema.String, approve: Schema.optional(Schema.Boolean) }).annotations({ identifier: "DeviceDecisionBody" })
const DeviceTokenBody = Schema.Struct({ deviceCode: Schema.String }).annotations({ identifier: "DeviceTokenBody" })

export const accountRoutes = (deps: AccountRoutesDeps): ReadonlyArray<RouteDef> => {
  const { devices, ownerAuth, sql } = deps
  const session = (req: Request) => ownerAuth.session(req.headers)
  const q = (req: Request, name: string) => new URLSearchParams(req.query).get(name)

  return [
    {
      method: "POST",
      path: "/api/v1/admin/agent-tier",
      operationId: "grantAgentTier",
      summary: "Grant Max with an expiry, or end a grant (operator admins only)",
      tags: ["admin"],
      auth: "session",
      headers: HEADERS,
      body: { schema: AgentTierBody, maxBytes: 2048 },
      responses: { 200: ok("The account's tier state"), ...errors(400, 401, 403, 404) },
      handler: (req) =>
        Effect.flatMap(ownerAuth.session(req.headers, { admin: true }), () =>
          reply(
            Effect.gen(function* () {
              const nowMs = deps.nowMs()
              const parsed = parseAgentTierRequest(req.body, nowMs)
              if (!("accountId" in parsed)) return yield* Effect.fail(parsed)
              const account = yield* applyAgentTier(parsed, nowMs).pipe(Effect.provideService(SqlClient.SqlClient, sql))
              const max = maxStatus(account, nowMs)
              return {
                success: true,
                accountId: account.id,
                plan: account.plan,
                maxGrantExpiresAt: account.maxGrantExpiresAtMs,
                maxGrantSource: account.maxGrantSource,
                maxTierExpiresAt: max.maxTierExpiresAt,
                maxExpired: max.maxExpired
              }
            })
          )
        )
    },
    {
      method: "POST",
      path: "/api/v1/agent/enable",
      operationId: "enableAgentFeatures",
      summary: "Turn agent features on (session only; needs a linked Solana wallet)",
      tags: ["keys"],
      auth: "session",
      headers: HEADERS,
      body: { schema: EnableBody, maxBytes: 1024 },
      responses: { 200: ok("Enabled"), ...errors(400, 401, 403, 503) },
      handler: (req) =>
        Effect.flatMap(session(req), (s) =>
          reply(
            Effect.gen(function* () {
              const b = req.body as Record<string, unknown> | undefined
              if (typeof b !== "object" || b === null || typeof b.enabled !== "boolean") return yield* Effect.fail(validationFailed("enabled", "enabled must be a boolean"))
              if (!b.enabled) return yield* Effect.fail(apiError("VALIDATION_FAILED", "Agent features cannot be turned off here", { status: 403, field: "enabled" }))
              const hasWallet = yield* deps.wallets
                .hasSolanaWallet(s.accountId)
                .pipe(Effect.mapError(() => apiError("KEY_ISSUANCE_FAILED", "The wallet provider could not be reached; nothing changed", { retryable: true })))
              if (!hasWallet) return yield* Effect.fail(apiError("VALIDATION_FAILED", "Link a Solana wallet before enabling agent features", { status: 403, field: "enabled" }))
              yield* setAgentEnabled(s.accountId, true).pipe(Effect.provideService(SqlClient.SqlClient, sql))
              return { success: true, enabled: true }
            })
          )
        )
    },
    {
      method: "POST",
      path: "/api/v1/auth/device/code",
      operationId: "requestDeviceCode",
      summary: "Device authorization: request a device code and a user code",
      tags: ["devices"],
      auth: "public",
      body: { schema: DeviceCodeBody, maxBytes: 2048 },
      responses: { 200: ok("deviceCode, userCode, verificationUri, expiresIn, interval, scopes"), ...errors(400) },
      handler: (req) => reply(devices.requestCode(req.body))
    },
    {
      method: "GET",
      path: "/api/v1/auth/device",
      operationId: "describeDeviceRequest",
      summary: "Show a device request's exact scopes before approving (session only)",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      query: [{ name: "user_code", description: "The code the device shows", required: true, schema: { type: "string" } }],
      responses: { 200: ok("The request"), ...errors(401, 404) },
      handler: (req) => Effect.flatMap(session(req), (s) => reply(devices.describe(s, q(req, "user_code") ?? "")))
    },
    {
      method: "POST",
      path: "/api/v1/auth/device/decision",
      operationId: "decideDeviceRequest",
      summary: "Approve or deny a device request (session only)",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      body: { schema: DeviceDecisionBody, maxBytes: 1024 },
      responses: { 200: ok("The decided request"), ...errors(400, 401, 404, 409) },
      handler: (req) => Effect.flatMap(session(req), (s) => reply(devices.decide(s, req.body)))
    },
    {
      method: "POST",
      path: "/api/v1/auth/device/token",
      operationId: "exchangeDeviceCode",
      summary: "Exchange an approved device code for a device token and a provisioned key",
      tags: ["devices"],
      auth: "public",
      body: { schema: DeviceTokenBody, maxBytes: 1024 },
      responses: { 200: ok("deviceToken (shown once) and provisioning"), ...errors(400, 429) },
      handler: (req) => reply(devices.exchange(req.body))
    },
    {
      method: "GET",
      path: "/api/v1/agent/devices",
      operationId: "listDevices",
      summary: "The account's devices (session only)",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      responses: { 200: ok("Devices"), ...errors(401) },
      handler: (req) => Effect.flatMap(session(req), (s) => reply(devices.list(s)))
    },
    {
      method: "DELETE",
      path: "/api/v1/agent/devices/{prefix}",
      operationId: "revokeDevice",
      summary: "Revoke a device; with revokeKeys=true also every active key it minted, atomically",
      tags: ["devices"],
      auth: "session",
      headers: HEADERS,
      pathParams: [{ name: "prefix", description: "The device's 8-character prefix", schema: { type: "string" } }],
      query: [{ name: "revokeKeys", description: "true to revoke the keys it minted", schema: { type: "boolean" } }],
      responses: { 200: ok("Revoked"), ...errors(401, 404) },
      handler: (req) => Effect.flatMap(session(req), (s) => reply(devices.revoke(s, req.params[0] ?? "", q(req, "revokeKeys") === "true")))
    }
  ]
}

/**
 * Everything the composition root mounts for accounts and keys, built from the services in
 * context: the routes, and the authenticators other route modules reuse (`agentAuth` for
 * `x-api-key` routes, `ownerAuth` for owner routes, `dataAuth` for the market-data service).
 */
export const accountApi = (options: { readonly nowMs: () => number }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyService
    const store = yield* KeyStore
    const tiers = yield* TierService
    const devices = yield* Devices
    const wallets = yield* AccountWallets
    const agentAuth = makeAgentAuth({ store, tiers, nowMs: options.nowMs })
    const ownerAuth = makeOwnerAuth({ sql, nowMs: options.nowMs })
    const dataAuth = makeDataBearerAuth({ agentAuth, tiers, nowMs: options.nowMs })
    const routes: ReadonlyArray<RouteDef> = [
      ...keyRoutes({ keys, tiers, agentAuth, ownerAuth, nowMs: options.nowMs }),
      ...accountRoutes({ devices, ownerAuth, wallets, sql, nowMs: options.nowMs })
    ]
    return { routes, agentAuth, ownerAuth, dataAuth }
  })

export type AccountApi = Effect.Effect.Success<ReturnType<typeof accountApi>>
