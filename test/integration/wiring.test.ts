/**
 * The three subsystems wired together as the engine runs them (`Stack.layer` +
 * `accountStackApi`, the same code `src/MainApi.ts` uses), over real HTTP (uWS) and PGlite:
 *
 * - wallet routes authenticate through the real key and owner auth (a key issued by the key
 *   route works on a wallet route; scopes, credential kinds and revocation hold; an owner's plan
 *   comes from the tier service);
 * - the wallet rules find agent keys through the key table (`KeyDirectory`);
 * - keys and tiers read the wallet side (`AccountWallets`: delegation, eligible wallets,
 *   bound TEE wallets, open sign claims) from the wallet provider and tables;
 * - a key access change writes its webhook event into the outbox in the same transaction;
 * - webhook routes take the session only, with agent features and the test-account flag read
 *   from the account.
 *
 * On PGlite and, when there is one, the run's PostgreSQL server.
 *
 * DNS for the public-target check is a fixed table (no network here): `hooks.example.com` is a
 * public address; everything else does not resolve.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { accountStackApi } from "../../api/auth/Adapters.js"
import { serve } from "../../api/Server.js"
import * as Database from "../../src/db/Database.js"
import { applyAgentTier, createAccount, issueSession } from "../../src/services/accounts/Accounts.js"
import { AccountWallets, type AccountWalletsShape } from "../../src/services/accounts/AccountWallets.js"
import { layerTest as fixedBalances } from "../../src/services/accounts/BalanceReader.js"
import { call } from "../support/accountsHarness.js"
import { LevelScopes } from "../../src/services/keys/Scopes.js"
import { WalletProvider, type WalletProviderShape } from "../../src/services/wallets/WalletProvider.js"
import * as Stack from "../../src/services/wiring/Stack.js"
import { makeKeyDirectory } from "../../src/services/wiring/Wiring.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const PUBLIC_HOST = "hooks.example.com"

const suite = (name: string, databaseUrl: () => Promise<string | undefined>) =>
  describe(name, () => {
    let url: string
    let scope: Scope.CloseableScope
    let context: Context.Context<Stack.StackServices | SqlClient.SqlClient>
    let sql: SqlClient.SqlClient
    let provider: WalletProviderShape
    let accountWallets: AccountWalletsShape

    const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))
    const query = <R extends object>(text: string, ...params: ReadonlyArray<unknown>) => run(sql.unsafe<R>(text, params as unknown[]))

    beforeAll(async () => {
      scope = await Effect.runPromise(Scope.make())
      const databaseAt = await databaseUrl()
      // The stack as the engine wires it (`Stack.layerTest`), on PGlite or the server's fresh database.
      const stack = Layer.mergeAll(
        Stack.layerTest({
          balances: fixedBalances({}),
          resolve: async (host) => {
            if (host === PUBLIC_HOST) return [{ address: "93.184.216.34", family: 4 }]
            throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
          }
        }),
        Database.layerTest
      ).pipe(Layer.provide(databaseAt !== undefined ? Layer.succeed(Database.TestDatabaseUrl, databaseAt) : Layer.empty))
      context = await Effect.runPromise(Layer.buildWithScope(stack, scope))
      sql = Context.get(context, SqlClient.SqlClient)
      provider = Context.get(context, WalletProvider)
      accountWallets = Context.get(context, AccountWallets)
      const api = await Effect.runPromise(Effect.provide(accountStackApi({ nowMs: Date.now }), context))
      const server = await Effect.runPromise(
        serve({ name: "wiring-test", host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, routes: api.routes }).pipe(Scope.extend(scope))
      )
      url = server.url
    }, 60_000)

    afterAll(async () => {
      if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
    })

    const newAccount = (o: { plan?: "free" | "pro" | "max"; agentEnabled?: boolean } = {}) =>
      run(
        Effect.gen(function* () {
          const a = yield* createAccount({ plan: o.plan ?? "max", agentEnabled: o.agentEnabled ?? true, isAdmin: false }, Date.now())
          const s = yield* issueSession(a.id, {}, Date.now())
          return { accountId: a.id, session: s.sessionToken }
        })
      )

    const delegate = (accountId: string, chain: "solana" | "evm") =>
      Effect.runPromise(Effect.zipRight(provider.ensureEmbeddedWallet(accountId, chain), provider.setDelegation(accountId, chain, "active")))

    const issue = async (session: string, body: Record<string, unknown> = {}) => {
      const r = await call(url, "POST", "/api/v1/agent/keys", { session, body })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return r.body as { key: string; keyPrefix: string; scopes: string[]; launchChains: string[] }
    }

    const keyId = async (prefix: string) => (await query<{ id: string }>("SELECT id FROM agent_keys WHERE prefix = $1", prefix))[0]!.id

    describe("keys read delegation from the wallet provider", () => {
      it("refuses issuance before delegation, then issues with the delegated chains as launch chains", async () => {
        const { accountId, session } = await newAccount()
        const refused = await call(url, "POST", "/api/v1/agent/keys", { session, body: {} })
        expect(refused.status).toBe(403)
        expect(refused.body.error.code).toBe("AGENT_WALLET_NOT_DELEGATED")
        expect(await query("SELECT 1 FROM agent_keys WHERE account_id = $1", accountId)).toHaveLength(0)

        await delegate(accountId, "solana")
        expect((await issue(session)).launchChains).toEqual(["solana"])
        await delegate(accountId, "evm")
        expect((await issue(session)).launchChains).toEqual(["solana", "hood"])

        // A revoke is read on the very next issuance (nothing cached).
        await Effect.runPromise(provider.setDelegation(accountId, "solana", "revoked"))
        expect((await issue(session)).launchChains).toEqual(["hood"])
      })
    })

    describe("wallet routes over the real authenticators", () => {
      it("a key issued through the key route lists the account's wallets; a session sees the same", async () => {
        const { accountId, session } = await newAccount()
        await delegate(accountId, "solana")
        const { key } = await issue(session, { scopes: LevelScopes.readwrite })
        const asKey = await call(url, "GET", "/api/v1/agent/wallets", { apiKey: key })
        expect(asKey.status, JSON.stringify(asKey.body)).toBe(200)
        expect(asKey.body.embeddedWallets).toEqual([expect.objectContaining({ chain: "solana", delegation: "active" })])
        const asSession = await call(url, "GET", "/api/v1/agent/wallets", { session })
        expect(asSession.body).toEqual(asKey.body)
      })

      it("refuses a missing scope, the wrong credential kind, a bad key and a revoked key", async () => {
        const { accountId, session } = await newAccount()
        await delegate(accountId, "solana")
        const reader = await issue(session, { scopes: LevelScopes.read })
        expect(reader.scopes).toEqual(LevelScopes.read)
        const scopeMissing = await call(url, "POST", "/api/v1/agent/wallets/import/init", {
          apiKey: reader.key,
          body: { chain: "solana", address: "So11111111111111111111111111111111111111112" }
        })
        expect(scopeMissing.status).toBe(403)
        expect(scopeMissing.body.error).toMatchObject({ code: "SCOPE_MISSING", scope: "launch:write" })

        // TEE administration takes a session or device token: an agent key is refused by owner auth.
        const keyOnOwnerRoute = await call(url, "POST", "/api/v1/agent/tee-wallets", { apiKey: reader.key, body: { chain: "solana", keyPrefix: reader.keyPrefix } })
        expect(keyOnOwnerRoute.status).toBe(401)
        expect(keyOnOwnerRoute.body.error.code).toBe("UNAUTHORIZED")
        expect(keyOnOwnerRoute.body.error.message).toContain("Agent keys cannot use this route")

        // The sign relay takes an agent key only.
        const sessionOnSign = await call(url, "POST", "/api/v1/agent/wallets/w_x/sign", { session, body: { claimId: "c", transaction: "AAAA" } })
        expect(sessionOnSign.status).toBe(401)
        expect(sessionOnSign.body.error.message).toContain("takes an agent key")

        const bad = await call(url, "GET", "/api/v1/agent/wallets", { apiKey: "svc_live_" + "1".repeat(52) })
        expect(bad.status).toBe(401)
        expect(bad.body.error.code).toBe("UNAUTHORIZED")

        expect((await call(url, "DELETE", `/api/v1/agent/keys/${reader.keyPrefix}`, { session })).status).toBe(200)
        const revoked = await call(url, "GET", "/api/v1/agent/wallets", { apiKey: reader.key })
        expect(revoked.status).toBe(401)
        expect(revoked.body.error.code).toBe("UNAUTHORIZED")
      })

      it("an owner's plan is the account's live tier (Free refused, Max after a grant)", async () => {
        const { accountId, session } = await newAccount({ plan: "free" })
        const body = { chain: "solana", address: "So11111111111111111111111111111111111111112", signature: "1".repeat(88) }
        const free = await call(url, "POST", "/api/v1/agent/wallets", { session, body })
        expect(free.status).toBe(403)
        expect(free.body.error.code).toBe("TIER_REQUIRED")
        await run(applyAgentTier({ accountId, tier: "max", expiresAtMs: Date.now() + 86_400_000, source: "team" }, Date.now()))
        const max = await call(url, "POST", "/api/v1/agent/wallets", { session, body })
        // Past the plan check now: refused for the proof instead, and nothing was linked.
        expect(max.body.error.code).not.toBe("TIER_REQUIRED")
        expect(max.status).toBeGreaterThanOrEqual(400)
        expect(await query("SELECT 1 FROM wallets WHERE account_id = $1", accountId)).toHaveLength(0)
      })

      it("binds a TEE wallet to a key found through the key table, and only the account's own key", async () => {
        const a = await newAccount()
        const b = await newAccount()
        await delegate(a.accountId, "solana")
        await delegate(b.accountId, "solana")
        const keyA = await issue(a.session, { scopes: LevelScopes.readwrite })
        const keyB = await issue(b.session, { scopes: LevelScopes.readwrite })
        const created = await call(url, "POST", "/api/v1/agent/tee-wallets", { session: a.session, body: { chain: "solana", keyPrefix: keyA.keyPrefix } })
        expect(created.status, JSON.stringify(created.body)).toBe(200)
        expect(created.body.wallet).toMatchObject({ walletKind: "tee", boundKeyPrefix: keyA.keyPrefix })
        const foreign = await call(url, "POST", "/api/v1/agent/tee-wallets", { session: a.session, body: { chain: "solana", keyPrefix: keyB.keyPrefix } })
        expect(foreign.status).toBe(400)
        expect(foreign.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "keyPrefix" })

        // The key side sees the binding (access-change effects read it through AccountWallets).
        const id = await keyId(keyA.keyPrefix)
        expect(await Effect.runPromise(accountWallets.boundTeeWallets(id))).toEqual({ count: 1, sample: [created.body.wallet.address] })
        const preview = await call(url, "PUT", `/api/v1/agent/keys/${keyA.keyPrefix}/access`, { session: a.session, body: { access: "read", dryRun: true } })
        expect(preview.status).toBe(200)
        expect(preview.body.effects.boundTeeWallets).toEqual({ count: 1, sample: [created.body.wallet.address] })
      })
    })

    describe("KeyDirectory over the key table", () => {
      it("answers the account's own key with its stored fields, nothing for another account's", async () => {
        const a = await newAccount()
        const b = await newAccount()
        await delegate(a.accountId, "solana")
        const k = await issue(a.session, { scopes: LevelScopes.read, label: "dir" })
        const directory = makeKeyDirectory(sql)
        const info = await Effect.runPromise(directory.findByPrefix(a.accountId, k.keyPrefix))
        expect(info).toMatchObject({
          keyPrefix: k.keyPrefix,
          accountId: a.accountId,
          label: "dir",
          environment: "production",
          scopes: LevelScopes.read,
          revokedAtMs: null,
          paused: false,
          walletScope: "all",
          spendLimits: null
        })
        expect(await Effect.runPromise(directory.findByPrefix(b.accountId, k.keyPrefix))).toBeUndefined()
      })
    })

    describe("AccountWallets over the wallet side", () => {
      const addr = (n: number) => `Wa11et${String(n).padStart(2, "0")}${"1".repeat(32)}`.slice(0, 44)
      const insertWallet = (accountId: string, id: string, address: string, kind: "linked" | "tee" = "linked", revoked = false) =>
        query(
          `INSERT INTO wallets (id, account_id, chain, address, address_key, kind, bound_key_id, bound_key_prefix, created_at, revoked_at)
           VALUES ($1, $2, 'solana', $3, $3, $4, $5, $6, now(), $7)`,
          id, accountId, address, kind, kind === "tee" ? "key_x" : null, kind === "tee" ? "xxxxxxxx" : null, revoked ? new Date() : null
        )

      it("lists embedded first, then linked oldest first, without revoked or contested wallets", async () => {
        const a = await newAccount()
        const b = await newAccount()
        expect(await Effect.runPromise(accountWallets.hasSolanaWallet(a.accountId))).toBe(false)
        expect(await Effect.runPromise(accountWallets.eligibleSolanaWallets(a.accountId))).toEqual([])
        const embedded = await Effect.runPromise(provider.ensureEmbeddedWallet(a.accountId, "solana"))
        expect(await Effect.runPromise(accountWallets.hasSolanaWallet(a.accountId))).toBe(true)
        await insertWallet(a.accountId, "w_a1", addr(1))
        await insertWallet(a.accountId, "w_a2", addr(2), "tee")
        await insertWallet(a.accountId, "w_a3", addr(3), "linked", true)
        await insertWallet(a.accountId, "w_a4", addr(4))
        expect(await Effect.runPromise(accountWallets.eligibleSolanaWallets(a.accountId))).toEqual([embedded.address, addr(1), addr(2), addr(4)])

        // a links the address of b's embedded wallet: claimed by both, it counts for neither.
        const bEmbedded = await Effect.runPromise(provider.ensureEmbeddedWallet(b.accountId, "solana"))
        expect(await Effect.runPromise(accountWallets.eligibleSolanaWallets(b.accountId))).toEqual([bEmbedded.address])
        await insertWallet(a.accountId, "w_a5", bEmbedded.address)
        expect(await Effect.runPromise(accountWallets.eligibleSolanaWallets(a.accountId))).toEqual([embedded.address, addr(1), addr(2), addr(4)])
        expect(await Effect.runPromise(accountWallets.eligibleSolanaWallets(b.accountId))).toEqual([])
      })

      it("counts the key's open, unexpired sign claims only", async () => {
        const claim = (id: string, state: string, expiresInMs: number) =>
          query(
            `INSERT INTO sign_claims (id, account_id, wallet_id, key_id, chain, purpose, message_hash, required_scopes, state, created_at, expires_at)
             VALUES ($1, 'acc_c', 'w_c', 'key_c', 'solana', 'swap', 'h', '[]'::jsonb, $2, now(), $3)`,
            id, state, new Date(Date.now() + expiresInMs)
          )
        await claim("c1", "open", 60_000)
        await claim("c2", "open", -1_000)
        await claim("c3", "signed", 60_000)
        await claim("c4", "open", 120_000)
        expect(await Effect.runPromise(accountWallets.openSignClaims("key_c"))).toBe(2)
        expect(await Effect.runPromise(accountWallets.openSignClaims("key_none"))).toBe(0)
      })

      it("POST /agent/enable needs a Solana wallet on the wallet side", async () => {
        const { accountId, session } = await newAccount({ agentEnabled: false })
        const refused = await call(url, "POST", "/api/v1/agent/enable", { session, body: { enabled: true } })
        expect(refused.status).toBe(403)
        expect(refused.body.error.field).toBe("enabled")
        await Effect.runPromise(provider.ensureEmbeddedWallet(accountId, "solana"))
        const enabled = await call(url, "POST", "/api/v1/agent/enable", { session, body: { enabled: true } })
        expect(enabled.status, JSON.stringify(enabled.body)).toBe(200)
      })
    })

    describe("key access events go to the webhook outbox", () => {
      it("a self-narrowing lands key.access_narrowed in the outbox with its history row", async () => {
        const { accountId, session } = await newAccount()
        await delegate(accountId, "solana")
        const hook = await call(url, "POST", "/api/v1/agent/webhooks", {
          session,
          body: { url: `https://${PUBLIC_HOST}/hooks`, events: ["key.access_narrowed", "key.access_widened"] }
        })
        expect(hook.status, JSON.stringify(hook.body)).toBe(201)
        const k = await issue(session, { scopes: LevelScopes.readwrite })
        const narrowed = await call(url, "PUT", "/api/v1/agent/keys/self/access", { apiKey: k.key, body: { access: "read", expectScopes: k.scopes } })
        expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200)
        const rows = await query<{ endpoint_id: string; event: string; status: string; data: { changeId: string; keyPrefix: string; actor: string } }>(
          "SELECT endpoint_id, event, status, data FROM webhook_deliveries WHERE account_id = $1",
          accountId
        )
        expect(rows).toHaveLength(1)
        expect(rows[0]).toMatchObject({ endpoint_id: hook.body.id, event: "key.access_narrowed", status: "pending" })
        expect(rows[0]!.data).toMatchObject({ changeId: narrowed.body.changeId, keyPrefix: k.keyPrefix, actor: "agent" })

        const widened = await call(url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/access`, {
          session,
          body: { access: "readwrite", expectScopes: LevelScopes.read }
        })
        expect(widened.status, JSON.stringify(widened.body)).toBe(200)
        const events = await query<{ event: string }>("SELECT event FROM webhook_deliveries WHERE account_id = $1 ORDER BY created_at, event", accountId)
        expect(events.map((e) => e.event).sort()).toEqual(["key.access_narrowed", "key.access_widened"])

        // The delivery list shows them through the webhook route.
        const deliveries = await call(url, "GET", `/api/v1/agent/webhooks/${hook.body.id}/deliveries`, { session })
        expect(deliveries.status).toBe(200)
        expect(deliveries.body.deliveries).toHaveLength(2)
      })

      it("a failing outbox write rolls the access change back: same transaction", async () => {
        const { accountId, session } = await newAccount()
        await delegate(accountId, "solana")
        expect(
          (await call(url, "POST", "/api/v1/agent/webhooks", { session, body: { url: `https://${PUBLIC_HOST}/tx`, events: ["key.access_narrowed"] } })).status
        ).toBe(201)
        const k = await issue(session, { scopes: LevelScopes.readwrite })
        await query(`CREATE OR REPLACE FUNCTION wiring_test_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$ LANGUAGE plpgsql`)
        await query(`CREATE TRIGGER wiring_test_refuse BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION wiring_test_refuse()`)
        try {
          const r = await call(url, "PUT", `/api/v1/agent/keys/${k.keyPrefix}/access`, { session, body: { access: "read", expectScopes: k.scopes } })
          expect(r.status).toBe(503)
          expect(r.body.error.message).toContain("nothing changed")
        } finally {
          await query("DROP TRIGGER wiring_test_refuse ON webhook_deliveries")
        }
        const [row] = await query<{ scopes: string[] }>("SELECT scopes FROM agent_keys WHERE prefix = $1", k.keyPrefix)
        expect([...row!.scopes].sort()).toEqual([...k.scopes].sort())
        expect(await query("SELECT 1 FROM agent_key_access_changes WHERE key_id = $1", await keyId(k.keyPrefix))).toHaveLength(0)
        expect(await query("SELECT 1 FROM webhook_deliveries WHERE account_id = $1", accountId)).toHaveLength(0)
      })
    })

    describe("webhook routes over owner auth", () => {
      const hookBody = (u: string) => ({ url: u, events: ["key.access_narrowed"] })

      it("take a session only: an agent key and a missing credential are 401", async () => {
        const { accountId, session } = await newAccount()
        await delegate(accountId, "solana")
        const k = await issue(session)
        const asKey = await call(url, "POST", "/api/v1/agent/webhooks", { apiKey: k.key, body: hookBody(`https://${PUBLIC_HOST}/a`) })
        expect(asKey.status).toBe(401)
        expect(asKey.body.error.code).toBe("UNAUTHORIZED")
        expect((await call(url, "GET", "/api/v1/agent/webhooks", {})).status).toBe(401)
        expect(await query("SELECT 1 FROM webhook_endpoints WHERE account_id = $1", accountId)).toHaveLength(0)
      })

      it("refuse an account without agent features (403), recording nothing", async () => {
        const { accountId, session } = await newAccount({ agentEnabled: false })
        const r = await call(url, "POST", "/api/v1/agent/webhooks", { session, body: hookBody(`https://${PUBLIC_HOST}/b`) })
        expect(r.status).toBe(403)
        expect(r.body.error.code).toBe("VALIDATION_FAILED")
        expect(await query("SELECT 1 FROM webhook_endpoints WHERE account_id = $1", accountId)).toHaveLength(0)
      })

      it("admit loopback (test flag on) only for an account whose only active keys are test keys", async () => {
        const loopback = hookBody("https://127.0.0.1:9/hook")
        const noKeys = await newAccount()
        const r0 = await call(url, "POST", "/api/v1/agent/webhooks", { session: noKeys.session, body: loopback })
        expect(r0.status).toBe(400)
        expect(r0.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "url", reason: "loopback" })

        const testOnly = await newAccount()
        await delegate(testOnly.accountId, "solana")
        await issue(testOnly.session, { environment: "test" })
        const r1 = await call(url, "POST", "/api/v1/agent/webhooks", { session: testOnly.session, body: loopback })
        expect(r1.status, JSON.stringify(r1.body)).toBe(201)

        const prod = await newAccount()
        await delegate(prod.accountId, "solana")
        await issue(prod.session, { environment: "test" })
        await issue(prod.session)
        const r2 = await call(url, "POST", "/api/v1/agent/webhooks", { session: prod.session, body: loopback })
        expect(r2.status).toBe(400)
        expect(r2.body.error.reason).toBe("loopback")
        expect(await query("SELECT 1 FROM webhook_endpoints WHERE account_id = $1", prod.accountId)).toHaveLength(0)
      })
    })
  })

suite("wiring on PGlite", async () => undefined)

const serverUrl = postgresUrl()
describe.skipIf(serverUrl === undefined)(`wiring on PostgreSQL${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  suite("server", () => freshPostgresDatabase(serverUrl!))
})
