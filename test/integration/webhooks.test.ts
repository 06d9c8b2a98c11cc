/**
 * Webhook endpoint routes (spec 4.4, 2.6, 3.5) over real HTTP (uWS) on a real database, and the
 * outbox write (spec 6), on both PostgreSQL backends: the embedded PGlite and the run's real
 * PostgreSQL server. Every refusal is checked for status, `code`, `field`/`reason`, and that
 * nothing was recorded.
 *
 * Authentication is a small real function standing in for the accounts service: the bearer
 * token names a fixed account (`test-a` a test account, `prod-b` a production one, `off` an
 * account without agent features); anything else is 401 `UNAUTHORIZED`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AuthenticatedOwner, webhookRoutes } from "../../api/routes/WebhookRoutes.js"
import type { Request } from "../../api/Http.js"
import { serve } from "../../api/Server.js"
import * as Database from "../../src/db/Database.js"
import { apiError } from "../../src/domain/ApiError.js"
import type { Resolver } from "../../src/net/PublicTarget.js"
import { enqueue, enqueueEvent } from "../../src/services/webhooks/Outbox.js"
import { makeSecretBox } from "../../src/services/webhooks/SecretBox.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { checkAnswersInThisFile, withContract } from "../support/contractRoutes.js"

// Every answer is checked against the webhook routes' own OpenAPI document (test/support/contract.ts).
checkAnswersInThisFile()

const masterKey = new Uint8Array(32).fill(9)

const accounts: Record<string, AuthenticatedOwner> = {
  "test-a": { accountId: "acct_a", testAccount: true, agentEnabled: true },
  "test-c": { accountId: "acct_c", testAccount: true },
  "test-d": { accountId: "acct_d", testAccount: true },
  "prod-b": { accountId: "acct_b", testAccount: false, agentEnabled: true },
  off: { accountId: "acct_off", agentEnabled: false }
}

const authenticate = (req: Request) => {
  const m = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")
  const owner = m === null ? undefined : accounts[m[1]!]
  return owner === undefined ? Effect.fail(apiError("UNAUTHORIZED", "Missing or invalid session")) : Effect.succeed(owner)
}

const resolver: Resolver = async (host) => {
  const answers: Record<string, ReadonlyArray<string>> = {
    "hooks.example.com": ["93.184.216.34"],
    "hooks2.example.com": ["93.184.216.35"],
    "internal.example.com": ["10.1.2.3"],
    "mixed.example.com": ["93.184.216.34", "fd00::5"]
  }
  const a = answers[host]
  if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
  return a.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
}

/** The suite's database: `Database.layerTest`, on the server's fresh database when `databaseUrl` names one. */
const databaseLayer = (databaseUrl: string | undefined) =>
  Database.layerTest.pipe(Layer.provide(databaseUrl !== undefined ? Layer.succeed(Database.TestDatabaseUrl, databaseUrl) : Layer.empty))

