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
import type { Plan } from "../../domain/Plans.js"
import type { WalletChain } from "./ChainKeys.js"
import { WalletMasterKey } from "./MasterKey.js"
import type { KeyDirectory, Principal } from "./Principal.js"
import { type EmbeddedWallet, WalletProvider } from "./WalletProvider.js"
import type { WalletRefusal } from "./WalletErrors.js"
import { type LinkInput, makeLinkedWallets, type WalletPatch } from "./internal/LinkedWallets.js"
import { makeSignClaims, type ClaimOutcome, type RecordBuiltInput, type SignInput, type SignResult } from "./internal/SignClaims.js"
import { type ClaimReconciler, makeTeeRebind, pendingReconciler, type RebindInput, type RebindResponse } from "./internal/TeeRebind.js"
import { type CreateTeeInput, makeTeeWallets } from "./internal/TeeWallets.js"
import { type ImportSubmitInput, makeWalletImport } from "./internal/WalletImport.js"
import { makeWalletRows, type WalletView } from "./internal/WalletRows.js"

export * from "./WalletLimits.js"
export { WalletRefusal } from "./WalletErrors.js"
export type { LinkInput, WalletPatch } from "./internal/LinkedWallets.js"
export type { ClaimOutcome, RecordBuiltInput, SignInput, SignResult } from "./internal/SignClaims.js"
export { type ClaimReconciler, pendingReconciler, type RebindInput, type RebindResponse } from "./internal/TeeRebind.js"
export type { CreateTeeInput } from "./internal/TeeWallets.js"
export type { ImportSubmitInput } from "./internal/WalletImport.js"
export { walletView, type WalletKind, type WalletView } from "./internal/WalletRows.js"

export interface WalletServiceOptions {
  readonly plans: ReadonlyArray<Plan>
  readonly keys: KeyDirectory
  readonly reconciler?: ClaimReconciler
  readonly nowMs?: () => number
}

export interface WalletServiceShape {
  readonly list: (p: Principal) => Effect.Effect<{ wallets: ReadonlyArray<WalletView>; embeddedWallets: ReadonlyArray<Omit<EmbeddedWallet, "providerWalletId">> }, SqlError>
  readonly linkChallenge: (p: Principal, chain: WalletChain, address: string) => string
  readonly link: (p: Principal, input: LinkInput) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly revoke: (p: Principal, walletId: string) => Effect.Effect<Record<string, unknown>, WalletRefusal | SqlError>
  readonly importInit: (p: Principal, chain: WalletChain, address: string) => Effect.Effect<Record<string, unknown>, WalletRefusal | SqlError>
  readonly importSubmit: (p: Principal, input: ImportSubmitInput) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly createTee: (p: Principal, input: CreateTeeInput) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly update: (p: Principal, walletId: string, patch: WalletPatch) => Effect.Effect<WalletView, WalletRefusal | SqlError>
  /** Stakes out a single-use sign claim for a transaction the service built (launch, trade, staking ...). */
  readonly recordBuilt: (input: RecordBuiltInput) => Effect.Effect<{ claimId: string; expiresAtMs: number }, WalletRefusal | SqlError>
  /** The sign relay: signs a recorded transaction once. */
  readonly signClaimed: (p: Principal, walletId: string, input: SignInput) => Effect.Effect<SignResult, WalletRefusal | SqlError>
  /** Records what became of a forwarded sign (the launch service after confirm, a sweeper after expiry). */
  readonly settleClaim: (claimId: string, outcome: ClaimOutcome) => Effect.Effect<void, SqlError>
  /** A spend-capable wallet the key may use as payer on `chain` (self-signed builds), else the refusal. */
  readonly resolvePayer: (p: Principal, walletId: string, chain: WalletChain, purpose: "launch" | "spend") => Effect.Effect<WalletView, WalletRefusal | SqlError>
  readonly rebind: (p: Principal, input: RebindInput) => Effect.Effect<RebindResponse, WalletRefusal | SqlError>
  readonly rebinds: (p: Principal, walletId: string | undefined, limit: number) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError>
}

export class WalletService extends Context.Tag("curvestream/WalletService")<WalletService, WalletServiceShape>() {}

export const make = (options: WalletServiceOptions) =>
  Effect.gen(function* () {
    const ctx = {
      sql: yield* SqlClient.SqlClient,
      provider: yield* WalletProvider,
      masterKey: yield* WalletMasterKey,
      keys: options.keys,
      reconciler: options.reconciler ?? pendingReconciler,
      plans: options.plans,
      nowMs: options.nowMs ?? Date.now
    }
    const rows = makeWalletRows(ctx)
    const claims = makeSignClaims(ctx, rows)
    const service: WalletServiceShape = {
      ...makeLinkedWallets(ctx, rows),
      ...makeWalletImport(ctx, rows),
      ...makeTeeWallets(ctx, rows),
      ...claims,
      ...makeTeeRebind(ctx, rows, claims.settleClaim)
    }
    return service
  })

export const layer = (options: WalletServiceOptions): Layer.Layer<WalletService, never, SqlClient.SqlClient | WalletProvider | WalletMasterKey> =>
  Layer.effect(WalletService, make(options))
