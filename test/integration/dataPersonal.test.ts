/**
 * The market-data service's personal routes over real uWS with real keys (the accounts harness)
 * on PGlite and, when the run has one, the PostgreSQL server: follows, rules, own groups, the
 * watchlist (every cap at its bound for Pro and Max, Free refused, validation naming the field,
 * nothing recorded on a refusal, checked in the tables), and personal signals produced from hub
 * signals by the real writer fiber and paged with `next_after`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildSignal, type Pattern, type Signal } from "../../src/domain/Signal.js"
import { invalidApiKeyReply } from "../../api/auth/DataBearerAuth.js"
import { personalRoutes } from "../../api/data/personal/PersonalRoutes.js"
import { serve } from "../../api/Server.js"
import { call, type Harness, startHarness } from "../support/accountsHarness.js"
import { runPersonalSignals, type PersonalSignalsRunner } from "../../src/services/personal/PersonalSignals.js"
import { makePersonalStore } from "../../src/services/personal/PersonalStore.js"
import { SignalHub } from "../../src/services/signals/SignalHub.js"
import { seedTrackingData } from "../../src/services/tracking/Seed.js"
import { make as makeTracking } from "../../src/services/tracking/Tracking.js"
import { noPostgresReason, postgresUrl, freshPostgresDatabase } from "../support/servers.js"
import { checkAnswersInThisFile, withContract } from "../support/contractRoutes.js"

const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
/** A distinct base58 address of 44 characters for each (tag, i). */
const addr = (tag: string, i: number): string => {
  let n = i
  let s = ""
  do {
    s = B58[n % 58]! + s
    n = Math.floor(n / 58)
  } while (n > 0)
  const head = [...tag].filter((c) => B58.includes(c)).join("")
  return (head + "W" + s.padStart(5, "1")).padEnd(44, "1")
}

const seed = seedTrackingData()
const tracking = makeTracking(seed)
const wProPublic = seed.wallets.find((w) => w.id === "sol_dev0")!
const wMaxOnly = seed.wallets.find((w) => w.id === "sol_dev8")!

let seq = 0
/** A second trigger id unique to each made signal; a counter, not Math.random(), so a run is deterministic. */
let triggerNonce = 0
const T = Date.UTC(2025, 0, 1)
const sig = (o: { pattern?: Pattern; asset?: string; wallets?: ReadonlyArray<string>; walletIds?: ReadonlyArray<string>; sizeUsd?: number; details?: Signal["details"] }): Signal => {
  seq++
  return buildSignal({
    pattern: o.pattern ?? "large_move",
    chain: "solana",
    asset: o.asset ?? addr("Tok", 10_000 + seq),
    symbol: `S${seq}`,
    direction: "in",
    wallets: o.wallets ?? [],
    walletIds: o.walletIds ?? [],
    groups: [],
    sizeUsdMicros: BigInt(Math.round((o.sizeUsd ?? 1500) * 1_000_000)),
    mcapUsdMicros: 50_000_000_000n,
    createdAtMs: T,
    venue: "svc-curve",
    confidence: 80,
    atMs: T + seq * 60_000,
    position: `s:${String(seq).padStart(20, "0")}`,
    triggerIds: [`e${seq}`, `n${++triggerNonce}`],
    details: o.details ?? { n: seq }
  })
}

// Every answer is checked against the document of the mounted routes (issue 32).
checkAnswersInThisFile()

