/**
 * What the wallet rules need to know about the caller and about agent keys, independent of how
 * authentication works. The auth middleware (api/auth) maps a verified credential to a
 * `Principal`; the key store answers `KeyDirectory` lookups. The wallet module never reads key
 * rows itself, so it depends on neither.
 *
 * TEE bindings (which key a TEE wallet is bound to) live in the wallet tables, not here: the
 * wallet service reads them fresh on every request, so a rebind takes effect on the old key's
 * very next build or sign.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect } from "effect"
import type { PlanId } from "../../domain/Plans.js"

export type CredentialKind = "session" | "device" | "agentKey"

export interface Principal {
  readonly accountId: string
  /** The account's effective plan at this request (display resolution max > pro > free). */
  readonly plan: PlanId
  readonly credential: CredentialKind
  /** Agent key id (stable row id, never the secret); null for a session or device token. */
  readonly keyId: string | null
  /** The key's 8-character prefix; null for a session or device token. */
  readonly keyPrefix: string | null
  /** The key's stored scopes; empty for a session or device token (owners are not scope-gated). */
  readonly scopes: ReadonlyArray<string>
  /** `test` for a `svc_test_...` key; null for a session or device token. */
  readonly environment: "production" | "test" | null
  /** The key's embedded-wallet permission; null for a session or device token. */
  readonly embeddedWallet: "allowed" | "denied" | null
  /** The device's prefix when the credential is a device token (rebind audit). */
  readonly devicePrefix: string | null
}

/** What a route needs from authentication; the middleware may enforce it, the route checks it again. */
export interface AuthNeed {
  /** Credential kinds the route takes. */
  readonly credentials: ReadonlyArray<CredentialKind>
  /** Scope an agent key must hold (owners pass). */
  readonly scope?: string
  /** `allow` when a paused agent key may use the route (reads); a paused key is refused otherwise. */
  readonly whilePaused?: "allow"
}

/** Header name → value, lower-case names, only the headers the route declared. */
export type AuthHeaders = Readonly<Record<string, string>>

/** The request headers the wallet routes' `Authenticate` reads (declared on every wallet route). */
export const AUTH_HEADERS: ReadonlyArray<string> = ["x-api-key", "authorization"]

export interface KeySpendLimit {
  readonly asset: string
  readonly maxPerTxRaw: string
}

/** An agent key as the wallet rules see it (rebind target, TEE binding). */
export interface KeyInfo {
  readonly keyId: string
  readonly keyPrefix: string
  readonly accountId: string
  readonly label: string | null
  readonly environment: "production" | "test"
  readonly scopes: ReadonlyArray<string>
  readonly revokedAtMs: number | null
  readonly expiresAtMs: number | null
  readonly paused: boolean
  /** `selected`: the key reaches only wallets assigned to it (one assignment row per wallet). */
  readonly walletScope: "all" | "selected"
  /** Per-asset caps; null when the key has none (uncapped). */
  readonly spendLimits: ReadonlyArray<KeySpendLimit> | null
}

export interface KeyDirectory {
  /** The key with this prefix on this account; none for an unknown prefix or another account's key. */
  readonly findByPrefix: (accountId: string, keyPrefix: string) => Effect.Effect<KeyInfo | undefined, SqlError>
}

export const isOwner = (p: Principal): boolean => p.credential === "session" || p.credential === "device"

/** Owners hold every right; an agent key holds its scopes. */
export const holdsScope = (p: Principal, scope: string): boolean => isOwner(p) || p.scopes.includes(scope)
