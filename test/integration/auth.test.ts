/**
 * Authentication and limits over real HTTP (uWS) with PGlite: `x-api-key` parsing and the
 * UNAUTHORIZED / KEY_EXPIRED order, SCOPE_MISSING, TIER_REQUIRED (Pro by holding read live),
 * test-key rules, per-key requests per minute (higher of key row and plan) with RATE_LIMITED and
 * Retry-After, the upload limit, owner bearer rules (device tokens, sessions), and the
 * market-data bearer (production keys only; anything else 401 `{"error": "invalid api key"}`).
 * Routes under `/test/` are mounted here with the same authenticators the real routes use.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "../../api/Http.js"
import type { AccountApi } from "../../api/routes/AccountRoutes.js"
import type { RouteDef } from "../../api/Router.js"
import { call, type Harness, startHarness } from "../support/accountsHarness.js"
import { eventually } from "../support/eventually.js"

const HOLDER = "Ho1der1111111111111111111111111111111111111"
const testRoutes = (api: AccountApi): ReadonlyArray<RouteDef> => {
  const route = (path: string, handler: RouteDef["handler"]): RouteDef => ({
    method: "GET",
    path,
    operationId: path,
    summary: path,
    tags: ["test"],
    auth: "agentKey",
    headers: ["x-api-key", "authorization"],
    responses: { 200: { description: "ok" } },
    handler
  })
  const ok = (p: { key: { prefix: string }; tier: string }) => json(200, { ok: true, keyPrefix: p.key.prefix, tier: p.tier })
  return [
    route("/test/launch", (req) => Effect.map(api.agentAuth.authenticate(req.headers, { scopes: ["launch:write"] }), ok)),
    route("/test/staking", (req) => Effect.map(api.agentAuth.authenticate(req.headers, { anyScope: ["account:read", "launch:write"] }), ok)),
    route("/test/self-signed", (req) => Effect.map(api.agentAuth.authenticate(req.headers, { scopes: ["launch:write"], minTier: "pro" }), ok)),
    route("/test/atomic", (req) => Effect.map(api.agentAuth.authenticate(req.headers, { testKeys: "forbid" }), ok)),
    route("/test/upload", (req) => Effect.map(api.agentAuth.authenticate(req.headers, { upload: true }), ok)),
    route("/test/read-while-paused", (req) => Effect.map(api.agentAuth.authenticate(req.headers, { scopes: ["launch:read"], whilePaused: "allow" }), ok)),
    route("/v1/test", (req) => api.dataAuth.withBearer((p) => Effect.succeed(json(200, { accountId: p.accountId, tier: p.tier })))(req.headers))
  ]
}

describe("authentication and limits", () => {
  let h: Harness
  const holderAccounts = new Set<string>()
  beforeAll(async () => {
    h = await startHarness({
      extraRoutes: testRoutes,
      perAccountWallets: (id) => (holderAccounts.has(id) ? { solanaWallets: [HOLDER] } : undefined),
      held: { [HOLDER]: 1_000_000n * 10n ** 6n }
    })
  }, 60_000)
  afterAll(() => h?.close())

  const issue = async (session: string, body: unknown = {}) => {
    const r = await call(h.url, "POST", "/api/v1/agent/keys", { session, body })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { key: string; keyPrefix: string }
  }
  const hit = (path: string, apiKey?: string, extra: { bearer?: string } = {}) => call(h.url, "GET", path, { ...(apiKey !== undefined ? { apiKey } : {}), ...extra })

  it("UNAUTHORIZED for missing, malformed, unknown, wrong-secret and revoked keys", async () => {
    const { session } = await h.newAccount()
    const k = await issue(session)
    const wrongSecret = k.key.slice(0, -1) + (k.key.endsWith("a") ? "b" : "a")
    const unknown = "svc_live_" + "1".repeat(52)
    for (const key of [undefined, "", "nonsense", "svc_live_short", k.key + "x", "svc_ses_" + k.key.slice(9), unknown, wrongSecret]) {
      const r = await hit("/test/launch", key)
      expect([r.status, r.body.error.code], String(key)).toEqual([401, "UNAUTHORIZED"])
    }
    expect((await hit("/test/launch", k.key)).status).toBe(200)
    // lastUsedAt is written off the request path.
    const used = await eventually(
      async () => {
        const rows = await h.query<{ last_used_at: Date | null }>("SELECT last_used_at FROM agent_keys WHERE prefix = $1", k.keyPrefix)
        return rows[0]?.last_used_at == null ? undefined : rows
      },
      { what: "lastUsedAt to be written", deadlineMs: 5_000, intervalMs: 20 }
    )
    expect(used[0]?.last_used_at).toBeInstanceOf(Date)
    await call(h.url, "DELETE", `/api/v1/agent/keys/${k.keyPrefix}`, { session })
    const revoked = await hit("/test/launch", k.key)
    expect([revoked.status, revoked.body.error.code]).toEqual([401, "UNAUTHORIZED"])
  })

  it("KEY_EXPIRED only after the secret verifies", async () => {
    const { session } = await h.newAccount()
    const k = await issue(session, { expiresAt: h.nowMs() + 60_000 })
    expect((await hit("/test/launch", k.key)).status).toBe(200)
    h.clock.offsetMs += 61_000
    try {
      const r = await hit("/test/launch", k.key)
      expect([r.status, r.body.error.code]).toEqual([401, "KEY_EXPIRED"])
      const wrong = await hit("/test/launch", k.key.slice(0, -2) + "11")
      expect([wrong.status, wrong.body.error.code]).toEqual([401, "UNAUTHORIZED"])
    } finally {
      h.clock.offsetMs -= 61_000
    }
  })

  it("SCOPE_MISSING, anyScope, TIER_REQUIRED and TEST_ENVIRONMENT_FORBIDDEN", async () => {
    const { session } = await h.newAccount()
    const read = await issue(session, { scopes: ["account:read"] })
    const r = await hit("/test/launch", read.key)
    expect([r.status, r.body.error.code, r.body.error.scope]).toEqual([403, "SCOPE_MISSING", "launch:write"])
    expect((await hit("/test/staking", read.key)).status).toBe(200)
    const swapOnly = await issue(session, { scopes: ["swap:write"] })
    expect((await hit("/test/staking", swapOnly.key)).body.error.code).toBe("SCOPE_MISSING")

    const write = await issue(session)
    const tier = await hit("/test/self-signed", write.key)
    expect([tier.status, tier.body.error.code]).toEqual([403, "TIER_REQUIRED"])

    const test = await issue(session, { environment: "test" })
    expect((await hit("/test/launch", test.key)).status).toBe(200) // a test key authenticates as the real account
    const atomic = await hit("/test/atomic", test.key)
    expect([atomic.status, atomic.body.error.code]).toEqual([403, "TEST_ENVIRONMENT_FORBIDDEN"])
    expect((await hit("/test/atomic", write.key)).status).toBe(200)
  })

  it("a paused key is refused (403 VALIDATION_FAILED, reason key_paused) on every route that does not allow it, from its next request; resumed, it passes again", async () => {
    const { session } = await h.newAccount()
    const k = await issue(session)
    const other = await issue(session)
    expect((await hit("/test/launch", k.key)).status).toBe(200)
    const pause = (paused: boolean) => call(h.url, "PATCH", `/api/v1/agent/keys/${k.keyPrefix}`, { session, body: { paused } })
    expect((await pause(true)).status).toBe(200)
    const refused = await hit("/test/launch", k.key)
    expect([refused.status, refused.body.error.code, refused.body.error.reason, refused.body.error.retryable]).toEqual([403, "VALIDATION_FAILED", "key_paused", false])
    expect((await hit("/test/atomic", k.key)).body.error.reason).toBe("key_paused")
    // A route that allows it (a read) still answers; the missing scope is still SCOPE_MISSING first.
    expect((await hit("/test/read-while-paused", k.key)).status).toBe(200)
    const read = await issue(session, { scopes: ["account:read"] })
    await call(h.url, "PATCH", `/api/v1/agent/keys/${read.keyPrefix}`, { session, body: { paused: true } })
    expect((await hit("/test/launch", read.key)).body.error.code).toBe("SCOPE_MISSING")
    // Another key of the account is not paused.
    expect((await hit("/test/launch", other.key)).status).toBe(200)
    // The market-data bearer never moves funds: a paused production key still reads there.
    expect((await hit("/v1/test", undefined, { bearer: k.key })).status).toBe(200)
    expect((await pause(false)).status).toBe(200)
    expect((await hit("/test/launch", k.key)).status).toBe(200)
  })

  it("Pro by holding the platform token, read live through the balance reader", async () => {
    const { accountId, session } = await h.newAccount()
    holderAccounts.add(accountId)
    const k = await issue(session)
    const r = await hit("/test/self-signed", k.key)
    expect(r.body).toMatchObject({ ok: true, tier: "pro" })
    const snap = await hit("/api/v1/agent/tier", k.key)
    expect(snap.body).toMatchObject({ tier: "pro", liveTier: "pro", heldCndl: "1000000", stakedCndl: "0", feeBps: 50 })
  })

  it("limits requests per minute per key at the plan's value, with Retry-After", async () => {
    const { session } = await h.newAccount()
    const a = await issue(session)
    const b = await issue(session)
    const results = []
    for (let i = 0; i < 31; i++) results.push(await hit("/test/launch", a.key))
    expect(results.slice(0, 30).every((r) => r.status === 200)).toBe(true)
    const refused = results[30]!
    expect([refused.status, refused.body.error.code]).toEqual([429, "RATE_LIMITED"])
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(refused.body.error.retryable).toBe(true)
    // Per key: the other key of the same account is not limited.
    expect((await hit("/test/launch", b.key)).status).toBe(200)
    // A refused request is not counted; after the window the key works again.
    h.clock.offsetMs += 120_000
    try {
      expect((await hit("/test/launch", a.key)).status).toBe(200)
    } finally {
      h.clock.offsetMs -= 120_000
    }
  })

  it("the effective rate is the higher of the key row and the plan", async () => {
    const { accountId, session } = await h.newAccount()
    const k = await issue(session)
    await h.query("UPDATE agent_keys SET rate_limit_per_min = 40 WHERE prefix = $1", k.keyPrefix) // a row above Free's 30
    h.clock.offsetMs += 5_000 // past the key cache TTL
    try {
      let n = 0
      while ((await hit("/test/launch", k.key)).status === 200 && n < 100) n++
      expect(n).toBe(40)
      void accountId
    } finally {
      h.clock.offsetMs -= 5_000
    }
  })

  it("limits uploads per minute by plan", async () => {
    const { session } = await h.newAccount()
    const k = await issue(session)
    let n = 0
    let last
    while ((last = await hit("/test/upload", k.key)).status === 200 && n < 50) n++
    expect(n).toBe(10)
    expect(last.body.error).toMatchObject({ code: "RATE_LIMITED", limitPerMin: 10 })
  })

  it("owner routes: sessions, expired and revoked sessions, device-only limits", async () => {
    const { accountId, session } = await h.newAccount()
    expect((await call(h.url, "GET", "/api/v1/agent/keys", { session })).status).toBe(200)
    expect((await call(h.url, "GET", "/api/v1/agent/keys", { session: session.slice(0, -1) + (session.endsWith("1") ? "2" : "1") })).status).toBe(401)
    await h.query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE account_id = $1", accountId)
    const expired = await call(h.url, "GET", "/api/v1/agent/keys", { session })
    expect([expired.status, expired.body.error.code]).toEqual([401, "UNAUTHORIZED"])
    const other = await h.newAccount()
    await h.query("UPDATE sessions SET revoked_at = now() WHERE account_id = $1", other.accountId)
    expect((await call(h.url, "GET", "/api/v1/agent/keys", { session: other.session })).status).toBe(401)
  })

  it("market-data bearer: production keys only; a test or bad key is 401 invalid api key", async () => {
    const { accountId, session } = await h.newAccount()
    const prod = await issue(session, { scopes: ["account:read"] })
    const test = await issue(session, { environment: "test" })
    const ok = await hit("/v1/test", undefined, { bearer: prod.key })
    expect(ok.body).toEqual({ accountId, tier: "free" })
    for (const bearer of [test.key, "svc_live_" + "1".repeat(52), session, "garbage"]) {
      const r = await hit("/v1/test", undefined, { bearer })
      expect([r.status, r.body]).toEqual([401, { error: "invalid api key" }])
    }
    const viaHeader = await hit("/v1/test", prod.key)
    expect([viaHeader.status, viaHeader.body]).toEqual([401, { error: "invalid api key" }])
    await call(h.url, "DELETE", `/api/v1/agent/keys/${prod.keyPrefix}`, { session })
    expect((await hit("/v1/test", undefined, { bearer: prod.key })).status).toBe(401)
  })
})
