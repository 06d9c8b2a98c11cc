/**
 * The webhook delivery worker: a fiber that repeatedly claims due outbox rows (a bounded batch),
 * sends them with bounded concurrency, and records each outcome, rescheduling failures on the
 * spec's schedule (`RetrySchedule.ts`).
 *
 * Invariants:
 * - At-least-once, never lost: a row is claimed by moving its `next_attempt_at` to the end of a
 *   lease (and stamping a claim token) before anything is sent. A worker killed mid-delivery
 *   leaves the row due again when the lease ends; the resend carries the same `x-svc-delivery`.
 *   An outcome is recorded only by the claim that produced it (claim token), so a late worker
 *   whose lease ran out cannot overwrite a newer claim. Several workers (processes) may run:
 *   the claim skips rows another transaction holds.
 * - `attempts` counts sends started; at most `maxAttempts` (8) sends per delivery. A row whose
 *   final send was interrupted by a crash is marked `failed` when its lease ends.
 * - Every send re-runs the public-target check on the endpoint's URL and connects to the address
 *   it approved (`PinnedRequest`); redirects are not followed (a 3xx is a failed attempt).
 * - The body `{id, event, createdAt, data}` and the signature are made at send time, with the
 *   endpoint's CURRENT secret and `createdAt` = the attempt time.
 * - Time comes from Effect's `Clock` (claims, schedule, `createdAt`, signature time, polling),
 *   so tests drive it; network deadlines are real time.
 * - A graceful stop (interruption) lets the sends in flight finish and be recorded, each within
 *   its request deadline; only a crash leaves a row to its lease.
 * - Bounded: `batchSize` rows per claim, `concurrency` sends at once, a deadline per resolution
 *   and per request, at most `maxResponseBytes` of a response read. The lease must outlast a
 *   whole batch (checked when the worker is built).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { bytesToHex, randomBytes } from "@noble/hashes/utils.js"
import { Clock, Duration, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { pinnedPost, type PinnedPostResult } from "../../net/PinnedRequest.js"
import { checkTarget, type Resolver, systemResolver } from "../../net/PublicTarget.js"
import { maxAttempts, nextAttemptAtMs } from "./RetrySchedule.js"
import { makeSecretBox, type SecretBox, type SecretBoxError, testMasterKey } from "./SecretBox.js"
import { signatureHeader } from "./Signature.js"

export interface DeliveryWorkerOptions {
  /** The same master key the endpoints' secrets were sealed under. */
  readonly masterKey: Uint8Array
  /** Tests only: deliver to loopback targets registered under the test flag. Default off. */
  readonly allowLoopbackForTests?: boolean
  readonly resolve?: Resolver
  /** Deadline of one DNS resolution (default 5 s). */
  readonly resolveTimeoutMs?: number
  /** Deadline of one request up to its response status (default 10 s). */
  readonly requestTimeoutMs?: number
  /** Rows claimed at once (default 32). */
  readonly batchSize?: number
  /** Sends in flight at once (default 8). */
  readonly concurrency?: number
  /** Wait between polls when the last claim was not full (default 1 s). */
  readonly pollIntervalMs?: number
  /** How long a claim holds a row (default 2 min; must outlast a batch, see `minimumLeaseMs`). */
  readonly leaseMs?: number
  /** Response body bytes read before the connection is cut (default 64 KiB). */
  readonly maxResponseBytes?: number
  /** Extra trusted CA certificates (tests with a self-signed receiver). */
  readonly tlsCa?: string
}

export const userAgent = "curvestream-webhooks/1.0"

interface Settings {
  readonly allowLoopback: boolean
  readonly resolve: Resolver
  readonly resolveTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly batchSize: number
  readonly concurrency: number
  readonly pollIntervalMs: number
  readonly leaseMs: number
  readonly maxResponseBytes: number
  readonly tlsCa: string | undefined
}

/** The shortest lease that outlasts a full batch: every round of sends at its deadlines, plus 1 s of bookkeeping. */
export const minimumLeaseMs = (o: { batchSize: number; concurrency: number; requestTimeoutMs: number; resolveTimeoutMs: number }): number =>
  Math.ceil(o.batchSize / o.concurrency) * (o.requestTimeoutMs + o.resolveTimeoutMs) + 1_000

