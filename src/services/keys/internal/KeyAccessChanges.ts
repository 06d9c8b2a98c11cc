/**
 * Access changes (spec document 2, 3.2): preview and commit by the owner or the key itself
 * (narrowing only), the change, its history row and its event in one transaction; the history
 * read.
 */
import { Effect } from "effect"
import { type AccessPlan, planAccessChange } from "../AccessChange.js"
import { type KeyError, keyError } from "../KeyError.js"
import * as Repo from "../KeyRepository.js"
import { type AgentKey, keyStatus } from "../KeyRepository.js"
import type { AgentPrincipal, OwnerPrincipal } from "../Principals.js"
import { isPartnerScope, normalizeScopes, sameScopeSet } from "../Scopes.js"
import { newId } from "../Tokens.js"
import { openOrdersOfKey } from "../../orders/OrderStore.js"
import { type AccessRequest, internal, type KeyCtx, revokedKey, storageAs } from "./KeyParts.js"

export const makeKeyAccessChanges = (ctx: KeyCtx) => {
  const { wallets, events, store, now, withSql, tx, ownKey } = ctx
  const changeAccess = (actor: OwnerPrincipal | AgentPrincipal, prefix: string, req: AccessRequest) =>
    Effect.gen(function* () {
      const targetPrefix = actor._tag === "agent" ? actor.key.prefix : prefix
      const nowMs = yield* now
      const key = yield* ownKey(actor.accountId, targetPrefix)
      const refuse = (k: AgentKey): KeyError | undefined => {
        const status = keyStatus(k, nowMs)
        if (status === "revoked") return revokedKey()
        if (status === "expired") return keyError("expired", "Key has expired")
        if (k.scopes.some(isPartnerScope)) return keyError("partner_key", "A partner key cannot change access level")
        return undefined
      }
      const early = refuse(key)
      if (early !== undefined) return yield* Effect.fail(early)
      const facts = yield* Effect.all({
        boundTeeWallets: wallets.boundTeeWallets(key.id),
        openSignClaims: wallets.openSignClaims(key.id),
        openLimitOrders: withSql(openOrdersOfKey(key.id))
      }).pipe(Effect.mapError(() => keyError("access_unavailable", "The access change could not be verified; nothing changed", { retryable: true })))
      const planFor = (k: AgentKey): AccessPlan =>
        planAccessChange(k.scopes, req.access, { ...facts, walletScope: k.walletScope, txLimit: k.txLimit, spendLimits: k.spendLimits })
      const preview = planFor(key)
      if (actor._tag === "agent" && preview.direction === "widen") {
        return yield* Effect.fail(keyError("loosen_requires_session", "A key may narrow its own access, never widen it; widening needs a signed-in session or device"))
      }
      const common = (p: AccessPlan, k: AgentKey) => ({
        keyPrefix: k.prefix,
        label: k.label,
        direction: p.direction,
        from: p.from,
        to: p.to,
        added: p.added,
        removed: p.removed,
        effects: p.effects,
        warnings: p.warnings
      })
      if (req.dryRun) return { ...common(preview, key), dryRun: true }

      const changeId = newId("chg")
      const committed = yield* tx(
        Effect.gen(function* () {
          const locked = (yield* Repo.lockAccountKey(actor.accountId, targetPrefix))!
          const late = refuse(locked)
          if (late !== undefined) return yield* Effect.fail(late)
          if (!sameScopeSet(locked.scopes, req.expectScopes ?? [])) {
            return yield* Effect.fail(
              keyError("access_stale", "The key's scopes changed since the preview; preview again", {
                details: { currentScopes: normalizeScopes(locked.scopes) }
              })
            )
          }
          const p = planFor(locked)
          if (actor._tag === "agent" && p.direction === "widen") {
            return yield* Effect.fail(keyError("loosen_requires_session", "A key may narrow its own access, never widen it"))
          }
          if (p.direction !== "unchanged") yield* Repo.updateKey(locked.id, { _tag: "scopes", scopes: p.to.scopes })
          const change: Repo.AccessChange = {
            changeId,
            keyId: locked.id,
            atMs: nowMs,
            direction: p.direction,
            from: p.from,
            to: p.to,
            actor: actor._tag,
            actorDevicePrefix: actor._tag === "device" ? actor.devicePrefix : null,
            actorKeyPrefix: actor._tag === "agent" ? actor.key.prefix : null
          }
          yield* Repo.insertAccessChange(actor.accountId, change)
          if (p.direction !== "unchanged") {
            yield* events.enqueue(actor.accountId, p.direction === "widen" ? "key.access_widened" : "key.access_narrowed", {
              changeId,
              keyPrefix: locked.prefix,
              label: locked.label,
              from: p.from,
              to: p.to,
              actor: actor._tag,
              at: nowMs
            })
          }
          return { p, locked }
        })
      ).pipe(storageAs("access_unavailable", "The access change could not be recorded; nothing changed"))
      store.invalidate(targetPrefix)
      return { ...common(committed.p, committed.locked), dryRun: false, changeId, at: nowMs }
    }).pipe(internal)

  const accessChanges = (owner: OwnerPrincipal, prefix: string, limit: number) =>
    Effect.gen(function* () {
      const key = yield* ownKey(owner.accountId, prefix)
      const rows = yield* withSql(Repo.listAccessChanges(key.id, limit))
      return {
        keyPrefix: prefix,
        changes: rows.map((c) => ({
          changeId: c.changeId,
          at: c.atMs,
          direction: c.direction,
          from: c.from,
          to: c.to,
          actor: c.actor,
          ...(c.actor === "device" ? { actorDevicePrefix: c.actorDevicePrefix } : {}),
          ...(c.actor === "agent" ? { actorKeyPrefix: c.actorKeyPrefix } : {})
        }))
      }
    }).pipe(internal)
  return { changeAccess, accessChanges }
}
