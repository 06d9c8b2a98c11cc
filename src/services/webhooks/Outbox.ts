/**
 * The webhook outbox: `enqueue` records an event for delivery to every active endpoint of the
 * account subscribed to it (one `webhook_deliveries` row each, one event id shared by them).
 * Call it inside the caller's `sql.withTransaction`, beside the state change that causes the
 * event: the event exists exactly when the change committed. An event no endpoint subscribes to
 * records nothing. The delivery worker (`DeliveryWorker.ts`) sends the rows.
 *
 * Bounded: the serialized `data` is at most `maxEventDataBytes`; a larger payload is a bug in
 * the caller (events carry identifiers and amounts, not documents) and dies.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { bytesToHex, randomBytes } from "@noble/hashes/utils.js"
import { Clock, Effect } from "effect"
import { isWebhookEvent, type WebhookEventName } from "./Events.js"

/** Largest serialized event `data` (bytes of JSON). */
export const maxEventDataBytes = 64 * 1024

/** Event ids: `evt_` + 32 hex digits (128 random bits). */
export const newEventId = (): string => `evt_${bytesToHex(randomBytes(16))}`

/** JSON text of event data; bigints become decimal strings (money travels as strings). */
export const eventDataJson = (data: unknown): string =>
  JSON.stringify(data ?? null, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))

/**
 * Records `event` for every active endpoint of `accountId` subscribed to it. Returns the event
 * id and how many deliveries were recorded (0 when no endpoint subscribes).
 */
export const enqueueEvent = (
  accountId: string,
  event: WebhookEventName,
  data: unknown
): Effect.Effect<{ readonly eventId: string; readonly deliveries: number }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    if (!isWebhookEvent(event)) return yield* Effect.dieMessage(`unknown webhook event '${String(event)}'`)
    const json = eventDataJson(data)
    if (Buffer.byteLength(json, "utf8") > maxEventDataBytes) {
      return yield* Effect.dieMessage(`webhook event data over ${maxEventDataBytes} bytes (${event})`)
    }
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const eventId = newEventId()
    const rows = yield* sql<{ endpoint_id: string }>`
      INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event, data, created_at, status, attempts, next_attempt_at)
      SELECT ${eventId}, e.id, e.account_id, ${event}, ${json}::jsonb, ${now}, 'pending', 0, ${now}
      FROM webhook_endpoints e
      WHERE e.account_id = ${accountId} AND e.status = 'active' AND e.events ? ${event}
      RETURNING endpoint_id`
    return { eventId, deliveries: rows.length }
  })

/** The outbox write, for callers that do not need the event id. */
export const enqueue = (
  accountId: string,
  event: WebhookEventName,
  data: unknown
): Effect.Effect<void, SqlError, SqlClient.SqlClient> => Effect.asVoid(enqueueEvent(accountId, event, data))