const settings = (o: DeliveryWorkerOptions): Settings => {
  const base = {
    allowLoopback: o.allowLoopbackForTests === true,
    resolve: o.resolve ?? systemResolver,
    resolveTimeoutMs: o.resolveTimeoutMs ?? 5_000,
    requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
    batchSize: o.batchSize ?? 32,
    concurrency: o.concurrency ?? 8,
    pollIntervalMs: o.pollIntervalMs ?? 1_000,
    maxResponseBytes: o.maxResponseBytes ?? 64 * 1024,
    tlsCa: o.tlsCa
  }
  for (const [k, v] of Object.entries(base)) {
    if (typeof v === "number" && !(Number.isInteger(v) && v > 0)) throw new Error(`DeliveryWorker: ${k} must be a positive integer`)
  }
  const minimum = minimumLeaseMs(base)
  const leaseMs = o.leaseMs ?? Math.max(120_000, minimum)
  if (leaseMs < minimum) throw new Error(`DeliveryWorker: leaseMs ${leaseMs} is shorter than a full batch (${minimum} ms)`)
  return { ...base, leaseMs }
}

interface ClaimedRow {
  readonly id: string
  readonly endpoint_id: string
  readonly event: string
  readonly data: unknown
  readonly attempts: number
}

interface EndpointRow {
  readonly url: string
  readonly secret_sealed: string
  readonly status: "active" | "revoked"
  readonly allow_loopback: boolean
}

type Outcome =
  | { readonly _tag: "Delivered"; readonly statusCode: number }
  | { readonly _tag: "Failed"; readonly statusCode: number | null; readonly error: string }
  | { readonly _tag: "Cancelled" }
  /** Could not sign (master key problem): the send did not happen and is not counted. */
  | { readonly _tag: "Unsigned"; readonly error: string }

const describeResponse = (r: PinnedPostResult): Outcome => {
  if (r._tag === "Failed") return { _tag: "Failed", statusCode: null, error: r.error }
  if (r.statusCode >= 200 && r.statusCode < 300) return { _tag: "Delivered", statusCode: r.statusCode }
  if (r.statusCode >= 300 && r.statusCode < 400) {
    return { _tag: "Failed", statusCode: r.statusCode, error: `redirect not followed (HTTP ${r.statusCode})` }
  }
  return { _tag: "Failed", statusCode: r.statusCode, error: `HTTP ${r.statusCode}` }
}

export interface DeliveryWorker {
  /** Claims one batch of due rows and delivers it; the number of rows handled. */
  readonly processDue: Effect.Effect<number, SqlError>
  /** `processDue` forever, sleeping `pollIntervalMs` after a claim that was not full. Never fails. */
  readonly run: Effect.Effect<never>
}

