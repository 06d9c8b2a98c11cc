/**
 * Webhook endpoints of an account (spec 2.6, 3.5, 4.4): register, list, rotate, revoke, and read
 * the last deliveries. Owns the `webhook_endpoints` rows; the outbox (`Outbox.ts`) and the worker
 * (`DeliveryWorker.ts`) own delivery.
 *
 * Invariants:
 * - At most `maxActiveEndpoints` (3) active endpoints per account, also under concurrent
 *   registrations from several processes (the count and the insert run in one transaction under
 *   a per-account advisory lock).
 * - The signing secret leaves the service only in the answers to create and rotate; it is stored
 *   sealed under the master key (`SecretBox`), with a 12-character display prefix.
 * - The URL is judged by the public-target check before anything is recorded: a refusal records
 *   nothing. Loopback (and `http:` to it) is admitted only when the layer's
 *   `allowLoopbackForTests` is on AND the caller is a test account.
 * - An endpoint is `active` or `revoked`; revoking cancels its pending deliveries in the same
 *   transaction, and a revoked endpoint answers rotate and delivery reads with `revoked`.
 *
 * Input is typed (the route decodes the body); every failure is a `WebhookError`, storage
 * included (`api/ErrorTable.ts` maps each reason to the wire).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { bytesToHex, randomBytes } from "@noble/hashes/utils.js"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as Database from "../../db/Database.js"
import { failureFields, failureOf, storageFailure } from "../../domain/ServiceFailure.js"
import { checkTarget, parseTargetUrl, type Resolver, systemResolver, TargetRefused } from "../../net/PublicTarget.js"
import type { WebhookEventName } from "./Events.js"
import { makeSecretBox, type SecretBox, type SecretBoxError, testMasterKey } from "./SecretBox.js"

/** Spec section 8. */
export const maxActiveEndpoints = 3
/** Spec 4.4: the deliveries read returns the last 20. */
export const deliveriesShown = 20
/** Revoked endpoints shown in the list beside the active ones (newest first). */
export const revokedEndpointsShown = 100
export const secretPrefixLength = 12

export interface WebhookOwner {
  readonly accountId: string
  /** A test account may register loopback targets when the test flag is on. */
  readonly testAccount?: boolean | undefined
}

export interface WebhookEndpointView {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventName>
  readonly secretPrefix: string
  readonly status: "active" | "revoked"
  readonly createdAt: string
  readonly rotatedAt?: string
  readonly revokedAt?: string
}

export interface WebhookEndpointWithSecret extends WebhookEndpointView {
  readonly secret: string
}

export interface DeliveryView {
  readonly eventId: string
  readonly event: string
  readonly status: "pending" | "delivered" | "failed" | "cancelled"
  readonly attempts: number
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly createdAt: string
  readonly lastAttemptAt: string | null
  readonly nextAttemptAt: string | null
  readonly deliveredAt: string | null
}

export const WebhookErrorReason = Schema.Literal(
  /** The URL failed the public-target check (`details.reason` is the check's reason). */
  "target_refused",
  /** The account already has `maxActiveEndpoints` active endpoints (`details.limit`). */
  "limit_reached",
  /** Unknown id, malformed id, or another account's endpoint. */
  "not_found",
  /** Rotate or delivery read on a revoked endpoint. */
  "revoked",
  "storage"
)
export type WebhookErrorReason = typeof WebhookErrorReason.Type

/** Why a webhook request was refused or failed; `api/ErrorTable.ts` maps each reason to the spec's error. */
export class WebhookError extends Schema.TaggedError<WebhookError>()("WebhookError", { reason: WebhookErrorReason, ...failureFields }) {}

export const webhookError = failureOf<WebhookError, WebhookErrorReason>(WebhookError)

export interface WebhookServiceShape {
  readonly create: (owner: WebhookOwner, input: CreateInput) => Effect.Effect<WebhookEndpointWithSecret, WebhookError>
  readonly list: (owner: WebhookOwner) => Effect.Effect<ReadonlyArray<WebhookEndpointView>, WebhookError>
  readonly rotate: (owner: WebhookOwner, id: string) => Effect.Effect<WebhookEndpointWithSecret, WebhookError>
  readonly revoke: (owner: WebhookOwner, id: string) => Effect.Effect<WebhookEndpointView, WebhookError>
  readonly deliveries: (owner: WebhookOwner, id: string) => Effect.Effect<ReadonlyArray<DeliveryView>, WebhookError>
}

export class WebhookService extends Context.Tag("curvestream/WebhookService")<WebhookService, WebhookServiceShape>() {}

export interface WebhookServiceOptions {
  /** 32-byte master key sealing the signing secrets (`SecretBox.resolveMasterKey`). */
  readonly masterKey: Uint8Array
  /** Tests only: test accounts may register loopback and `http:` loopback URLs. Default off. */
  readonly allowLoopbackForTests?: boolean
  readonly resolve?: Resolver
  readonly resolveTimeoutMs?: number
}