const webhookSuite = (databaseUrl: () => string | undefined) => {
  let scope: Scope.CloseableScope
  let url = ""
  let context: Context.Context<SqlClient.SqlClient | WebhookService.WebhookService>
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | WebhookService.WebhookService>) =>
    Effect.runPromise(Effect.provide(effect, context))

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const layer = WebhookService.layer({ masterKey, allowLoopbackForTests: true, resolve: resolver, resolveTimeoutMs: 500 }).pipe(
      Layer.provideMerge(databaseLayer(databaseUrl()))
    )
    context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    const service = Context.get(context, WebhookService.WebhookService)
    const server = await Effect.runPromise(
      serve({ name: "webhooks", host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, routes: withContract(webhookRoutes({ service, authenticate })) }).pipe(
        Scope.extend(scope)
      )
    )
    url = server.url
  }, 120_000)

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const call = async (method: string, path: string, token: string | undefined, body?: unknown, rawBody?: string) => {
    const headers: Record<string, string> = {}
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (body !== undefined || rawBody !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(url + path, {
      method,
      headers,
      ...(rawBody !== undefined ? { body: rawBody } : body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  const create = (token: string, body: unknown) => call("POST", "/api/v1/agent/webhooks", token, body)

  const counts = () =>
    run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ endpoints: number; deliveries: number }>`
          SELECT (SELECT count(*)::int FROM webhook_endpoints) AS endpoints, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries`
      )
    ).then((rows) => rows[0]!)

  it("registers an endpoint: the secret once, the prefix always, the secret sealed at rest", async () => {
    const r = await create("test-a", { url: "https://hooks.example.com/in?x=1", events: ["launch.confirmed", "trade.executed", "launch.confirmed"] })
    expect(r.status).toBe(201)
    const ep = r.body
    expect(ep).toMatchObject({
      success: true,
      url: "https://hooks.example.com/in?x=1",
      events: ["launch.confirmed", "trade.executed"],
      status: "active"
    })
    expect(ep.id).toMatch(/^wh_[0-9a-f]{32}$/)
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(ep.secretPrefix).toBe(ep.secret.slice(0, 12))
    expect(new Date(ep.createdAt).toISOString()).toBe(ep.createdAt)

    const list = await call("GET", "/api/v1/agent/webhooks", "test-a")
    expect(list.status).toBe(200)
    const row = list.body.webhooks.find((w: { id: string }) => w.id === ep.id)
    expect(row).toEqual({ id: ep.id, url: ep.url, events: ep.events, secretPrefix: ep.secretPrefix, status: "active", createdAt: ep.createdAt })
    expect(JSON.stringify(list.body)).not.toContain(ep.secret)

    const [stored] = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ secret_sealed: string }>`SELECT secret_sealed FROM webhook_endpoints WHERE id = ${ep.id}`)
    )
    expect(stored!.secret_sealed).not.toContain(ep.secret.slice(6))
    const box = await Effect.runPromise(makeSecretBox(masterKey))
    expect(await Effect.runPromise(box.open(stored!.secret_sealed, ep.id))).toBe(ep.secret)
  })

  it("refuses every malformed or non-public registration, recording nothing", async () => {
    const before = await counts()
    const cases: ReadonlyArray<readonly [string, unknown, number, Record<string, unknown>]> = [
      ["test-a", ["not", "an", "object"], 400, { code: "VALIDATION_FAILED", field: "body" }],
      ["test-a", { events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url" }],
      ["test-a", { url: 42, events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url" }],
      ["test-a", { url: "hooks.example.com/x", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "invalid_url" }],
      ["prod-b", { url: "http://hooks.example.com/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "not_https" }],
      ["test-a", { url: "http://hooks.example.com/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "not_https" }],
      ["test-a", { url: "https://u:p@hooks.example.com/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "credentials_in_url" }],
      ["test-a", { url: "https://10.0.0.1/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "private" }],
      ["test-a", { url: "https://169.254.169.254/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "link_local" }],
      ["test-a", { url: "https://[::ffff:127.0.0.1]/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "ipv4_mapped" }],
      ["test-a", { url: "https://[64:ff9b::a00:1]/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "nat64" }],
      ["test-a", { url: "https://internal.example.com/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "private" }],
      ["test-a", { url: "https://mixed.example.com/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "unique_local" }],
      ["test-a", { url: "https://nowhere.example.com/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "unresolvable" }],
      // production accounts never get loopback, even with the test flag on
      ["prod-b", { url: "https://127.0.0.1:9/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "loopback" }],
      ["prod-b", { url: "https://2130706433/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "loopback" }],
      ["prod-b", { url: "https://localhost/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "localhost" }],
      ["prod-b", { url: "http://127.0.0.1:9/", events: ["launch.confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "url", reason: "not_https" }],
      ["test-a", { url: "https://hooks.example.com/" }, 400, { code: "VALIDATION_FAILED", field: "events" }],
      ["test-a", { url: "https://hooks.example.com/", events: [] }, 400, { code: "VALIDATION_FAILED", field: "events" }],
      ["test-a", { url: "https://hooks.example.com/", events: "launch.confirmed" }, 400, { code: "VALIDATION_FAILED", field: "events" }],
      ["test-a", { url: "https://hooks.example.com/", events: ["launch.confirmed", 7] }, 400, { code: "VALIDATION_FAILED", field: "events" }],
      ["test-a", { url: "https://hooks.example.com/", events: ["launch.confirmed", "launch.exploded"] }, 400, { code: "VALIDATION_FAILED", field: "events", reason: "unknown_event" }],
      ["test-a", { url: "https://hooks.example.com/", events: ["Launch.Confirmed"] }, 400, { code: "VALIDATION_FAILED", field: "events", reason: "unknown_event" }],
      ["test-a", { url: "https://hooks.example.com/", events: new Array(65).fill("launch.confirmed") }, 400, { code: "VALIDATION_FAILED", field: "events" }],
      ["nobody", { url: "https://hooks.example.com/", events: ["launch.confirmed"] }, 401, { code: "UNAUTHORIZED" }],
      ["off", { url: "https://hooks.example.com/", events: ["launch.confirmed"] }, 403, { code: "VALIDATION_FAILED" }]
    ]
    for (const [token, body, status, error] of cases) {
      const r = await create(token, body)
      expect({ body, status: r.status, error: r.body.error }).toMatchObject({ body, status, error })
      expect(r.body.success).toBe(false)
    }
    const noAuth = await call("POST", "/api/v1/agent/webhooks", undefined, { url: "https://hooks.example.com/", events: ["launch.confirmed"] })
    expect(noAuth).toMatchObject({ status: 401, body: { error: { code: "UNAUTHORIZED" } } })
    const badJson = await call("POST", "/api/v1/agent/webhooks", "test-a", undefined, "{not json")
    expect(badJson).toMatchObject({ status: 400, body: { error: { code: "VALIDATION_FAILED", field: "body" } } })
    const huge = await call("POST", "/api/v1/agent/webhooks", "test-a", { url: `https://hooks.example.com/${"a".repeat(9000)}`, events: ["launch.confirmed"] })
    expect(huge).toMatchObject({ status: 413, body: { error: { code: "BODY_TOO_LARGE" } } })
    expect(await counts()).toEqual(before)
  })

  it("keeps at most 3 active endpoints per account; a revoked one frees a place", async () => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await create("test-c", { url: `https://hooks.example.com/${i}`, events: ["curve.graduated"] })
      expect(r.status).toBe(201)
      ids.push(r.body.id)
    }
    const before = await counts()
    const fourth = await create("test-c", { url: "https://hooks.example.com/3", events: ["curve.graduated"] })
    expect(fourth).toMatchObject({ status: 400, body: { success: false, error: { code: "WEBHOOK_LIMIT_REACHED", retryable: false } } })
    expect(await counts()).toEqual(before)
    // another account is unaffected
    expect((await create("prod-b", { url: "https://hooks2.example.com/", events: ["curve.graduated"] })).status).toBe(201)
    expect((await call("DELETE", `/api/v1/agent/webhooks/${ids[0]}`, "test-c")).status).toBe(200)
    expect((await create("test-c", { url: "https://hooks.example.com/4", events: ["curve.graduated"] })).status).toBe(201)
    const list = await call("GET", "/api/v1/agent/webhooks", "test-c")
    expect(list.body.webhooks).toHaveLength(4)
    expect(list.body.webhooks.filter((w: { status: string }) => w.status === "active")).toHaveLength(3)
    expect(list.body.webhooks.find((w: { id: string }) => w.id === ids[0])).toMatchObject({ status: "revoked", revokedAt: expect.any(String) })
  })

  it("holds the limit under concurrent registrations", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => create("test-d", { url: `https://hooks.example.com/c${i}`, events: ["launch.failed"] }))
    )
    expect(results.filter((r) => r.status === 201)).toHaveLength(3)
    expect(results.filter((r) => r.status === 400 && r.body.error.code === "WEBHOOK_LIMIT_REACHED")).toHaveLength(5)
    const [n] = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = 'acct_d'`)
    )
    expect(n!.n).toBe(3)
  })

  it("rotates: a new secret once, id, events and history kept; refusals for unknown, foreign and revoked ids", async () => {
    const ep = (await create("test-a", { url: "https://hooks2.example.com/r", events: ["order.triggered"] })).body
    await run(enqueue("acct_a", "order.triggered", { clientOrderId: "o1" }))
    const r = await call("POST", `/api/v1/agent/webhooks/${ep.id}/rotate`, "test-a")
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ success: true, id: ep.id, url: ep.url, events: ep.events, createdAt: ep.createdAt, status: "active" })
    expect(r.body.secret).toMatch(/^whsec_/)
    expect(r.body.secret).not.toBe(ep.secret)
    expect(r.body.secretPrefix).toBe(r.body.secret.slice(0, 12))
    expect(r.body.rotatedAt).toEqual(expect.any(String))
    const deliveries = await call("GET", `/api/v1/agent/webhooks/${ep.id}/deliveries`, "test-a")
    expect(deliveries.body.deliveries).toHaveLength(1)
    const box = await Effect.runPromise(makeSecretBox(masterKey))
    const [stored] = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ secret_sealed: string }>`SELECT secret_sealed FROM webhook_endpoints WHERE id = ${ep.id}`)
    )
    expect(await Effect.runPromise(box.open(stored!.secret_sealed, ep.id))).toBe(r.body.secret)

    const before = await counts()
    const unknown = await call("POST", "/api/v1/agent/webhooks/wh_00000000000000000000000000000000/rotate", "test-a")
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: "VALIDATION_FAILED", field: "id", reason: "webhook_not_found" } } })
    const malformed = await call("POST", "/api/v1/agent/webhooks/'%3B--/rotate", "test-a")
    expect(malformed).toMatchObject({ status: 404, body: { error: { code: "VALIDATION_FAILED", field: "id" } } })
    const foreign = await call("POST", `/api/v1/agent/webhooks/${ep.id}/rotate`, "prod-b")
    expect(foreign).toMatchObject({ status: 404, body: { error: { code: "VALIDATION_FAILED", field: "id" } } })
    expect((await call("GET", `/api/v1/agent/webhooks/${ep.id}/deliveries`, "prod-b")).status).toBe(404)
    expect((await call("DELETE", `/api/v1/agent/webhooks/${ep.id}`, "prod-b")).status).toBe(404)
    expect(await counts()).toEqual(before)

    const revoked = await call("DELETE", `/api/v1/agent/webhooks/${ep.id}`, "test-a")
    expect(revoked.status).toBe(200)
    expect(revoked.body).toMatchObject({ success: true, id: ep.id, status: "revoked", revokedAt: expect.any(String) })
    expect(revoked.body.secret).toBeUndefined()
    const [{ secret_prefix }] = (await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ secret_prefix: string }>`SELECT secret_prefix FROM webhook_endpoints WHERE id = ${ep.id}`)
    )) as [{ secret_prefix: string }]
    const rotateRevoked = await call("POST", `/api/v1/agent/webhooks/${ep.id}/rotate`, "test-a")
    expect(rotateRevoked).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED", field: "id", reason: "webhook_revoked" } } })
    const readRevoked = await call("GET", `/api/v1/agent/webhooks/${ep.id}/deliveries`, "test-a")
    expect(readRevoked).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED", reason: "webhook_revoked" } } })
    // revoking again answers the same revoked endpoint
    const again = await call("DELETE", `/api/v1/agent/webhooks/${ep.id}`, "test-a")
    expect(again.body).toEqual(revoked.body)
    const [{ secret_prefix: after }] = (await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ secret_prefix: string }>`SELECT secret_prefix FROM webhook_endpoints WHERE id = ${ep.id}`)
    )) as [{ secret_prefix: string }]
    expect(after).toBe(secret_prefix)
    // the pending delivery was cancelled with the endpoint
    const [d] = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ status: string; next_attempt_at: Date | null }>`SELECT status, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ${ep.id}`)
    )
    expect(d).toEqual({ status: "cancelled", next_attempt_at: null })
  })

  it("shows the last 20 deliveries, newest first", async () => {
    const ep = (await create("prod-b", { url: "https://hooks.example.com/many", events: ["tracked_wallet.traded"] })).body
    const ids: string[] = []
    for (let i = 0; i < 25; i++) ids.push((await run(enqueueEvent("acct_b", "tracked_wallet.traded", { i }))).eventId)
    const r = await call("GET", `/api/v1/agent/webhooks/${ep.id}/deliveries`, "prod-b")
    expect(r.status).toBe(200)
    expect(r.body.webhookId).toBe(ep.id)
    expect(r.body.deliveries).toHaveLength(20)
    // created in one millisecond or several: newest first by time, then id; every shown one is among the 25
    for (const d of r.body.deliveries) expect(ids).toContain(d.eventId)
    expect(r.body.deliveries[0]).toEqual({
      eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      event: "tracked_wallet.traded",
      status: "pending",
      attempts: 0,
      lastStatusCode: null,
      lastError: null,
      createdAt: expect.any(String),
      lastAttemptAt: null,
      nextAttemptAt: expect.any(String),
      deliveredAt: null
    })
    const times = r.body.deliveries.map((d: { createdAt: string }) => d.createdAt)
    expect([...times].sort().reverse()).toEqual(times)
  })

  it("outbox: written with the transaction that causes it, one row per active subscribed endpoint", async () => {
    const a1 = (await create("test-a", { url: "https://hooks.example.com/o1", events: ["migration.completed", "curve.graduated"] })).body
    const before = await counts()
    // rolled back with the caller's transaction: nothing
    const rolledBack = await run(
      Effect.exit(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql.withTransaction(Effect.zipRight(enqueue("acct_a", "migration.completed", { mint: "M1" }), Effect.fail("state change refused" as const)))
        )
      )
    )
    expect(Exit.isFailure(rolledBack)).toBe(true)
    expect(await counts()).toEqual(before)
    // no endpoint subscribes: nothing
    const none = await run(enqueueEvent("acct_a", "linked_wallet.untrusted", { batchId: "b" }))
    expect(none.deliveries).toBe(0)
    const stranger = await run(enqueueEvent("acct_nobody", "migration.completed", { mint: "M1" }))
    expect(stranger.deliveries).toBe(0)
    expect(await counts()).toEqual(before)
    // committed: one row for each active endpoint of the account listing the event
    const committed = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(enqueueEvent("acct_a", "migration.completed", { chain: "solana", mint: "M1", amountRaw: 2n ** 70n }))
      )
    )
    const rows = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ endpoint_id: string; data: unknown; status: string; attempts: number }>`
          SELECT endpoint_id, data, status, attempts FROM webhook_deliveries WHERE id = ${committed.eventId}`
      )
    )
    expect(rows).toEqual([{ endpoint_id: a1.id, data: { chain: "solana", mint: "M1", amountRaw: (2n ** 70n).toString() }, status: "pending", attempts: 0 }])
    expect(committed.deliveries).toBe(1)
    // too large a payload is a bug in the caller, refused before anything is written
    const big = await run(Effect.exit(enqueue("acct_a", "migration.completed", { blob: "x".repeat(70_000) })))
    expect(Exit.isFailure(big) && Exit.causeOption(big)).toBeTruthy()
  })
}

describe("webhooks on embedded PGlite", () => {
  webhookSuite(() => undefined)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`webhooks on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  webhookSuite(() => dbUrl)
})

describe("webhook routes in the OpenAPI document", () => {
  it("documents every route as an owner-session route with its body and responses", async () => {
    const { openApiDocument } = await import("../../api/OpenApi.js")
    const routes = webhookRoutes({ service: undefined as unknown as WebhookService.WebhookServiceShape, authenticate })
    const doc = openApiDocument(routes, { title: "t", description: "d" }) as { paths: Record<string, Record<string, any>> }
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/api/v1/agent/webhooks",
      "/api/v1/agent/webhooks/{id}",
      "/api/v1/agent/webhooks/{id}/deliveries",
      "/api/v1/agent/webhooks/{id}/rotate"
    ])
    expect(Object.keys(doc.paths["/api/v1/agent/webhooks"]!).sort()).toEqual(["get", "post"])
    for (const r of routes) expect(r.auth).toBe("session")
    const post = doc.paths["/api/v1/agent/webhooks"]!.post
    expect(post.requestBody).toBeDefined()
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403"]))
    expect(JSON.stringify(doc)).toContain("key.access_widened")
  })
})
