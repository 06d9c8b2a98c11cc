/**
 * Self-signed launches (launch spec 4: the `/launch/self/*` rows; endpoint rules 4, 5 and 6;
 * 2.3). HTTP only: the kill switch (before the key is parsed), key auth with `launch:write` and
 * its rate limit, the body decoded with the caller's key environment, then one call to
 * `SelfLaunch`; failures go through the error table (`LaunchError` rows). The plan gate
 * (`TIER_REQUIRED`) is the service's, so the dry run answers it exactly as the build does.
 */
import { Effect, Either, Schema } from "effect"
import { apiError } from "../../src/domain/ApiError.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { fromRequest } from "../../src/services/launch/LaunchError.js"
import { decodeSelfLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { LaunchRequestSettings } from "../../src/services/launch/request/LaunchRequest.js"
import type { SelfConfirmBody, SelfLaunchShape } from "../../src/services/launch/SelfLaunch.js"
import type { SelfCaller } from "../../src/services/launch/SolanaSelfLaunch.js"
import { AGENT_AUTH_HEADERS, type AgentAuth } from "../auth/AgentKeyAuth.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { mapFailure, toApiError } from "../ErrorTable.js"
import { errorReply, json, type Request } from "../Http.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { disabled, LAUNCH_BODY_BYTES_MAX, LaunchRequestWire } from "./LaunchRoutes.js"

export interface SelfLaunchRoutesOptions {
  /** `HEADLESS_LAUNCH_ENABLED` is exactly `true` (the kill switch covers every launch call, rule 5). */
  readonly enabled: boolean
  readonly agentAuth: AgentAuth
  readonly launches: SelfLaunchShape
  readonly settings: LaunchRequestSettings
}

/** Longest hash, signature, id or signed transaction a confirm body carries (a signed EVM leg is a few KB of hex). */
const CONFIRM_STRING_CHARS_MAX = 8 * 1024

export const SelfLaunchRequestWire = Schema.extend(
  LaunchRequestWire,
  Schema.Struct({ linkedWalletId: Schema.String.annotations({ description: "This account's spend-capable linked or TEE wallet on the launch chain" }) })
).annotations({ identifier: "SelfLaunchRequest" })

export const SelfConfirmWire = Schema.Struct({
  clientLaunchId: Schema.String,
  signature: Schema.optional(Schema.String.annotations({ description: "The broadcast signature (Solana) or createCurve hash (Hood)" })),
  feeTxHash: Schema.optional(Schema.String.annotations({ description: "Hood: the fee leg's hash, required when the build carried feeTransfer" })),
  devBuySignature: Schema.optional(Schema.String.annotations({ description: "Hood: the agent's own dev buy" })),
  operationId: Schema.optional(Schema.String.annotations({ description: "Hood TEE: the sequenced operation" })),
  signedTransaction: Schema.optional(Schema.String.annotations({ description: "Hood TEE: nextLeg signed through the relay (0x hex)" }))
}).annotations({ identifier: "SelfLaunchConfirm" })

const callerOf = (p: AgentPrincipal): SelfCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  keyDailyCap: p.key.dailyLaunchCap,
  plan: p.plan,
  spendLimits: p.key.spendLimits,
  principal: agentToWalletPrincipal(p)
})

const refuse = (field: string, message: string) => apiError("VALIDATION_FAILED", message, { field })

/** The confirm body (2.3): `clientLaunchId` and the strings the chain's confirm needs; a null reads as absent. */
export const decodeConfirm = (body: unknown): SelfConfirmBody | ReturnType<typeof refuse> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return refuse("body", "the confirm body must be a JSON object")
  const b = body as Record<string, unknown>
  const id = b.clientLaunchId
  if (typeof id !== "string" || id.length < 1 || id.length > 128) return refuse("clientLaunchId", "clientLaunchId must be 1 to 128 characters")
  const out: Record<string, string> = { clientLaunchId: id }
  for (const key of ["signature", "feeTxHash", "devBuySignature", "operationId", "signedTransaction"] as const) {
    const v = b[key]
    if (v === undefined || v === null) continue
    if (typeof v !== "string" || v.length === 0 || v.length > CONFIRM_STRING_CHARS_MAX) return refuse(key, `${key} must be a non-empty string of at most ${CONFIRM_STRING_CHARS_MAX} characters`)
    out[key] = v
  }
  if (out.signature === undefined && out.operationId === undefined) return refuse("signature", "signature is required (or operationId for a sequenced Hood TEE build)")
  return out as unknown as SelfConfirmBody
}

