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
import type { PlanId } from "../../domain/Plans.js"
import { mintToken } from "../keys/Tokens.js"
import { type AccountError, accountError } from "./AccountError.js"
import * as Repo from "./AccountRepository.js"
import type { AccountWalletsShape } from "./AccountWallets.js"
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
 * Applies an agent-tier grant: `tier: "max"` grants Max until the expiry; "free" (or "pro") ends
 * an active grant now. The paid plan is untouched: a grant sits beside the subscription.
 */
export const applyAgentTier = (req: AgentTierRequest, nowMs: number): Effect.Effect<Repo.Account, SqlError | AccountError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const existing = yield* Repo.findAccount(req.accountId)
    if (existing === undefined) return yield* Effect.fail(accountError("account_not_found", `No account '${req.accountId}'`, { field: "accountId" }))
    if (req.tier === "max") return (yield* Repo.setMaxGrant(req.accountId, req.expiresAtMs, req.source))!
    // Ending a grant: keep its record as expired now, so the snapshot reports `maxExpired`.
    const active = existing.maxGrantExpiresAtMs !== null && existing.maxGrantExpiresAtMs > nowMs
    return active ? (yield* Repo.setMaxGrant(req.accountId, nowMs, existing.maxGrantSource ?? req.source))! : existing
  })

export const grantMax = (accountId: string, expiresAtMs: number, source: MaxSource, nowMs: number) =>
  applyAgentTier({ accountId, tier: "max", expiresAtMs, source }, nowMs)

export const setPlan = (accountId: string, plan: PlanId, expiresAtMs: number | null) => Repo.setPlan(accountId, plan, expiresAtMs)

/**
 * `POST /agent/enable`: agent features go on once the account has a linked Solana wallet; they
 * are never turned off through the API.
 */
export const setAgentFeatures = (
  accountId: string,
  enabled: boolean,
  wallets: AccountWalletsShape
): Effect.Effect<void, SqlError | AccountError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    if (!enabled) return yield* Effect.fail(accountError("disable_refused", "Agent features cannot be turned off here", { field: "enabled" }))
    const hasWallet = yield* wallets
      .hasSolanaWallet(accountId)
      .pipe(Effect.mapError(() => accountError("wallets_unreachable", "The wallet provider could not be reached; nothing changed", { retryable: true })))
    if (!hasWallet) return yield* Effect.fail(accountError("solana_wallet_missing", "Link a Solana wallet before enabling agent features", { field: "enabled" }))
    yield* Repo.setAgentEnabled(accountId, true)
  })
