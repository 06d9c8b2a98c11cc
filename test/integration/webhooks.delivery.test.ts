/**
 * The delivery worker against a real database and real local receivers (node:http / node:https
 * on 127.0.0.1, admitted by the loopback test flag for a test account), with the worker's time
 * driven by hand (`ManualClock`): the receiver verifies every signature and sees the spec's retry
 * schedule to the millisecond, the secret rotated mid-schedule, redirects not followed, timeouts,
 * the target re-checked (and the connection pinned) before every send, TLS with SNI through the
 * pinned address, revocation, and the batch and concurrency bounds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import type { Resolver } from "../../src/net/PublicTarget.js"
import * as DeliveryWorker from "../../src/services/webhooks/DeliveryWorker.js"
import type { WebhookEventName } from "../../src/services/webhooks/Events.js"
import { enqueueEvent } from "../../src/services/webhooks/Outbox.js"
import { verifySignature } from "../../src/services/webhooks/Signature.js"
import { ManualClock, type Receiver, type ReceiverAnswer, startReceiver } from "../support/webhookReceiver.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { eventually } from "../support/eventually.js"

const masterKey = new Uint8Array(32).fill(3)
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0)
const MIN = 60_000

/** A self-signed certificate for `hook.test.example` only (no IP names), valid until 2126. Test use only. */
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBrTCCAVOgAwIBAgIUS3+Fe99JjZyDJEA+pLNEEijlOzkwCgYIKoZIzj0EAwIw
HDEaMBgGA1UEAwwRaG9vay50ZXN0LmV4YW1wbGUwIBcNMjYxMTIxMTEyNzI0WhgP
MjEyNjEwMjgxMTI3MjRaMBwxGjAYBgNVBAMMEWhvb2sudGVzdC5leGFtcGxlMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFdxb0pqjTrYpeMSgPzzJA7+5WOSol/2F
Zejk5lpFTyZQwrsHB0AKabyqAh0P+XWohQAs/odbbOvyerpBq4mFn6NxMG8wHQYD
VR0OBBYEFEfp7WLnk5pilCxeaZJ7EzsLf30gMB8GA1UdIwQYMBaAFEfp7WLnk5pi
lCxeaZJ7EzsLf30gMA8GA1UdEwEB/wQFMAMBAf8wHAYDVR0RBBUwE4IRaG9vay50
ZXN0LmV4YW1wbGUwCgYIKoZIzj0EAwIDSAAwRQIgA4kZDbt7yVA7WBdfLGEQkYgv
vO6Oh2UnBrOslMGoMV0CIQCbsgUIEcbGMz4ggdGtJ8bJcDfDeW3DQuvSOlOG1o0R
mA==
-----END CERTIFICATE-----
`
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkLMBQ2mjjZFXE2MC
UFRWDgZf4gttUL1O1xSj9mehF2ahRANCAAQV3FvSmqNOtil4xKA/PMkDv7lY5KiX
/YVl6OTmWkVPJlDCuwcHQAppvKoCHQ/5daiFACz+h1ts6/J6ukGriYWf
-----END PRIVATE KEY-----
`

/** `hook.test.example` exists only here; what it resolves to is switched by the tests. */
let hookAnswers: ReadonlyArray<string> = ["127.0.0.1"]
const resolver: Resolver = async (host) => {
  if (host !== "hook.test.example") throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
  return hookAnswers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
}

interface Row {
  status: string
  attempts: number
  next_attempt_at: Date | null
  last_status_code: number | null
  last_error: string | null
  claim_token: string | null
  delivered_at: Date | null
  last_attempt_at: Date | null
}

/** The suite's database: `Database.layerTest`, on the server's fresh database when `databaseUrl` names one. */
const databaseLayer = (databaseUrl: string | undefined) =>
  Database.layerTest.pipe(Layer.provide(databaseUrl !== undefined ? Layer.succeed(Database.TestDatabaseUrl, databaseUrl) : Layer.empty))

