/**
 * Staking (spec document 2, 4.2): positions, the `stake`/`unstake`/`finish` builds, `submit` and
 * `confirm`. HTTP only: the staking switch (`AGENT_STAKING_ENABLED`; off answers 503
 * `LAUNCH_DISABLED` with the staking message, and never stops `confirm` or the positions read),
 * key auth with scope, live keys only on writes, the staking write limit (6 a minute per account,
 * shared with reward claims), the body decoded (`StakingDecoders`), then one call to
 * `StakingService`, whose typed view the route writes inside the envelope; failures go through the
 * error table.
 */
import { Effect, Schema } from "effect"
import { apiError } from "../../src/domain/ApiError.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import type { StakeAction } from "../../src/services/staking/StakingChain.js"
import type { StakingCaller, StakingServiceShape } from "../../src/services/staking/StakingService.js"
import { AGENT_AUTH_HEADERS, type AgentAuth, WHILE_PAUSED } from "../auth/AgentKeyAuth.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { ErrorTable, mapFailure } from "../ErrorTable.js"
import { keyCheckRefusals, mergeCodes, tableRefusals } from "../RouteRefusals.js"
import { answer, refusal } from "../OpenApi.js"
import { errorReply, json, type Reply } from "../Http.js"
import { stringParam } from "../QueryParams.js"
import type * as SqlClient from "@effect/sql/SqlClient"
import { type AccountWriteWindow, accountWriteWindow } from "../../src/db/WindowTakes.js"
import { takeAccountWrite } from "../AccountWriteLimit.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { decodeStakeBuildBody, decodeStakeConfirmBody, decodeStakeSubmitBody } from "./StakingDecoders.js"
import { RewardClaimed, StakeDryRun, StakeOperation, StakingPositions } from "./StakingResponses.js"

/** Stake, unstake, finish and reward claims, per account and minute (spec section 8). */
export const STAKING_WRITES_PER_MIN = 6
export const STAKING_BODY_BYTES_MAX = 4 * 1024

export interface StakingRoutesOptions {
  /** `AGENT_STAKING_ENABLED` is exactly `true`. */
  readonly enabled: boolean
  readonly agentAuth: AgentAuth
  readonly staking: StakingServiceShape
  /** Shared with the reward-claim route; durable (PostgreSQL). */
  readonly writeWindow: AccountWriteWindow
  readonly nowMs: () => number
}

export const stakingWriteWindow = (sql: SqlClient.SqlClient): AccountWriteWindow => accountWriteWindow(sql, "staking", STAKING_WRITES_PER_MIN)

export const stakingDisabled = (): Reply =>
  errorReply(apiError("LAUNCH_DISABLED", "Agent staking is disabled on this server (AGENT_STAKING_ENABLED is not true)"))

export const callerOf = (p: AgentPrincipal): StakingCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  embeddedWallet: p.key.embeddedWallet,
  principal: agentToWalletPrincipal(p),
  keyPaused: p.key.paused
})

/** Counts one staking write for the account, or the 429 with its wait. */
export const takeStakingWrite = (window: AccountWriteWindow, accountId: string, nowMs: number) => takeAccountWrite(window, accountId, nowMs, "staking writes")

const BuildWire = (action: StakeAction) =>
  Schema.Struct({
    payer: Schema.Literal("main", "linked"),
    linkedWalletId: Schema.optional(Schema.String),
    clientStakeId: Schema.String,
    dryRun: Schema.optional(Schema.Boolean),
    ...(action === "finish" ? { withdrawal: Schema.String } : { amountRaw: Schema.String })
  }).annotations({ identifier: `Staking${action[0]!.toUpperCase()}${action.slice(1)}Build` })

const SubmitWire = Schema.Struct({ clientStakeId: Schema.String, signedTransaction: Schema.String }).annotations({ identifier: "StakingSubmit" })
const ConfirmWire = Schema.Struct({ clientStakeId: Schema.String, signature: Schema.String }).annotations({ identifier: "StakingConfirm" })

