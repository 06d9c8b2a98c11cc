/**
 * Device authorization (spec 5.3), shaped after RFC 8628: a device asks for a code and shows
 * the verification URL and a short user code; a person signed in elsewhere looks the request
 * up (seeing the exact scopes) and approves or denies it; the device polls the exchange with
 * its device code and receives a device token (`svc_dvc_…`, shown once) and an agent key
 * provisioned with the approved scopes. If provisioning fails (no delegation, key ceiling,
 * agent features off) the token is still issued and the response says why.
 *
 * Rules: no scopes named gets the Write level; `transfer:write` may be named (flagged
 * `movesFunds`); `transfer:bound` is refused. A request lives 15 minutes; the device code is
 * single-use and stored hashed; polling faster than every 5 seconds is `RATE_LIMITED`.
 * Device tokens never expire; revoking a device can revoke, in the same transaction, every
 * active key it minted.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import { apiError, type ApiError, validationFailed } from "../../domain/ApiError.js"
import { findAccount } from "./AccountRepository.js"
import { KeyService } from "../keys/KeyService.js"
import type { SessionPrincipal } from "../keys/Principals.js"
import { DeviceDefaultScopes, isPublicScope, levelOf, normalizeScopes, PublicScopes } from "../keys/Scopes.js"
import { hashToken, mintToken, newId, randomString } from "../keys/Tokens.js"

export const DEVICE_CODE_TTL_MS = 15 * 60_000
export const DEVICE_POLL_INTERVAL_SEC = 5
/** RFC 8628's user-code alphabet: consonants only, no look-alikes. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
const CLIENT_NAME_MAX = 64

type Json = Record<string, unknown>

export const normalizeUserCode = (raw: string): string => raw.toUpperCase().replace(/[^A-Z]/g, "")
const formatUserCode = (c: string) => `${c.slice(0, 4)}-${c.slice(4)}`

export interface DeviceCodeRequest {
  readonly clientName: string | null
  readonly scopes: ReadonlyArray<string>
  readonly environment: "production" | "test"
}

export const parseDeviceCodeRequest = (body: unknown): DeviceCodeRequest | ApiError => {
  if (body === undefined || body === null) body = {}
  if (typeof body !== "object" || Array.isArray(body)) return validationFailed("body", "Body must be a JSON object")
  const b = body as Record<string, unknown>
  let clientName: string | null = null
  if (b.clientName !== undefined && b.clientName !== null) {
    if (typeof b.clientName !== "string" || b.clientName.trim() === "" || [...b.clientName.trim()].length > CLIENT_NAME_MAX) {
      return validationFailed("clientName", `clientName must be 1 to ${CLIENT_NAME_MAX} characters`)
    }
    clientName = b.clientName.trim()
  }
  const env = b.environment ?? "production"
  if (env !== "production" && env !== "test") return validationFailed("environment", "environment must be production or test")
  let scopes = DeviceDefaultScopes
  if (b.scopes !== undefined && b.scopes !== null) {
    if (!Array.isArray(b.scopes)) return validationFailed("scopes", "scopes must be an array")
    if (b.scopes.length > 0) {
      const bad = b.scopes.find((s) => !isPublicScope(s))
      if (bad !== undefined) return validationFailed("scopes", `Unknown scope '${String(bad)}'; expected any of ${PublicScopes.join(", ")}`)
      if (b.scopes.includes("transfer:bound")) return validationFailed("scopes", "A device approval cannot grant transfer:bound")
      scopes = normalizeScopes(b.scopes as string[])
    }
  }
  return { clientName, scopes, environment: env }
}

interface AuthorizationRow {
  readonly id: string
  readonly user_code: string
  readonly client_name: string | null
  readonly requested_scopes: ReadonlyArray<string>
  readonly environment: "production" | "test"
  readonly status: "pending" | "approved" | "denied" | "exchanged"
  readonly account_id: string | null
  readonly created_at: Date
  readonly expires_at: Date
  readonly last_polled_at: Date | null
}

export interface DevicesShape {
  readonly requestCode: (body: unknown) => Effect.Effect<Json, ApiError | SqlError>
  readonly describe: (session: SessionPrincipal, userCode: string) => Effect.Effect<Json, ApiError | SqlError>
  readonly decide: (session: SessionPrincipal, body: unknown) => Effect.Effect<Json, ApiError | SqlError>
  readonly exchange: (body: unknown) => Effect.Effect<Json, ApiError | SqlError>
  readonly list: (session: SessionPrincipal) => Effect.Effect<Json, SqlError>
  readonly revoke: (session: SessionPrincipal, prefix: string, revokeKeys: boolean) => Effect.Effect<Json, ApiError | SqlError>
}

export class Devices extends Context.Tag("curvestream/Devices")<Devices, DevicesShape>() {}

export interface DevicesOptions {
  readonly nowMs: () => number
  /** Where a person approves a device, e.g. `https://app.example/device`. */
  readonly verificationUri: string
}

