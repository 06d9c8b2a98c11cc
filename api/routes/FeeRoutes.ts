/**
 * Creator fees (spec document 2, 4.3): the fee list and the claim. HTTP only: key auth with its
 * scope (claims: `launch:write`, production keys only), the fee-claim limit (6 a minute per
 * account, beside the key's own rate limit), the body (`{dryRun: true}` or `{}`), then one call to
 * `CreatorFees`; failures go through the error table. The chain is inferred from the mint (a `0x`
 * address is Hood).
 */
import { Effect, Schema } from "effect"
import { type CreatorFeesShape, FEE_PAGE_DEFAULT, FEE_PAGE_MAX, type FeeCaller } from "../../src/services/fees/CreatorFees.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { AGENT_AUTH_HEADERS, type AgentAuth, WHILE_PAUSED } from "../auth/AgentKeyAuth.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { mapFailure } from "../ErrorTable.js"
import { answer, refusal } from "../OpenApi.js"
import { json } from "../Http.js"
import { intParam, stringParam } from "../QueryParams.js"
import type * as SqlClient from "@effect/sql/SqlClient"
import { type AccountWriteWindow, accountWriteWindow } from "../../src/db/WindowTakes.js"
import { takeAccountWrite } from "../AccountWriteLimit.js"
import { route, type RouteDef } from "../Router.js"
import { CreatorFeeClaim, CreatorFeeList } from "./FeeResponses.js"

export const FEE_CLAIMS_PER_MIN = 6

export const feeClaimWindow = (sql: SqlClient.SqlClient): AccountWriteWindow => accountWriteWindow(sql, "fee-claim", FEE_CLAIMS_PER_MIN)

export interface FeeRoutesOptions {
  readonly agentAuth: AgentAuth
  readonly fees: CreatorFeesShape
  readonly nowMs: () => number
  /** Fee claims per account and minute (`FEE_CLAIMS_PER_MIN`); durable (PostgreSQL). */
  readonly claimWindow: AccountWriteWindow
}

const callerOf = (p: AgentPrincipal): FeeCaller => ({ accountId: p.accountId, embeddedWallet: p.key.embeddedWallet, principal: agentToWalletPrincipal(p) })

/** The claim body: `{dryRun: true}`, `{}` or none (a claim); members other than `dryRun` are ignored. */
export const FeeClaimBody = Schema.transform(
  Schema.UndefinedOr(Schema.Struct({ dryRun: Schema.optional(Schema.Boolean) })).annotations({ message: () => "body must be {dryRun: true} or {}" }),
  Schema.Struct({ dryRun: Schema.Boolean }),
  { strict: true, decode: (body) => ({ dryRun: body?.dryRun === true }), encode: (body) => body }
).annotations({ identifier: "FeeClaim" })

export const feeRoutes = (options: FeeRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, fees, nowMs } = options

  const list = route({
    method: "GET",
    path: "/api/v1/agent/fees",
    operationId: "listCreatorFees",
    summary: "Creator fees of the account's launched tokens, sorted by mint; amounts are what the chain would pay now",
    tags: ["fees"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    query: {
      limit: intParam(`Page size, 1 to ${FEE_PAGE_MAX}`, { min: 1, max: FEE_PAGE_MAX, default: FEE_PAGE_DEFAULT }),
      cursor: stringParam("continueCursor of the previous page")
    },
    responses: {
      200: answer("{success, tokens[], continueCursor, isDone}; an entry that could not be read has unreadable: true", CreatorFeeList),
      400: refusal(["VALIDATION_FAILED"], "limit or cursor"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "account:read or launch:write")
    },
    authenticate: (req) => agentAuth.authenticate(req.headers, { anyScope: ["account:read", "launch:write"], ...WHILE_PAUSED }),
    handler: (_req, { limit, cursor }, principal) => mapFailure(fees.list(callerOf(principal), { limit, cursor })).pipe(Effect.map((body) => json(200, { success: true, ...body })))
  })

  const claim = route({
    method: "POST",
    path: "/api/v1/agent/fees/{mint}/claim",
    operationId: "claimCreatorFees",
    summary: "Claim a launched token's creator fees to the recipient fixed at launch, from the embedded wallet",
    tags: ["fees"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { mint: stringParam("The token's mint (a 0x address is Hood)", { required: true, emptyIsValue: true }) },
    body: { schema: FeeClaimBody, documented: Schema.Struct({ dryRun: Schema.optional(Schema.Boolean) }), maxBytes: 1024 },
    responses: {
      200: answer("{success, mint, chain, dryRun, recipient, claimed[], remaining[], warnings[]} (a dry run: txHash null, claimable, reason)", CreatorFeeClaim),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING", "TEST_ENVIRONMENT_FORBIDDEN"]),
      404: refusal(["MARKET_NOT_FOUND"], "no token of this account has this mint"),
      409: refusal(["FEE_NOT_CLAIMABLE"], "with reason"),
      429: refusal(["RATE_LIMITED"]),
      500: refusal(["FEE_CLAIM_FAILED"], "with stage and signature; read fees before retrying"),
      503: refusal(["FEED_UNAVAILABLE"], "the token's fee vault or splitter could not be read")
    },
    // Spec document 2, 4.3 rule 5: a paused key can still claim creator fees.
    authenticate: (req) => agentAuth.authenticate(req.headers, { scopes: ["launch:write"], testKeys: "forbid", ...WHILE_PAUSED }),
    handler: (_req, { mint, body }, principal) => {
      // A dry run claims nothing: it does not count toward the six a minute.
      const take = body.dryRun ? Effect.void : takeAccountWrite(options.claimWindow, principal.accountId, nowMs(), "fee claims")
      return Effect.zipRight(take, mapFailure(fees.claim(callerOf(principal), mint, body.dryRun))).pipe(Effect.map((answer) => json(200, { success: true, ...answer })))
    }
  })

  return [list, claim]
}