// ---------------------------------------------------------------------------------------------
// Pure parts

/** The decoded body `{url, events[]}`: a non-empty URL (judged here) and known event names, without duplicates. */
export interface CreateInput {
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventName>
}

/** Entries accepted in `events` before de-duplication. */
export const maxEventsInRequest = 64

const targetRefused = (e: TargetRefused) => webhookError("target_refused", e.message, { field: "url", details: { reason: e.reason } })

export const newEndpointId = (): string => `wh_${bytesToHex(randomBytes(16))}`
const endpointIdFormat = /^wh_[0-9a-f]{32}$/

/** `whsec_` + 43 base64url characters (256 random bits). */
export const newSigningSecret = (): string => `whsec_${Buffer.from(randomBytes(32)).toString("base64url")}`

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString())

interface EndpointRow {
  readonly id: string
  readonly account_id: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventName>
  readonly secret_prefix: string
  readonly status: "active" | "revoked"
  readonly created_at: Date
  readonly rotated_at: Date | null
  readonly revoked_at: Date | null
}

const toView = (r: EndpointRow): WebhookEndpointView => ({
  id: r.id,
  url: r.url,
  events: r.events,
  secretPrefix: r.secret_prefix,
  status: r.status,
  createdAt: r.created_at.toISOString(),
  ...(r.rotated_at !== null ? { rotatedAt: r.rotated_at.toISOString() } : {}),
  ...(r.revoked_at !== null ? { revokedAt: r.revoked_at.toISOString() } : {})
})

// ---------------------------------------------------------------------------------------------
// The service

