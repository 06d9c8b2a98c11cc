/**
 * The account's wallets (spec document 2: 2.3, the rebind rules of 4.1, limits of 8): linked
 * (attribution-only), imported (HPKE import, spend-capable through the sign relay) and TEE
 * wallets (bound to one agent key, `allowLaunch`), the sign relay's single-use build claims, and
 * TEE rebind. Keys are custodied by the `WalletProvider`; this service keeps the account's rows.
 *
 * The service is composed of one part per responsibility, each owning its invariants:
 * `internal/WalletRows` (the rows, the one-active-row-per-address and plan-count rules),
 * `internal/LinkedWallets` (list, link, revoke, update), `internal/WalletImport` (HPKE import),
 * `internal/TeeWallets` (TEE creation and which keys may hold TEE wallets), `internal/SignClaims`
 * (build claims and the sign relay) and `internal/TeeRebind` with its pure `RebindRules`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { type Plan, resolvePlans } from "../../domain/Plans.js"
import type { WalletChain } from "./ChainKeys.js"
import { layerTest as masterKeyTest, type MasterKeyError, WalletMasterKey } from "./MasterKey.js"
import type { KeyDirectory, Principal } from "./Principal.js"
import { type EmbeddedWallet, layerTest as walletProviderTest, WalletProvider } from "./WalletProvider.js"
import { type PayerError, type RebindError, type SignClaimError, type WalletError, walletError } from "./WalletError.js"
import { type LinkInput, makeLinkedWallets, type RevokeResult, type WalletPatch } from "./internal/LinkedWallets.js"
import { makeSignClaims, type ClaimOutcome, type ClaimState, type RecordBuiltInput, type SignInput, type SignResult } from "./internal/SignClaims.js"
import { type ClaimReconciler, makeTeeRebind, pendingReconciler, type RebindInput, type RebindRecord, type RebindResult } from "./internal/TeeRebind.js"
import { type CreateTeeInput, makeTeeWallets } from "./internal/TeeWallets.js"
import { type ImportInit, type ImportSubmitInput, makeWalletImport } from "./internal/WalletImport.js"
import { makeWalletRows, type WalletView } from "./internal/WalletRows.js"

export * from "./WalletLimits.js"
export * from "./WalletError.js"
export type { LinkInput, RevokeResult, WalletPatch } from "./internal/LinkedWallets.js"
export type { ClaimOutcome, ClaimState, RecordBuiltInput, SignInput, SignResult } from "./internal/SignClaims.js"
export { type ClaimReconciler, pendingReconciler, type RebindInput, type RebindRecord, type RebindResult } from "./internal/TeeRebind.js"
export type { CreateTeeInput } from "./internal/TeeWallets.js"
export type { ImportInit, ImportSubmitInput } from "./internal/WalletImport.js"
export { walletView, type WalletKind, type WalletView } from "./internal/WalletRows.js"

export interface WalletServiceOptions {
  readonly plans: ReadonlyArray<Plan>
  readonly keys: KeyDirectory
  readonly reconciler?: ClaimReconciler
}

/**
 * The service. Refusals are the tagged errors of `WalletError.ts`; a storage failure in any method
 * is `WalletError` `storage`, logged once where it happens.
 */
export interface WalletServiceShape {
  readonly list: (p: Principal) => Effect.Effect<{ wallets: ReadonlyArray<WalletView>; embeddedWallets: ReadonlyArray<Omit<EmbeddedWallet, "providerWalletId">> }, WalletError>
  readonly linkChallenge: (p: Principal, chain: WalletChain, address: string) => string
  readonly link: (p: Principal, input: LinkInput) => Effect.Effect<WalletView, WalletError>
  /** Tombstones the row (idempotent); a row with a policy has its rules cleared, best effort. */
  readonly revoke: (p: Principal, walletId: string) => Effect.Effect<RevokeResult, WalletError>
  readonly importInit: (p: Principal, chain: WalletChain, address: string) => Effect.Effect<ImportInit, WalletError>
  readonly importSubmit: (p: Principal, input: ImportSubmitInput) => Effect.Effect<WalletView, WalletError>
  readonly createTee: (p: Principal, input: CreateTeeInput) => Effect.Effect<WalletView, WalletError>
  readonly update: (p: Principal, walletId: string, patch: WalletPatch) => Effect.Effect<WalletView, WalletError>
  /** Stakes out a single-use sign claim for a transaction the service built (launch, trade, staking ...). */
  readonly recordBuilt: (input: RecordBuiltInput) => Effect.Effect<{ claimId: string; expiresAtMs: number }, PayerError | SignClaimError | WalletError>
  /** The sign relay: signs a recorded transaction once. */
  readonly signClaimed: (p: Principal, walletId: string, input: SignInput) => Effect.Effect<SignResult, SignClaimError | WalletError>
  /** Records what became of a forwarded sign (the launch service after confirm, a sweeper after expiry). */
  readonly settleClaim: (claimId: string, outcome: ClaimOutcome) => Effect.Effect<void, WalletError>
  /** A claim's state and the relay's signature once it signed; undefined for an unknown claim. */
  readonly claimStatus: (claimId: string) => Effect.Effect<{ readonly state: ClaimState; readonly signature: string | null } | undefined, WalletError>
  /** Expires a claim the relay never signed once its lifetime passed: true when this call did (its bytes can never be signed now). */
  readonly expireUnsigned: (claimId: string) => Effect.Effect<boolean, WalletError>
  /** Expires a claim only if the relay has not signed it yet (any lifetime): true when this call did; false: it is signed or settled. */
  readonly expireOpen: (claimId: string) => Effect.Effect<boolean, WalletError>
  /** Fails a signed claim once its lifetime passed (the service's clock): true when this call did. */
  readonly signedPastLifetime: (claimId: string) => Effect.Effect<boolean, WalletError>
  readonly failSignedPastLifetime: (claimId: string) => Effect.Effect<boolean, WalletError>
  /** A spend-capable wallet the key may use as payer on `chain` (self-signed builds), else the refusal. */
  readonly resolvePayer: (p: Principal, walletId: string, chain: WalletChain, purpose: "launch" | "spend") => Effect.Effect<WalletView, PayerError | WalletError>
  readonly rebind: (p: Principal, input: RebindInput) => Effect.Effect<RebindResult, RebindError | WalletError>
  readonly rebinds: (p: Principal, walletId: string | undefined, limit: number) => Effect.Effect<ReadonlyArray<RebindRecord>, WalletError>
}