export const layer = (options: DevicesOptions): Layer.Layer<Devices, never, SqlClient.SqlClient | KeyService> =>
  Layer.effect(
    Devices,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const keys = yield* KeyService
      const now = options.nowMs
      const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> => Effect.provideService(e, SqlClient.SqlClient, sql)

      const describeRow = (r: AuthorizationRow) => ({
        userCode: formatUserCode(r.user_code),
        clientName: r.client_name,
        scopes: r.requested_scopes,
        access: levelOf(r.requested_scopes),
        movesFunds: r.requested_scopes.includes("transfer:write"),
        environment: r.environment,
        status: r.status,
        expiresAt: r.expires_at.getTime()
      })

      const requestCode = (body: unknown) =>
        Effect.gen(function* () {
          const req = parseDeviceCodeRequest(body)
          if (!("scopes" in req)) return yield* Effect.fail(req)
          const nowMs = now()
          const deviceCode = randomString(43)
          let userCode = randomString(8, USER_CODE_ALPHABET)
          for (let i = 0; i < 5; i++) {
            const clash = yield* withSql(
              sql<{ n: number }>`SELECT count(*)::int AS n FROM device_authorizations
                WHERE user_code = ${userCode} AND status = 'pending' AND expires_at > ${new Date(nowMs)}`
            )
            if ((clash[0]?.n ?? 0) === 0) break
            userCode = randomString(8, USER_CODE_ALPHABET)
          }
          yield* withSql(sql`
            INSERT INTO device_authorizations (id, device_code_hash, user_code, client_name, requested_scopes, environment, status, created_at, expires_at)
            VALUES (${newId("dva")}, ${hashToken(deviceCode)}, ${userCode}, ${req.clientName}, ${JSON.stringify(req.scopes)}::jsonb,
              ${req.environment}, 'pending', ${new Date(nowMs)}, ${new Date(nowMs + DEVICE_CODE_TTL_MS)})`)
          const display = formatUserCode(userCode)
          return {
            success: true,
            deviceCode,
            userCode: display,
            verificationUri: options.verificationUri,
            verificationUriComplete: `${options.verificationUri}?user_code=${display}`,
            expiresIn: DEVICE_CODE_TTL_MS / 1000,
            interval: DEVICE_POLL_INTERVAL_SEC,
            scopes: req.scopes,
            movesFunds: req.scopes.includes("transfer:write")
          }
        })

      const byUserCode = (raw: string, nowMs: number) =>
        Effect.flatMap(
          withSql(sql<AuthorizationRow>`SELECT * FROM device_authorizations
            WHERE user_code = ${normalizeUserCode(raw)} AND expires_at > ${new Date(nowMs)} ORDER BY created_at DESC LIMIT 1`),
          (rows) => (rows[0] === undefined ? Effect.fail(apiError("VALIDATION_FAILED", "Unknown or expired user code", { status: 404, field: "userCode" })) : Effect.succeed(rows[0]))
        )

      const describe = (_session: SessionPrincipal, userCode: string) =>
        Effect.map(byUserCode(userCode, now()), (r) => ({ success: true, request: describeRow(r) }))

      const decide = (session: SessionPrincipal, body: unknown) =>
        Effect.gen(function* () {
          if (typeof body !== "object" || body === null || Array.isArray(body)) return yield* Effect.fail(validationFailed("body", "Body must be {userCode, approve}"))
          const b = body as Record<string, unknown>
          if (typeof b.userCode !== "string") return yield* Effect.fail(validationFailed("userCode", "userCode is required"))
          const approve = b.approve ?? true
          if (typeof approve !== "boolean") return yield* Effect.fail(validationFailed("approve", "approve must be a boolean"))
          const nowMs = now()
          const row = yield* byUserCode(b.userCode, nowMs)
          if (row.status !== "pending") return yield* Effect.fail(apiError("VALIDATION_FAILED", `This request is already ${row.status}`, { status: 409, field: "userCode" }))
          const updated = yield* withSql(sql<AuthorizationRow>`
            UPDATE device_authorizations SET status = ${approve ? "approved" : "denied"}, account_id = ${session.accountId},
              approved_session_id = ${session.sessionId}, decided_at = ${new Date(nowMs)}
            WHERE id = ${row.id} AND status = 'pending' RETURNING *`)
          if (updated[0] === undefined) return yield* Effect.fail(apiError("VALIDATION_FAILED", "This request was decided meanwhile", { status: 409, field: "userCode" }))
          return { success: true, request: describeRow(updated[0]) }
        })

      const pollRefusal = (reason: string, message: string, status = 400) =>
        apiError("VALIDATION_FAILED", message, { status, field: "deviceCode", extra: { reason } })

      const exchange = (body: unknown) =>
        Effect.gen(function* () {
          if (typeof body !== "object" || body === null || typeof (body as Record<string, unknown>).deviceCode !== "string") {
            return yield* Effect.fail(validationFailed("deviceCode", "deviceCode is required"))
          }
          const nowMs = now()
          const hash = hashToken((body as { deviceCode: string }).deviceCode)
          const minted = mintToken("device")
          const deviceId = newId("dev")
          const outcome = yield* withSql(
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql<AuthorizationRow>`SELECT * FROM device_authorizations WHERE device_code_hash = ${hash} FOR UPDATE`
                const row = rows[0]
                if (row === undefined) return yield* Effect.fail(pollRefusal("invalid_grant", "Unknown device code"))
                if (row.status === "exchanged") return yield* Effect.fail(pollRefusal("invalid_grant", "This device code was already exchanged"))
                if (row.status === "denied") return yield* Effect.fail(pollRefusal("access_denied", "The request was denied"))
                if (row.expires_at.getTime() <= nowMs) return yield* Effect.fail(pollRefusal("expired_token", "The device code expired; request a new one"))
                if (row.status === "pending") {
                  const last = row.last_polled_at?.getTime()
                  yield* sql`UPDATE device_authorizations SET last_polled_at = ${new Date(nowMs)} WHERE id = ${row.id}`
                  if (last !== undefined && nowMs - last < DEVICE_POLL_INTERVAL_SEC * 1000) {
                    return { _tag: "slow" as const }
                  }
                  return { _tag: "pending" as const }
                }
                yield* sql`
                  INSERT INTO devices (id, prefix, account_id, token_hash, client_name, approved_scopes, created_at)
                  VALUES (${deviceId}, ${minted.prefix}, ${row.account_id!}, ${minted.hash}, ${row.client_name},
                    ${JSON.stringify(row.requested_scopes)}::jsonb, ${new Date(nowMs)})`
                yield* sql`UPDATE device_authorizations SET status = 'exchanged', device_id = ${deviceId} WHERE id = ${row.id}`
                return { _tag: "approved" as const, row }
              })
            )
          )
          // A pending poll is recorded (the transaction commits) before it is refused.
          if (outcome._tag === "slow") {
            return yield* Effect.fail(
              apiError("RATE_LIMITED", `Poll at most every ${DEVICE_POLL_INTERVAL_SEC} seconds`, {
                extra: { reason: "slow_down" },
                headers: { "Retry-After": String(DEVICE_POLL_INTERVAL_SEC) }
              })
            )
          }
          if (outcome._tag === "pending") {
            return yield* Effect.fail(apiError("VALIDATION_FAILED", "Waiting for approval", { field: "deviceCode", retryable: true, extra: { reason: "authorization_pending" } }))
          }
          const row = outcome.row
          const account = yield* withSql(findAccount(row.account_id!))
          let provisioning: Json
          if (account === undefined || !account.agentEnabled) {
            provisioning = { provisioned: false, code: "VALIDATION_FAILED", message: "Agent features are off for this account" }
          } else {
            const issued = yield* Effect.either(
              keys.issueFor(
                account,
                {
                  environment: row.environment,
                  scopes: row.requested_scopes,
                  label: row.client_name === null ? null : row.client_name.slice(0, 64),
                  expiresAtMs: null,
                  txLimit: null,
                  embeddedWallet: "denied",
                  ref: null
                },
                { mintedByDeviceId: deviceId }
              )
            )
            provisioning =
              issued._tag === "Right"
                ? { provisioned: true, key: issued.right.response }
                : issued.left._tag === "ApiError"
                  ? { provisioned: false, code: issued.left.code, message: issued.left.message }
                  : { provisioned: false, code: "KEY_ISSUANCE_FAILED", message: "The key could not be issued; the device token works" }
          }
          return {
            success: true,
            deviceToken: minted.token,
            devicePrefix: minted.prefix,
            accountId: row.account_id,
            scopes: row.requested_scopes,
            ...provisioning
          }
        })

      const list = (session: SessionPrincipal) =>
        Effect.map(
          withSql(sql<{ prefix: string; client_name: string | null; approved_scopes: string[]; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }>`
            SELECT prefix, client_name, approved_scopes, created_at, last_used_at, revoked_at FROM devices
            WHERE account_id = ${session.accountId} ORDER BY created_at, id`),
          (rows) => ({
            success: true,
            devices: rows.map((r) => ({
              devicePrefix: r.prefix,
              clientName: r.client_name,
              scopes: r.approved_scopes,
              createdAt: r.created_at.getTime(),
              lastUsedAt: r.last_used_at?.getTime() ?? null,
              revokedAt: r.revoked_at?.getTime() ?? null
            }))
          })
        )

      const revoke = (session: SessionPrincipal, prefix: string, revokeKeys: boolean) =>
        Effect.gen(function* () {
          const nowMs = now()
          return yield* withSql(
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql<{ id: string; revoked_at: Date | null }>`
                  SELECT id, revoked_at FROM devices WHERE prefix = ${prefix} AND account_id = ${session.accountId} FOR UPDATE`
                const device = rows[0]
                if (device === undefined) return yield* Effect.fail(apiError("VALIDATION_FAILED", `No device '${prefix}' on this account`, { status: 404, field: "prefix" }))
                if (device.revoked_at === null) yield* sql`UPDATE devices SET revoked_at = ${new Date(nowMs)} WHERE id = ${device.id}`
                const revokedKeys = revokeKeys ? yield* keys.revokeDeviceKeys(device.id, nowMs) : []
                return { success: true, devicePrefix: prefix, revokedAt: device.revoked_at?.getTime() ?? nowMs, revokedKeys }
              })
            )
          )
        })

      return { requestCode, describe, decide, exchange, list, revoke }
    })
  )