export const selfLaunchRoutes = (options: SelfLaunchRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, launches, settings } = options
  const guard = options.enabled ? undefined : () => disabled()
  const writer = (req: Request) => agentAuth.authenticate(req.headers, { scopes: ["launch:write"] })
  const selfBody = decodedBody({ schema: SelfLaunchRequestWire, maxBytes: LAUNCH_BODY_BYTES_MAX, decode: (body: unknown) => body })

  const request = (body: unknown, p: AgentPrincipal) =>
    Either.mapLeft(decodeSelfLaunchRequest(body, { keyEnvironment: p.key.environment }, settings), (e) => toApiError(fromRequest(e)))

  const refusals = {
    400: { description: "Validation (VALIDATION_FAILED incl. the payer rules on linkedWalletId, INVALID_NAME_BYTES, ..., SPEND_LIMIT_EXCEEDED, TRANSACTION_TOO_LARGE)" },
    401: { description: "UNAUTHORIZED, KEY_EXPIRED" },
    403: { description: "SCOPE_MISSING, TIER_REQUIRED, EXCLUSIVE_NOT_ELIGIBLE" },
    503: { description: "LAUNCH_DISABLED, HOOD_LAUNCH_UNAVAILABLE" }
  } as const

  const build = route({
    method: "POST",
    path: "/api/v1/launch/self/build",
    operationId: "launchSelfBuild",
    summary: "Build a launch for the agent's own linked or TEE wallet to sign (through the sign relay) and broadcast",
    description:
      "Solana: the unsigned transaction (the mint's signature in place), mint, pool, expiresAt, fee and the sign claim. Hood: createCurve and feeTransfer as unsigned transactions with their claims, the predicted curve as pool; a TEE wallet gets the sequenced operation. A repeat follows spec 3.3.",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: selfBody,
    responses: {
      200: { description: "The unsigned artifacts, or the launch result of a confirmed same-body repeat" },
      ...refusals,
      402: { description: "INSUFFICIENT_OWNER_BALANCE (Hood: the gas of the legs)" },
      409: { description: "IDEMPOTENCY_CONFLICT (reason prior_attempt_on_chain or prior_attempt_in_flight on repeats)" },
      429: { description: "RATE_LIMITED, DAILY_CAP_REACHED" },
      500: { description: "LAUNCH_FAILED (reason chain_read_failed, build_in_progress: retry with the same id)" },
      504: { description: "BUILD_TIMEOUT" }
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => {
      const decoded = request(body, principal)
      if (Either.isLeft(decoded)) return errorReply(decoded.left)
      return mapFailure(launches.build(callerOf(principal), decoded.right)).pipe(
        Effect.map((answer) => json(200, answer._tag === "Built" ? answer.body : answer.result))
      )
    }
  })

  const dryRun = route({
    method: "POST",
    path: "/api/v1/launch/self/dry-run",
    operationId: "launchSelfDryRun",
    summary: "Every check of a self-signed build with build's refusals; nothing built, reserved, recorded or uploaded",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: selfBody,
    responses: { 200: { description: "Dry-run result (2.6) with launchWalletId" }, ...refusals, 429: { description: "RATE_LIMITED" } },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => {
      const decoded = request(body, principal)
      if (Either.isLeft(decoded)) return errorReply(decoded.left)
      return mapFailure(launches.dryRun(callerOf(principal), decoded.right)).pipe(Effect.map((result) => json(200, result)))
    }
  })

  const confirm = route({
    method: "POST",
    path: "/api/v1/launch/self/confirm",
    operationId: "launchSelfConfirm",
    summary: "Record a self-signed launch from what the chain shows (or advance a sequenced Hood TEE operation)",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: decodedBody({ schema: SelfConfirmWire, maxBytes: LAUNCH_BODY_BYTES_MAX, decode: decodeConfirm }),
    responses: {
      200: { description: "The launch result (2.5), or the sequenced operation's next state" },
      400: { description: "VALIDATION_FAILED (field signature: not on chain yet, retryable; or not this launch)" },
      401: { description: "UNAUTHORIZED, KEY_EXPIRED" },
      402: { description: "FEE_LEG_MISSING" },
      403: { description: "SCOPE_MISSING, TIER_REQUIRED, SIGNER_MISMATCH" },
      404: { description: "JOB_NOT_FOUND: unknown id, or a build that can never land" },
      500: { description: "LAUNCH_FAILED (retryable: confirm again with the same signature)" },
      503: { description: "LAUNCH_DISABLED" }
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => mapFailure(launches.confirm(callerOf(principal), body)).pipe(Effect.map((result) => json(200, result)))
  })

  return [build, dryRun, confirm]
}