const suite = (name: string, databaseUrl: () => Promise<string | undefined>, skip = false) =>
  describe.skipIf(skip)(name, () => {
    let h: Harness
    let url = ""
    let scope: Scope.CloseableScope
    let runner: PersonalSignalsRunner
    const hub = new SignalHub({ capacity: 1_000 })
    const accounts: Record<string, { id: string; key: string }> = {}

    const issue = async (label: string, plan: "free" | "pro" | "max", environment: "production" | "test" = "production", scopes?: ReadonlyArray<string>) => {
      const { accountId, session } = await h.newAccount({ plan })
      const r = await call(h.url, "POST", "/api/v1/agent/keys", { session, body: { environment, ...(scopes !== undefined ? { scopes } : {}) } })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      accounts[label] = { id: accountId, key: r.body.key as string }
    }

    const req = (method: string, path: string, who: string | null, body?: unknown) =>
      call(url, method, path, { ...(who === null ? {} : { bearer: accounts[who]?.key ?? who }), ...(body !== undefined ? { body } : {}) })

    const rows = async (table: string, who: string): Promise<number> => {
      const r = await h.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, accounts[who]!.id)
      return Number(r[0]!.n)
    }

    beforeAll(async () => {
      h = await startHarness({ databaseUrl: await databaseUrl() })
      for (const [label, plan] of [
        ["free", "free"],
        ["pro", "pro"],
        ["pro2", "pro"],
        ["pro3", "pro"],
        ["max", "max"],
        ["max2", "max"],
        ["max3", "max"],
        ["pro4", "pro"]
      ] as const) {
        await issue(label, plan)
      }
      await issue("test", "max", "test")
      await issue("readOnly", "free", "production", ["account:read"])
      await issue("launchOnly", "free", "production", ["launch:write"])
      await issue("neither", "free", "production", ["launch:read"])
      const sql = await h.run(SqlClient.SqlClient)
      const auth = (await h.auth()).dataAuth
      scope = await Effect.runPromise(Scope.make())
      runner = await h.run(
        runPersonalSignals(hub, makePersonalStore(sql), { refreshMs: 60_000, batchMax: 4 }).pipe(Scope.extend(scope), Logger.withMinimumLogLevel(LogLevel.Error))
      )
      const routes = personalRoutes({
        sql,
        tracking,
        personal: runner,
        authenticate: (r) =>
          Effect.flatMap(auth.authenticate(r.headers), (p) =>
            p === undefined ? Effect.fail(invalidApiKeyReply()) : Effect.succeed({ accountId: p.accountId, plan: p.tier, scopes: p.key.scopes })
          )
      })
      const server = await h.run(serve({ name: "personal-test", host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, routes: withContract(routes) }).pipe(Scope.extend(scope)))
      url = server.url
    }, 120_000)

    afterAll(async () => {
      if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
      await h?.close()
    })

    it("refuses a missing, bad or TEST key with the plain 401", async () => {
      for (const who of [null, "nonsense", "test"]) {
        const r = await req("GET", "/v1/me/follows", who)
        expect([r.status, r.body], String(who)).toEqual([401, { error: "invalid api key" }])
      }
      expect((await req("POST", "/v1/me/follows", "test", { address: addr("A", 1) })).status).toBe(401)
      expect(await rows("md_follows", "test")).toBe(0)
    })

    it("refuses Free on follows, rules, personal signals and own groups with the plain 403, recording nothing", async () => {
      const a = addr("Free", 1)
      const calls: ReadonlyArray<[string, string, unknown?]> = [
        ["GET", "/v1/me/follows"],
        ["POST", "/v1/me/follows", { chain: "solana", address: a }],
        ["DELETE", "/v1/me/follows/fol_x"],
        ["GET", "/v1/me/rules"],
        ["POST", "/v1/me/rules", { name: "r", pattern: "large_move", params: { min_usd: "1" } }],
        ["DELETE", "/v1/me/rules/rul_x"],
        ["GET", "/v1/me/signals"],
        ["GET", "/v1/me/groups"],
        ["POST", "/v1/me/groups", { name: "g" }],
        ["DELETE", "/v1/me/groups?id=grp_x"],
        ["POST", "/v1/me/groups/grp_x/wallets", { address: a }],
        ["DELETE", "/v1/me/groups/grp_x/wallets", { address: a }]
      ]
      for (const [method, path, body] of calls) {
        const r = await req(method, path, "free", body)
        expect([r.status, r.body], `${method} ${path}`).toEqual([403, { error: "requires Pro or Max" }])
      }
      for (const t of ["md_follows", "md_rules", "md_groups", "md_group_wallets", "md_personal_signals"]) expect(await rows(t, "free"), t).toBe(0)
    })

    describe("follows", () => {
      it("Pro: 25 follows, the 26th is 429 with quota and used; a repeat is the existing follow; nothing recorded past the cap", async () => {
        const ids: Array<string> = []
        for (let i = 0; i < 25; i++) {
          const r = await req("POST", "/v1/me/follows", "pro", { chain: "solana", address: addr("Pro", i) })
          expect(r.status, JSON.stringify(r.body)).toBe(201)
          expect(r.body).toMatchObject({ chain: "solana", address: addr("Pro", i) })
          ids.push(r.body.id)
        }
        const over = await req("POST", "/v1/me/follows", "pro", { chain: "solana", address: addr("Pro", 25) })
        expect([over.status, over.body]).toEqual([429, { error: "follow limit reached", quota: 25, used: 25 }])
        expect(await rows("md_follows", "pro")).toBe(25)
        const again = await req("POST", "/v1/me/follows", "pro", { address: addr("Pro", 3) })
        expect([again.status, again.body.id]).toEqual([200, ids[3]])
        const list = await req("GET", "/v1/me/follows", "pro")
        expect([list.status, list.body.quota, list.body.used, list.body.follows.length]).toEqual([200, 25, 25, 25])
        // Another account cannot delete it; the owner can, which frees a place.
        expect(await req("DELETE", `/v1/me/follows/${ids[0]}`, "max")).toMatchObject({ status: 404, body: { error: "follow not found" } })
        expect(await req("DELETE", `/v1/me/follows/${ids[0]}`, "pro")).toMatchObject({ status: 200, body: { id: ids[0], deleted: true } })
        expect((await req("POST", "/v1/me/follows", "pro", { address: addr("Pro", 25) })).status).toBe(201)
        expect(await rows("md_follows", "pro")).toBe(25)
      })

      it("the cap holds under 30 concurrent adds (one per-account lock): exactly 25 recorded", async () => {
        const results = await Promise.all(Array.from({ length: 30 }, (_, i) => req("POST", "/v1/me/follows", "pro4", { address: addr("Race", i) })))
        expect(results.filter((r) => r.status === 201)).toHaveLength(25)
        expect(results.filter((r) => r.status === 429)).toHaveLength(5)
        expect(await rows("md_follows", "pro4")).toBe(25)
      })

      it("Max: 100 follows (Hood lower-cased), the 101st is 429", async () => {
        for (let i = 0; i < 100; i++) {
          const body = i % 2 === 0 ? { chain: "solana", address: addr("Max", i) } : { chain: "hood", address: "0x" + i.toString(16).padStart(40, "A") }
          const r = await req("POST", "/v1/me/follows", "max", body)
          expect(r.status, JSON.stringify(r.body)).toBe(201)
          if (body.chain === "hood") expect(r.body.address).toBe(body.address.toLowerCase())
        }
        const over = await req("POST", "/v1/me/follows", "max", { address: addr("Max", 100) })
        expect([over.status, over.body]).toEqual([429, { error: "follow limit reached", quota: 100, used: 100 }])
        expect(await rows("md_follows", "max")).toBe(100)
      })

      it("validation names the field and records nothing", async () => {
        const cases: ReadonlyArray<[unknown, string]> = [
          [{ chain: "eth", address: addr("V", 1) }, "chain"],
          [{ chain: "solana", address: "0OIl" }, "address"],
          [{ chain: "hood", address: addr("V", 1) }, "address"],
          [{}, "address"],
          [{ address: addr("V", 1), colour: "red" }, "colour"],
          [[1, 2], "body"]
        ]
        for (const [body, field] of cases) {
          const r = await req("POST", "/v1/me/follows", "pro2", body)
          expect([r.status, r.body.error?.code, r.body.error?.field], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED", field])
        }
        expect(await rows("md_follows", "pro2")).toBe(0)
      })
    })

    describe("rules", () => {
      it("validates the pattern and its params, naming the field; nothing recorded", async () => {
        const cases: ReadonlyArray<[unknown, string]> = [
          [{ name: "x", pattern: "moon" }, "pattern"],
          [{ pattern: "deployer" }, "name"],
          [{ name: "x".repeat(65), pattern: "deployer" }, "name"],
          [{ name: "x", pattern: "confluence", params: { window_minutes: 30 } }, "params.wallets"],
          [{ name: "x", pattern: "confluence", params: { wallets: 1, window_minutes: 30 } }, "params.wallets"],
          [{ name: "x", pattern: "confluence", params: { wallets: 2.5, window_minutes: 30 } }, "params.wallets"],
          [{ name: "x", pattern: "confluence", params: { wallets: 2 } }, "params.window_minutes"],
          [{ name: "x", pattern: "confluence", params: { wallets: 2, window_minutes: 10 } }, "params.window_minutes"],
          [{ name: "x", pattern: "large_move" }, "params.min_usd"],
          [{ name: "x", pattern: "large_move", params: { min_usd: "-1" } }, "params.min_usd"],
          [{ name: "x", pattern: "large_move", params: { min_usd: "1.1234567" } }, "params.min_usd"],
          [{ name: "x", pattern: "dormancy", params: { days: 0 } }, "params.days"],
          [{ name: "x", pattern: "dormancy", params: { days: "7" } }, "params.days"],
          [{ name: "x", pattern: "new_ticker", params: { days: 7 } }, "params.days"],
          [{ name: "x", pattern: "deployer", params: { min_usd: "5" } }, "params.min_usd"],
          [{ name: "x", pattern: "deployer", params: [1] }, "params"],
          [{ name: "x", pattern: "deployer", wallet_id: "no_such_wallet" }, "wallet_id"],
          [{ name: "x", pattern: "deployer", wallet_id: wMaxOnly.id }, "wallet_id"], // a Max-only wallet, for Pro
          [{ name: "x", pattern: "deployer", colour: "red" }, "colour"]
        ]
        for (const [body, field] of cases) {
          const r = await req("POST", "/v1/me/rules", "pro2", body)
          expect([r.status, r.body.error?.code, r.body.error?.field], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED", field])
        }
        expect(await rows("md_rules", "pro2")).toBe(0)
      })

      it("stores normalized params; 20 rules for Pro and for Max, the 21st is 429", async () => {
        const first = await req("POST", "/v1/me/rules", "pro2", { name: " big ", pattern: "large_move", wallet_id: wProPublic.id, params: { min_usd: 1000.5 } })
        expect(first.status, JSON.stringify(first.body)).toBe(201)
        expect(first.body).toMatchObject({ name: "big", pattern: "large_move", wallet_id: wProPublic.id, params: { min_usd: "1000.5" } })
        const okMax = await req("POST", "/v1/me/rules", "max2", { name: "m", pattern: "confluence", wallet_id: wMaxOnly.id, params: { wallets: 2, window_minutes: 60 } })
        expect(okMax.status).toBe(201)
        for (const who of ["pro2", "max2"]) {
          for (let i = await rows("md_rules", who); i < 20; i++) {
            const r = await req("POST", "/v1/me/rules", who, { name: `r${i}`, pattern: "dormancy", params: { days: 7 + i } })
            expect(r.status, JSON.stringify(r.body)).toBe(201)
          }
          const over = await req("POST", "/v1/me/rules", who, { name: "one more", pattern: "kol_mention" })
          expect([over.status, over.body], who).toEqual([429, { error: "rule limit reached", quota: 20, used: 20 }])
          expect(await rows("md_rules", who)).toBe(20)
          const list = await req("GET", "/v1/me/rules", who)
          expect([list.body.rules.length, list.body.quota, list.body.used]).toEqual([20, 20, 20])
        }
        expect((await req("DELETE", `/v1/me/rules/${first.body.id}`, "pro2")).status).toBe(200)
        expect((await req("DELETE", `/v1/me/rules/${first.body.id}`, "pro2")).status).toBe(404)
        expect(await rows("md_rules", "pro2")).toBe(19)
      })
    })

    describe("own groups", () => {
      it("Pro: 1 group (the 2nd is 429), 25 wallets (the 26th is 429), private to the account", async () => {
        const g = await req("POST", "/v1/me/groups", "pro3", { name: "my desk" })
        expect(g.status, JSON.stringify(g.body)).toBe(201)
        expect(g.body).toMatchObject({ name: "my desk", visibility: "private", wallets: [] })
        const over = await req("POST", "/v1/me/groups", "pro3", { name: "second" })
        expect([over.status, over.body]).toEqual([429, { error: "group limit reached", quota: 1, used: 1 }])
        expect(await rows("md_groups", "pro3")).toBe(1)
        const id = g.body.id as string
        for (let i = 0; i < 25; i++) {
          const r = await req("POST", `/v1/me/groups/${id}/wallets`, "pro3", { chain: "solana", address: addr("Grp", i) })
          expect(r.status, JSON.stringify(r.body)).toBe(201)
          expect(r.body.wallets).toHaveLength(i + 1)
        }
        const full = await req("POST", `/v1/me/groups/${id}/wallets`, "pro3", { address: addr("Grp", 25) })
        expect([full.status, full.body]).toEqual([429, { error: "group wallet limit reached", quota: 25, used: 25 }])
        expect(await rows("md_group_wallets", "pro3")).toBe(25)
        expect((await req("POST", `/v1/me/groups/${id}/wallets`, "pro3", { address: addr("Grp", 0) })).status).toBe(200)
        // Private: another account sees and touches nothing of it.
        expect((await req("GET", "/v1/me/groups", "max3")).body.groups).toEqual([])
        expect(await req("POST", `/v1/me/groups/${id}/wallets`, "max3", { address: addr("Grp", 99) })).toMatchObject({ status: 404, body: { error: "group not found" } })
        expect((await req("DELETE", `/v1/me/groups?id=${id}`, "max3")).status).toBe(404)
        // Removing a wallet (query form), then an absent one.
        const removed = await req("DELETE", `/v1/me/groups/${id}/wallets?chain=solana&address=${addr("Grp", 0)}`, "pro3")
        expect([removed.status, removed.body.wallets.length]).toEqual([200, 24])
        expect(await req("DELETE", `/v1/me/groups/${id}/wallets`, "pro3", { address: addr("Grp", 0) })).toMatchObject({ status: 404, body: { error: "wallet not in group" } })
        const bad = await req("POST", `/v1/me/groups/${id}/wallets`, "pro3", { chain: "hood", address: "0x12" })
        expect([bad.status, bad.body.error.field]).toEqual([400, "address"])
        const list = await req("GET", "/v1/me/groups", "pro3")
        expect([list.body.quota, list.body.used, list.body.wallets_per_group, list.body.groups[0].wallets.length]).toEqual([1, 1, 25, 24])
      })

      it("Max: 5 groups, the 6th is 429; deleting one (body form) frees a place and drops its wallets", async () => {
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) {
          const r = await req("POST", "/v1/me/groups", "max3", { name: `g${i}` })
          expect(r.status).toBe(201)
          ids.push(r.body.id)
        }
        expect(await req("POST", "/v1/me/groups", "max3", { name: "g5" })).toMatchObject({ status: 429, body: { error: "group limit reached", quota: 5, used: 5 } })
        expect((await req("POST", `/v1/me/groups/${ids[0]}/wallets`, "max3", { address: addr("Mx", 1) })).status).toBe(201)
        for (const [body, field] of [[{ name: "" }, "name"], [{}, "name"], [{ name: "x", extra: 1 }, "extra"]] as const) {
          const r = await req("POST", "/v1/me/groups", "max3", body)
          expect([r.status, r.body.error?.field], JSON.stringify(body)).toEqual([400, field])
        }
        expect(await req("DELETE", "/v1/me/groups", "max3", { id: ids[0] })).toMatchObject({ status: 200, body: { id: ids[0], deleted: true } })
        expect(await rows("md_group_wallets", "max3")).toBe(0)
        expect((await req("POST", "/v1/me/groups", "max3", { name: "again" })).status).toBe(201)
        expect(await rows("md_groups", "max3")).toBe(5)
      })
    })

    describe("watchlist", () => {
      it("open to Free; 200 wallets, the 201st is 429; validation names the field", async () => {
        const bad = await req("POST", "/v1/me/watchlist", "free", { address: addr("Wl", 1), label: "x".repeat(65) })
        expect([bad.status, bad.body.error.field]).toEqual([400, "label"])
        expect(await rows("md_watchlist", "free")).toBe(0)
        const first = await req("POST", "/v1/me/watchlist", "free", { address: addr("Wl", 0), label: "whale" })
        expect(first.status).toBe(201)
        expect(first.body).toMatchObject({ chain: "solana", address: addr("Wl", 0), label: "whale" })
        for (let i = 1; i < 200; i++) expect((await req("POST", "/v1/me/watchlist", "free", { address: addr("Wl", i) })).status).toBe(201)
        expect(await req("POST", "/v1/me/watchlist", "free", { address: addr("Wl", 200) })).toMatchObject({
          status: 429,
          body: { error: "watchlist limit reached", quota: 200, used: 200 }
        })
        expect((await req("POST", "/v1/me/watchlist", "free", { address: addr("Wl", 5) })).status).toBe(200)
        expect(await rows("md_watchlist", "free")).toBe(200)
        expect(await req("DELETE", `/v1/me/watchlist/${first.body.id}`, "free")).toMatchObject({ status: 200 })
        expect((await req("GET", "/v1/me/watchlist", "free")).body).toMatchObject({ quota: 200, used: 199 })
      })

      it("account:read to read, launch:write to change (spec 4.5); a key with neither is refused SCOPE_MISSING and nothing is recorded", async () => {
        const scopeMissing = (scope: string) => ({ status: 403, body: { success: false, error: expect.objectContaining({ code: "SCOPE_MISSING", scope }) } })
        // account:read reads, cannot change.
        expect(await req("GET", "/v1/me/watchlist", "readOnly")).toMatchObject({ status: 200, body: { watchlist: [], used: 0 } })
        expect(await req("POST", "/v1/me/watchlist", "readOnly", { address: addr("Sc", 1) })).toMatchObject(scopeMissing("launch:write"))
        expect(await rows("md_watchlist", "readOnly")).toBe(0)
        // launch:write changes (and reads what it changes).
        const added = await req("POST", "/v1/me/watchlist", "launchOnly", { address: addr("Sc", 2), label: "x" })
        expect(added.status).toBe(201)
        expect(await req("GET", "/v1/me/watchlist", "launchOnly")).toMatchObject({ status: 200, body: { used: 1 } })
        // Neither: refused reading, adding and removing; the other account's entry is untouched.
        expect(await req("GET", "/v1/me/watchlist", "neither")).toMatchObject(scopeMissing("account:read"))
        expect(await req("POST", "/v1/me/watchlist", "neither", { address: addr("Sc", 3) })).toMatchObject(scopeMissing("launch:write"))
        expect(await req("DELETE", `/v1/me/watchlist/${added.body.id}`, "readOnly")).toMatchObject(scopeMissing("launch:write"))
        expect(await rows("md_watchlist", "neither")).toBe(0)
        expect(await rows("md_watchlist", "launchOnly")).toBe(1)
        expect(await req("DELETE", `/v1/me/watchlist/${added.body.id}`, "launchOnly")).toMatchObject({ status: 200, body: { id: added.body.id, deleted: true } })
      })
    })

    describe("personal signals", () => {
      it("are produced from hub signals by follows, rules and own groups, and paged with next_after", async () => {
        const token = addr("Fol", 1)
        const groupWallet = addr("GrpW", 1)
        // max: follows a token and has a rule; pro: an own group with one wallet.
        await h.query(`DELETE FROM md_follows WHERE account_id = $1`, accounts.max!.id)
        await h.query(`DELETE FROM md_groups WHERE account_id = $1`, accounts.pro!.id)
        expect((await req("POST", "/v1/me/follows", "max", { address: token })).status).toBe(201)
        const rule = await req("POST", "/v1/me/rules", "max", { name: "big moves", pattern: "large_move", params: { min_usd: "1000" } })
        expect(rule.status).toBe(201)
        const g = await req("POST", "/v1/me/groups", "pro", { name: "watch" })
        expect((await req("POST", `/v1/me/groups/${g.body.id}/wallets`, "pro", { address: groupWallet })).status).toBe(201)

        const followed = sig({ pattern: "deployer", asset: token, sizeUsd: 10 }) // max: follow
        const big = sig({ pattern: "large_move", sizeUsd: 1000 }) // max: rule (at the bound)
        const small = sig({ pattern: "large_move", sizeUsd: 999.999999 }) // nobody
        const both = sig({ pattern: "large_move", asset: token, wallets: [groupWallet], sizeUsd: 5000 }) // max: follow + rule; pro: group
        const other = sig({ pattern: "kol_mention" }) // nobody
        hub.publish([followed, big, small, both, other])
        await Effect.runPromise(runner.drained)

        const maxPage = await req("GET", "/v1/me/signals", "max")
        expect(maxPage.status).toBe(200)
        expect(maxPage.body.signals.map((s: Signal) => s.id)).toEqual([followed.id, big.id, both.id])
        const follow = (await req("GET", "/v1/me/follows", "max")).body.follows[0].id
        expect(maxPage.body.signals[2].matched).toEqual([
          { kind: "follow", id: follow },
          { kind: "rule", id: rule.body.id }
        ])
        expect(maxPage.body.signals[0]).toMatchObject({ pattern: "deployer", asset: token, size_usd: "10" })
        expect(maxPage.body.next_after).toBe(maxPage.body.signals[2].cursor)
        const proPage = await req("GET", "/v1/me/signals", "pro")
        expect(proPage.body.signals.map((s: Signal & { matched: unknown }) => [s.id, s.matched])).toEqual([[both.id, [{ kind: "group", id: g.body.id }]]])

        // Paging: 7 more for max, pages of 3 after the cursor, oldest first; an empty page keeps the cursor.
        const more = Array.from({ length: 7 }, () => sig({ pattern: "large_move", sizeUsd: 2000 }))
        hub.publish(more)
        hub.publish([more[0]!]) // a repeat: the hub skips it, and the table would too
        await Effect.runPromise(runner.drained)
        let after = maxPage.body.next_after as string
        const seen: Array<string> = []
        for (const expected of [3, 3, 1, 0]) {
          const page = await req("GET", `/v1/me/signals?after=${after}&limit=3`, "max")
          expect(page.body.signals).toHaveLength(expected)
          seen.push(...page.body.signals.map((s: Signal) => s.id))
          if (expected === 0) expect(page.body.next_after).toBe(after)
          after = page.body.next_after
        }
        expect(seen).toEqual(more.map((s) => s.id))
        expect((await req("GET", "/v1/me/signals?limit=200", "max")).body.signals).toHaveLength(10)
        expect(await rows("md_personal_signals", "max")).toBe(10)
        expect(await rows("md_personal_signals", "free")).toBe(0)
      })

      it("validates after and limit, naming the parameter", async () => {
        for (const [query, field] of [
          ["?limit=0", "limit"],
          ["?limit=201", "limit"],
          ["?limit=x", "limit"],
          ["?after=abc", "after"],
          ["?after=99999999999999999999", "after"],
          ["?cursor=1", "cursor"]
        ] as const) {
          const r = await req("GET", `/v1/me/signals${query}`, "max")
          expect([r.status, r.body.error?.code, r.body.error?.field], query).toEqual([400, "VALIDATION_FAILED", field])
        }
        expect((await req("GET", "/v1/me/signals?limit=200", "max")).status).toBe(200)
      })

      it("a new rule takes effect for the next signals without a restart (the routes invalidate the writer's index)", async () => {
        const r = await req("POST", "/v1/me/rules", "max3", { name: "kols", pattern: "kol_mention" })
        expect(r.status).toBe(201)
        const s = sig({ pattern: "kol_mention" })
        hub.publish([s])
        await Effect.runPromise(runner.drained)
        const page = await req("GET", "/v1/me/signals", "max3")
        expect(page.body.signals.map((x: Signal) => x.id)).toEqual([s.id])
      })

      it("the writer's queue is bounded: signals offered to a full queue are dropped and counted, the hub never blocks", async () => {
        const sql = await h.run(SqlClient.SqlClient)
        const own = new SignalHub({ capacity: 100 })
        const local = await Effect.runPromise(Scope.make())
        try {
          const small = await h.run(runPersonalSignals(own, makePersonalStore(sql), { queueCapacity: 2 }).pipe(Scope.extend(local)))
          own.publish(Array.from({ length: 5 }, () => sig({ pattern: "kol_mention" }))) // synchronous: the writer cannot run in between
          await Effect.runPromise(small.drained)
          // The idle writer takes the first signal as it is offered; two more fit the queue; two are dropped.
          expect(small.stats()).toMatchObject({ received: 5, dropped: 2, queued: 0 })
          // max3's kol_mention rule matched the three that were taken.
          expect(small.stats().written).toBe(3)
        } finally {
          await Effect.runPromise(Scope.close(local, Exit.void))
        }
        expect(own.stats().subscribers).toBe(0)
      })

      it("keeps the newest N per account (the store's retention bound)", async () => {
        const sql = await h.run(SqlClient.SqlClient)
        const store = makePersonalStore(sql)
        const account = accounts.pro2!.id
        const list = Array.from({ length: 5 }, () => sig({}))
        const written = await Effect.runPromise(store.writeMatches(list.map((signal) => ({ accountId: account, signal, reasons: [{ kind: "rule", id: "r" }] })), 3))
        expect(written).toBe(5)
        // A repeat of a kept signal is not written again.
        expect(await Effect.runPromise(store.writeMatches([{ accountId: account, signal: list[4]!, reasons: [] }], 3))).toBe(0)
        const page = await req("GET", "/v1/me/signals", "pro2")
        expect(page.body.signals.map((s: Signal) => s.id)).toEqual(list.slice(2).map((s) => s.id))
        expect(await rows("md_personal_signals", "pro2")).toBe(3)
      })
    })
  })

suite("personal routes on PGlite", async () => undefined)

const pg = postgresUrl()
suite(
  `personal routes on PostgreSQL${pg === undefined ? ` (${noPostgresReason})` : ""}`,
  () => freshPostgresDatabase(pg!),
  pg === undefined
)