/**
 * What a rail's settled attempt does to its build's sign claim: a claim the relay signed follows
 * the outcome (confirmed, failed); one it never used (the caller signed with its own key) says
 * nothing about the attempt and only expires. Undefined without a wallet service.
 */
export const settleSignedClaim = (wallets: WalletServiceShape | undefined) =>
  wallets === undefined
    ? undefined
    : (claimId: string, outcome: "confirmed" | "failed") =>
        Effect.flatMap(wallets.claimStatus(claimId), (claim) => (claim?.state === "signed" ? wallets.settleClaim(claimId, outcome) : Effect.void))

export class WalletService extends Context.Tag("curvestream/WalletService")<WalletService, WalletServiceShape>() {}

/** Storage failures, decided once at the service's edge (logged; the caller sees `storage`). */
const storage = storageFailure("wallets", () => walletError("storage", "Internal error; nothing was recorded"))

export const make = (options: WalletServiceOptions) =>
  Effect.gen(function* () {
    /** Time: the Effect `Clock` the service is built under (a test builds it on its own clock). */
    const clock = yield* Effect.clock
    const ctx = {
      sql: yield* SqlClient.SqlClient,
      provider: yield* WalletProvider,
      masterKey: yield* WalletMasterKey,
      keys: options.keys,
      reconciler: options.reconciler ?? pendingReconciler,
      plans: options.plans,
      clock
    }
    const rows = makeWalletRows(ctx)
    const claims = makeSignClaims(ctx, rows)
    const linked = makeLinkedWallets(ctx, rows)
    const imports = makeWalletImport(ctx, rows)
    const tee = makeTeeWallets(ctx, rows)
    const rebind = makeTeeRebind(ctx, rows, claims.settleClaim)
    const service: WalletServiceShape = {
      list: (p) => storage(linked.list(p)),
      linkChallenge: linked.linkChallenge,
      link: (p, input) => storage(linked.link(p, input)),
      revoke: (p, walletId) => storage(linked.revoke(p, walletId)),
      importInit: (p, chain, address) => storage(imports.importInit(p, chain, address)),
      importSubmit: (p, input) => storage(imports.importSubmit(p, input)),
      createTee: (p, input) => storage(tee.createTee(p, input)),
      update: (p, walletId, patch) => storage(linked.update(p, walletId, patch)),
      recordBuilt: (input) => storage(claims.recordBuilt(input)),
      signClaimed: (p, walletId, input) => storage(claims.signClaimed(p, walletId, input)),
      settleClaim: (claimId, outcome) => storage(claims.settleClaim(claimId, outcome)),
      claimStatus: (claimId) => storage(claims.claimStatus(claimId)),
      expireUnsigned: (claimId) => storage(claims.expireUnsigned(claimId)),
      expireOpen: (claimId) => storage(claims.expireOpen(claimId)),
      signedPastLifetime: (claimId) => storage(claims.signedPastLifetime(claimId)),
      failSignedPastLifetime: (claimId) => storage(claims.failSignedPastLifetime(claimId)),
      resolvePayer: (p, walletId, chain, purpose) => storage(claims.resolvePayer(p, walletId, chain, purpose)),
      rebind: (p, input) => storage(rebind.rebind(p, input)),
      rebinds: (p, walletId, limit) => storage(rebind.rebinds(p, walletId, limit))
    }
    return service
  })

export const layer = (options: WalletServiceOptions): Layer.Layer<WalletService, never, SqlClient.SqlClient | WalletProvider | WalletMasterKey> =>
  Layer.effect(WalletService, make(options))

/**
 * The real wallet service over `Database.layerTest`, the real local provider and the fixed master
 * key (their `layerTest`), the default plans. The key directory (who holds which agent key) and the
 * chain's answers for claims (`reconciler`, default none: `pending`) are the test's.
 */
export const layerTest = (options: Omit<WalletServiceOptions, "plans">): Layer.Layer<WalletService, MasterKeyError | SqlError> =>
  layer({ plans: resolvePlans({}, 30), ...options }).pipe(Layer.provide(Layer.mergeAll(walletProviderTest, masterKeyTest, Database.layerTest)))
