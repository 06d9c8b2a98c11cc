/**
 * Access preview then commit (spec 2.1, 3.2), as properties over arbitrary stored scope sets and
 * target levels: the plan is consistent (from + added - removed = to); a preview writes nothing;
 * a commit carrying the preview's scopes applies exactly what the preview showed, records one
 * history row and, unless unchanged, one `key.access_*` event; a commit with any other
 * `expectScopes` is KEY_ACCESS_STALE and changes nothing; a key acting on itself never widens.
 * Runs the real KeyService on PGlite.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount } from "../../src/services/accounts/Accounts.js"
import { findAccount } from "../../src/services/accounts/AccountRepository.js"
import { type Harness, startHarness } from "../support/accountsHarness.js"
import { planAccessChange } from "../../src/services/keys/AccessChange.js"
import { KeyService } from "../../src/services/keys/KeyService.js"
import { toApiError } from "../../api/ErrorTable.js"
import { isApiError } from "../../api/QueryParams.js"
import { decodeAccessBody } from "../../api/routes/KeyDecoders.js"
import { AccessLevels, LevelScopes, PublicScopes, sameScopeSet } from "../../src/services/keys/Scopes.js"
import type { AgentPrincipal, SessionPrincipal } from "../../src/services/keys/Principals.js"
import { effectiveCaps } from "../../src/services/keys/KeyRules.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"

const scopeSet = fc.uniqueArray(fc.constantFrom(...PublicScopes), { minLength: 1, maxLength: PublicScopes.length })
const level = fc.constantFrom(...AccessLevels)
const noFacts = { boundTeeWallets: { count: 0, sample: [] }, walletScope: "all" as const, openSignClaims: 0, txLimit: null, spendLimits: null }

describe("access plan (pure)", () => {
  it("from + added - removed = to, and the direction follows", () => {
    fc.assert(
      fc.property(scopeSet, level, (scopes, target) => {
        const p = planAccessChange(scopes, target, noFacts)
        const result = new Set([...scopes, ...p.added].filter((s) => !p.removed.includes(s)))
        expect(sameScopeSet([...result], p.to.scopes)).toBe(true)
        expect(p.direction).toBe(p.added.length > 0 ? "widen" : p.removed.length > 0 ? "narrow" : "unchanged")
        expect(p.to.scopes).toEqual(LevelScopes[target])
      })
    )
  })
})

describe("access preview then commit (KeyService on PGlite)", () => {
  let h: Harness
  beforeAll(async () => {
    h = await startHarness()
  }, 60_000)
  afterAll(() => h?.close())

  const counts = (keyId: string) =>
    h.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM agent_key_access_changes WHERE key_id = ${keyId}`
      ).pipe(Effect.map((r) => r[0]!.n))
    )

  it("a commit applies exactly what the preview showed; stale commits change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(scopeSet, level, scopeSet, fc.boolean(), async (scopes, target, otherScopes, asAgent) => {
        const setup = await h.run(
          Effect.gen(function* () {
            const keys = yield* KeyService
            const account = yield* createAccount({ plan: "free", agentEnabled: true, isAdmin: false }, h.nowMs())
            const issued = yield* keys.issueFor(
              account,
              { environment: "production", scopes: [...scopes].sort(), label: null, expiresAtMs: null, txLimit: null, embeddedWallet: "denied", ref: null },
              {}
            )
            return { account: (yield* findAccount(account.id))!, key: issued.key }
          })
        )
        const plan = planById(resolvePlans({}, 30), "free")
        const actor: SessionPrincipal | AgentPrincipal = asAgent
          ? { _tag: "agent", accountId: setup.account.id, key: setup.key, account: setup.account, tier: "free", plan, caps: effectiveCaps(setup.key, plan) }
          : { _tag: "session", accountId: setup.account.id, sessionId: "s", isAdmin: false }
        // The route's decoder and the one error table, as the HTTP route runs them.
        const change = (body: unknown) => {
          const req = decodeAccessBody(body)
          if (isApiError(req)) throw new Error(JSON.stringify(req))
          return h.run(Effect.either(Effect.flatMap(KeyService, (k) => k.changeAccess(actor, setup.key.prefix, req).pipe(Effect.mapError(toApiError)))))
        }
        const stored = () => h.query<{ scopes: string[] }>("SELECT scopes FROM agent_keys WHERE id = $1", setup.key.id).then((r) => r[0]!.scopes)
        const eventsBefore = (await h.events()).length

        const preview = await change({ access: target, dryRun: true })
        const expected = planAccessChange(setup.key.scopes, target, noFacts)
        if (asAgent && expected.direction === "widen") {
          expect(Either.isLeft(preview) && (preview.left as { code: string }).code).toBe("LOOSEN_REQUIRES_SESSION")
          const commit = await change({ access: target, expectScopes: setup.key.scopes })
          expect(Either.isLeft(commit) && (commit.left as { code: string }).code).toBe("LOOSEN_REQUIRES_SESSION")
          expect(await stored()).toEqual(setup.key.scopes)
          expect(await counts(setup.key.id)).toBe(0)
          return
        }
        if (Either.isLeft(preview)) throw new Error(JSON.stringify(preview.left))
        const p = preview.right as Record<string, unknown>
        expect(p).toMatchObject({ dryRun: true, direction: expected.direction, added: expected.added, removed: expected.removed, to: expected.to })
        expect(await stored()).toEqual(setup.key.scopes)
        expect(await counts(setup.key.id)).toBe(0)
        expect((await h.events()).length).toBe(eventsBefore)

        if (!sameScopeSet(otherScopes, setup.key.scopes)) {
          const stale = await change({ access: target, expectScopes: otherScopes })
          expect(Either.isLeft(stale) && (stale.left as { code: string }).code).toBe("KEY_ACCESS_STALE")
          expect(await stored()).toEqual(setup.key.scopes)
          expect(await counts(setup.key.id)).toBe(0)
        }

        const commit = await change({ access: target, expectScopes: (p.from as { scopes: string[] }).scopes })
        if (Either.isLeft(commit)) throw new Error(JSON.stringify(commit.left))
        const c = commit.right as Record<string, unknown>
        for (const field of ["direction", "from", "to", "added", "removed", "effects", "warnings"]) expect(c[field]).toEqual(p[field])
        expect(c.dryRun).toBe(false)
        expect(await stored()).toEqual(LevelScopes[target])
        expect(await counts(setup.key.id)).toBe(1)
        const events = (await h.events()).slice(eventsBefore)
        if (expected.direction === "unchanged") expect(events).toEqual([])
        else {
          expect(events.map((e) => [e.event, e.data.changeId, e.data.actor])).toEqual([
            [expected.direction === "widen" ? "key.access_widened" : "key.access_narrowed", c.changeId, asAgent ? "agent" : "session"]
          ])
        }
      }),
      { numRuns: 40 }
    )
  }, 120_000)
})
