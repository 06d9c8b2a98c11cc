/**
 * Atomic launches (launch spec 4: the `/launch/atomic/*` rows; endpoint rules 7 to 10; 2.4; 2.8).
 * HTTP only: the kill switch (before the key is parsed) on build and submit, key auth with
 * `launch:write` and `swap:write` (test keys refused: `TEST_ENVIRONMENT_FORBIDDEN`, general rule 7)
 * or `launch:read` for the bundle read, the body decoded with the caller's key environment, then
 * one call to `AtomicLaunch`; failures go through the error table (`LaunchError` rows, 501 for a
 * server without a block engine). The bundle read is not behind the kill switch (a bundle in flight
 * stays readable, as the job read).
 */
import { Effect, Schema } from "effect"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import type { AtomicCaller, AtomicLaunchShape } from "../../src/services/launch/atomic/AtomicLaunch.js"
import { decodeAtomicLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { LaunchRequestSettings } from "../../src/services/launch/request/LaunchRequest.js"
import { AGENT_AUTH_HEADERS, type AgentAuth, WHILE_PAUSED } from "../auth/AgentKeyAuth.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { codesAt, ErrorTable, mapFailure } from "../ErrorTable.js"
import { answer, refusal } from "../OpenApi.js"
import { json, type Request } from "../Http.js"
import { stringParam } from "../QueryParams.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { bundleAnswer } from "../TradeCodes.js"
import { AtomicBuilt, AtomicBundle, AtomicLanded, AtomicNotLanded, LaunchResult } from "./LaunchResponses.js"
import { disabled, LAUNCH_BODY_BYTES_MAX, LaunchRequestWire, refusedOr } from "./LaunchRoutes.js"

export interface AtomicLaunchRoutesOptions {
  /** `HEADLESS_LAUNCH_ENABLED` is exactly `true` (the kill switch covers every launch call, rule 5). */
  readonly enabled: boolean
  readonly agentAuth: AgentAuth
  readonly launches: AtomicLaunchShape
  readonly settings: LaunchRequestSettings
}

/** A bundle holds at most 5 transactions (the launch and 4 buys): more signed legs than that is never a bundle. */
const SIGNED_LEGS_MAX = 5
/** A Solana transaction is at most 1,232 bytes: 1,644 base64 characters. */
const SIGNED_LEG_CHARS_MAX = 1_644
const BUNDLE_ID_CHARS_MAX = 128

const AtomicPayerWire = Schema.Union(
  Schema.Struct({ type: Schema.Literal("main") }),
  Schema.Struct({ type: Schema.Literal("linked"), linkedWalletId: Schema.String })
).annotations({ identifier: "AtomicPayer" })

export const AtomicBuildWire = Schema.extend(
  LaunchRequestWire,
  Schema.Struct({
    payer: AtomicPayerWire.annotations({ description: "The creator: the delegated embedded Solana wallet (main) or a linked wallet" }),
    firstBuys: Schema.Array(Schema.Struct({ payer: AtomicPayerWire, amountRaw: Schema.String })).annotations({
      description: "1 to 4 first buys in order; payers may repeat and may differ from the creator"
    })
  })
).annotations({ identifier: "AtomicLaunchBuild" })

/** A signed leg: canonical base64 of at most one Solana transaction's bytes. */
const signedLegMessage = () => `must be a base64 signed transaction of at most ${SIGNED_LEG_CHARS_MAX} characters`
const SignedLegBase64 = Schema.String.pipe(
  Schema.minLength(1, { message: signedLegMessage }),
  Schema.maxLength(SIGNED_LEG_CHARS_MAX, { message: signedLegMessage }),
  Schema.pattern(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, { message: signedLegMessage })
)
const bundleIdMessage = () => `must be 1 to ${BUNDLE_ID_CHARS_MAX} characters`

/**
 * The submit body, decoded by the router: `bundleId` and the signed client legs, each canonical
 * base64 (their count against the build is the service's check, which consumes the bundle; a leg
 * that is not base64 is refused here, before it is).
 */
export const AtomicSubmitWire = Schema.Struct({
  bundleId: Schema.String.pipe(Schema.minLength(1, { message: bundleIdMessage }), Schema.maxLength(BUNDLE_ID_CHARS_MAX, { message: bundleIdMessage })),
  signedTxsBase64: Schema.Array(SignedLegBase64).pipe(
    Schema.maxItems(SIGNED_LEGS_MAX, { message: () => `holds at most ${SIGNED_LEGS_MAX} transactions` }),
    Schema.annotations({ description: "Exactly the client-signer legs, in leg order; server legs omitted; never padded" })
  )
}).annotations({ identifier: "AtomicLaunchSubmit" })

const callerOf = (p: AgentPrincipal): AtomicCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  keyDailyCap: p.key.dailyLaunchCap,
  plan: p.plan,
  embeddedWallet: p.key.embeddedWallet,
  spendLimits: p.key.spendLimits,
  txLimit: p.key.txLimit,
  referred: p.account.referredBy !== null,
  principal: agentToWalletPrincipal(p)
})

