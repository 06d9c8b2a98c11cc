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
 *
 * Input is typed (the routes decode bodies); every failure is an `AccountError`, storage
 * included. A failed provisioning is a value (`Provisioning`), not a failure: the token is issued.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { type KeyError, keyError } from "../keys/KeyError.js"
import { KeyService, type KeyServiceShape, layerTest as keyServiceTest } from "../keys/KeyService.js"
import type { AccountEvents } from "./AccountEvents.js"
import type { AccountWallets } from "./AccountWallets.js"
import type { BalanceReader } from "./BalanceReader.js"
import type { SessionPrincipal } from "../keys/Principals.js"
import { levelOf } from "../keys/Scopes.js"
import { hashToken, mintToken, newId, randomString } from "../keys/Tokens.js"
import { type AccountError, accountError } from "./AccountError.js"
import { findAccount } from "./AccountRepository.js"

export const DEVICE_CODE_TTL_MS = 15 * 60_000
export const DEVICE_POLL_INTERVAL_SEC = 5
/** RFC 8628's user-code alphabet: consonants only, no look-alikes. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
export const CLIENT_NAME_MAX = 64

type Json = Record<string, unknown>

export const normalizeUserCode = (raw: string): string => raw.toUpperCase().replace(/[^A-Z]/g, "")
const formatUserCode = (c: string) => `${c.slice(0, 4)}-${c.slice(4)}`

export interface DeviceCodeRequest {
  readonly clientName: string | null
  readonly scopes: ReadonlyArray<string>
  readonly environment: "production" | "test"
}

export interface DeviceDecision {
  readonly userCode: string
  readonly approve: boolean
}

/** The key provisioned with a device token, or why none was (the token is issued either way). */
export type Provisioning = { readonly provisioned: true; readonly key: Json } | { readonly provisioned: false; readonly failure: KeyError }

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

export interface DeviceExchange {
  readonly deviceToken: string
  readonly devicePrefix: string
  readonly accountId: string
  readonly scopes: ReadonlyArray<string>
  readonly provisioning: Provisioning
}

export interface DevicesShape {
  readonly requestCode: (req: DeviceCodeRequest) => Effect.Effect<Json, AccountError>
  readonly describe: (session: SessionPrincipal, userCode: string) => Effect.Effect<Json, AccountError>
  readonly decide: (session: SessionPrincipal, decision: DeviceDecision) => Effect.Effect<Json, AccountError>
  readonly exchange: (deviceCode: string) => Effect.Effect<DeviceExchange, AccountError>
  readonly list: (session: SessionPrincipal) => Effect.Effect<Json, AccountError>
  readonly revoke: (session: SessionPrincipal, prefix: string, revokeKeys: boolean) => Effect.Effect<Json, AccountError>
}

const storage = storageFailure("devices", () => accountError("storage", "Internal error; nothing was recorded"))

export class Devices extends Context.Tag("curvestream/Devices")<Devices, DevicesShape>() {}

/** Time is the Effect `Clock` the service is built under. */
export interface DevicesOptions {
  /** Where a person approves a device, e.g. `https://app.example/device`. */
  readonly verificationUri: string
}

/** What the device flow and the device list work over. */
interface DevicesCtx {
  readonly sql: SqlClient.SqlClient
  readonly keys: KeyServiceShape
  /** Now, in ms: the Effect `Clock` the service is built under. */
  readonly now: Effect.Effect<number>
  readonly withSql: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly options: DevicesOptions
}

