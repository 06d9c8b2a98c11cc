/**
 * Operator and owner actions on accounts: create an account on a plan, issue a session token,
 * grant Max with an expiry, set the paid plan, turn agent features on. Plain Effects over
 * `SqlClient`, shared by the operator CLI, the admin route and embedded provisioning.
 *
 * A session token (`svc_ses_…`) is shown once; only its hash is stored. Sessions expire after
 * `DEFAULT_SESSION_DAYS` unless the caller sets another expiry (or none, for the embedded local
 * account).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { apiError, type ApiError, validationFailed } from "../../domain/ApiError.js"
import { PlanIds, type PlanId } from "../../domain/Plans.js"
import { mintToken } from "../keys/Tokens.js"
import * as Repo from "./AccountRepository.js"
import type { MaxSource } from "./Tier.js"

export const DEFAULT_SESSION_DAYS = 30
const DAY_MS = 86_400_000

export const createAccount = (a: Repo.NewAccount, nowMs: number): Effect.Effect<Repo.Account, SqlError, SqlClient.SqlClient> => Repo.insertAccount(a, nowMs)

export interface IssuedSession {
  readonly sessionToken: string
  readonly sessionId: string
  readonly expiresAt: number | null
}

export const issueSession = (
  accountId: string,
  options: { readonly label?: string | null; readonly expiresAtMs?: number | null },
  nowMs: number
): Effect.Effect<IssuedSession, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const minted = mintToken("session")
    const expiresAtMs = options.expiresAtMs === undefined ? nowMs + DEFAULT_SESSION_DAYS * DAY_MS : options.expiresAtMs
    yield* Repo.insertSession({ id: minted.prefix, accountId, hash: minted.hash, label: options.label ?? null, expiresAtMs }, nowMs)
    return { sessionToken: minted.token, sessionId: minted.prefix, expiresAt: expiresAtMs }
  })

export const MaxSources: ReadonlyArray<MaxSource> = ["subscription", "trial", "team", "promo"]

/** Body of `POST /api/v1/admin/agent-tier`. */
export interface AgentTierRequest {
  readonly accountId: string
  readonly tier: PlanId
  /** Max only: absolute expiry (epoch ms), required. */
  readonly expiresAtMs: number | null
  readonly source: MaxSource
}

/**
 * `{accountId, tier: "max", expiresAt | days, source?}` grants Max until the expiry;
 * `{accountId, tier: "free"}` (or "pro") ends an active grant now. The paid plan is untouched:
 * a grant sits beside the subscription.
 */
export const parseAgentTierRequest = (body: unknown, nowMs: number): AgentTierRequest | ApiError => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return validationFailed("body", "Body must be a JSON object")
  const b = body as Record<string, unknown>
  if (typeof b.accountId !== "string" || b.accountId === "") return validationFailed("accountId", "accountId is required")
  const tier = b.tier ?? "max"
  if (typeof tier !== "string" || !(PlanIds as ReadonlyArray<string>).includes(tier)) return validationFailed("tier", "tier must be free, pro or max")
  const source = b.source ?? "team"
  if (typeof source !== "string" || !(MaxSources as ReadonlyArray<string>).includes(source)) {
    return validationFailed("source", `source must be one of ${MaxSources.join(", ")}`)
  }
  if (tier !== "max") return { accountId: b.accountId, tier: tier as PlanId, expiresAtMs: null, source: source as MaxSource }
  if (b.expiresAt !== undefined && b.days !== undefined) return validationFailed("expiresAt", "expiresAt and days are mutually exclusive")
  let expiresAtMs: number
  if (b.days !== undefined) {
    if (typeof b.days !== "number" || !Number.isInteger(b.days) || b.days < 1 || b.days > 3650) return validationFailed("days", "days must be an integer from 1 to 3650")
    expiresAtMs = nowMs + b.days * DAY_MS
  } else if (b.expiresAt !== undefined) {
    if (typeof b.expiresAt !== "number" || !Number.isSafeInteger(b.expiresAt) || b.expiresAt <= nowMs) {
      return validationFailed("expiresAt", "expiresAt must be epoch milliseconds in the future")
    }
    expiresAtMs = b.expiresAt
  } else return validationFailed("expiresAt", "A Max grant needs an expiry: expiresAt (epoch ms) or days")
  return { accountId: b.accountId, tier: "max", expiresAtMs, source: source as MaxSource }
}

/** Applies an agent-tier grant; unknown account is 404. */
export const applyAgentTier = (req: AgentTierRequest, nowMs: number): Effect.Effect<Repo.Account, SqlError | ApiError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const existing = yield* Repo.findAccount(req.accountId)
    if (existing === undefined) return yield* Effect.fail(apiError("VALIDATION_FAILED", `No account '${req.accountId}'`, { status: 404, field: "accountId" }))
    if (req.tier === "max") return (yield* Repo.setMaxGrant(req.accountId, req.expiresAtMs, req.source))!
    // Ending a grant: keep its record as expired now, so the snapshot reports `maxExpired`.
    const active = existing.maxGrantExpiresAtMs !== null && existing.maxGrantExpiresAtMs > nowMs
    return active ? (yield* Repo.setMaxGrant(req.accountId, nowMs, existing.maxGrantSource ?? req.source))! : existing
  })

export const grantMax = (accountId: string, expiresAtMs: number, source: MaxSource, nowMs: number) =>
  applyAgentTier({ accountId, tier: "max", expiresAtMs, source }, nowMs)

export const setPlan = (accountId: string, plan: PlanId, expiresAtMs: number | null) => Repo.setPlan(accountId, plan, expiresAtMs)
