/**
 * Self-signed launches (launch spec 4: the `/launch/self/*` rows; endpoint rules 4, 5 and 6;
 * 2.3). HTTP only: the kill switch (before the key is parsed), key auth with `launch:write` and
 * its rate limit, the body decoded with the caller's key environment, then one call to
 * `SelfLaunch`; failures go through the error table (`LaunchError` rows). The plan gate
 * (`TIER_REQUIRED`) is the service's, so the dry run answers it exactly as the build does.
 */
import { Effect, Schema } from "effect"
import { EvmTxHash, SolanaSignature } from "../../src/domain/ChainValues.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { decodeSelfLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { LaunchRequestSettings } from "../../src/services/launch/request/LaunchRequest.js"
import type { SelfLaunchShape } from "../../src/services/launch/SelfLaunch.js"
import type { SelfCaller } from "../../src/services/launch/SolanaSelfLaunch.js"
import { AGENT_AUTH_HEADERS, type AgentAuth } from "../auth/AgentKeyAuth.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { codesAt, ErrorTable, mapFailure } from "../ErrorTable.js"
import { answer, refusal } from "../OpenApi.js"
import { json, type Request } from "../Http.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { HoodOperationPending, HoodSelfBuilt, LaunchDryRun, LaunchResult, SolanaSelfBuilt } from "./LaunchResponses.js"
import { disabled, LAUNCH_BODY_BYTES_MAX, LaunchRequestWire, refusedOr } from "./LaunchRoutes.js"

export interface SelfLaunchRoutesOptions {
  /** `HEADLESS_LAUNCH_ENABLED` is exactly `true` (the kill switch covers every launch call, rule 5). */
  readonly enabled: boolean
  readonly agentAuth: AgentAuth
  readonly launches: SelfLaunchShape
  readonly settings: LaunchRequestSettings
}

/** Longest signed transaction a confirm body carries (a signed EVM leg is a few KB of hex). */
const SIGNED_TRANSACTION_CHARS_MAX = 8 * 1024
const CLIENT_LAUNCH_ID_CHARS_MAX = 128
/** An operation id is `op_` and 32 hex digits; the bound leaves room and stops a long string early. */
const OPERATION_ID_CHARS_MAX = 128

export const SelfLaunchRequestWire = Schema.extend(
  LaunchRequestWire,
  Schema.Struct({ linkedWalletId: Schema.String.annotations({ description: "This account's spend-capable linked or TEE wallet on the launch chain" }) })
).annotations({ identifier: "SelfLaunchRequest" })

/** 1 to `max` characters, refused with one message whichever bound fails. */
const chars = (max: number) => {
  const message = () => `must be 1 to ${max} characters`
  return Schema.String.pipe(Schema.minLength(1, { message }), Schema.maxLength(max, { message }))
}

const signedTransactionMessage = () => `must be a 0x-hex signed transaction of at most ${SIGNED_TRANSACTION_CHARS_MAX} characters`

/** Spec 2.3: a null member reads as absent. */
const absentWhenNull = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true, exact: true })

/**
 * The confirm body (2.3), decoded by the router: `clientLaunchId` and the chain strings the
 * chain's confirm needs, each by its branded Schema (the body carries no chain, so `signature` is
 * either chain's; the chain's confirm refuses the other's). Unknown members are ignored.
 */
export const SelfConfirmWire = Schema.Struct({
  clientLaunchId: chars(CLIENT_LAUNCH_ID_CHARS_MAX),
  signature: absentWhenNull(
    Schema.Union(SolanaSignature, EvmTxHash).annotations({
      description: "The broadcast signature (Solana) or createCurve hash (Hood)",
      // `override`: one message for the union, not its first member's.
      message: () => ({ message: "must be a Solana signature (base58, 64 bytes) or a Hood createCurve hash (0x and 32 bytes)", override: true })
    })
  ),
  feeTxHash: absentWhenNull(EvmTxHash.annotations({ description: "Hood: the fee leg's hash, required when the build carried feeTransfer" })),
  devBuySignature: absentWhenNull(EvmTxHash.annotations({ description: "Hood: the agent's own dev buy" })),
  operationId: absentWhenNull(chars(OPERATION_ID_CHARS_MAX).annotations({ description: "Hood TEE: the sequenced operation" })),
  signedTransaction: absentWhenNull(
    Schema.String.pipe(
      Schema.maxLength(SIGNED_TRANSACTION_CHARS_MAX, { message: signedTransactionMessage }),
      Schema.pattern(/^0x(?:[0-9a-fA-F]{2})+$/, { message: signedTransactionMessage, description: "Hood TEE: nextLeg signed through the relay (0x hex)" })
    )
  )
}).annotations({ identifier: "SelfLaunchConfirm" }).pipe(
  Schema.filter((b) =>
    b.signature !== undefined || b.operationId !== undefined ? true : { path: ["signature"], message: "is required (or operationId for a sequenced Hood TEE build)" }
  ),
  Schema.annotations({ identifier: "SelfLaunchConfirm" })
)

