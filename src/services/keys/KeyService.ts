/**
 * Agent-key management (spec document 2, sections 2.1, 3.1, 3.2, 4.1): issue, list, revoke,
 * PATCH (label, avatar, txLimit, pause and resume), usage series, access preview and commit (owner or the key itself, narrowing only),
 * access-change history, per-asset limits, embedded-wallet permission.
 *
 * Invariants:
 * - Only `sha256(key)` and the 8-character prefix are stored; the plaintext exists in the issue
 *   response and nowhere else.
 * - Issuance is serialized per account (the account row is locked) so the 12-active-key limit
 *   holds under concurrent requests and across processes.
 * - A refused request writes nothing. Ports to other subsystems (wallet side) are read before a
 *   transaction opens, never inside one: the embedded database has one connection.
 * - A committed access change, its history row and its `key.access_*` event are one
 *   transaction; a preview writes nothing.
 * - Every change to a key invalidates the key cache of this process before the response.
 *
 * Input is typed (the routes decode bodies, `api/routes/KeyDecoders.ts`); results are the spec's
 * views without the envelope (the route adds `success`); every failure is a `KeyError`, storage
 * failures included (`api/ErrorTable.ts` maps them to the wire).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import type { Chain } from "../../domain/Chain.js"
import type { Plan } from "../../domain/Plans.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { AccountEvents } from "../accounts/AccountEvents.js"
import { type Account, attributeReferral, findAccount, lockAccount } from "../accounts/AccountRepository.js"
import { AccountWallets } from "../accounts/AccountWallets.js"
import { TierService } from "../accounts/TierService.js"
import { type AccessPlan, planAccessChange } from "./AccessChange.js"
import {
  type Caps,
  effectiveCaps,
  type KeyUsage,
  onlyTightens,
  planCaps,
  type SpendLimit,
  type TxLimit,
  USAGE_SINCE,
  usageSeries,
  usageSummary,
  usageWindowFrom
} from "./KeyRules.js"
import { type KeyError, keyError } from "./KeyError.js"
import * as Repo from "./KeyRepository.js"
import { type AgentKey, type Environment, keyStatus } from "./KeyRepository.js"
import { KeyStore } from "./KeyStore.js"
import type { AgentPrincipal, OwnerPrincipal } from "./Principals.js"
import { type AccessLevel, isPartnerScope, levelOf, normalizeScopes, sameScopeSet } from "./Scopes.js"
import { mintToken, newId } from "./Tokens.js"
import { openOrdersOfKey } from "../orders/OrderStore.js"

export const MAX_ACTIVE_KEYS = 12
export const LABEL_MAX_CHARS = 64
export const AVATAR_MAX_CHARS = 256
export const HISTORY_LIMIT_MAX = 100
const DAY_MS = 86_400_000

type Json = Record<string, unknown>

// ---------------------------------------------------------------------------------------------
// Typed input (decoded by the routes)

export interface IssueRequest {
  readonly environment: Environment
  readonly scopes: ReadonlyArray<string>
  readonly label: string | null
  readonly expiresAtMs: number | null
  readonly txLimit: TxLimit | null
  readonly embeddedWallet: "allowed" | "denied"
  readonly ref: string | null
}

export type PatchRequest = Repo.KeyPatch

export interface AccessRequest {
  readonly access: AccessLevel
  readonly dryRun: boolean
  readonly expectScopes: ReadonlyArray<string> | undefined
}

// ---------------------------------------------------------------------------------------------
// Views

const capsView = (c: Caps) => ({ rateLimitPerMin: c.rateLimitPerMin, dailyLaunchCap: c.dailyLaunchCap })

export const keyView = (k: AgentKey, plan: Plan, nowMs: number, usage?: KeyUsage): Json => {
  const issued = { rateLimitPerMin: k.rateLimitPerMin, dailyLaunchCap: k.dailyLaunchCap }
  const eff = effectiveCaps(issued, plan)
  return {
    keyPrefix: k.prefix,
    ...(k.label !== null ? { label: k.label } : {}),
    scopes: k.scopes,
    access: levelOf(k.scopes),
    environment: k.environment,
    status: keyStatus(k, nowMs),
    rateLimitPerMin: eff.effective.rateLimitPerMin,
    dailyLaunchCap: eff.effective.dailyLaunchCap,
    issuedCaps: capsView(issued),
    effectiveCaps: capsView(eff.effective),
    raisedBy: eff.raisedBy,
    createdAt: k.createdAtMs,
    lastUsedAt: k.lastUsedAtMs,
    revokedAt: k.revokedAtMs,
    expiresAt: k.expiresAtMs,
    launchChains: k.launchChains,
    mintedByDevicePrefix: k.mintedByDevicePrefix,
    embeddedWallet: k.embeddedWallet,
    txLimit: k.txLimit,
    keyLimits: k.spendLimits,
    ...(k.avatar !== null ? { avatar: k.avatar } : {}),
    paused: k.paused,
    ...(usage !== undefined ? { usage } : {})
  }
}

const notFound = (prefix: string) => keyError("not_found", `No key with prefix '${prefix}' on this account`, { field: "prefix" })
const revokedKey = () => keyError("revoked", "Key has been revoked")

/** A storage failure, decided once: `reason` says which spec refusal it becomes. */
const storageAs = (reason: "storage" | "issuance_storage" | "access_unavailable", message: string) =>
  storageFailure("keys", () => keyError(reason, message, reason === "storage" ? {} : { retryable: true }))
