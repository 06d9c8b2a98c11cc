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
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import type { AccountEvents } from "../accounts/AccountEvents.js"
import type { Account } from "../accounts/AccountRepository.js"
import type { AccountWallets } from "../accounts/AccountWallets.js"
import type { BalanceReader } from "../accounts/BalanceReader.js"
import * as TierServiceModule from "../accounts/TierService.js"
import type { TierService } from "../accounts/TierService.js"
import type { KeyError } from "./KeyError.js"
import * as KeyStoreModule from "./KeyStore.js"
import type { KeyStore } from "./KeyStore.js"
import type { SpendLimit } from "./KeyRules.js"
import type { AgentPrincipal, OwnerPrincipal } from "./Principals.js"
import { makeKeyAccessChanges } from "./internal/KeyAccessChanges.js"
import { makeKeyIssuance } from "./internal/KeyIssuance.js"
import { type AccessRequest, type IssuedKey, type IssueOptions, type IssueRequest, type Json, keyContext, type KeyServiceOptions, type PatchRequest } from "./internal/KeyParts.js"
import { makeKeyRecords } from "./internal/KeyRecords.js"

export {
  type AccessRequest,
  AVATAR_MAX_CHARS,
  HISTORY_LIMIT_MAX,
  type IssuedKey,
  type IssueOptions,
  type IssueRequest,
  keyView,
  type KeyServiceOptions,
  LABEL_MAX_CHARS,
  MAX_ACTIVE_KEYS,
  type PatchRequest
} from "./internal/KeyParts.js"

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

/** The service: a table of methods over its parts (issuance, the key's record, access changes). */
export const layer = (
  options: KeyServiceOptions
): Layer.Layer<KeyService, never, SqlClient.SqlClient | AccountWallets | AccountEvents | TierService | KeyStore> =>
  Layer.effect(
    KeyService,
    Effect.map(keyContext(options), (ctx) => ({ ...makeKeyIssuance(ctx), ...makeKeyRecords(ctx), ...makeKeyAccessChanges(ctx) }) satisfies KeyServiceShape)
  )

/**
 * The real key service over `Database.layerTest`, with the real key store and tier service
 * (`layerTest`); the wallet side, the account events and the balances are the test's.
 */
export const layerTest: Layer.Layer<KeyService, SqlError, AccountWallets | AccountEvents | BalanceReader> = layer({ apiBaseUrl: "https://api.example.test" }).pipe(
  Layer.provide(Layer.merge(KeyStoreModule.layerTest, TierServiceModule.layerTest)),
  Layer.provide(Database.layerTest)
)
