/**
 * A key's record (spec document 2, 2.1, 3.1, 4.1): list with usage, revoke, PATCH, the usage
 * series, per-asset limits, the embedded-wallet permission, and a device's keys revoked with it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type Account } from "../../accounts/AccountRepository.js"
import { onlyTightens, type SpendLimit, USAGE_SINCE, usageSeries, usageSummary, usageWindowFrom } from "../KeyRules.js"
import { keyError } from "../KeyError.js"
import * as Repo from "../KeyRepository.js"
import { type AgentKey, keyStatus } from "../KeyRepository.js"
import type { AgentPrincipal, OwnerPrincipal } from "../Principals.js"
import { type PatchRequest, internal, keyView, type KeyCtx, notFound, revokedKey, DAY_MS } from "./KeyParts.js"

export const makeKeyRecords = (ctx: KeyCtx) => {
  const { store, now, withSql, tx, accountOf, planOf, ownKey } = ctx
  const usageFor = (accountId: string, nowMs: number) =>
    withSql(Effect.all([Repo.accountUsageSince(accountId, usageWindowFrom(nowMs)), Repo.accountUsageLifetime(accountId)]))

  const viewWithUsage = (account: Account, key: AgentKey, nowMs: number) =>
    Effect.gen(function* () {
      const plan = yield* planOf(account, nowMs)
      const [recent, lifetime] = yield* usageFor(account.id, nowMs)
      return keyView(key, plan, nowMs, usageSummary(recent.get(key.id) ?? [], lifetime.get(key.id) ?? { usdMicros: 0, launches: 0 }, nowMs))
    })

  const list = (owner: OwnerPrincipal) =>
    Effect.gen(function* () {
      const nowMs = yield* now
      const account = yield* accountOf(owner.accountId)
      const plan = yield* planOf(account, nowMs)
      const keys = yield* withSql(Repo.listAccountKeys(account.id))
      const [recent, lifetime] = yield* usageFor(account.id, nowMs)
      return {
        keys: keys.map((k) => keyView(k, plan, nowMs, usageSummary(recent.get(k.id) ?? [], lifetime.get(k.id) ?? { usdMicros: 0, launches: 0 }, nowMs))),
        usageSince: USAGE_SINCE,
        checkedAt: nowMs
      }
    }).pipe(internal)

  const revoke = (owner: OwnerPrincipal, prefix: string) =>
    Effect.gen(function* () {
      const nowMs = yield* now
      const key = yield* ownKey(owner.accountId, prefix)
      yield* withSql(Repo.revokeKey(key.id, nowMs))
      store.invalidate(prefix)
      const after = yield* ownKey(owner.accountId, prefix)
      return { keyPrefix: prefix, revokedAt: after.revokedAtMs }
    }).pipe(internal)

  const patch = (owner: OwnerPrincipal, prefix: string, req: PatchRequest) =>
    Effect.gen(function* () {
      const key = yield* ownKey(owner.accountId, prefix)
      // Pausing or resuming a revoked key would change nothing it can do: refused like an access change.
      if (req._tag === "paused" && keyStatus(key, yield* now) === "revoked") return yield* Effect.fail(revokedKey())
      yield* withSql(Repo.updateKey(key.id, req))
      store.invalidate(prefix)
      const account = yield* accountOf(owner.accountId)
      const updated = yield* ownKey(owner.accountId, prefix)
      return { key: yield* viewWithUsage(account, updated, yield* now) }
    }).pipe(internal)

  const usage = (owner: OwnerPrincipal, prefix: string, days: number) =>
    Effect.gen(function* () {
      const nowMs = yield* now
      const key = yield* ownKey(owner.accountId, prefix)
      const from = new Date(nowMs - (days - 1) * DAY_MS).toISOString().slice(0, 10)
      const rows = yield* withSql(Repo.keyUsageSince(key.id, from))
      return { keyPrefix: prefix, days, usageSince: USAGE_SINCE, series: usageSeries(rows, days, nowMs) }
    }).pipe(internal)

  const limitsView = (k: AgentKey, limits: ReadonlyArray<SpendLimit> | null) => ({ keyPrefix: k.prefix, keyLimits: limits })

  const setLimits = (actor: OwnerPrincipal | AgentPrincipal, prefix: string, limits: ReadonlyArray<SpendLimit> | null) =>
    Effect.gen(function* () {
      if (actor._tag === "agent" && prefix !== actor.key.prefix && prefix !== "self") return yield* Effect.fail(notFound(prefix))
      const targetPrefix = actor._tag === "agent" ? actor.key.prefix : prefix
      const nowMs = yield* now
      const result = yield* tx(
        Effect.gen(function* () {
          const key = yield* Repo.lockAccountKey(actor.accountId, targetPrefix)
          if (key === undefined) return yield* Effect.fail(notFound(targetPrefix))
          if (keyStatus(key, nowMs) === "revoked") return yield* Effect.fail(revokedKey())
          if (actor._tag === "agent" && !onlyTightens(key.spendLimits, limits)) {
            return yield* Effect.fail(
              keyError("loosen_requires_session", "A key may only tighten its own limits; raising or clearing a cap needs a signed-in session or device")
            )
          }
          yield* Repo.updateKey(key.id, { _tag: "spendLimits", spendLimits: limits })
          return key
        })
      )
      store.invalidate(targetPrefix)
      return limitsView(result, limits)
    }).pipe(internal)

  const selfLimits = (agent: AgentPrincipal) =>
    Effect.map(ownKey(agent.accountId, agent.key.prefix), (k) => ({ keyLimits: k.spendLimits })).pipe(internal)

  const setEmbeddedWallet = (owner: OwnerPrincipal, prefix: string, value: "allowed" | "denied") =>
    Effect.gen(function* () {
      const key = yield* ownKey(owner.accountId, prefix)
      yield* withSql(Repo.updateKey(key.id, { _tag: "embeddedWallet", embeddedWallet: value }))
      store.invalidate(prefix)
      return { keyPrefix: prefix, embeddedWallet: value }
    }).pipe(internal)

  const revokeDeviceKeys = (deviceId: string, nowMs: number) =>
    Effect.gen(function* () {
      const s = yield* SqlClient.SqlClient
      const rows = yield* s<{ prefix: string }>`
        UPDATE agent_keys SET revoked_at = ${new Date(nowMs)}
        WHERE minted_by_device_id = ${deviceId} AND revoked_at IS NULL RETURNING prefix`
      for (const r of rows) store.invalidate(r.prefix)
      return rows.map((r) => r.prefix)
    })
  return { list, revoke, patch, usage, setLimits, selfLimits, setEmbeddedWallet, revokeDeviceKeys }
}
