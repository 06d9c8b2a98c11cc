/**
 * Agent-key authentication for every `x-api-key` route (spec document 1 section 5, document 2
 * sections 3.1 and 5), in the spec's order:
 *
 *   missing / malformed / unknown / wrong secret / revoked  → 401 UNAUTHORIZED (one message)
 *   expired (only after the secret verified)                → 401 KEY_EXPIRED
 *   over the key's requests per minute                       → 429 RATE_LIMITED + Retry-After
 *   missing scope                                            → 403 SCOPE_MISSING
 *   plan below the route's tier                              → 403 TIER_REQUIRED
 *   test key on a rail with no test mode                     → 403 TEST_ENVIRONMENT_FORBIDDEN
 *   paused key, on a route that does not allow it            → 403 VALIDATION_FAILED, reason key_paused
 *
 * A paused key (the owner's `PATCH /agent/keys/{prefix}` `{paused: true}`) is refused unless the
 * route says `whilePaused: "allow"`: a new route stops a paused key until it is decided otherwise.
 * What a paused key may still do is in docs/decisions.md ("Pausing a key").
 *
 * Hot path: the key row comes from `KeyStore`'s bounded LRU (2 s TTL), verification is one
 * SHA-256 and a constant-time compare, the tier is cached per account; a warm request runs no
 * query. The rate limit is per key, per process: the effective value is the higher of the key
 * row's issued value and the plan's, one sliding-window limiter per distinct value, each bounded
 * in tracked keys.
 */
