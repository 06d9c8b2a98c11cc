/**
 * Owner authentication: `Authorization: Bearer <token>` with a session token (`svc_ses_…`) or,
 * where the route allows it, a device token (`svc_dvc_…`). Key management routes take either;
 * device management, device approval, `POST /agent/enable` and admin routes take a session
 * only. An agent key is never an owner credential, so a leaked key cannot mint keys: presenting
 * one (as `x-api-key` or as a bearer) is 401 `UNAUTHORIZED` with a message saying why.
 *
 * Owner routes are not a hot path: every request reads the credential row (no cache), so a
 * revoked session or device stops at once on every process. `last_used_at` is written at most
 * once a minute per credential.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ApiError, apiError } from "../../src/domain/ApiError.js"
import { findAccount, findSession } from "../../src/services/accounts/AccountRepository.js"
import { TtlLru } from "../../src/services/keys/TtlLru.js"
import type { DevicePrincipal, OwnerPrincipal, SessionPrincipal } from "../../src/services/keys/Principals.js"
import { parseToken, verifyToken } from "../../src/services/keys/Tokens.js"
import { storageRefusal } from "../ErrorTable.js"
import { API_KEY_HEADER } from "./AgentKeyAuth.js"

export const AUTHORIZATION_HEADER = "authorization"
/** Headers a route using owner auth must declare. */
export const OWNER_AUTH_HEADERS: ReadonlyArray<string> = [AUTHORIZATION_HEADER, API_KEY_HEADER]

export type OwnerKinds = "session" | "sessionOrDevice"

export interface OwnerAuth {
  readonly owner: (headers: Readonly<Record<string, string>>, kinds: OwnerKinds) => Effect.Effect<OwnerPrincipal, ApiError>
  /** A session only; with `admin`, the session's account must be an operator admin. */
  readonly session: (headers: Readonly<Record<string, string>>, options?: { readonly admin?: boolean }) => Effect.Effect<SessionPrincipal, ApiError>
}

/** The bearer token of `Authorization: Bearer <token>`, if any. */
export const bearerToken = (headers: Readonly<Record<string, string>>): string | undefined => {
  const h = headers[AUTHORIZATION_HEADER]
  if (h === undefined) return undefined
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  return m?.[1]
}

const unauthorized = (message: string) => apiError("UNAUTHORIZED", message)

export const makeOwnerAuth = (options: { readonly sql: SqlClient.SqlClient; readonly nowMs: () => number }): OwnerAuth => {
  const { sql } = options
  const touched = new TtlLru<string, true>({ maxEntries: 10_000, ttlMs: 60_000 })
  const touch = (table: "sessions" | "devices", id: string, nowMs: number) => {
    if (touched.get(`${table}:${id}`, nowMs) !== undefined) return
    touched.set(`${table}:${id}`, true, nowMs)
    const q = table === "sessions" ? sql`UPDATE sessions SET last_used_at = ${new Date(nowMs)} WHERE id = ${id}` : sql`UPDATE devices SET last_used_at = ${new Date(nowMs)} WHERE id = ${id}`
    Effect.runFork(q.pipe(Effect.catchAll((e) => Effect.logWarning("last_used_at not written", e))))
  }

  const resolve = (headers: Readonly<Record<string, string>>, kinds: OwnerKinds): Effect.Effect<OwnerPrincipal, ApiError> => {
    const token = bearerToken(headers)
    const wanted = kinds === "session" ? "a signed-in session (Authorization: Bearer svc_ses_…)" : "a signed-in session or a device token (Authorization: Bearer …)"
    if (token === undefined) {
      return Effect.fail(
        unauthorized(headers[API_KEY_HEADER] !== undefined ? `Agent keys cannot use this route; it needs ${wanted}` : `This route needs ${wanted}`)
      )
    }
    const parsed = parseToken(token)
    if (parsed?.kind === "live" || parsed?.kind === "test") return Effect.fail(unauthorized(`Agent keys cannot use this route; it needs ${wanted}`))
    if (parsed === undefined) return Effect.fail(unauthorized("Malformed, unknown or revoked credential"))
    if (parsed.kind === "device" && kinds === "session") return Effect.fail(unauthorized(`A device token cannot use this route; it needs ${wanted}`))
    const nowMs = options.nowMs()
    if (parsed.kind === "session") {
      return Effect.gen(function* () {
        const row = yield* findSession(parsed.prefix)
        if (row === undefined || !verifyToken(token, row.token_hash) || row.revoked_at !== null) return yield* Effect.fail(unauthorized("Malformed, unknown or revoked credential"))
        if (row.expires_at !== null && row.expires_at.getTime() <= nowMs) return yield* Effect.fail(unauthorized("This session has expired; sign in again"))
        const account = yield* findAccount(row.account_id)
        if (account === undefined) return yield* Effect.fail(unauthorized("The account no longer exists"))
        touch("sessions", row.id, nowMs)
        return { _tag: "session", accountId: account.id, sessionId: row.id, isAdmin: account.isAdmin } satisfies SessionPrincipal
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.catchTag("SqlError", storageRefusal))
    }
    return Effect.gen(function* () {
      const rows = yield* sql<{ id: string; account_id: string; token_hash: string; revoked_at: Date | null }>`
        SELECT id, account_id, token_hash, revoked_at FROM devices WHERE prefix = ${parsed.prefix}`
      const row = rows[0]
      if (row === undefined || !verifyToken(token, row.token_hash) || row.revoked_at !== null) return yield* Effect.fail(unauthorized("Malformed, unknown or revoked credential"))
      touch("devices", row.id, nowMs)
      return { _tag: "device", accountId: row.account_id, deviceId: row.id, devicePrefix: parsed.prefix } satisfies DevicePrincipal
    }).pipe(Effect.catchTag("SqlError", storageRefusal))
  }

  return {
    owner: resolve,
    session: (headers, opts = {}) =>
      Effect.flatMap(resolve(headers, "session"), (p) => {
        const s = p as SessionPrincipal
        if (opts.admin === true && !s.isAdmin) {
          // ADMIN_REQUIRED is not a spec code; the lead adds it to ErrorCodes (docs/decisions.md).
          return Effect.fail(new ApiError({ code: "ADMIN_REQUIRED", message: "This route is for operator admins", status: 403, retryable: false }))
        }
        return Effect.succeed(s)
      })
  }
}