/** The device authorization flow (spec document 2, 2.2): request a code, describe and decide it, the device's poll. */
const authorizationFlow = (ctx: DevicesCtx) => {
  const { sql, keys, now, withSql, options } = ctx
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

  const requestCode = (req: DeviceCodeRequest) =>
    Effect.gen(function* () {
      const nowMs = yield* now
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
        deviceCode,
        userCode: display,
        verificationUri: options.verificationUri,
        verificationUriComplete: `${options.verificationUri}?user_code=${display}`,
        expiresIn: DEVICE_CODE_TTL_MS / 1000,
        interval: DEVICE_POLL_INTERVAL_SEC,
        scopes: req.scopes,
        movesFunds: req.scopes.includes("transfer:write")
      }
    }).pipe(storage)

  const byUserCode = (raw: string, nowMs: number) =>
    Effect.flatMap(
      withSql(sql<AuthorizationRow>`SELECT * FROM device_authorizations
        WHERE user_code = ${normalizeUserCode(raw)} AND expires_at > ${new Date(nowMs)} ORDER BY created_at DESC LIMIT 1`),
      (rows) => (rows[0] === undefined ? Effect.fail(accountError("user_code_not_found", "Unknown or expired user code", { field: "userCode" })) : Effect.succeed(rows[0]))
    )

  const describe = (_session: SessionPrincipal, userCode: string) =>
    Effect.map(Effect.flatMap(now, (nowMs) => byUserCode(userCode, nowMs)), (r) => ({ request: describeRow(r) })).pipe(storage)

  const decide = (session: SessionPrincipal, { userCode, approve }: DeviceDecision) =>
    Effect.gen(function* () {
      const nowMs = yield* now
      const row = yield* byUserCode(userCode, nowMs)
      if (row.status !== "pending") return yield* Effect.fail(accountError("already_decided", `This request is already ${row.status}`, { field: "userCode" }))
      const updated = yield* withSql(sql<AuthorizationRow>`
        UPDATE device_authorizations SET status = ${approve ? "approved" : "denied"}, account_id = ${session.accountId},
          approved_session_id = ${session.sessionId}, decided_at = ${new Date(nowMs)}
        WHERE id = ${row.id} AND status = 'pending' RETURNING *`)
      if (updated[0] === undefined) return yield* Effect.fail(accountError("already_decided", "This request was decided meanwhile", { field: "userCode" }))
      return { request: describeRow(updated[0]) }
    }).pipe(storage)

  const pollRefusal = (reason: "invalid_grant" | "access_denied" | "expired_token", message: string) =>
    accountError(reason, message, { field: "deviceCode" })

  const exchange = (deviceCode: string) =>
    Effect.gen(function* () {
      const nowMs = yield* now
      const hash = hashToken(deviceCode)
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
      if (outcome._tag === "slow") return yield* Effect.fail(accountError("slow_down", `Poll at most every ${DEVICE_POLL_INTERVAL_SEC} seconds`))
      if (outcome._tag === "pending") return yield* Effect.fail(accountError("authorization_pending", "Waiting for approval", { field: "deviceCode" }))
      const row = outcome.row
      const account = yield* withSql(findAccount(row.account_id!))
      let provisioning: Provisioning
      if (account === undefined || !account.agentEnabled) {
        provisioning = { provisioned: false, failure: keyError("agent_features_off", "Agent features are off for this account") }
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
            : {
                provisioned: false,
                failure:
                  issued.left.reason === "issuance_storage"
                    ? keyError("issuance_storage", "The key could not be issued; the device token works", { retryable: true })
                    : issued.left
              }
      }
      return { deviceToken: minted.token, devicePrefix: minted.prefix, accountId: row.account_id!, scopes: row.requested_scopes, provisioning }
    }).pipe(storage)
  return { requestCode, describe, decide, exchange }
}

/** The account's devices: list, and revoke (with the keys they minted when asked). */
const deviceList = (ctx: DevicesCtx) => {
  const { sql, keys, now, withSql } = ctx
  const list = (session: SessionPrincipal) =>
    Effect.map(
      withSql(sql<{ prefix: string; client_name: string | null; approved_scopes: string[]; created_at: Date; last_used_at: Date | null; revoked_at: Date | null }>`
        SELECT prefix, client_name, approved_scopes, created_at, last_used_at, revoked_at FROM devices
        WHERE account_id = ${session.accountId} ORDER BY created_at, id`),
      (rows) => ({
        devices: rows.map((r) => ({
          devicePrefix: r.prefix,
          clientName: r.client_name,
          scopes: r.approved_scopes,
          createdAt: r.created_at.getTime(),
          lastUsedAt: r.last_used_at?.getTime() ?? null,
          revokedAt: r.revoked_at?.getTime() ?? null
        }))
      })
    ).pipe(storage)

  const revoke = (session: SessionPrincipal, prefix: string, revokeKeys: boolean) =>
    Effect.gen(function* () {
      const nowMs = yield* now
      return yield* withSql(
        sql.withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<{ id: string; revoked_at: Date | null }>`
              SELECT id, revoked_at FROM devices WHERE prefix = ${prefix} AND account_id = ${session.accountId} FOR UPDATE`
            const device = rows[0]
            if (device === undefined) return yield* Effect.fail(accountError("device_not_found", `No device '${prefix}' on this account`, { field: "prefix" }))
            if (device.revoked_at === null) yield* sql`UPDATE devices SET revoked_at = ${new Date(nowMs)} WHERE id = ${device.id}`
            const revokedKeys = revokeKeys ? yield* keys.revokeDeviceKeys(device.id, nowMs) : []
            return { devicePrefix: prefix, revokedAt: device.revoked_at?.getTime() ?? nowMs, revokedKeys }
          })
        )
      )
    }).pipe(storage)
  return { list, revoke }
}

export const layer = (options: DevicesOptions): Layer.Layer<Devices, never, SqlClient.SqlClient | KeyService> =>
  Layer.effect(
    Devices,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const keys = yield* KeyService
      const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> => Effect.provideService(e, SqlClient.SqlClient, sql)
      const ctx: DevicesCtx = { sql, keys, now: (yield* Effect.clock).currentTimeMillis, withSql, options }
      return { ...authorizationFlow(ctx), ...deviceList(ctx) } satisfies DevicesShape
    })
  )

/** The real device flow over `Database.layerTest` and the real key service (`layerTest`); the wallet side, events and balances are the test's. */
export const layerTest: Layer.Layer<Devices, SqlError, AccountWallets | AccountEvents | BalanceReader> = layer({ verificationUri: "https://example.test/device" }).pipe(
  Layer.provide(keyServiceTest),
  Layer.provide(Database.layerTest)
)