export const atomicLaunchRoutes = (options: AtomicLaunchRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, launches, settings } = options
  const guard = options.enabled ? undefined : () => disabled()
  const writer = (req: Request) => agentAuth.authenticate(req.headers, { scopes: ["launch:write", "swap:write"], testKeys: "forbid" })
  const reader = (req: Request) => agentAuth.authenticate(req.headers, { scopes: ["launch:read"], ...WHILE_PAUSED })

  const build = route({
    method: "POST",
    path: "/api/v1/launch/atomic/build",
    operationId: "launchAtomicBuild",
    summary: "Build a launch and its first buys as one block-engine bundle (Solana, Pro or Max)",
    description:
      "Legs in order (0 = the launch); each buy's expectedFill is the program's fill on the curve the earlier legs left, minAmountOutRaw 1% below it. Client legs carry unsignedTxBase64 (and the sign claim the relay signs them under). The bundleId is held 10 minutes; the shared blockhash lives 60 to 90 seconds.",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    // Hand-written (`decodeAtomicLaunchRequest`): the headless rules' order, reasons and codes (key environment first, the pair's economics, server settings), then the atomic ones, which no Schema's first error can say.
    body: decodedBody({
      schema: AtomicBuildWire,
      maxBytes: LAUNCH_BODY_BYTES_MAX,
      decode: (body: unknown, p: AgentPrincipal) => refusedOr(decodeAtomicLaunchRequest(body, { keyEnvironment: p.key.environment }, settings))
    }),
    responses: {
      200: answer("The bundle's legs (2.4), or the launch result of a confirmed same-body repeat", Schema.Union(AtomicBuilt, LaunchResult)),
      400: refusal(codesAt(400, ErrorTable.LaunchError), "firstBuys[i] unpriceable or identical, payer rules, the launch body's rules"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      402: refusal(codesAt(402, ErrorTable.LaunchError)),
      403: refusal(["SCOPE_MISSING", "TEST_ENVIRONMENT_FORBIDDEN", ...codesAt(403, ErrorTable.LaunchError), "VALIDATION_FAILED"], "the key, tier, wallet and delegation refusals; a paused key (reason key_paused)"),
      409: refusal(codesAt(409, ErrorTable.LaunchError)),
      429: refusal(["RATE_LIMITED", ...codesAt(429, ErrorTable.LaunchError)]),
      500: refusal(codesAt(500, ErrorTable.LaunchError), "retry with the same clientLaunchId"),
      501: refusal(codesAt(501, ErrorTable.LaunchError), "retryable: no block engine configured (BLOCK_ENGINE_URL)"),
      503: refusal(["LAUNCH_DISABLED", ...codesAt(503, ErrorTable.LaunchError)]),
      504: refusal(codesAt(504, ErrorTable.LaunchError))
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) =>
      mapFailure(launches.build(callerOf(principal), body)).pipe(Effect.map((answer) => json(200, { success: true, ...(answer._tag === "Built" ? answer.view : answer.result) })))
  })

  const submit = route({
    method: "POST",
    path: "/api/v1/launch/atomic/submit",
    operationId: "launchAtomicSubmit",
    summary: "Submit a built bundle: exactly the client legs, signed, in leg order",
    description:
      "The bundleId is consumed by the first call, before verification. A leg that is not the built one is UNRECOGNIZED_TRANSACTION and may be resubmitted until expiresAt; a wrong leg count consumes it. A repeat after the send answers that bundle's outcome; nothing is ever resent.",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: { schema: AtomicSubmitWire, maxBytes: LAUNCH_BODY_BYTES_MAX },
    responses: {
      200: answer("{status: landed, bundleId, mint, signatures, booking: {state, missing}}", AtomicLanded),
      400: refusal(codesAt(400, ErrorTable.LaunchError), "signedTxsBase64: wrong leg count; the bundle was consumed"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING", "TEST_ENVIRONMENT_FORBIDDEN", ...codesAt(403, ErrorTable.LaunchError), "VALIDATION_FAILED"], "UNRECOGNIZED_TRANSACTION, delegation refusals; a paused key (reason key_paused)"),
      404: refusal(codesAt(404, ErrorTable.LaunchError), "unknown, expired, consumed or foreign bundleId"),
      409: refusal(codesAt(409, ErrorTable.LaunchError), "retryable: a submit of this bundle is in progress"),
      500: refusal(codesAt(500, ErrorTable.LaunchError), "retryable: read the bundle"),
      501: refusal(codesAt(501, ErrorTable.LaunchError), "retryable: no block engine configured"),
      502: answer("{status: failed | timeout, bundleId, retryable: false}", AtomicNotLanded),
      503: refusal(["LAUNCH_DISABLED", ...codesAt(503, ErrorTable.LaunchError)])
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => mapFailure(launches.submit(callerOf(principal), body)).pipe(Effect.map((answer) => json(answer.landed ? 200 : 502, answer.body)))
  })

  const read = route({
    method: "GET",
    path: "/api/v1/launch/atomic/bundles/{bundleId}",
    operationId: "getAtomicBundle",
    summary: "An atomic bundle's record (2.8): operatorState, buys, chain outcome, what is still owed",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { bundleId: stringParam("The bundleId the build answered", { required: true, emptyIsValue: true }) },
    responses: {
      200: answer("{success, bundle}", AtomicBundle),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "launch:read"),
      404: refusal(["JOB_NOT_FOUND"], "unknown or another account's bundleId")
    },
    authenticate: reader,
    handler: (_req, { bundleId }, principal) => mapFailure(launches.bundle(principal.accountId, bundleId)).pipe(Effect.map((bundle) => json(200, { success: true, bundle: bundleAnswer(bundle) })))
  })

  return [build, submit, read]
}