export const stakingRoutes = (options: StakingRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, staking, writeWindow, nowMs } = options
  const guard = options.enabled ? undefined : () => stakingDisabled()
  const writes = { scopes: ["swap:write"], testKeys: "forbid" } as const
  const writer = (req: { headers: Readonly<Record<string, string>> }) => agentAuth.authenticate(req.headers, writes)
  // `StakingFailure`: the staking rows, the payer rules, the wallet lookups and the sign relay's claim.
  const failures = [ErrorTable.StakingError, ErrorTable.PayerError, ErrorTable.WalletError, ErrorTable.SignClaimError]
  const writeRefusals = (notes: Readonly<Record<number, string>>) =>
    tableRefusals(failures, mergeCodes(keyCheckRefusals(writes), { 429: ["RATE_LIMITED"], 503: ["LAUNCH_DISABLED"] }), notes)

  const positions = route({
    method: "GET",
    path: "/api/v1/agent/staking",
    operationId: "getStakingPositions",
    summary: "Staking positions of the account's eligible Solana wallets (2.4); unreadable data is 503, never zero",
    tags: ["staking"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    responses: {
      200: answer("Pool figures and wallets[]", StakingPositions),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "account:read or launch:write"),
      503: refusal(["FEED_UNAVAILABLE"], "chain data unreadable (retryable)")
    },
    authenticate: (req) => agentAuth.authenticate(req.headers, { anyScope: ["account:read", "launch:write"], ...WHILE_PAUSED }),
    handler: (_req, _input, principal) => mapFailure(staking.positions(callerOf(principal))).pipe(Effect.map((body) => json(200, { success: true, ...body })))
  })

  const buildRoute = (action: StakeAction) =>
    route({
      method: "POST",
      path: `/api/v1/agent/staking/${action}/build`,
      operationId: `stakingBuild${action[0]!.toUpperCase()}${action.slice(1)}`,
      summary: `Build a ${action} (dry run checks only; the embedded payer is signed and sent at once; linked and TEE payers get a built transaction)`,
      tags: ["staking"],
      auth: "agentKey",
      headers: AGENT_AUTH_HEADERS,
      body: decodedBody({ schema: BuildWire(action), maxBytes: STAKING_BODY_BYTES_MAX, decode: (body: unknown) => decodeStakeBuildBody(action, body) }),
      responses: {
        200: answer(
          "Dry run figures, a confirmed operation (main) or a built transaction (linked, TEE); a replay answers the stored operation",
          Schema.Union(StakeDryRun, StakeOperation)
        ),
        ...writeRefusals({
          402: "platform token, staked receipt, or SOL for fees, rent and reserve",
          403: "the key, wallet and delegation refusals; a paused key (reason key_paused)",
          409: "IDEMPOTENCY_CONFLICT (changed body, expired, pending, failed), VALIDATION_FAILED (withdrawal limit, unfinished wait, paused pool)",
          503: "LAUNCH_DISABLED (staking off), FEED_UNAVAILABLE (chain unreadable)"
        })
      },
      ...(guard !== undefined ? { guard } : {}),
      authenticate: writer,
      handler: (_req, { body }, principal) =>
        (body.dryRun ? Effect.void : takeStakingWrite(writeWindow, principal.accountId, nowMs())).pipe(
          Effect.zipRight(mapFailure(staking.build(callerOf(principal), body))),
          Effect.map((answer) => json(200, { success: true, ...answer }))
        )
    })

  const submit = route({
    method: "POST",
    path: "/api/v1/agent/staking/submit",
    operationId: "stakingSubmit",
    summary: "Broadcast a linked or TEE build, once: every signature over the exact built message",
    tags: ["staking"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: decodedBody({ schema: SubmitWire, maxBytes: STAKING_BODY_BYTES_MAX, decode: decodeStakeSubmitBody }),
    responses: {
      200: answer("The confirmed operation", StakeOperation),
      ...writeRefusals({
        404: "JOB_NOT_FOUND: no build with this clientStakeId",
        409: "IDEMPOTENCY_CONFLICT (expired, pending, failed), VALIDATION_FAILED (not the built message)"
      })
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => mapFailure(staking.submit(callerOf(principal), body)).pipe(Effect.map((answer) => json(200, { success: true, ...answer })))
  })

  const confirms = { scopes: ["swap:write"], ...WHILE_PAUSED } as const
  const confirm = route({
    method: "POST",
    path: "/api/v1/agent/staking/confirm",
    operationId: "stakingConfirm",
    summary: "Record a landed build (also on an expired row); sends nothing; not stopped by the staking switch",
    tags: ["staking"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: decodedBody({ schema: ConfirmWire, maxBytes: STAKING_BODY_BYTES_MAX, decode: decodeStakeConfirmBody }),
    responses: {
      200: answer("The confirmed operation", StakeOperation),
      ...tableRefusals(failures, keyCheckRefusals(confirms), { 409: "VALIDATION_FAILED: wrong message or not landed; IDEMPOTENCY_CONFLICT: pending" })
    },
    // Confirmation records what already landed and sends nothing: neither the kill switch nor a pause stops it.
    authenticate: (req) => agentAuth.authenticate(req.headers, confirms),
    handler: (_req, { body }, principal) => mapFailure(staking.confirm(callerOf(principal), body)).pipe(Effect.map((answer) => json(200, { success: true, ...answer })))
  })

  const claimReward = route({
    method: "POST",
    path: "/api/v1/agent/staking/rewards/{rewardId}/claim",
    operationId: "stakingClaimReward",
    summary: "Claim a staking reward for its recorded owner (no body, no destination, no dry run); pays at most once",
    description: "While a claim is in flight the same rewardId answers REWARD_CLAIM_PENDING with Retry-After: 2; a claimed reward answers its saved signature.",
    tags: ["staking"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { rewardId: stringParam("The reward's id (Solana: the distributor's decimal id; Hood: hood-<n>, read-only here)", { required: true, emptyIsValue: true }) },
    responses: {
      200: answer("{success, rewardId, owner, mint, amountRaw, signature}", RewardClaimed),
      ...writeRefusals({
        403: "STAKING_REWARD_NOT_OWNED (also every Hood reward: EVM-chain rewards are claimed from the site); the key's refusals; a paused key (VALIDATION_FAILED, reason key_paused)",
        409: "STAKING_REWARD_ALREADY_CLAIMED, REWARD_CLAIM_PENDING (Retry-After: 2)",
        503: "LAUNCH_DISABLED (staking off), STAKING_REWARD_CLAIM_FAILED (retryable; still pays at most once)"
      })
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { rewardId }, principal) =>
      takeStakingWrite(writeWindow, principal.accountId, nowMs()).pipe(
        Effect.zipRight(mapFailure(staking.claimReward(callerOf(principal), rewardId))),
        Effect.map((answer) => json(200, { success: true, ...answer }))
      )
  })

  return [positions, buildRoute("stake"), buildRoute("unstake"), buildRoute("finish"), submit, confirm, claimReward]
}
