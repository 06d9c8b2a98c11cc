/**
 * Embedded mode's ready-to-use credentials (DESIGN.md "Two ways to run"): a local account on
 * Max (handle `local`, created once), a session token and a Write-level agent key.
 *
 * Idempotent: given the credentials written last time (`<dataDir>/local-credentials.json`),
 * returns them unchanged while both still verify. Otherwise it issues a fresh session and key
 * and revokes the earlier local key, so restarts never pile up keys against the 12-key limit.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { KeyError } from "../keys/KeyError.js"
import { KeyService } from "../keys/KeyService.js"
import { KeyStore } from "../keys/KeyStore.js"
import { LevelScopes } from "../keys/Scopes.js"
import { parseToken, verifyToken } from "../keys/Tokens.js"
import { createAccount, issueSession } from "./Accounts.js"
import { findAccountByHandle, findSession } from "./AccountRepository.js"

export const LOCAL_HANDLE = "local"
const LOCAL_MARK = "local"

export interface LocalCredentials {
  readonly accountId: string
  readonly sessionToken: string
  readonly agentKey: string
}

const stillValid = (previous: LocalCredentials, accountId: string, nowMs: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    if (previous.accountId !== accountId) return false
    const s = parseToken(previous.sessionToken)
    const k = parseToken(previous.agentKey)
    if (s?.kind !== "session" || k?.kind !== "live") return false
    const session = yield* findSession(s.prefix)
    if (session === undefined || session.account_id !== accountId || session.revoked_at !== null) return false
    if (session.expires_at !== null && session.expires_at.getTime() <= nowMs) return false
    if (!verifyToken(previous.sessionToken, session.token_hash)) return false
    const rows = yield* sql<{ key_hash: string; revoked_at: Date | null; expires_at: Date | null }>`
      SELECT key_hash, revoked_at, expires_at FROM agent_keys WHERE prefix = ${k.prefix} AND account_id = ${accountId}`
    const key = rows[0]
    return key !== undefined && key.revoked_at === null && (key.expires_at === null || key.expires_at.getTime() > nowMs) && verifyToken(previous.agentKey, key.key_hash)
  })

/**
 * `prepare` runs once the local account exists and before a key is issued (the composition root
 * gives the account its embedded wallets and delegation there, so the key's launch chains are
 * right on the first start too).
 */
export const provisionLocalAccount = <E = never, R = never>(
  previous: LocalCredentials | undefined,
  nowMs: number,
  prepare?: (accountId: string) => Effect.Effect<void, E, R>
): Effect.Effect<LocalCredentials, SqlError | KeyError | E, SqlClient.SqlClient | KeyService | KeyStore | R> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* KeyService
    const store = yield* KeyStore
    const account =
      (yield* findAccountByHandle(LOCAL_HANDLE)) ??
      (yield* createAccount({ handle: LOCAL_HANDLE, name: "Local", plan: "max", planExpiresAtMs: null, agentEnabled: true, isAdmin: false }, nowMs))
    if (prepare !== undefined) yield* prepare(account.id)
    if (previous !== undefined && (yield* stillValid(previous, account.id, nowMs))) return previous
    yield* sql`UPDATE sessions SET revoked_at = ${new Date(nowMs)} WHERE account_id = ${account.id} AND label = ${LOCAL_MARK} AND revoked_at IS NULL`
    const revoked = yield* sql<{ prefix: string }>`
      UPDATE agent_keys SET revoked_at = ${new Date(nowMs)}
      WHERE account_id = ${account.id} AND provisioned_by = ${LOCAL_MARK} AND revoked_at IS NULL RETURNING prefix`
    for (const r of revoked) store.invalidate(r.prefix)
    const session = yield* issueSession(account.id, { label: LOCAL_MARK, expiresAtMs: null }, nowMs)
    const issued = yield* keys.issueFor(
      account,
      { environment: "production", scopes: LevelScopes.readwrite, label: "local", expiresAtMs: null, txLimit: null, embeddedWallet: "allowed", ref: null },
      { provisionedBy: LOCAL_MARK, requireDelegation: false }
    )
    return { accountId: account.id, sessionToken: session.sessionToken, agentKey: issued.response.key as string }
  })