const internal = storageAs("storage", "Internal error; nothing was recorded")

// ---------------------------------------------------------------------------------------------
// Service

export interface IssueOptions {
  /** Set by the device flow: the device whose approval minted the key. */
  readonly mintedByDeviceId?: string | null
  /** Internal marker (e.g. `local` for the embedded account's key). */
  readonly provisionedBy?: string | null
  /** Skips the delegation requirement (operator provisioning only). */
  readonly requireDelegation?: boolean
}

export interface IssuedKey {
  readonly response: Json
  readonly key: AgentKey
}

export interface KeyServiceShape {
  readonly issue: (owner: OwnerPrincipal, req: IssueRequest) => Effect.Effect<Json, KeyError>
  /** Issues for an account directly (device provisioning, local provisioning). */
  readonly issueFor: (account: Account, req: IssueRequest, options: IssueOptions) => Effect.Effect<IssuedKey, KeyError>
  readonly list: (owner: OwnerPrincipal) => Effect.Effect<Json, KeyError>
  readonly revoke: (owner: OwnerPrincipal, prefix: string) => Effect.Effect<Json, KeyError>
  readonly patch: (owner: OwnerPrincipal, prefix: string, req: PatchRequest) => Effect.Effect<Json, KeyError>
  /** `days` already clamped to 1..90. */
  readonly usage: (owner: OwnerPrincipal, prefix: string, days: number) => Effect.Effect<Json, KeyError>
  /** `prefix` "self" with an agent principal is `keys/self/access`. */
  readonly changeAccess: (actor: OwnerPrincipal | AgentPrincipal, prefix: string, req: AccessRequest) => Effect.Effect<Json, KeyError>
  readonly accessChanges: (owner: OwnerPrincipal, prefix: string, limit: number) => Effect.Effect<Json, KeyError>
  /** `null` clears every cap. */
  readonly setLimits: (actor: OwnerPrincipal | AgentPrincipal, prefix: string, limits: ReadonlyArray<SpendLimit> | null) => Effect.Effect<Json, KeyError>
  readonly selfLimits: (agent: AgentPrincipal) => Effect.Effect<Json, KeyError>
  readonly setEmbeddedWallet: (owner: OwnerPrincipal, prefix: string, value: "allowed" | "denied") => Effect.Effect<Json, KeyError>
  /** Revokes every active key a device minted (device revocation with `revokeKeys`), in the caller's transaction. */
  readonly revokeDeviceKeys: (deviceId: string, nowMs: number) => Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient>
}

