/**
 * The webhook outbox: `enqueue` records an event for delivery to every active endpoint of the
 * account subscribed to it (one `webhook_deliveries` row each, one event id shared by them).
 * Call it inside the caller's `sql.withTransaction`, beside the state change that causes the
 * event: the event exists exactly when the change committed. An event no endpoint subscribes to
 * records nothing. The delivery worker (`DeliveryWorker.ts`) sends the rows.
 *
 * `enqueueKeyed` is the same write for events derived from the chain stream, which a restart, a
 * replay of the bus or a partition move may derive again: the event id is a digest of what the
 * event is about (`keyedEventId`), and the `(endpoint_id, id)` primary key makes a second write of
 * it record nothing, so each endpoint gets the event once however often it is derived.
 *
 * Bounded: the serialized `data` is at most `maxEventDataBytes`; a larger payload is a bug in
 * the caller (events carry identifiers and amounts, not documents) and dies.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, randomBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { Clock, Effect } from "effect"
import { isWebhookEvent, type WebhookEventName } from "./Events.js"
import { gatedOn } from "../../db/StatementGate.js"

/** Largest serialized event `data` (bytes of JSON). */
export const maxEventDataBytes = 64 * 1024

/** Event ids: `evt_` + 32 hex digits (128 random bits). */
export const newEventId = (): string => `evt_${bytesToHex(randomBytes(16))}`

/** The event id of a derived event: `evt_` + the first 32 hex digits of SHA-256 of its key. */
export const keyedEventId = (key: string): string => `evt_${bytesToHex(sha256(utf8ToBytes(key))).slice(0, 32)}`

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
    const sql = yield* SqlClient.SqlClient
    const { eventId, statement } = yield* enqueueStatement(sql, accountId, event, data, yield* Clock.currentTimeMillis)
    const rows = yield* sql<{ endpoint_id: string }>`${statement}`
    return { eventId, deliveries: rows.length }
  })

/**
 * `enqueueEvent`'s write as a statement (its `data` checked first: an unknown event or an
 * oversized payload dies), with a new event id; with `gate` (the name of a CTE of the statement it
 * is part of), it records only when that CTE returned a row (e.g. a trade's settlement in one
 * statement: `TradeStore`). Answers the endpoints it recorded for (`RETURNING endpoint_id`).
 */
export const enqueueStatement = (
  sql: SqlClient.SqlClient,
  accountId: string,
  event: WebhookEventName,
  data: unknown,
  nowMs: number,
  gate?: string
): Effect.Effect<{ readonly eventId: string; readonly statement: Statement.Fragment }> =>
  Effect.map(checkedJson(event, data), (json) => {
    const now = new Date(nowMs)
    const eventId = newEventId()
    const statement = sql`
      INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event, data, created_at, status, attempts, next_attempt_at)
      SELECT ${eventId}, e.id, e.account_id, ${event}, ${json}::jsonb, ${now}, 'pending', 0, ${now}
      FROM webhook_endpoints e
      WHERE e.account_id = ${accountId} AND e.status = 'active' AND e.events ? ${event}
        ${gatedOn(sql, gate)}
      RETURNING endpoint_id`
    return { eventId, statement }
  })

const checkedJson = (event: WebhookEventName, data: unknown): Effect.Effect<string> =>
  Effect.suspend(() => {
    if (!isWebhookEvent(event)) return Effect.dieMessage(`unknown webhook event '${String(event)}'`)
    const json = eventDataJson(data)
    if (Buffer.byteLength(json, "utf8") > maxEventDataBytes) return Effect.dieMessage(`webhook event data over ${maxEventDataBytes} bytes (${event})`)
    return Effect.succeed(json)
  })

/** Who receives a derived event: one account, or the account that launched a market through this service (nobody for the others). */
export type KeyedRecipients =
  | {
      readonly accountId: string
      /** Not when this wallet is one of the account's own (embedded, imported, TEE or linked, not revoked). */
      readonly exceptOwnWallet?: { readonly chain: "solana" | "hood"; readonly address: string }
    }
  | { readonly launchedBy: { readonly chain: string; readonly mint: string } }

/**
 * Records a derived event for every active endpoint of the recipients subscribed to it, at most
 * once per endpoint and `key` (see the module note). Returns how many deliveries were recorded
 * now (0 when each endpoint already had it or none subscribes).
 */
export const enqueueKeyed = (
  key: string,
  event: WebhookEventName,
  data: unknown,
  to: KeyedRecipients
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const json = yield* checkedJson(event, data)
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const eventId = keyedEventId(key)
    const own = "accountId" in to ? to.exceptOwnWallet : undefined
    // Wallet rows name the EVM chain `evm` and keep EVM addresses in any case (`address_key` lowercase).
    const ownChain = own?.chain === "hood" ? "evm" : "solana"
    const ownKey = own === undefined ? "" : own.chain === "hood" ? own.address.toLowerCase() : own.address
    const rows =
      "accountId" in to
        ? yield* sql<{ endpoint_id: string }>`
            INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event, data, created_at, status, attempts, next_attempt_at)
            SELECT ${eventId}, e.id, e.account_id, ${event}, ${json}::jsonb, ${now}, 'pending', 0, ${now}
            FROM webhook_endpoints e
            WHERE e.account_id = ${to.accountId} AND e.status = 'active' AND e.events ? ${event}
              AND (${own === undefined} OR NOT (
                EXISTS (SELECT 1 FROM wp_wallets w WHERE w.account_id = e.account_id AND w.chain = ${ownChain}
                          AND (w.address = ${ownKey} OR (${ownChain} = 'evm' AND lower(w.address) = ${ownKey})))
                OR EXISTS (SELECT 1 FROM wallets w WHERE w.account_id = e.account_id AND w.chain = ${ownChain}
                             AND w.address_key = ${ownKey} AND w.revoked_at IS NULL)))
            ON CONFLICT (endpoint_id, id) DO NOTHING
            RETURNING endpoint_id`
        : yield* sql<{ endpoint_id: string }>`
            INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event, data, created_at, status, attempts, next_attempt_at)
            SELECT ${eventId}, e.id, e.account_id, ${event}, ${json}::jsonb, ${now}, 'pending', 0, ${now}
            FROM launched_tokens t JOIN webhook_endpoints e ON e.account_id = t.account_id
            WHERE t.chain = ${to.launchedBy.chain} AND t.mint = ${to.launchedBy.mint} AND e.status = 'active' AND e.events ? ${event}
            ON CONFLICT (endpoint_id, id) DO NOTHING
            RETURNING endpoint_id`
    return rows.length
  })

/** The outbox write, for callers that do not need the event id. */
export const enqueue = (
  accountId: string,
  event: WebhookEventName,
  data: unknown
): Effect.Effect<void, SqlError, SqlClient.SqlClient> => Effect.asVoid(enqueueEvent(accountId, event, data))