const deliverySuite = (databaseUrl: () => string | undefined) => {
  let scope: Scope.CloseableScope
  let context: Context.Context<SqlClient.SqlClient | WebhookService.WebhookService>
  const clock = new ManualClock(T0)
  const cleanups: Array<() => Promise<void>> = []
  let accountSeq = 0

  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | WebhookService.WebhookService>) =>
    Effect.runPromise(Effect.provide(effect, context).pipe(Effect.withClock(clock)))

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const layer = WebhookService.layer({ masterKey, allowLoopbackForTests: true, resolve: resolver, resolveTimeoutMs: 500 }).pipe(
      Layer.provideMerge(databaseLayer(databaseUrl()))
    )
    context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  }, 120_000)

  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
    hookAnswers = ["127.0.0.1"]
    // Nothing of one test is left due for the next test's worker.
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL WHERE status = 'pending'`))
  })

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const receiver = async (answer: (index: number) => ReceiverAnswer, opts: Parameters<typeof startReceiver>[1] = {}) => {
    const r = await startReceiver((_req, i) => answer(i), opts)
    cleanups.push(() => r.close())
    return r
  }

  const workerOptions = (overrides: Partial<DeliveryWorker.DeliveryWorkerOptions> = {}): DeliveryWorker.DeliveryWorkerOptions => ({
    masterKey,
    allowLoopbackForTests: true,
    resolve: resolver,
    resolveTimeoutMs: 500,
    requestTimeoutMs: 2_000,
    batchSize: 8,
    concurrency: 4,
    ...overrides
  })

  /** Starts the worker fiber on the manual clock; stopped after the test. */
  const startWorker = async (overrides: Partial<DeliveryWorker.DeliveryWorkerOptions> = {}) => {
    const worker = await run(DeliveryWorker.make(workerOptions(overrides)))
    const fiber = Effect.runFork(Effect.provide(worker.run, context).pipe(Effect.withClock(clock)))
    cleanups.push(() => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined))
    return worker
  }

  const register = async (url: string, events: ReadonlyArray<WebhookEventName> = ["launch.confirmed"]) => {
    const accountId = `acct_delivery_${++accountSeq}`
    const service = Context.get(context, WebhookService.WebhookService)
    const ep = await run(service.create({ accountId, testAccount: true }, { url, events }))
    return { ...ep, accountId }
  }

  const row = (eventId: string) =>
    run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<Row>`SELECT status, attempts, next_attempt_at, last_status_code, last_error, claim_token, delivered_at, last_attempt_at
                 FROM webhook_deliveries WHERE id = ${eventId}`
      )
    ).then((rows) => rows[0]!)

  /** Waits until the worker has recorded the outcome of send number `attempts`. */
  const recorded = (eventId: string, attempts: number) =>
    eventually(async () => {
      const r = await row(eventId)
      return r.attempts === attempts && r.claim_token === null
    }, { what: `attempt ${attempts} of ${eventId} recorded`, deadlineMs: 10_000, intervalMs: 5 })

  const parse = (r: Receiver, i: number) => JSON.parse(r.requests[i]!.body.toString("utf8"))

  it("retries on the spec's schedule, signs every attempt with the current secret, and stops after the 8th", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 500)
    const ep = await register(`${rcv.url}/hook?a=1`)
    const data = { clientLaunchId: "L-1", chain: "solana", mint: "Mint111", pool: "Pool111", signature: "Sig111" }
    const { eventId, deliveries } = await run(enqueueEvent(ep.accountId, "launch.confirmed", data))
    expect(deliveries).toBe(1)
    await startWorker()

    const offsetsMin = [0, 1, 6, 21, 51, 111, 231, 471]
    let secret = ep.secret
    const oldSecrets: string[] = []
    for (let k = 0; k < offsetsMin.length; k++) {
      const at = T0 + offsetsMin[k]! * MIN
      if (k > 0) {
        // one millisecond early: nothing is sent
        clock.nowMs = at - 1
        await clock.polls(2)
        expect(rcv.requests).toHaveLength(k)
        if (k === 4) {
          const rotated = await run(Effect.flatMap(WebhookService.WebhookService, (s) => s.rotate({ accountId: ep.accountId, testAccount: true }, ep.id)))
          oldSecrets.push(secret)
          secret = rotated.secret
        }
        clock.nowMs = at
      }
      await rcv.waitFor(k + 1)
      await recorded(eventId, k + 1)
      const req = rcv.requests[k]!
      expect(req.method).toBe("POST")
      expect(req.path).toBe("/hook?a=1")
      expect(req.headers["content-type"]).toBe("application/json")
      expect(req.headers["x-svc-event"]).toBe("launch.confirmed")
      expect(req.headers["x-svc-delivery"]).toBe(eventId)
      const body = parse(rcv, k)
      expect(body).toEqual({ id: eventId, event: "launch.confirmed", createdAt: new Date(at).toISOString(), data })
      expect(Object.keys(body)).toEqual(["id", "event", "createdAt", "data"])
      const sig = req.headers["x-svc-signature"] as string
      expect(sig).toMatch(new RegExp(`^t=${Math.floor(at / 1000)},v1=[0-9a-f]{64}$`))
      expect(verifySignature(secret, sig, req.body, Math.floor(at / 1000))).toEqual({ ok: true, timestamp: Math.floor(at / 1000) })
      for (const old of oldSecrets) expect(verifySignature(old, sig, req.body, Math.floor(at / 1000))).toEqual({ ok: false, reason: "mismatch" })
      const r = await row(eventId)
      expect(r.last_status_code).toBe(500)
      expect(r.last_error).toBe("HTTP 500")
      if (k < 7) {
        expect(r.status).toBe("pending")
        expect(r.next_attempt_at?.getTime()).toBe(T0 + offsetsMin[k + 1]! * MIN)
      } else {
        expect(r.status).toBe("failed")
        expect(r.next_attempt_at).toBeNull()
      }
    }
    // final: nothing more, however long we wait
    clock.nowMs = T0 + 48 * 60 * MIN
    await clock.polls(3)
    expect(rcv.requests).toHaveLength(8)
    const shown = await run(Effect.flatMap(WebhookService.WebhookService, (s) => s.deliveries({ accountId: ep.accountId }, ep.id)))
    expect(shown).toEqual([
      {
        eventId,
        event: "launch.confirmed",
        status: "failed",
        attempts: 8,
        lastStatusCode: 500,
        lastError: "HTTP 500",
        createdAt: new Date(T0).toISOString(),
        lastAttemptAt: new Date(T0 + 471 * MIN).toISOString(),
        nextAttemptAt: null,
        deliveredAt: null
      }
    ])
  })

  it("stops retrying once an attempt is answered 2xx", async () => {
    clock.nowMs = T0
    const rcv = await receiver((i) => (i === 0 ? 503 : 204))
    const ep = await register(`${rcv.url}/ok`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", { n: 1 }))
    await startWorker()
    await rcv.waitFor(1)
    await recorded(eventId, 1)
    clock.nowMs = T0 + MIN
    await rcv.waitFor(2)
    await recorded(eventId, 2)
    expect(await row(eventId)).toMatchObject({ status: "delivered", attempts: 2, last_status_code: 204, last_error: null, next_attempt_at: null })
    expect((await row(eventId)).delivered_at?.getTime()).toBe(T0 + MIN)
    clock.nowMs = T0 + 24 * 60 * MIN
    await clock.polls(3)
    expect(rcv.requests).toHaveLength(2)
    expect(parse(rcv, 0).id).toBe(parse(rcv, 1).id)
    expect(rcv.requests[0]!.headers["x-svc-delivery"]).toBe(rcv.requests[1]!.headers["x-svc-delivery"])
    expect(parse(rcv, 0).createdAt).not.toBe(parse(rcv, 1).createdAt)
  })

  it("never follows a redirect: a 3xx is a failed attempt", async () => {
    clock.nowMs = T0
    const elsewhere = await receiver(() => 200)
    const rcv = await receiver(() => ({ status: 307, headers: { location: `${elsewhere.url}/stolen` } }))
    const ep = await register(`${rcv.url}/moved`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", {}))
    await startWorker()
    await rcv.waitFor(1)
    await recorded(eventId, 1)
    expect(await row(eventId)).toMatchObject({ status: "pending", last_status_code: 307, last_error: "redirect not followed (HTTP 307)" })
    clock.nowMs = T0 + MIN
    await rcv.waitFor(2)
    await recorded(eventId, 2)
    expect(elsewhere.requests).toHaveLength(0)
  })

  it("bounds each request with a deadline", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => "hang")
    const ep = await register(`${rcv.url}/slow`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", {}))
    await startWorker({ requestTimeoutMs: 300 })
    await rcv.waitFor(1)
    await recorded(eventId, 1)
    const r = await row(eventId)
    expect(r).toMatchObject({ status: "pending", last_status_code: null, last_error: "timeout after 300 ms" })
    expect(r.next_attempt_at?.getTime()).toBe(T0 + MIN)
  })

  it("re-checks the target before every send and connects to the address it checked", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 500)
    // The name exists only in the test resolver: reaching the receiver proves the connection used the checked address.
    const ep = await register(`http://hook.test.example:${rcv.port}/pinned`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", {}))
    await startWorker()
    await rcv.waitFor(1)
    await recorded(eventId, 1)
    expect(rcv.requests[0]!.headers.host).toBe(`hook.test.example:${rcv.port}`)
    // the name now resolves to a private address (rebinding): refused, nothing sent
    hookAnswers = ["10.0.0.7"]
    clock.nowMs = T0 + MIN
    await recorded(eventId, 2)
    expect(await row(eventId)).toMatchObject({ status: "pending", last_status_code: null })
    expect((await row(eventId)).last_error).toMatch(/^target refused: .*private address \(10\.0\.0\.7\)/)
    // one public-looking and one private answer: still refused
    hookAnswers = ["127.0.0.1", "fd00::7"]
    clock.nowMs = T0 + 6 * MIN
    await recorded(eventId, 3)
    expect((await row(eventId)).last_error).toMatch(/unique-local/)
    expect(rcv.requests).toHaveLength(1)
  })

  it("speaks TLS to the pinned address with the host name for SNI and certificate checks", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 200, { tls: { cert: TLS_CERT, key: TLS_KEY } })
    const ep = await register(`https://hook.test.example:${rcv.port}/tls`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", { tls: true }))
    await startWorker({ tlsCa: TLS_CERT })
    await rcv.waitFor(1)
    await recorded(eventId, 1)
    expect(rcv.requests[0]!.servername).toBe("hook.test.example")
    expect(verifySignature(ep.secret, rcv.requests[0]!.headers["x-svc-signature"] as string, rcv.requests[0]!.body, Math.floor(T0 / 1000)).ok).toBe(true)
    expect(await row(eventId)).toMatchObject({ status: "delivered", last_status_code: 200 })
  })

  it("refuses a certificate that does not name the host", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 200, { tls: { cert: TLS_CERT, key: TLS_KEY } })
    // The certificate names hook.test.example only; 127.0.0.1 as the host does not match it.
    const ep = await register(`https://127.0.0.1:${rcv.port}/tls`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", {}))
    await startWorker({ tlsCa: TLS_CERT })
    await recorded(eventId, 1)
    expect(rcv.requests).toHaveLength(0)
    expect((await row(eventId)).last_error).toMatch(/altnames|IP: 127\.0\.0\.1|ERR_TLS_CERT_ALTNAME_INVALID/)
  })

  it("without the worker's test flag a loopback endpoint is refused at send time", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 200)
    const ep = await register(`${rcv.url}/flagless`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", {}))
    await startWorker({ allowLoopbackForTests: false })
    await recorded(eventId, 1)
    expect(rcv.requests).toHaveLength(0)
    expect((await row(eventId)).last_error).toMatch(/^target refused: url must use https/)
  })

  it("sends nothing for a revoked endpoint", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 200)
    const ep = await register(`${rcv.url}/revoked`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", {}))
    await run(Effect.flatMap(WebhookService.WebhookService, (s) => s.revoke({ accountId: ep.accountId }, ep.id)))
    await startWorker()
    await clock.polls(3)
    expect(rcv.requests).toHaveLength(0)
    expect(await row(eventId)).toMatchObject({ status: "cancelled", attempts: 0 })
  })

  it("claims at most batchSize rows and sends at most `concurrency` at once", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 200, { answerDelayMs: 40 })
    const ep = await register(`${rcv.url}/batch`, ["trade.executed"])
    for (let i = 0; i < 10; i++) await run(enqueueEvent(ep.accountId, "trade.executed", { i }))
    const worker = await run(DeliveryWorker.make(workerOptions({ batchSize: 4, concurrency: 2 })))
    const handled: number[] = []
    for (let i = 0; i < 4; i++) handled.push(await run(worker.processDue))
    expect(handled).toEqual([4, 4, 2, 0])
    expect(rcv.requests).toHaveLength(10)
    expect(rcv.maxInFlight()).toBe(2)
    expect(new Set(rcv.requests.map((r) => r.headers["x-svc-delivery"])).size).toBe(10)
  })

  it("a graceful stop lets a send in flight finish and records it; nothing is resent", async () => {
    clock.nowMs = T0
    const rcv = await receiver(() => 200, { answerDelayMs: 300 })
    const ep = await register(`${rcv.url}/graceful`)
    const { eventId } = await run(enqueueEvent(ep.accountId, "launch.confirmed", { n: 1 }))
    const worker = await run(DeliveryWorker.make(workerOptions()))
    const fiber = Effect.runFork(Effect.provide(worker.run, context).pipe(Effect.withClock(clock)))
    await rcv.waitFor(1)
    expect(rcv.inFlight()).toBe(1)
    // Interrupting returns only once the answered send is recorded.
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(await row(eventId)).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 200, claim_token: null })
    clock.nowMs = T0 + 24 * 60 * MIN
    await startWorker()
    await clock.polls(3)
    expect(rcv.requests).toHaveLength(1)
  })

  it("refuses a lease shorter than a full batch", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(DeliveryWorker.make(workerOptions({ batchSize: 8, concurrency: 4, leaseMs: 1_000 })), context)
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(DeliveryWorker.minimumLeaseMs({ batchSize: 8, concurrency: 4, requestTimeoutMs: 2_000, resolveTimeoutMs: 500 })).toBe(6_000)
  })
}

describe("webhook delivery on embedded PGlite", () => {
  deliverySuite(() => undefined)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`webhook delivery on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  deliverySuite(() => dbUrl)
})