export class KeyService extends Context.Tag("curvestream/KeyService")<KeyService, KeyServiceShape>() {}

export interface KeyServiceOptions {
  readonly nowMs: () => number
  /** Public base URL of the main service, returned as `apiBaseUrl` when set. */
  readonly apiBaseUrl?: string | undefined
}

export const layer = (
  options: KeyServiceOptions
): Layer.Layer<KeyService, never, SqlClient.SqlClient | AccountWallets | AccountEvents | TierService | KeyStore> =>
  Layer.effect(
    KeyService,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const wallets = yield* AccountWallets
      const events = yield* AccountEvents
      const tiers = yield* TierService
      const store = yield* KeyStore
      const now = options.nowMs
      const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> => Effect.provideService(e, SqlClient.SqlClient, sql)
      const tx = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E | SqlError> => withSql(sql.withTransaction(e))

      const accountOf = (accountId: string) =>
        Effect.flatMap(withSql(findAccount(accountId)), (a) =>
          a === undefined ? Effect.fail(keyError("account_gone", "The account no longer exists")) : Effect.succeed(a)
        )

      const issuanceStorage = storageAs("issuance_storage", "Key issuance failed; nothing was issued")
      const planOf = (account: Account, nowMs: number) => Effect.map(tiers.tierOf(account, nowMs), (t) => tiers.plan(t))

      const issueFor = (account: Account, req: IssueRequest, opts: IssueOptions): Effect.Effect<IssuedKey, KeyError> =>
        Effect.gen(function* () {
          const nowMs = now()
          const chains: ReadonlyArray<Chain> = yield* wallets.delegatedChains(account.id).pipe(
            Effect.mapError(() => keyError("wallets_unreachable", "The wallet provider could not be reached; nothing was issued", { retryable: true }))
          )
          if (chains.length === 0 && opts.requireDelegation !== false) {
            return yield* Effect.fail(keyError("not_delegated", "Delegate agent access on at least one chain before issuing a key", { retryable: true }))
          }
          const plan = yield* planOf(account, nowMs)
          const caps = planCaps(plan)
          const minted = mintToken(req.environment === "test" ? "test" : "live")
          const row: Repo.NewKey = {
            id: newId("key"),
            prefix: minted.prefix,
            accountId: account.id,
            hash: minted.hash,
            environment: req.environment,
            scopes: req.scopes,
            label: req.label,
            rateLimitPerMin: caps.rateLimitPerMin,
            dailyLaunchCap: caps.dailyLaunchCap,
            launchChains: chains,
            embeddedWallet: req.embeddedWallet,
            expiresAtMs: req.expiresAtMs,
            txLimit: req.txLimit,
            mintedByDeviceId: opts.mintedByDeviceId ?? null,
            provisionedBy: opts.provisionedBy ?? null
          }
          yield* tx(
            Effect.gen(function* () {
              yield* lockAccount(account.id)
              const active = yield* Repo.countActiveKeys(account.id, nowMs)
              if (active >= MAX_ACTIVE_KEYS) {
                return yield* Effect.fail(keyError("active_key_limit", `Active key limit reached (max ${MAX_ACTIVE_KEYS} active keys)`))
              }
              yield* Repo.insertKey(row, nowMs)
            })
          )
          store.invalidate(minted.prefix)
          if (req.ref !== null) {
            const ref = req.ref
            yield* withSql(attributeReferral(account.id, ref, nowMs)).pipe(Effect.catchAll(() => Effect.succeed(false)))
          }
          const key = (yield* withSql(Repo.findKeyByPrefix(minted.prefix)))!
          const eff = effectiveCaps(caps, plan)
          const response: Json = {
            key: minted.token,
            keyPrefix: minted.prefix,
            scopes: req.scopes,
            access: levelOf(req.scopes),
            environment: req.environment,
            rateLimitPerMin: eff.effective.rateLimitPerMin,
            dailyLaunchCap: eff.effective.dailyLaunchCap,
            launchChains: chains,
            embeddedWallet: req.embeddedWallet,
            issuedCaps: capsView(caps),
            effectiveCaps: capsView(eff.effective),
            raisedBy: eff.raisedBy,
            checkedAt: nowMs,
            ...(req.label !== null ? { label: req.label } : {}),
            ...(req.expiresAtMs !== null ? { expiresAt: req.expiresAtMs } : {}),
            ...(req.txLimit !== null ? { txLimit: req.txLimit } : {}),
            ...(options.apiBaseUrl !== undefined ? { apiBaseUrl: options.apiBaseUrl } : {})
          }
          return { response, key }
        }).pipe(issuanceStorage)

      const issue = (owner: OwnerPrincipal, req: IssueRequest) =>
        Effect.gen(function* () {
          const account = yield* accountOf(owner.accountId)
          if (!account.agentEnabled) {
            return yield* Effect.fail(keyError("agent_features_off", "Agent features are off for this account; enable them first"))
          }
          const issued = yield* issueFor(account, req, { mintedByDeviceId: owner._tag === "device" ? owner.deviceId : null })
          return issued.response
        }).pipe(issuanceStorage)

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
          const nowMs = now()
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

      const ownKey = (accountId: string, prefix: string) =>
        Effect.flatMap(withSql(Repo.findAccountKey(accountId, prefix)), (k) => (k === undefined ? Effect.fail(notFound(prefix)) : Effect.succeed(k)))

      const revoke = (owner: OwnerPrincipal, prefix: string) =>
        Effect.gen(function* () {
          const nowMs = now()
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
          if (req._tag === "paused" && keyStatus(key, now()) === "revoked") return yield* Effect.fail(revokedKey())
          yield* withSql(Repo.updateKey(key.id, req))
          store.invalidate(prefix)
          const account = yield* accountOf(owner.accountId)
          const updated = yield* ownKey(owner.accountId, prefix)
          return { key: yield* viewWithUsage(account, updated, now()) }
        }).pipe(internal)

      const usage = (owner: OwnerPrincipal, prefix: string, days: number) =>
        Effect.gen(function* () {
          const nowMs = now()
          const key = yield* ownKey(owner.accountId, prefix)
          const from = new Date(nowMs - (days - 1) * DAY_MS).toISOString().slice(0, 10)
          const rows = yield* withSql(Repo.keyUsageSince(key.id, from))
          return { keyPrefix: prefix, days, usageSince: USAGE_SINCE, series: usageSeries(rows, days, nowMs) }
        }).pipe(internal)

      const changeAccess = (actor: OwnerPrincipal | AgentPrincipal, prefix: string, req: AccessRequest) =>
        Effect.gen(function* () {
          const targetPrefix = actor._tag === "agent" ? actor.key.prefix : prefix
          const nowMs = now()
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

      const limitsView = (k: AgentKey, limits: ReadonlyArray<SpendLimit> | null) => ({ keyPrefix: k.prefix, keyLimits: limits })

      const setLimits = (actor: OwnerPrincipal | AgentPrincipal, prefix: string, limits: ReadonlyArray<SpendLimit> | null) =>
        Effect.gen(function* () {
          if (actor._tag === "agent" && prefix !== actor.key.prefix && prefix !== "self") return yield* Effect.fail(notFound(prefix))
          const targetPrefix = actor._tag === "agent" ? actor.key.prefix : prefix
          const nowMs = now()
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

      return { issue, issueFor, list, revoke, patch, usage, changeAccess, accessChanges, setLimits, selfLimits, setEmbeddedWallet, revokeDeviceKeys }
    })
  )