export const make = (options: DeliveryWorkerOptions): Effect.Effect<DeliveryWorker, SecretBoxError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const s = settings(options)
    const sql = yield* SqlClient.SqlClient
    const box: SecretBox = yield* makeSecretBox(options.masterKey)

    /** Rows whose FINAL send was interrupted (lease ended, no outcome): failed, never sent a 9th time. */
    const failInterrupted = (now: Date) => sql`
      UPDATE webhook_deliveries
      SET status = 'failed', next_attempt_at = NULL, claim_token = NULL,
          last_error = 'interrupted: the process stopped during the final attempt'
      WHERE status = 'pending' AND attempts >= ${maxAttempts} AND next_attempt_at <= ${now}`

    const claim = (now: Date, token: string) => sql<ClaimedRow>`
      UPDATE webhook_deliveries d
      SET next_attempt_at = ${new Date(now.getTime() + s.leaseMs)}, claim_token = ${token},
          attempts = d.attempts + 1, last_attempt_at = ${now}
      FROM (
        SELECT endpoint_id, id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= ${now} AND attempts < ${maxAttempts}
        ORDER BY next_attempt_at, id
        LIMIT ${s.batchSize}
        FOR UPDATE SKIP LOCKED
      ) due
      WHERE d.endpoint_id = due.endpoint_id AND d.id = due.id
      RETURNING d.id, d.endpoint_id, d.event, d.data, d.attempts`

    const send = (row: ClaimedRow): Effect.Effect<Outcome, SqlError> =>
      Effect.gen(function* () {
        const endpoints = yield* sql<EndpointRow>`
          SELECT url, secret_sealed, status, allow_loopback FROM webhook_endpoints WHERE id = ${row.endpoint_id}`
        const endpoint = endpoints[0]
        if (endpoint === undefined || endpoint.status !== "active") return { _tag: "Cancelled" } as const
        const secret = yield* Effect.either(box.open(endpoint.secret_sealed, row.endpoint_id))
        if (secret._tag === "Left") return { _tag: "Unsigned", error: secret.left.message } as const
        const target = yield* Effect.either(
          checkTarget(endpoint.url, {
            allowLoopback: s.allowLoopback && endpoint.allow_loopback,
            resolve: s.resolve,
            resolveTimeoutMs: s.resolveTimeoutMs
          })
        )
        if (target._tag === "Left") {
          return { _tag: "Failed", statusCode: null, error: `target refused: ${target.left.message}`.slice(0, 500) } as const
        }
        const attemptMs = yield* Clock.currentTimeMillis
        const body = Buffer.from(
          JSON.stringify({ id: row.id, event: row.event, createdAt: new Date(attemptMs).toISOString(), data: row.data }),
          "utf8"
        )
        const result = yield* Effect.promise((signal) =>
          pinnedPost(target.right, {
            headers: {
              "content-type": "application/json",
              "user-agent": userAgent,
              "x-svc-event": row.event,
              "x-svc-delivery": row.id,
              "x-svc-signature": signatureHeader(secret.right, Math.floor(attemptMs / 1000), body)
            },
            body,
            timeoutMs: s.requestTimeoutMs,
            maxResponseBytes: s.maxResponseBytes,
            ca: s.tlsCa,
            signal
          })
        )
        return describeResponse(result)
      })

    const record = (row: ClaimedRow, token: string, outcome: Outcome) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const mine = sql`endpoint_id = ${row.endpoint_id} AND id = ${row.id} AND claim_token = ${token}`
        switch (outcome._tag) {
          case "Delivered":
            yield* sql`
              UPDATE webhook_deliveries
              SET status = 'delivered', delivered_at = ${now}, last_status_code = ${outcome.statusCode}, last_error = NULL,
                  next_attempt_at = NULL, claim_token = NULL
              WHERE ${mine}`
            return
          case "Cancelled":
            yield* sql`
              UPDATE webhook_deliveries
              SET status = 'cancelled', next_attempt_at = NULL, claim_token = NULL, attempts = attempts - 1
              WHERE ${mine}`
            return
          case "Unsigned":
            yield* Effect.logError(`webhook delivery ${row.id} not signed: ${outcome.error}`)
            // Not sent: uncount the attempt and leave the lease to end before the next try.
            yield* sql`UPDATE webhook_deliveries SET attempts = attempts - 1, claim_token = NULL, last_error = ${outcome.error} WHERE ${mine}`
            return
          case "Failed": {
            const next = nextAttemptAtMs(row.attempts, now.getTime())
            yield* sql`
              UPDATE webhook_deliveries
              SET status = ${next === undefined ? "failed" : "pending"},
                  next_attempt_at = ${next === undefined ? null : new Date(next)},
                  last_status_code = ${outcome.statusCode}, last_error = ${outcome.error.slice(0, 500)}, claim_token = NULL
              WHERE ${mine}`
            return
          }
        }
      })

    const processDue: Effect.Effect<number, SqlError> = Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* failInterrupted(now)
      const token = bytesToHex(randomBytes(12))
      const rows = yield* claim(now, token)
      yield* Effect.forEach(
        rows,
        // A send once started runs to its recorded outcome even when the worker is stopped
        // (bounded by the request deadline), so a graceful stop never leaves an answered send
        // unrecorded; rows of the batch not yet started stay claimed until their lease ends.
        (row) => Effect.uninterruptible(Effect.flatMap(send(row), (outcome) => record(row, token, outcome))),
        { concurrency: s.concurrency, discard: true }
      )
      return rows.length
    }).pipe(Effect.withSpan("DeliveryWorker.processDue"))

    const run: Effect.Effect<never> = Effect.forever(
      processDue.pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("webhook delivery worker: poll failed", cause), 0)),
        Effect.flatMap((handled) => (handled < s.batchSize ? Effect.sleep(Duration.millis(s.pollIntervalMs)) : Effect.void))
      )
    )

    return { processDue, run }
  })

/** The worker running for the layer's lifetime. */
export const layer = (options: DeliveryWorkerOptions): Layer.Layer<never, SecretBoxError, SqlClient.SqlClient> =>
  Layer.scopedDiscard(Effect.flatMap(make(options), (worker) => Effect.forkScoped(worker.run)))

/** The real delivery worker over `Database.layerTest`, with the key and loopback flag of `WebhookService.layerTest`; the rest are the test's settings. */
export const layerTest = (options: Omit<DeliveryWorkerOptions, "masterKey" | "allowLoopbackForTests"> = {}): Layer.Layer<never, SecretBoxError | SqlError> =>
  layer({ ...options, masterKey: testMasterKey, allowLoopbackForTests: true }).pipe(Layer.provide(Database.layerTest))
