/**
 * Key routes over real HTTP (uWS) against PGlite, and against the run's PostgreSQL server when
 * there is one: issue (every field and refusal), list with usage, revoke, PATCH, usage series,
 * access preview and commit, self narrowing, history, limits, embedded wallet, tier snapshot and
 * the admin grant. Every refusal asserts status, code and field/reason, and that nothing was
 * recorded where the spec says so.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { recordUsage } from "../../src/services/keys/KeyRepository.js"
import { addFee } from "../../src/services/accounts/AccountRepository.js"
import { call, type Harness, startHarness } from "../support/accountsHarness.js"
import { LevelScopes } from "../../src/services/keys/Scopes.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const DAY = 86_400_000

const suite = (name: string, databaseUrl: () => Promise<string | undefined>) =>
  describe(name, () => {
    let h: Harness
    const post = (path: string, o: Parameters<typeof call>[3]) => call(h.url, "POST", path, o)
    const get = (path: string, o: Parameters<typeof call>[3]) => call(h.url, "GET", path, o)
    const keyCount = async (accountId: string) =>
      (await h.query<{ n: number }>("SELECT count(*)::int AS n FROM agent_keys WHERE account_id = $1", accountId))[0]!.n
    const issue = async (session: string, body: unknown = {}) => {
      const r = await post("/api/v1/agent/keys", { session, body })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return r.body as { key: string; keyPrefix: string; scopes: string[] }
    }

    beforeAll(async () => {
      h = await startHarness({
        contract: true,
        databaseUrl: await databaseUrl(),
        perAccountWallets: (id) =>
          id.startsWith("acc_") && undelegated.has(id) ? { delegatedChains: [] } : walletsDown.has(id) ? { unavailable: true } : undefined
      })
    }, 60_000)
    afterAll(() => h?.close())
    const undelegated = new Set<string>()
    const walletsDown = new Set<string>()

    it("issues a key with the default scopes and every response field; stores only hash and prefix", async () => {
      const { accountId, session } = await h.newAccount()
      const r = await post("/api/v1/agent/keys", { session, body: { label: "  bot one  " } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({
        success: true,
        scopes: ["account:read", "activity:write", "launch:read", "launch:write"],
        environment: "production",
        rateLimitPerMin: 30,
        dailyLaunchCap: 5,
        launchChains: ["solana"],
        embeddedWallet: "denied",
        issuedCaps: { rateLimitPerMin: 30, dailyLaunchCap: 5 },
        effectiveCaps: { rateLimitPerMin: 30, dailyLaunchCap: 5 },
        raisedBy: null,
        label: "bot one",
        apiBaseUrl: "https://api.example.test"
      })
      expect(r.body.key).toMatch(/^svc_live_[1-9A-HJ-NP-Za-km-z]{52}$/)
      expect(r.body.keyPrefix).toBe(r.body.key.slice(9, 17))
      expect(typeof r.body.checkedAt).toBe("number")
      expect(r.body).not.toHaveProperty("expiresAt")
      expect(r.body).not.toHaveProperty("txLimit")
      const rows = await h.query<Record<string, unknown>>("SELECT * FROM agent_keys WHERE account_id = $1", accountId)
      expect(rows).toHaveLength(1)
      expect(JSON.stringify(rows[0])).not.toContain(r.body.key.slice(17))
      expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/)
      expect(rows[0]!.prefix).toBe(r.body.keyPrefix)
    })

    it("issues test keys, named scopes, expiry, txLimit and embedded-wallet permission", async () => {
      const { session } = await h.newAccount()
      const now = h.nowMs()
      const r = await post("/api/v1/agent/keys", {
        session,
        body: {
          environment: "test",
          scopes: ["swap:write", "transfer:write", "transfer:bound", "lp:write"],
          expiresInDays: 7,
          txLimit: { usdMicros: 5_000_000, reset: "daily" },
          embeddedWallet: "allowed"
        }
      })
      expect(r.status).toBe(200)
      expect(r.body.key).toMatch(/^svc_test_/)
      expect(r.body.scopes).toEqual(["lp:write", "swap:write", "transfer:bound", "transfer:write"])
      expect(r.body.expiresAt).toBeGreaterThanOrEqual(now + 7 * DAY)
      expect(r.body.expiresAt).toBeLessThan(now + 7 * DAY + 60_000)
      expect(r.body.txLimit).toEqual({ usdMicros: 5_000_000, reset: "daily" })
      expect(r.body.embeddedWallet).toBe("allowed")
      const at = await post("/api/v1/agent/keys", { session, body: { expiresAt: now + DAY } })
      expect(at.body.expiresAt).toBe(now + DAY)
    })

    it("refuses every malformed issue field, naming it, and records nothing", async () => {
      const { accountId, session } = await h.newAccount()
      const cases: Array<[unknown, string]> = [
        [{ environment: "staging" }, "environment"],
        [{ scopes: ["launch:write", "admin:all"] }, "scopes"],
        [{ scopes: [] }, "scopes"],
        [{ scopes: "launch:write" }, "scopes"],
        [{ scopes: ["transfer:bound"] }, "scopes"],
        [{ scopes: ["entitlement:read"] }, "scopes"],
        [{ label: "   " }, "label"],
        [{ label: "x".repeat(65) }, "label"],
        [{ label: 7 }, "label"],
        [{ expiresInDays: 0 }, "expiresInDays"],
        [{ expiresInDays: 366 }, "expiresInDays"],
        [{ expiresInDays: 1.5 }, "expiresInDays"],
        [{ expiresInDays: 3, expiresAt: h.nowMs() + DAY }, "expiresAt"],
        [{ expiresAt: h.nowMs() - 1 }, "expiresAt"],
        [{ expiresAt: "tomorrow" }, "expiresAt"],
        [{ txLimit: { usdMicros: 0, reset: "daily" } }, "txLimit.usdMicros"],
        [{ txLimit: { usdMicros: 10, reset: "hourly" } }, "txLimit.reset"],
        [{ txLimit: 5 }, "txLimit"],
        [{ embeddedWallet: "yes" }, "embeddedWallet"],
        [[1, 2], "body"]
      ]
      for (const [body, field] of cases) {
        const r = await post("/api/v1/agent/keys", { session, body })
        expect([r.status, r.body.error?.code, r.body.error?.field], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED", field])
      }
      // 64 characters after trimming is accepted; a bad ref never blocks issuance.
      expect((await post("/api/v1/agent/keys", { session, body: { label: ` ${"é".repeat(64)} `, ref: "no such code!" } })).status).toBe(200)
      expect(await keyCount(accountId)).toBe(1)
    })

    it("attributes a referral once for a new account", async () => {
      const referrer = await h.newAccount()
      const [{ referral_code }] = (await h.query<{ referral_code: string }>("SELECT referral_code FROM accounts WHERE id = $1", referrer.accountId)) as [
        { referral_code: string }
      ]
      const { accountId, session } = await h.newAccount()
      await issue(session, { ref: referral_code })
      const rows = await h.query<{ referred_by: string }>("SELECT referred_by FROM accounts WHERE id = $1", accountId)
      expect(rows[0]!.referred_by).toBe(referrer.accountId)
    })

    it("refuses issuance while agent features are off (403) and without delegation", async () => {
      const off = await h.newAccount({ agentEnabled: false })
      const r = await post("/api/v1/agent/keys", { session: off.session, body: {} })
      expect([r.status, r.body.error.code]).toEqual([403, "VALIDATION_FAILED"])
      const nd = await h.newAccount()
      undelegated.add(nd.accountId)
      const r2 = await post("/api/v1/agent/keys", { session: nd.session, body: {} })
      expect([r2.status, r2.body.error.code]).toEqual([403, "AGENT_WALLET_NOT_DELEGATED"])
      expect(await keyCount(off.accountId)).toBe(0)
      expect(await keyCount(nd.accountId)).toBe(0)
    })

    it("answers KEY_ISSUANCE_FAILED (503, retryable) when the wallet side is unreachable, and issues nothing", async () => {
      const a = await h.newAccount()
      walletsDown.add(a.accountId)
      const r = await post("/api/v1/agent/keys", { session: a.session, body: { label: "later" } })
      expect([r.status, r.body.error.code, r.body.error.retryable]).toEqual([503, "KEY_ISSUANCE_FAILED", true])
      expect(await keyCount(a.accountId)).toBe(0)
      walletsDown.delete(a.accountId)
      // The same request succeeds once the dependency is back.
      expect((await post("/api/v1/agent/keys", { session: a.session, body: { label: "later" } })).status).toBe(200)
      expect(await keyCount(a.accountId)).toBe(1)
    })

    it("refuses the 13th active key; revoked and expired keys do not count", async () => {
      const { accountId, session } = await h.newAccount()
      const keys = await Promise.all(Array.from({ length: 12 }, () => issue(session)))
      const r = await post("/api/v1/agent/keys", { session, body: {} })
      expect([r.status, r.body.error.code, r.body.error.message]).toEqual([400, "VALIDATION_FAILED", "Active key limit reached (max 12 active keys)"])
      expect(await keyCount(accountId)).toBe(12)
      await call(h.url, "DELETE", `/api/v1/agent/keys/${keys[0]!.keyPrefix}`, { session })
      await h.query("UPDATE agent_keys SET expires_at = now() - interval '1 second' WHERE prefix = $1", keys[1]!.keyPrefix)
      await issue(session)
      await issue(session)
      expect((await post("/api/v1/agent/keys", { session, body: {} })).status).toBe(400)
    })

    it("holds the 12-key limit under concurrent issuance", async () => {
      const { accountId, session } = await h.newAccount()
      const results = await Promise.all(Array.from({ length: 16 }, () => post("/api/v1/agent/keys", { session, body: {} })))
      expect(results.filter((r) => r.status === 200)).toHaveLength(12)
      expect(await keyCount(accountId)).toBe(12)
    })

    it("management routes refuse agent keys", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session)
      for (const [method, path] of [
        ["POST", "/api/v1/agent/keys"],
        ["GET", "/api/v1/agent/keys"],
        ["DELETE", `/api/v1/agent/keys/${k.keyPrefix}`],
        ["GET", `/api/v1/agent/keys/${k.keyPrefix}/usage`]
      ] as const) {
        const viaHeader = await call(h.url, method, path, { apiKey: k.key, ...(method === "POST" ? { body: {} } : {}) })
        expect([viaHeader.status, viaHeader.body.error.code]).toEqual([401, "UNAUTHORIZED"])
        expect(viaHeader.body.error.message).toContain("Agent keys cannot use this route")
        const viaBearer = await call(h.url, method, path, { bearer: k.key, ...(method === "POST" ? { body: {} } : {}) })
        expect(viaBearer.status).toBe(401)
      }
      expect((await get("/api/v1/agent/keys", {})).status).toBe(401)
      expect((await get("/api/v1/agent/keys", { session: "svc_ses_" + "1".repeat(52) })).status).toBe(401)
    })

    it("lists every key, revoked included, with usage and usageSince", async () => {
      const { accountId, session } = await h.newAccount()
      const a = await issue(session, { label: "a" })
      const b = await issue(session)
      await call(h.url, "DELETE", `/api/v1/agent/keys/${b.keyPrefix}`, { session })
      const [{ id }] = (await h.query<{ id: string }>("SELECT id FROM agent_keys WHERE prefix = $1", a.keyPrefix)) as [{ id: string }]
      const now = h.nowMs()
      await h.run(
        Effect.gen(function* () {
          yield* recordUsage({ keyId: id, atMs: now, usdMicros: 1_500_000, trades: 2, launches: 1 })
          yield* recordUsage({ keyId: id, atMs: now - 40 * DAY, usdMicros: 100, trades: 1, launches: 1 })
          // Before metering started: not recorded.
          expect(yield* recordUsage({ keyId: id, atMs: Date.UTC(2026, 7, 14), usdMicros: 999, trades: 1, launches: 1 })).toBe(false)
        })
      )
      const r = await get("/api/v1/agent/keys", { session })
      expect(r.status).toBe(200)
      expect(r.body.usageSince).toBe("2026-08-15")
      expect(r.body.keys).toHaveLength(2)
      const rowA = r.body.keys.find((k: { keyPrefix: string }) => k.keyPrefix === a.keyPrefix)
      const rowB = r.body.keys.find((k: { keyPrefix: string }) => k.keyPrefix === b.keyPrefix)
      expect(rowA).toMatchObject({ label: "a", status: "active", revokedAt: null, mintedByDevicePrefix: null, launchChains: ["solana"] })
      expect(rowA.usage).toEqual({
        todayUsdMicros: 1_500_000,
        weekUsdMicros: 1_500_000,
        monthUsdMicros: 1_500_000,
        lifetimeUsdMicros: 1_500_100,
        days30UsdMicros: 1_500_000,
        tradeCount30: 2,
        launchCount30: 1,
        lifetimeLaunches: 2
      })
      expect(rowB).not.toHaveProperty("label")
      expect(rowB.status).toBe("revoked")
      expect(typeof rowB.revokedAt).toBe("number")
      expect(JSON.stringify(r.body)).not.toContain(a.key)
      void accountId
    })

    it("revokes: unknown or foreign prefix 404, idempotent, the key stops at once", async () => {
      const { session } = await h.newAccount()
      const other = await h.newAccount()
      const k = await issue(session)
      const foreign = await issue(other.session)
      expect((await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: k.key })).status).toBe(200)
      const unknown = await call(h.url, "DELETE", "/api/v1/agent/keys/ZZZZZZZZ", { session })
      expect([unknown.status, unknown.body.error.code]).toEqual([404, "VALIDATION_FAILED"])
      const cross = await call(h.url, "DELETE", `/api/v1/agent/keys/${foreign.keyPrefix}`, { session })
      expect(cross.status).toBe(404)
      const r1 = await call(h.url, "DELETE", `/api/v1/agent/keys/${k.keyPrefix}`, { session })
      const r2 = await call(h.url, "DELETE", `/api/v1/agent/keys/${k.keyPrefix}`, { session })
      expect(r1.status).toBe(200)
      expect(r2.body.revokedAt).toBe(r1.body.revokedAt)
      const after = await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: k.key })
      expect([after.status, after.body.error.code]).toEqual([401, "UNAUTHORIZED"])
      expect((await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: foreign.key })).status).toBe(200)
    })

    it("PATCH takes exactly one of label, avatar, txLimit, clearTxLimit", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session, { label: "old" })
      const patch = (body: unknown) => call(h.url, "PATCH", `/api/v1/agent/keys/${k.keyPrefix}`, { session, body })
      for (const [body, field] of [
        [{ label: "x", avatar: "y" }, "avatar"],
        [{}, "body"],
        [{ expiresAt: h.nowMs() + DAY }, "expiresAt"],
        [{ scopes: ["launch:write"] }, "scopes"],
        [{ label: "" }, "label"],
        [{ clearTxLimit: false }, "clearTxLimit"],
        [{ txLimit: { usdMicros: -1, reset: "never" } }, "txLimit.usdMicros"]
      ] as const) {
        const r = await patch(body)
        expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED", field])
      }
      expect((await patch({ label: "new" })).body.key.label).toBe("new")
      expect((await patch({ avatar: "🤖" })).body.key.avatar).toBe("🤖")
      expect((await patch({ txLimit: { usdMicros: 10, reset: "monthly" } })).body.key.txLimit).toEqual({ usdMicros: 10, reset: "monthly" })
      const cleared = await patch({ clearTxLimit: true })
      expect(cleared.body.key.txLimit).toBeNull()
      expect(cleared.body.key.label).toBe("new")
      expect((await call(h.url, "PATCH", "/api/v1/agent/keys/ZZZZZZZZ", { session, body: { label: "z" } })).status).toBe(404)
    })

    it("pause and resume through PATCH {paused} (spec 2.1 `paused` in key views): the row shows it, a paused key still narrows its own access (4.1: `keys/self/access` is not stopped by pauses), reads its limits and tier, tightens its limits", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session)
      const patch = (body: unknown, prefix = k.keyPrefix) => call(h.url, "PATCH", `/api/v1/agent/keys/${prefix}`, { session, body })
      for (const [body, field] of [
        [{ paused: "yes" }, "paused"],
        [{ paused: null }, "paused"],
        [{ paused: true, label: "x" }, "label"]
      ] as const) {
        const r = await patch(body)
        expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED", field])
      }
      const listed = async () => ((await get("/api/v1/agent/keys", { session })).body.keys as Array<{ keyPrefix: string; paused: boolean }>).find((x) => x.keyPrefix === k.keyPrefix)!
      expect((await listed()).paused).toBe(false)
      const paused = await patch({ paused: true })
      expect([paused.status, paused.body.key.paused]).toEqual([200, true])
      expect((await listed()).paused).toBe(true)
      // An agent key cannot pause or resume (a key management route: session or device only).
      const byKey = await call(h.url, "PATCH", `/api/v1/agent/keys/${k.keyPrefix}`, { apiKey: k.key, body: { paused: false } })
      expect([byKey.status, byKey.body.error.code]).toEqual([401, "UNAUTHORIZED"])

      // What a paused key may still do here: read, narrow itself, tighten its own caps.
      expect((await get("/api/v1/agent/keys/self/limits", { apiKey: k.key })).status).toBe(200)
      expect((await get("/api/v1/agent/tier", { apiKey: k.key })).status).toBe(200)
      const tightened = await call(h.url, "PUT", "/api/v1/agent/keys/self/limits", { apiKey: k.key, body: [{ asset: "sol", maxPerTxRaw: "1000" }] })
      expect(tightened.status, JSON.stringify(tightened.body)).toBe(200)
      const preview = await call(h.url, "PUT", "/api/v1/agent/keys/self/access", { apiKey: k.key, body: { access: "read", dryRun: true } })
      expect(preview.status, JSON.stringify(preview.body)).toBe(200)
      const narrowed = await call(h.url, "PUT", "/api/v1/agent/keys/self/access", {
        apiKey: k.key,
        body: { access: "read", expectScopes: preview.body.from.scopes }
      })
      expect([narrowed.status, narrowed.body.direction, narrowed.body.to.scopes]).toEqual([200, "narrow", ["account:read"]])

      const resumed = await patch({ paused: false })
      expect([resumed.status, resumed.body.key.paused]).toEqual([200, false])
      expect((await listed()).paused).toBe(false)

      // A revoked key is neither paused nor resumed (409, like an access change); its label can still change.
      await call(h.url, "DELETE", `/api/v1/agent/keys/${k.keyPrefix}`, { session })
      const onRevoked = await patch({ paused: true })
      expect([onRevoked.status, onRevoked.body.error.code]).toEqual([409, "VALIDATION_FAILED"])
      expect((await patch({ label: "gone" })).status).toBe(200)
      expect((await h.query<{ paused: boolean }>("SELECT paused FROM agent_keys WHERE prefix = $1", k.keyPrefix))[0]!.paused).toBe(false)
    })

    it("serves a zero-filled ascending usage series with days clamped 1 to 90", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session)
      const [{ id }] = (await h.query<{ id: string }>("SELECT id FROM agent_keys WHERE prefix = $1", k.keyPrefix)) as [{ id: string }]
      const now = h.nowMs()
      await h.run(recordUsage({ keyId: id, atMs: now - 2 * DAY, usdMicros: 42, trades: 1, launches: 0 }))
      const usage = (q: string) => get(`/api/v1/agent/keys/${k.keyPrefix}/usage${q}`, { session })
      const d = await usage("")
      expect(d.body.series).toHaveLength(30)
      expect(d.body.series.map((x: { day: string }) => x.day)).toEqual([...d.body.series.map((x: { day: string }) => x.day)].sort())
      expect(d.body.series.at(-1).day).toBe(new Date(now).toISOString().slice(0, 10))
      expect(d.body.series.at(-3)).toMatchObject({ usdMicros: 42, tradeCount: 1 })
      expect(d.body.series.at(-1)).toMatchObject({ usdMicros: 0, tradeCount: 0, launchCount: 0 })
      expect((await usage("?days=0")).body.series).toHaveLength(1)
      expect((await usage("?days=500")).body.series).toHaveLength(90)
      expect((await usage("?days=abc")).body.error.field).toBe("days")
    })

    it("access: preview writes nothing; commit needs expectScopes; stale is 409 with current scopes", async () => {
      const { accountId, session } = await h.newAccount()
      const k = await issue(session)
      const put = (body: unknown) => call(h.url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/access`, { session, body })
      const before = await h.events()
      const preview = await put({ access: "readwritetransfer", dryRun: true })
      expect(preview.status).toBe(200)
      expect(preview.body).toMatchObject({
        success: true,
        dryRun: true,
        keyPrefix: k.keyPrefix,
        direction: "widen",
        from: { access: null, scopes: k.scopes },
        to: { access: "readwritetransfer", scopes: LevelScopes.readwritetransfer },
        added: ["swap:write", "transfer:bound", "transfer:write"],
        removed: []
      })
      expect(preview.body.warnings.map((w: { code: string }) => w.code)).toEqual(["MOVES_FUNDS", "LINKED_TRANSFER_NEEDS_LIMITS"])
      expect(preview.body.effects.linkedTransferReady).toEqual({ txLimit: false, assets: { sol: false, usdc: false, svc: false } })
      expect(preview.body).not.toHaveProperty("changeId")
      expect((await h.query("SELECT 1 FROM agent_key_access_changes WHERE account_id = $1", accountId)).length).toBe(0)
      expect(await h.events()).toHaveLength(before.length)

      const missing = await put({ access: "readwritetransfer" })
      expect([missing.status, missing.body.error.code, missing.body.error.field]).toEqual([400, "VALIDATION_FAILED", "expectScopes"])
      const bad = await put({ access: "admin", dryRun: true })
      expect([bad.status, bad.body.error.field]).toEqual([400, "access"])
      const stale = await put({ access: "readwritetransfer", expectScopes: ["account:read"] })
      expect([stale.status, stale.body.error.code]).toEqual([409, "KEY_ACCESS_STALE"])
      expect(stale.body.error.currentScopes).toEqual(k.scopes)
      expect((await h.query("SELECT 1 FROM agent_key_access_changes WHERE account_id = $1", accountId)).length).toBe(0)

      const commit = await put({ access: "read-write-transfer", expectScopes: [...preview.body.from.scopes].reverse() })
      expect(commit.status).toBe(200)
      expect(commit.body).toMatchObject({ dryRun: false, direction: "widen", to: { access: "readwritetransfer" } })
      expect(typeof commit.body.changeId).toBe("string")
      expect(typeof commit.body.at).toBe("number")
      const events = (await h.events()).slice(before.length)
      expect(events).toEqual([
        {
          accountId,
          event: "key.access_widened",
          data: {
            changeId: commit.body.changeId,
            keyPrefix: k.keyPrefix,
            label: null,
            from: preview.body.from,
            to: preview.body.to,
            actor: "session",
            at: commit.body.at
          }
        }
      ])
      const history = await get(`/api/v1/agent/keys/${k.keyPrefix}/access-changes`, { session })
      expect(history.body.changes).toEqual([
        { changeId: commit.body.changeId, at: commit.body.at, direction: "widen", from: preview.body.from, to: preview.body.to, actor: "session" }
      ])
      expect((await call(h.url, "PUT", "/api/v1/agent/keys/ZZZZZZZZ/access", { session, body: { access: "read", dryRun: true } })).status).toBe(404)
    })

    it("a key narrows itself (effective on its next request) but never widens; revoked and expired keys answer 409", async () => {
      const { accountId, session } = await h.newAccount()
      const k = await issue(session, { scopes: LevelScopes.readwrite })
      const self = (body: unknown) => call(h.url, "PUT", "/api/v1/agent/keys/self/access", { apiKey: k.key, body })
      const widen = await self({ access: "readwritetransfer", dryRun: true })
      expect([widen.status, widen.body.error.code]).toEqual([403, "LOOSEN_REQUIRES_SESSION"])
      const narrow = await self({ access: "read", expectScopes: LevelScopes.readwrite })
      expect(narrow.status).toBe(200)
      expect(narrow.body).toMatchObject({ direction: "narrow", removed: ["activity:write", "launch:read", "launch:write", "swap:write"], to: { scopes: ["account:read"] } })
      const ev = (await h.events()).filter((e) => e.accountId === accountId)
      expect(ev.map((e) => [e.event, e.data.actor])).toEqual([["key.access_narrowed", "agent"]])
      const history = await get(`/api/v1/agent/keys/${k.keyPrefix}/access-changes?limit=1`, { session })
      expect(history.body.changes[0]).toMatchObject({ actor: "agent", actorKeyPrefix: k.keyPrefix, direction: "narrow" })
      const back = await self({ access: "readwrite", expectScopes: ["account:read"] })
      expect(back.body.error.code).toBe("LOOSEN_REQUIRES_SESSION")
      expect((await h.query<{ scopes: string[] }>("SELECT scopes FROM agent_keys WHERE prefix = $1", k.keyPrefix))[0]!.scopes).toEqual(["account:read"])
      for (const q of ["?limit=0", "?limit=101", "?limit=x"]) {
        expect((await get(`/api/v1/agent/keys/${k.keyPrefix}/access-changes${q}`, { session })).body.error.field).toBe("limit")
      }

      const revoked = await issue(session)
      await call(h.url, "DELETE", `/api/v1/agent/keys/${revoked.keyPrefix}`, { session })
      const r = await call(h.url, "PUT", `/api/v1/agent/keys/${revoked.keyPrefix}/access`, { session, body: { access: "read", dryRun: true } })
      expect([r.status, r.body.error.code, r.body.error.message]).toEqual([409, "VALIDATION_FAILED", "Key has been revoked"])
      const expired = await issue(session)
      await h.query("UPDATE agent_keys SET expires_at = now() - interval '1 second' WHERE prefix = $1", expired.keyPrefix)
      const e = await call(h.url, "PUT", `/api/v1/agent/keys/${expired.keyPrefix}/access`, { session, body: { access: "read", dryRun: true } })
      expect([e.status, e.body.error.message]).toEqual([409, "Key has expired"])
    })

    it("a partner key cannot change level", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session)
      await h.query(`UPDATE agent_keys SET scopes = '["account:read","entitlement:read"]'::jsonb WHERE prefix = $1`, k.keyPrefix)
      const r = await call(h.url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/access`, { session, body: { access: "read", dryRun: true } })
      expect([r.status, r.body.error.code]).toEqual([409, "KEY_ACCESS_PARTNER_KEY"])
    })

    it("limits: validated, owner sets and clears, a key only tightens, self/limits reads", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session)
      const put = (o: { session?: string; apiKey?: string }, body: unknown, prefix = k.keyPrefix) =>
        call(h.url, "PUT", `/api/v1/agent/keys/${prefix}/limits`, { ...o, body })
      for (const [body, field] of [
        [[{ asset: "sol", maxPerTxRaw: "0" }], "[0].maxPerTxRaw"],
        [[{ asset: "sol", maxPerTxRaw: "1" }, { asset: "sol", maxPerTxRaw: "2" }], "[1].asset"],
        [[{ asset: "btc", maxPerTxRaw: "1" }], "[0].asset"],
        [[{ asset: "usdc", maxPerTxRaw: 5 }], "[0].maxPerTxRaw"],
        [[{ asset: "usdc", maxPerTxRaw: "01" }], "[0].maxPerTxRaw"],
        [{ asset: "sol" }, "body"]
      ] as const) {
        const r = await put({ session }, body)
        expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED", field])
      }
      const self = () => call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: k.key })
      expect((await self()).body).toEqual({ success: true, keyLimits: null })
      const set = await put({ session }, [{ asset: "usdg", maxPerTxRaw: "5" }, { asset: "sol", maxPerTxRaw: "1000" }])
      expect(set.body.keyLimits).toEqual([{ asset: "sol", maxPerTxRaw: "1000" }, { asset: "usdg", maxPerTxRaw: "5" }])
      expect((await self()).body.keyLimits).toEqual(set.body.keyLimits)

      const tighter = [{ asset: "sol", maxPerTxRaw: "999" }, { asset: "eth", maxPerTxRaw: "1" }, { asset: "usdg", maxPerTxRaw: "5" }]
      expect((await put({ apiKey: k.key }, tighter)).status).toBe(200)
      for (const looser of [
        [{ asset: "sol", maxPerTxRaw: "1000" }, { asset: "usdg", maxPerTxRaw: "5" }, { asset: "eth", maxPerTxRaw: "1" }],
        [{ asset: "sol", maxPerTxRaw: "999" }, { asset: "usdg", maxPerTxRaw: "5" }],
        []
      ]) {
        const r = await put({ apiKey: k.key }, looser)
        expect([r.status, r.body.error.code]).toEqual([403, "LOOSEN_REQUIRES_SESSION"])
      }
      expect((await self()).body.keyLimits).toEqual(tighter)
      const other = await issue(session)
      expect((await put({ apiKey: k.key }, tighter, other.keyPrefix)).status).toBe(404)
      expect((await call(h.url, "PUT", "/api/v1/agent/keys/self/limits", { apiKey: k.key, body: tighter.slice(0, 3) })).status).toBe(200)
      expect((await put({ session }, [])).body.keyLimits).toBeNull()
      expect((await self()).body.keyLimits).toBeNull()
    })

    it("sets the embedded-wallet permission", async () => {
      const { session } = await h.newAccount()
      const k = await issue(session)
      const r = await call(h.url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/embedded-wallet`, { session, body: { embeddedWallet: "allowed" } })
      expect(r.body).toEqual({ success: true, keyPrefix: k.keyPrefix, embeddedWallet: "allowed" })
      const bad = await call(h.url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/embedded-wallet`, { session, body: { embeddedWallet: "maybe" } })
      expect([bad.status, bad.body.error.field]).toEqual([400, "embeddedWallet"])
    })

    it("tier snapshot: every field; Max by admin grant with expiry; maxExpired afterwards; never believer", async () => {
      const admin = await h.newAccount({ isAdmin: true })
      const { accountId, session } = await h.newAccount()
      const k = await issue(session)
      await h.run(addFee(accountId, "solana", "sol", 12345678901234567890n))
      const snap = await get("/api/v1/agent/tier", { apiKey: k.key })
      expect(snap.status).toBe(200)
      expect(snap.body).toMatchObject({
        success: true,
        tier: "free",
        liveTier: "free",
        stakedCndl: "0",
        heldCndl: "0",
        thresholds: { minStakedCndl: 500000, minHeldCndl: 1000000, graceMs: 172800000 },
        grace: { active: false, startedAt: null, endsAt: null },
        maxTierExpiresAt: null,
        maxExpired: false,
        feeBps: 100,
        feeTotals: [{ chain: "solana", quoteAsset: "sol", feeRawSum: "12345678901234567890", count: 1 }],
        maxPricing: { usdMonthly: "200", promoMaxDays: 30 },
        proPricing: { usdMonthly: "50" },
        tierCaps: { requestsPerMin: 30, launchesPerDay: 5 }
      })
      expect(snap.body.planTable.map((p: { id: string }) => p.id)).toEqual(["free", "pro", "max"])
      expect(snap.body).not.toHaveProperty("maxExpiredAt")

      const notAdmin = await post("/api/v1/admin/agent-tier", { session, body: { accountId, tier: "max", days: 1 } })
      expect([notAdmin.status, notAdmin.body.error.code]).toEqual([403, "ADMIN_REQUIRED"])
      const viaKey = await post("/api/v1/admin/agent-tier", { apiKey: k.key, body: { accountId, tier: "max", days: 1 } })
      expect(viaKey.status).toBe(401)
      const noExpiry = await post("/api/v1/admin/agent-tier", { session: admin.session, body: { accountId, tier: "max" } })
      expect([noExpiry.status, noExpiry.body.error.field]).toEqual([400, "expiresAt"])
      const unknown = await post("/api/v1/admin/agent-tier", { session: admin.session, body: { accountId: "acc_nope", tier: "max", days: 1 } })
      expect(unknown.status).toBe(404)
      const expiresAt = h.nowMs() + 10 * 60_000
      const grant = await post("/api/v1/admin/agent-tier", { session: admin.session, body: { accountId, tier: "max", expiresAt, source: "promo" } })
      expect(grant.body).toMatchObject({ success: true, maxTierExpiresAt: expiresAt, maxExpired: false })
      h.clock.offsetMs += 5_000 // past the key cache TTL
      const max = await get("/api/v1/agent/tier", { session })
      expect(max.body).toMatchObject({ tier: "max", liveTier: "max", maxTierExpiresAt: expiresAt, feeBps: 25, tierCaps: { requestsPerMin: 600 } })
      // The key's effective caps follow the plan; issued caps stay.
      const list = await get("/api/v1/agent/keys", { session })
      expect(list.body.keys[0]).toMatchObject({ issuedCaps: { rateLimitPerMin: 30 }, effectiveCaps: { rateLimitPerMin: 600, dailyLaunchCap: 1000 }, raisedBy: "max" })

      h.clock.offsetMs += 11 * 60_000
      const lapsed = await get("/api/v1/agent/tier", { apiKey: k.key })
      expect(lapsed.body).toMatchObject({
        tier: "free",
        maxTierExpiresAt: null,
        maxExpired: true,
        maxExpiredAt: expiresAt,
        maxExpiredSource: "promo",
        renewalUrl: "https://example.test/pricing"
      })
      expect(lapsed.body.maxExpiredNotice).toContain("Max ended")
      expect(JSON.stringify([snap.body, max.body, lapsed.body])).not.toContain("believer")
    })
  })

suite("key routes on PGlite", async () => undefined)

const serverUrl = postgresUrl()
describe.skipIf(serverUrl === undefined)(`key routes on PostgreSQL${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  suite("server", () => freshPostgresDatabase(serverUrl!))
})
