/**
 * The market-data service's credential (spec document 2, section 4.5): `Authorization: Bearer
 * <API_KEY>` with a live, unrevoked, unexpired PRODUCTION key. Anything else (missing, malformed,
 * unknown, revoked, expired, or a test key) is 401 with the plain body `{"error": "invalid api
 * key"}`, the data service's error shape. Scopes are not checked and there is no per-key rate
 * limit there; routes read the account (and its plan), not the key.
 */
import { Effect } from "effect"
import { json, type Reply } from "../Http.js"
import type { ApiError } from "../../src/domain/ApiError.js"
import type { PlanId } from "../../src/domain/Plans.js"
import type { TierServiceShape } from "../../src/services/accounts/TierService.js"
import type { AgentKey } from "../../src/services/keys/KeyRepository.js"
import { parseToken } from "../../src/services/keys/Tokens.js"
import type { AgentAuth } from "./AgentKeyAuth.js"
import { bearerToken } from "./OwnerAuth.js"

export interface DataPrincipal {
  readonly accountId: string
  readonly key: AgentKey
  /** The account's plan now (Max ends when Max expires). */
  readonly tier: PlanId
}

export const INVALID_API_KEY_BODY = { error: "invalid api key" } as const
export const invalidApiKeyReply = (): Reply => json(401, INVALID_API_KEY_BODY)

/** The plain 403 of a Max-only data route (the strategy lab, book legs) below Max. */
export const REQUIRES_MAX_BODY = { error: "requires Max" } as const
export const requiresMaxReply = (): Reply => json(403, REQUIRES_MAX_BODY)

/** Headers a data route using bearer auth must declare. */
export const DATA_AUTH_HEADERS: ReadonlyArray<string> = ["authorization"]

export const makeDataBearerAuth = (options: { readonly agentAuth: AgentAuth; readonly tiers: TierServiceShape; readonly nowMs: () => number }) => {
  /** The principal, or `undefined` for every refused credential. */
  const authenticate = (headers: Readonly<Record<string, string>>): Effect.Effect<DataPrincipal | undefined> => {
    const token = bearerToken(headers)
    if (token === undefined || parseToken(token)?.kind !== "live") return Effect.succeed(undefined)
    return options.agentAuth.verify(token).pipe(
      Effect.flatMap((entry) =>
        Effect.map(options.tiers.tierOf(entry.account, options.nowMs()), (tier): DataPrincipal | undefined =>
          entry.key.environment === "production" ? { accountId: entry.account.id, key: entry.key, tier } : undefined
        )
      ),
      Effect.catchAll(() => Effect.succeed(undefined))
    )
  }

  /** Runs `f` for an authenticated request; answers the 401 `invalid api key` otherwise. */
  const withBearer =
    (f: (p: DataPrincipal) => Effect.Effect<Reply, ApiError>) =>
    (headers: Readonly<Record<string, string>>): Effect.Effect<Reply, ApiError> =>
      Effect.flatMap(authenticate(headers), (p) => (p === undefined ? Effect.succeed(invalidApiKeyReply()) : f(p)))

  return { authenticate, withBearer }
}

export type DataBearerAuth = ReturnType<typeof makeDataBearerAuth>
