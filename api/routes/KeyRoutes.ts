/**
 * Key, access and tier routes (spec document 2, section 4.1, without wallets and TEE rebind).
 * Owner routes take a session or a device token; `keys/self/*` take the agent key itself;
 * `{prefix}/limits` and `tier` take either. Each route declares its credential (`authenticate`)
 * and its inputs (bodies and query through `KeyDecoders.ts`), which the router runs first; handlers
 * only call `KeyService` / `TierService` and map failures through the one table (`ErrorTable.ts`);
 * every rule lives in the services.
 */
import { Effect, Schema } from "effect"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import type { TierServiceShape } from "../../src/services/accounts/TierService.js"
import type { KeyServiceShape } from "../../src/services/keys/KeyService.js"
import type { AgentPrincipal, OwnerPrincipal, SessionPrincipal } from "../../src/services/keys/Principals.js"
import { AccessLevels, PublicScopes } from "../../src/services/keys/Scopes.js"
import { type AgentAuth, API_KEY_HEADER, WHILE_PAUSED } from "../auth/AgentKeyAuth.js"
import { AUTHORIZATION_HEADER, bearerToken, type OwnerAuth } from "../auth/OwnerAuth.js"
import { mapFailure } from "../ErrorTable.js"
import type { Request } from "../Http.js"
import { param, stringParam } from "../QueryParams.js"
import { answer, refusal } from "../OpenApi.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import {
  decodeAccessBody,
  decodeEmbeddedWalletBody,
  decodeHistoryLimit,
  decodeIssueBody,
  decodeLimitsBody,
  decodePatchBody,
  decodeUsageDays
} from "./KeyDecoders.js"
import {
  AccessChangeAnswer,
  AccessChanges,
  IssuedKey,
  KeyList,
  KeyPatched,
  KeyRevoked,
  KeyUsageSeries,
  OwnKeyLimits,
  StoredEmbeddedWallet,
  StoredKeyLimits,
  TierSnapshotAnswer
} from "./KeyResponses.js"
import { reply } from "./ServiceCall.js"

export interface KeyRoutesDeps {
  readonly keys: KeyServiceShape
  readonly tiers: TierServiceShape
  readonly agentAuth: AgentAuth
  readonly ownerAuth: OwnerAuth
  readonly nowMs: () => number
}

const HEADERS = [AUTHORIZATION_HEADER, API_KEY_HEADER]
/** Any segment reaches the service, which answers 404 for a prefix it does not know. */
const prefixPath = { prefix: stringParam("The key's 8-character prefix", { required: true, emptyIsValue: true }) }

const Scope = Schema.Literal(...PublicScopes)
const TxLimitSchema = Schema.Struct({ usdMicros: Schema.Int.pipe(Schema.positive()), reset: Schema.Literal("never", "daily", "weekly", "monthly") })
const IssueBody = Schema.Struct({
  environment: Schema.optional(Schema.Literal("production", "test")),
  scopes: Schema.optional(Schema.Array(Scope)),
  label: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  expiresInDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 365))),
  expiresAt: Schema.optional(Schema.Int),
  txLimit: Schema.optional(TxLimitSchema),
  embeddedWallet: Schema.optional(Schema.Literal("allowed", "denied")),
  ref: Schema.optional(Schema.String)
}).annotations({ identifier: "KeyIssueBody" })
const PatchBody = Schema.Union(
  Schema.Struct({ label: Schema.String }),
  Schema.Struct({ avatar: Schema.NullOr(Schema.String) }),
  Schema.Struct({ txLimit: TxLimitSchema }),
  Schema.Struct({ clearTxLimit: Schema.Literal(true) }),
  Schema.Struct({ paused: Schema.Boolean })
).annotations({ identifier: "KeyPatchBody", description: "Exactly one field; `paused: true` pauses the key, `false` resumes it" })
const AccessBody = Schema.Struct({
  access: Schema.Literal(...AccessLevels),
  dryRun: Schema.optional(Schema.Boolean),
  expectScopes: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "KeyAccessBody" })