const callerOf = (p: AgentPrincipal): SelfCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  keyDailyCap: p.key.dailyLaunchCap,
  plan: p.plan,
  spendLimits: p.key.spendLimits,
  principal: agentToWalletPrincipal(p)
})

export const selfLaunchRoutes = (options: SelfLaunchRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, launches, settings } = options
  const guard = options.enabled ? undefined : () => disabled()
  const writer = (req: Request) => agentAuth.authenticate(req.headers, { scopes: ["launch:write"] })
  // Hand-written (`decodeSelfLaunchRequest`): the headless rules' order, reasons and codes (key environment first, the pair's economics, server settings), which no Schema's first error can say.
  const selfBody = decodedBody({
    schema: SelfLaunchRequestWire,
    maxBytes: LAUNCH_BODY_BYTES_MAX,
    decode: (body: unknown, p: AgentPrincipal) => refusedOr(decodeSelfLaunchRequest(body, { keyEnvironment: p.key.environment }, settings))
  })

  // Every self-signed call fails with the launch rows (`ErrorTable.LaunchError`) and the key check's.
  const L = ErrorTable.LaunchError
  const refusals = {
    400: refusal(codesAt(400, L), "the launch body's rules, incl. the payer rules on linkedWalletId"),
    401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
    402: refusal(codesAt(402, L), "Hood: the gas of the legs"),
    403: refusal(["SCOPE_MISSING", ...codesAt(403, L), "VALIDATION_FAILED"], "the key, tier and wallet refusals; a paused key (reason key_paused)"),
    409: refusal(codesAt(409, L), "reason prior_attempt_on_chain or prior_attempt_in_flight on repeats"),
    429: refusal(["RATE_LIMITED", ...codesAt(429, L)]),
    500: refusal(codesAt(500, L), "reason chain_read_failed, build_in_progress: retry with the same id"),
    503: refusal(["LAUNCH_DISABLED", ...codesAt(503, L)]),
    504: refusal(codesAt(504, L))
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
      200: answer("The unsigned artifacts, or the launch result of a confirmed same-body repeat", Schema.Union(SolanaSelfBuilt, HoodSelfBuilt, LaunchResult)),
      ...refusals
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) =>
      mapFailure(launches.build(callerOf(principal), body)).pipe(Effect.map((answer) => json(200, { success: true, ...(answer._tag === "Built" ? answer.view : answer.result) })))
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
    responses: { 200: answer("Dry-run result (2.6) with launchWalletId", LaunchDryRun), ...refusals },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => mapFailure(launches.dryRun(callerOf(principal), body)).pipe(Effect.map((result) => json(200, { success: true, ...result })))
  })

  const confirm = route({
    method: "POST",
    path: "/api/v1/launch/self/confirm",
    operationId: "launchSelfConfirm",
    summary: "Record a self-signed launch from what the chain shows (or advance a sequenced Hood TEE operation)",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: { schema: SelfConfirmWire, maxBytes: LAUNCH_BODY_BYTES_MAX },
    responses: {
      200: answer("The launch result (2.5), or the sequenced operation's next state", Schema.Union(LaunchResult, HoodOperationPending)),
      ...refusals,
      400: refusal(codesAt(400, L), "field signature: not on chain yet, retryable; or not this launch"),
      402: refusal(codesAt(402, L), "FEE_LEG_MISSING: no verifying fee transfer"),
      404: refusal(codesAt(404, L), "unknown id, or a build that can never land"),
      500: refusal(codesAt(500, L), "retryable: confirm again with the same signature")
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => mapFailure(launches.confirm(callerOf(principal), body)).pipe(Effect.map((result) => json(200, { success: true, ...result })))
  })

  return [build, dryRun, confirm]
}