import { Effect } from "effect"
import { storageRefusal, toApiError } from "../ErrorTable.js"
import { RateLimiter } from "../RateLimiter.js"
import type { SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import type { PlanId } from "../../src/domain/Plans.js"
import { tierAtLeast } from "../../src/services/accounts/Tier.js"
import type { TierServiceShape } from "../../src/services/accounts/TierService.js"
import { keyError } from "../../src/services/keys/KeyError.js"
import { effectiveCaps } from "../../src/services/keys/KeyRules.js"
import { keyStatus } from "../../src/services/keys/KeyRepository.js"
import type { KeyEntry, KeyStoreShape } from "../../src/services/keys/KeyStore.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { parseToken, verifyToken } from "../../src/services/keys/Tokens.js"

export interface AgentAuthRequirements {
  /** Every one of these scopes. */
  readonly scopes?: ReadonlyArray<string>
  /** At least one of these scopes. */
  readonly anyScope?: ReadonlyArray<string>
  /** Lowest plan allowed (`pro` means Pro or Max). */
  readonly minTier?: PlanId
  /** `forbid` for rails with no test mode. Default `allow`. */
  readonly testKeys?: "allow" | "forbid"
  /** Counts against the plan's uploads per minute too (image upload). */
  readonly upload?: boolean
  /** `allow` for the routes a paused key may still use (reads, narrowing itself, confirmations, creator-fee claims). Default `refuse`. */
  readonly whilePaused?: "allow" | "refuse"
}

/** The requirement a route a paused key may still use adds. */
export const WHILE_PAUSED: Pick<AgentAuthRequirements, "whilePaused"> = { whilePaused: "allow" }

export interface AgentAuth {
  /** Authenticates `x-api-key` from the request's headers (lower-case names). */
  readonly authenticate: (headers: Readonly<Record<string, string>>, req?: AgentAuthRequirements) => Effect.Effect<AgentPrincipal, ApiError>
  /** Verifies a presented key without rate limiting or requirements; undefined when unusable. */
  readonly verify: (token: string) => Effect.Effect<VerifiedKey, ApiError>
}

export type VerifiedKey = KeyEntry

export interface AgentAuthOptions {
  readonly store: KeyStoreShape
  readonly tiers: TierServiceShape
  readonly nowMs: () => number
  /** Keys tracked per limiter (bounded state). Default 100,000. */
  readonly maxTrackedKeys?: number
  /** The counts other API processes admitted (a database shared by replicas): each key's limits hold across them. */
  readonly shared?: SharedWindowCounts | undefined
}

export const API_KEY_HEADER = "x-api-key"
/** Headers a route using agent-key auth must declare. */
export const AGENT_AUTH_HEADERS: ReadonlyArray<string> = [API_KEY_HEADER]

const unauthorized = () => apiError("UNAUTHORIZED", "Missing, malformed, unknown or revoked API key")
const MAX_LIMITERS = 64

export const makeAgentAuth = (options: AgentAuthOptions): AgentAuth => {
  const limiters = new Map<string, RateLimiter>()
  const limiter = (kind: string, limit: number): RateLimiter => {
    const id = `${kind}:${limit}`
    let l = limiters.get(id)
    if (l === undefined) {
      // Distinct limits come from plan values and issued caps: a handful. Bounded regardless.
      if (limiters.size >= MAX_LIMITERS) limiters.delete(limiters.keys().next().value!)
      l = new RateLimiter({ limit, maxKeys: options.maxTrackedKeys ?? 100_000, shared: options.shared === undefined ? undefined : { counts: options.shared, scope: `key-${id}` } })
      limiters.set(id, l)
    }
    return l
  }

  const verify = (token: string): Effect.Effect<VerifiedKey, ApiError> => {
    const parsed = parseToken(token)
    if (parsed === undefined || (parsed.kind !== "live" && parsed.kind !== "test")) return Effect.fail(unauthorized())
    const nowMs = options.nowMs()
    return options.store.lookup(parsed.prefix, nowMs).pipe(
      Effect.catchTag("SqlError", storageRefusal),
      Effect.flatMap((entry) => {
        if (entry === undefined || !verifyToken(token, entry.key.hash)) return Effect.fail(unauthorized())
        const status = keyStatus(entry.key, nowMs)
        if (status === "revoked") return Effect.fail(unauthorized())
        if (status === "expired") return Effect.fail(apiError("KEY_EXPIRED", "This API key has expired"))
        return Effect.succeed(entry)
      })
    )
  }

  const authenticate = (headers: Readonly<Record<string, string>>, req: AgentAuthRequirements = {}): Effect.Effect<AgentPrincipal, ApiError> => {
    const token = headers[API_KEY_HEADER]
    if (token === undefined || token === "") return Effect.fail(unauthorized())
    return Effect.flatMap(verify(token.trim()), (entry) =>
      Effect.flatMap(options.tiers.tierOf(entry.account, options.nowMs()), (tier) => {
        const nowMs = options.nowMs()
        const { key, account } = entry
        const plan = options.tiers.plan(tier)
        const caps = effectiveCaps({ rateLimitPerMin: key.rateLimitPerMin, dailyLaunchCap: key.dailyLaunchCap }, plan)
        options.store.touch(key.id, nowMs)
        const rate = limiter("req", caps.effective.rateLimitPerMin).hit(key.id, nowMs)
        if (!rate.allowed) return Effect.fail(rateLimited(rate.retryAfterSec, caps.effective.rateLimitPerMin, "requests"))
        if (req.upload === true) {
          const up = limiter("upload", Math.max(1, plan.limits.uploadsPerMin)).hit(key.id, nowMs)
          if (!up.allowed) return Effect.fail(rateLimited(up.retryAfterSec, plan.limits.uploadsPerMin, "uploads"))
        }
        for (const s of req.scopes ?? []) {
          if (!key.scopes.includes(s)) return Effect.fail(apiError("SCOPE_MISSING", `This key lacks the ${s} scope`, { extra: { scope: s } }))
        }
        if (req.anyScope !== undefined && !req.anyScope.some((s) => key.scopes.includes(s))) {
          return Effect.fail(apiError("SCOPE_MISSING", `This key needs one of ${req.anyScope.join(", ")}`, { extra: { scope: req.anyScope[0] } }))
        }
        if (req.minTier !== undefined && !tierAtLeast(tier, req.minTier)) {
          return Effect.fail(apiError("TIER_REQUIRED", `This needs ${req.minTier === "pro" ? "Pro or Max" : "Max"}`, { extra: { tier, requiredTier: req.minTier } }))
        }
        if (req.testKeys === "forbid" && key.environment === "test") {
          return Effect.fail(apiError("TEST_ENVIRONMENT_FORBIDDEN", "Test keys cannot use this rail; it has no test mode"))
        }
        if (key.paused && req.whilePaused !== "allow") {
          return Effect.fail(toApiError(keyError("paused", "This key is paused by its owner; resume it to use this route")))
        }
        return Effect.succeed<AgentPrincipal>({ _tag: "agent", accountId: account.id, key, account, tier, plan, caps })
      })
    )
  }

  return { authenticate, verify }
}

const rateLimited = (retryAfterSec: number, limit: number, what: string) =>
  apiError("RATE_LIMITED", `Over ${limit} ${what} per minute for this key`, {
    extra: { limitPerMin: limit, retryAfter: retryAfterSec },
    headers: { "Retry-After": String(retryAfterSec) }
  })