const LimitsBody = Schema.Array(
  Schema.Struct({ asset: Schema.Literal("sol", "usdc", "svc", "eth", "usdg"), maxPerTxRaw: Schema.String.pipe(Schema.pattern(/^[1-9][0-9]*$/)) })
).annotations({ identifier: "KeyLimitsBody" })
const EmbeddedWalletBody = Schema.Struct({ embeddedWallet: Schema.Literal("allowed", "denied") }).annotations({ identifier: "EmbeddedWalletBody" })

/** `?days=`: absent or empty reaches the decoder as `null` (the default). */
const daysQuery = {
  days: param({
    description: "Days, clamped 1 to 90 (default 30); a non-integer is refused",
    schema: { type: "string", pattern: "^(-?\\d{1,6})?$", default: 30 },
    decode: (raw) => decodeUsageDays(raw ?? null)
  })
}
const historyQuery = {
  limit: param({
    description: "1 to 100 (default 20)",
    schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
    decode: (raw) => decodeHistoryLimit(raw ?? null)
  })
}

export const keyRoutes = (deps: KeyRoutesDeps): ReadonlyArray<RouteDef> => {
  const { keys, ownerAuth, agentAuth, tiers } = deps
  const owner = (req: Request) => ownerAuth.owner(req.headers, "sessionOrDevice")
  /** Every agent-key route here is one a paused key may use: it reads, or makes the key safer (narrows, tightens). */
  const agent = (req: Request) => agentAuth.authenticate(req.headers, WHILE_PAUSED)
  /** A bearer credential means an owner; otherwise the agent key. */
  const ownerOrAgent = (req: Request): Effect.Effect<OwnerPrincipal | AgentPrincipal, ApiError> =>
    bearerToken(req.headers) !== undefined ? owner(req) : agent(req)
  const tags = ["keys"]

  return [
    route({
      method: "POST",
      path: "/api/v1/agent/keys",
      operationId: "issueAgentKey",
      summary: "Issue an agent key (the plaintext key is returned only here)",
      tags,
      headers: HEADERS,
      auth: "session",
      body: decodedBody({ schema: IssueBody, maxBytes: 8 * 1024, decode: (body) => decodeIssueBody(body, deps.nowMs()) }),
      responses: {
        200: answer("The issued key (the plaintext key only here)", IssuedKey),
        400: refusal(["VALIDATION_FAILED"], "a body field, or the active key limit"),
        401: refusal(["UNAUTHORIZED"]),
        403: refusal(["VALIDATION_FAILED", "AGENT_WALLET_NOT_DELEGATED"], "agent features off, or no chain delegated"),
        503: refusal(["KEY_ISSUANCE_FAILED"], "the wallet provider or storage was unreachable; nothing was issued")
      },
      authenticate: owner,
      handler: (_req, { body }, o) => reply(keys.issue(o, body))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/keys",
      operationId: "listAgentKeys",
      summary: "Every key of the account, revoked included, with usage",
      tags,
      headers: HEADERS,
      auth: "session",
      responses: { 200: answer("Key rows and usageSince", KeyList), 401: refusal(["UNAUTHORIZED"]) },
      authenticate: owner,
      handler: (_req, _input, o) => reply(keys.list(o))
    }),
    route({
      method: "DELETE",
      path: "/api/v1/agent/keys/{prefix}",
      operationId: "revokeAgentKey",
      summary: "Revoke a key (idempotent)",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      responses: { 200: answer("Revoked", KeyRevoked), 401: refusal(["UNAUTHORIZED"]), 404: refusal(["VALIDATION_FAILED"], "no such prefix on this account") },
      authenticate: owner,
      handler: (_req, { prefix }, o) => reply(keys.revoke(o, prefix))
    }),
    route({
      method: "PATCH",
      path: "/api/v1/agent/keys/{prefix}",
      operationId: "patchAgentKey",
      summary: "Change exactly one of label, avatar, txLimit, clearTxLimit, paused (pause or resume the key)",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      body: decodedBody({ schema: PatchBody, maxBytes: 4 * 1024, decode: decodePatchBody }),
      responses: {
        200: answer("The updated row", KeyPatched),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED"]),
        404: refusal(["VALIDATION_FAILED"], "no such prefix on this account"),
        409: refusal(["VALIDATION_FAILED"], "pausing or resuming a revoked key")
      },
      authenticate: owner,
      handler: (_req, { body, prefix }, o) => reply(keys.patch(o, prefix, body))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/keys/{prefix}/usage",
      operationId: "agentKeyUsage",
      summary: "Zero-filled ascending daily usage series",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      query: daysQuery,
      responses: { 200: answer("Series", KeyUsageSeries), 400: refusal(["VALIDATION_FAILED"]), 401: refusal(["UNAUTHORIZED"]), 404: refusal(["VALIDATION_FAILED"], "no such prefix on this account") },
      authenticate: owner,
      handler: (_req, { days, prefix }, o) => reply(keys.usage(o, prefix, days))
    }),
    route({
      method: "PUT",
      path: "/api/v1/agent/keys/self/access",
      operationId: "narrowOwnAccess",
      summary: "The key narrows its own access level (never widens)",
      tags,
      headers: HEADERS,
      auth: "agentKey",
      body: decodedBody({ schema: AccessBody, maxBytes: 4 * 1024, decode: decodeAccessBody }),
      responses: {
        200: answer("Access-change response (a preview with dryRun, else the committed change)", AccessChangeAnswer),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
        403: refusal(["LOOSEN_REQUIRES_SESSION"], "a key widening its own access"),
        409: refusal(["VALIDATION_FAILED", "KEY_ACCESS_PARTNER_KEY", "KEY_ACCESS_STALE"], "revoked or expired key, partner key, scopes changed since the preview"),
        429: refusal(["RATE_LIMITED"]),
        503: refusal(["SWAP_FAILED"], "the change could not be verified or recorded; nothing changed")
      },
      authenticate: agent,
      handler: (_req, { body }, a) => reply(keys.changeAccess(a, "self", body))
    }),
    route({
      method: "PUT",
      path: "/api/v1/agent/keys/{prefix}/access",
      operationId: "changeKeyAccess",
      summary: "Preview (dryRun) or commit a key's access level",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      body: decodedBody({ schema: AccessBody, maxBytes: 4 * 1024, decode: decodeAccessBody }),
      responses: {
        200: answer("Access-change response (a preview with dryRun, else the committed change)", AccessChangeAnswer),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED"]),
        404: refusal(["VALIDATION_FAILED"], "no such prefix on this account"),
        409: refusal(["VALIDATION_FAILED", "KEY_ACCESS_PARTNER_KEY", "KEY_ACCESS_STALE"], "revoked or expired key, partner key, scopes changed since the preview"),
        503: refusal(["SWAP_FAILED"], "the change could not be verified or recorded; nothing changed")
      },
      authenticate: owner,
      handler: (_req, { body, prefix }, o) => reply(keys.changeAccess(o, prefix, body))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/keys/{prefix}/access-changes",
      operationId: "keyAccessChanges",
      summary: "Access-change history, newest first",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      query: historyQuery,
      responses: { 200: answer("Change rows", AccessChanges), 400: refusal(["VALIDATION_FAILED"]), 401: refusal(["UNAUTHORIZED"]), 404: refusal(["VALIDATION_FAILED"], "no such prefix on this account") },
      authenticate: owner,
      handler: (_req, { limit, prefix }, o) => reply(keys.accessChanges(o, prefix, limit))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/keys/self/limits",
      operationId: "ownKeyLimits",
      summary: "The calling key's per-asset limits (null: unlimited)",
      tags,
      headers: HEADERS,
      auth: "agentKey",
      responses: { 200: answer("keyLimits", OwnKeyLimits), 401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]), 429: refusal(["RATE_LIMITED"]) },
      authenticate: agent,
      handler: (_req, _input, a) => reply(keys.selfLimits(a))
    }),
    route({
      method: "PUT",
      path: "/api/v1/agent/keys/self/limits",
      operationId: "tightenOwnKeyLimits",
      summary: "The calling key tightens its own per-asset limits",
      tags,
      headers: HEADERS,
      auth: "agentKey",
      body: decodedBody({ schema: LimitsBody, maxBytes: 4 * 1024, decode: decodeLimitsBody }),
      responses: {
        200: answer("Stored limits", StoredKeyLimits),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
        403: refusal(["LOOSEN_REQUIRES_SESSION"], "raising or clearing a cap"),
        409: refusal(["VALIDATION_FAILED"], "the key was revoked"),
        429: refusal(["RATE_LIMITED"])
      },
      authenticate: agent,
      handler: (_req, { body }, a) => reply(keys.setLimits(a, "self", body))
    }),
    route({
      method: "PUT",
      path: "/api/v1/agent/keys/{prefix}/limits",
      operationId: "setKeyLimits",
      summary: "Set per-asset limits (an agent key may only tighten its own)",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      body: decodedBody({ schema: LimitsBody, maxBytes: 4 * 1024, decode: decodeLimitsBody }),
      responses: {
        200: answer("Stored limits", StoredKeyLimits),
        400: refusal(["VALIDATION_FAILED"]),
        401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
        403: refusal(["LOOSEN_REQUIRES_SESSION"], "an agent key raising or clearing a cap"),
        404: refusal(["VALIDATION_FAILED"], "no such prefix on this account"),
        409: refusal(["VALIDATION_FAILED"], "the key is revoked")
      },
      authenticate: ownerOrAgent,
      handler: (_req, { body, prefix }, p) => reply(keys.setLimits(p, prefix, body))
    }),
    route({
      method: "PUT",
      path: "/api/v1/agent/keys/{prefix}/embedded-wallet",
      operationId: "setKeyEmbeddedWallet",
      summary: "Allow or deny the embedded wallet for a key",
      tags,
      headers: HEADERS,
      auth: "session",
      pathParams: prefixPath,
      body: decodedBody({ schema: EmbeddedWalletBody, maxBytes: 1024, decode: decodeEmbeddedWalletBody }),
      responses: { 200: answer("Stored value", StoredEmbeddedWallet), 400: refusal(["VALIDATION_FAILED"]), 401: refusal(["UNAUTHORIZED"]), 404: refusal(["VALIDATION_FAILED"], "no such prefix on this account") },
      authenticate: owner,
      handler: (_req, { body, prefix }, o) => reply(keys.setEmbeddedWallet(o, prefix, body))
    }),
    route({
      method: "GET",
      path: "/api/v1/agent/tier",
      operationId: "tierSnapshot",
      summary: "The account's tier, holdings, Max status, fees and caps",
      tags: ["plans"],
      headers: HEADERS,
      auth: "agentKey",
      responses: { 200: answer("Tier snapshot", TierSnapshotAnswer), 401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]), 429: refusal(["RATE_LIMITED"]) },
      authenticate: (req): Effect.Effect<SessionPrincipal | AgentPrincipal, ApiError> =>
        bearerToken(req.headers) !== undefined ? ownerAuth.session(req.headers) : agentAuth.authenticate(req.headers, WHILE_PAUSED),
      handler: (_req, _input, p) =>
        Effect.flatMap(p._tag === "agent" ? Effect.succeed(p.account) : keysAccount(p.accountId), (account) => reply(tiers.snapshot(account, deps.nowMs())))
    })
  ]

  function keysAccount(accountId: string) {
    return mapFailure(tiers.account(accountId)).pipe(
      Effect.flatMap((a) => (a === undefined ? Effect.fail(apiError("UNAUTHORIZED", "The account no longer exists")) : Effect.succeed(a)))
    )
  }
}
