/**
 * The key service's common parts (`KeyService.ts` is the table of methods over them): the typed
 * input, the views, the storage failures and the context every part works over.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Plan } from "../../../domain/Plans.js"
import { storageFailure } from "../../../domain/ServiceFailure.js"
import { AccountEvents } from "../../accounts/AccountEvents.js"
import { type Account, findAccount } from "../../accounts/AccountRepository.js"
import { AccountWallets } from "../../accounts/AccountWallets.js"
import { TierService } from "../../accounts/TierService.js"
import { type Caps, effectiveCaps, type KeyUsage, type TxLimit } from "../KeyRules.js"
import { keyError } from "../KeyError.js"
import * as Repo from "../KeyRepository.js"
import { type AgentKey, type Environment, keyStatus } from "../KeyRepository.js"
import { KeyStore } from "../KeyStore.js"
import { type AccessLevel, levelOf } from "../Scopes.js"

export const MAX_ACTIVE_KEYS = 12
export const LABEL_MAX_CHARS = 64
export const AVATAR_MAX_CHARS = 256
export const HISTORY_LIMIT_MAX = 100
export const DAY_MS = 86_400_000

export type Json = Record<string, unknown>

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

export const capsView = (c: Caps) => ({ rateLimitPerMin: c.rateLimitPerMin, dailyLaunchCap: c.dailyLaunchCap })

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

export const notFound = (prefix: string) => keyError("not_found", `No key with prefix '${prefix}' on this account`, { field: "prefix" })
export const revokedKey = () => keyError("revoked", "Key has been revoked")

/** A storage failure, decided once: `reason` says which spec refusal it becomes. */
export const storageAs = (reason: "storage" | "issuance_storage" | "access_unavailable", message: string) =>
  storageFailure("keys", () => keyError(reason, message, reason === "storage" ? {} : { retryable: true }))
export const internal = storageAs("storage", "Internal error; nothing was recorded")

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

/** Time is the Effect `Clock` the service is built under. */
export interface KeyServiceOptions {
  /** Public base URL of the main service, returned as `apiBaseUrl` when set. */
  readonly apiBaseUrl?: string | undefined
}

/** What every part of the key service works over: its ports, time, storage and the common reads. */
export const keyContext = (options: KeyServiceOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const wallets = yield* AccountWallets
    const events = yield* AccountEvents
    const tiers = yield* TierService
    const store = yield* KeyStore
    /** Now, in ms: the Effect `Clock` the service is built under. */
    const now = (yield* Effect.clock).currentTimeMillis
    const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> => Effect.provideService(e, SqlClient.SqlClient, sql)
    const tx = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E | SqlError> => withSql(sql.withTransaction(e))

    const accountOf = (accountId: string) =>
      Effect.flatMap(withSql(findAccount(accountId)), (a) =>
        a === undefined ? Effect.fail(keyError("account_gone", "The account no longer exists")) : Effect.succeed(a)
      )

    const issuanceStorage = storageAs("issuance_storage", "Key issuance failed; nothing was issued")
    const planOf = (account: Account, nowMs: number) => Effect.map(tiers.tierOf(account, nowMs), (t) => tiers.plan(t))

    const ownKey = (accountId: string, prefix: string) =>
      Effect.flatMap(withSql(Repo.findAccountKey(accountId, prefix)), (k) => (k === undefined ? Effect.fail(notFound(prefix)) : Effect.succeed(k)))

    return { options, sql, wallets, events, tiers, store, now, withSql, tx, accountOf, issuanceStorage, planOf, ownKey }
  })

export type KeyCtx = Effect.Effect.Success<ReturnType<typeof keyContext>>