export const make = (options: WebhookServiceOptions): Effect.Effect<WebhookServiceShape, SecretBoxError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const box: SecretBox = yield* makeSecretBox(options.masterKey)
    const flag = options.allowLoopbackForTests === true
    const resolve = options.resolve ?? systemResolver
    const resolveTimeoutMs = options.resolveTimeoutMs ?? 5_000
    const loopbackFor = (owner: WebhookOwner) => flag && owner.testAccount === true
    const storage = storageFailure("webhooks", () => webhookError("storage", "Internal error; nothing was recorded"))

    const activeCount = (accountId: string) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = ${accountId} AND status = 'active'`.pipe(
        Effect.map((rows) => rows[0]?.n ?? 0)
      )
    const limitRefusal = () =>
      webhookError("limit_reached", `An account may have at most ${maxActiveEndpoints} active webhook endpoints; revoke one first`, {
        details: { limit: maxActiveEndpoints }
      })

    /** The owner's endpoint, or `not_found` (unknown id, malformed id, or another account's). */
    const owned = (owner: WebhookOwner, id: string) =>
      Effect.gen(function* () {
        if (!endpointIdFormat.test(id)) return yield* webhookError("not_found", `No webhook endpoint '${id.slice(0, 64)}'`, { field: "id" })
        const rows = yield* sql<EndpointRow>`
          SELECT id, account_id, url, events, secret_prefix, status, created_at, rotated_at, revoked_at
          FROM webhook_endpoints WHERE id = ${id} AND account_id = ${owner.accountId}`
        const row = rows[0]
        if (row === undefined) return yield* webhookError("not_found", `No webhook endpoint '${id}'`, { field: "id" })
        return row
      })
    const revokedRefusal = (id: string) => webhookError("revoked", `Webhook endpoint '${id}' is revoked`, { field: "id" })

    const create = Effect.fn("WebhookService.create")(function* (owner: WebhookOwner, input: CreateInput) {
      const allowLoopback = loopbackFor(owner)
      const parsed = parseTargetUrl(input.url.trim(), allowLoopback)
      if (parsed instanceof TargetRefused) return yield* targetRefused(parsed)
      const url = parsed.url.href
      if ((yield* activeCount(owner.accountId)) >= maxActiveEndpoints) return yield* limitRefusal()
      const target = yield* checkTarget(url, { allowLoopback, resolve, resolveTimeoutMs }).pipe(Effect.mapError(targetRefused))

      const id = newEndpointId()
      const secret = newSigningSecret()
      const sealed = yield* box.seal(secret, id)
      const now = new Date(yield* Clock.currentTimeMillis)
      const row = yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhooks:${owner.accountId}`}, 0))`
          if ((yield* activeCount(owner.accountId)) >= maxActiveEndpoints) return yield* limitRefusal()
          const inserted = yield* sql<EndpointRow>`
            INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, allow_loopback, status, created_at)
            VALUES (${id}, ${owner.accountId}, ${url}, ${JSON.stringify(input.events)}::jsonb, ${sealed},
                    ${secret.slice(0, secretPrefixLength)}, ${target.isLoopback}, 'active', ${now})
            RETURNING id, account_id, url, events, secret_prefix, status, created_at, rotated_at, revoked_at`
          return inserted[0]!
        })
      )
      return { ...toView(row), secret }
    }, storage)

    const list = Effect.fn("WebhookService.list")(function* (owner: WebhookOwner) {
      const rows = yield* sql<EndpointRow>`
        (SELECT id, account_id, url, events, secret_prefix, status, created_at, rotated_at, revoked_at
           FROM webhook_endpoints WHERE account_id = ${owner.accountId} AND status = 'active')
        UNION ALL
        (SELECT id, account_id, url, events, secret_prefix, status, created_at, rotated_at, revoked_at
           FROM webhook_endpoints WHERE account_id = ${owner.accountId} AND status = 'revoked'
           ORDER BY created_at DESC, id DESC LIMIT ${revokedEndpointsShown})
        ORDER BY created_at DESC, id DESC`
      return rows.map(toView)
    }, storage)

    const rotate = Effect.fn("WebhookService.rotate")(function* (owner: WebhookOwner, id: string) {
      const row = yield* owned(owner, id)
      if (row.status === "revoked") return yield* revokedRefusal(id)
      const secret = newSigningSecret()
      const sealed = yield* box.seal(secret, id)
      const now = new Date(yield* Clock.currentTimeMillis)
      const updated = yield* sql<EndpointRow>`
        UPDATE webhook_endpoints
        SET secret_sealed = ${sealed}, secret_prefix = ${secret.slice(0, secretPrefixLength)}, rotated_at = ${now}
        WHERE id = ${id} AND account_id = ${owner.accountId} AND status = 'active'
        RETURNING id, account_id, url, events, secret_prefix, status, created_at, rotated_at, revoked_at`
      const after = updated[0]
      // Revoked between the read and the update.
      if (after === undefined) return yield* revokedRefusal(id)
      return { ...toView(after), secret }
    }, storage)

    const revoke = Effect.fn("WebhookService.revoke")(function* (owner: WebhookOwner, id: string) {
      const row = yield* owned(owner, id)
      if (row.status === "revoked") return toView(row)
      const now = new Date(yield* Clock.currentTimeMillis)
      const updated = yield* sql.withTransaction(
        Effect.gen(function* () {
          const rows = yield* sql<EndpointRow>`
            UPDATE webhook_endpoints SET status = 'revoked', revoked_at = ${now}
            WHERE id = ${id} AND account_id = ${owner.accountId} AND status = 'active'
            RETURNING id, account_id, url, events, secret_prefix, status, created_at, rotated_at, revoked_at`
          yield* sql`
            UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, claim_token = NULL
            WHERE endpoint_id = ${id} AND status = 'pending'`
          return rows[0]
        })
      )
      if (updated !== undefined) return toView(updated)
      // Revoked concurrently: answer the stored row.
      return toView(yield* owned(owner, id))
    }, storage)

    const deliveries = Effect.fn("WebhookService.deliveries")(function* (owner: WebhookOwner, id: string) {
      const row = yield* owned(owner, id)
      if (row.status === "revoked") return yield* revokedRefusal(id)
      const rows = yield* sql<{
        id: string
        event: string
        status: DeliveryView["status"]
        attempts: number
        last_status_code: number | null
        last_error: string | null
        created_at: Date
        last_attempt_at: Date | null
        next_attempt_at: Date | null
        delivered_at: Date | null
      }>`
        SELECT id, event, status, attempts, last_status_code, last_error, created_at, last_attempt_at, next_attempt_at, delivered_at
        FROM webhook_deliveries WHERE endpoint_id = ${id}
        ORDER BY created_at DESC, id DESC LIMIT ${deliveriesShown}`
      return rows.map(
        (r): DeliveryView => ({
          eventId: r.id,
          event: r.event,
          status: r.status,
          attempts: r.attempts,
          lastStatusCode: r.last_status_code,
          lastError: r.last_error,
          createdAt: r.created_at.toISOString(),
          lastAttemptAt: iso(r.last_attempt_at),
          nextAttemptAt: r.status === "pending" ? iso(r.next_attempt_at) : null,
          deliveredAt: iso(r.delivered_at)
        })
      )
    }, storage)

    return { create, list, rotate, revoke, deliveries } satisfies WebhookServiceShape
  })

export const layer = (options: WebhookServiceOptions): Layer.Layer<WebhookService, SecretBoxError, SqlClient.SqlClient> =>
  Layer.effect(WebhookService, make(options))

/**
 * The real webhook service over `Database.layerTest`: the fixed test master key, loopback targets
 * allowed for test accounts. `resolve` is the test's DNS (default the system resolver).
 */
export const layerTest = (options: { readonly resolve?: Resolver } = {}): Layer.Layer<WebhookService, SecretBoxError | SqlError> =>
  layer({ masterKey: testMasterKey, allowLoopbackForTests: true, ...options }).pipe(Layer.provide(Database.layerTest))
