/**
 * Creator fees (spec document 2: 2.5, 3.7, 4.3): the fees the account's launched tokens have
 * earned, as the chain would pay them now, and their claim from the embedded wallet. Tokens are the
 * account's rows of `launched_tokens`, sorted by mint; the recipient is fixed at launch (Solana: the
 * fee vault's creator, `SolanaCreatorFees`; Hood: the fee splitter's streamer, `HoodCreatorFees`,
 * one call per asset with `calls[]`, `outcome` (`FeeClaimOutcome`) and `dust`). A claim needs no idempotency id: it pays only what the chain still
 * owes; one claim per token runs at a time, across processes and restarts (a token lease in
 * PostgreSQL, `FeeClaimLocks`; a simultaneous one answers `below_dust`), and a process runs at most
 * `claimsInFlightMax` claims at once.
 *
 * Claimability (4.3 rules 2 to 6), in order: the recipient must be the account's embedded wallet
 * (another wallet of the account: `wallet_not_signable`; none: `not_recipient`), the key must allow
 * the embedded wallet (`embedded_wallet_not_permitted`), its delegation must be on
 * (`delegation_off`), the amount above the dust floor (`below_dust`), and the wallet must pay the
 * fee and a first token account's rent (`insufficient_gas`); on Hood the claim's calls must be
 * estimated (`gas_estimate_unavailable`) and their cost paid (`insufficient_gas`), checked for the
 * list as for the claim.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../wallets/Principal.js"
import type { WalletProvider } from "../wallets/WalletProvider.js"
import type { WalletService } from "../wallets/WalletService.js"
import type { FeeError } from "./FeeError.js"
import type { HoodFeeOptions } from "./HoodCreatorFees.js"
import type { FeeClaim, FeeList } from "./FeeViews.js"
import { makeFeeAssessment } from "./internal/FeeAssessment.js"
import { makeFeeClaims } from "./internal/FeeClaims.js"
import { feeContext } from "./internal/FeeContext.js"
import { makeFeeList } from "./internal/FeeList.js"
import * as Database from "../../db/Database.js"
import { layerTest as walletProviderTest } from "../wallets/WalletProvider.js"

export { FEE_PAGE_DEFAULT, FEE_PAGE_MAX } from "./internal/FeeContext.js"

export interface FeeCaller {
  readonly accountId: string
  readonly embeddedWallet: "allowed" | "denied" | null
  readonly principal: Principal
}

export interface CreatorFeesOptions {
  readonly solanaRpcUrl: string
  /** The Hood side; undefined: Hood entries are unreadable and their claims unavailable. */
  readonly hood?: HoodFeeOptions | undefined
  readonly confirmTimeoutMs?: number
  readonly pollIntervalMs?: number
  readonly claimsInFlightMax?: number
  /** How long a claim's token lease lasts when its holder dies (default `FEE_CLAIM_LEASE_MS`). */
  readonly claimLeaseMs?: number
}

export interface CreatorFeesShape {
  readonly list: (caller: FeeCaller, page: { readonly limit: number; readonly cursor: string | undefined }) => Effect.Effect<FeeList, FeeError>
  readonly claim: (caller: FeeCaller, mint: string, dryRun: boolean) => Effect.Effect<FeeClaim, FeeError>
}

export class CreatorFees extends Context.Tag("curvestream/CreatorFees")<CreatorFees, CreatorFeesShape>() {}

/** The service: a table of methods over its parts (claimability, the list, the claim). */
export const make = (options: CreatorFeesOptions) =>
  Effect.map(feeContext(options), (ctx) => {
    const assessment = makeFeeAssessment(ctx)
    return { ...makeFeeList(ctx, assessment), ...makeFeeClaims(ctx, assessment) } satisfies CreatorFeesShape
  })

export const layer = (options: CreatorFeesOptions): Layer.Layer<CreatorFees, never, SqlClient.SqlClient | WalletProvider | WalletService> =>
  Layer.effect(CreatorFees, make(options))

/** The real creator fees over `Database.layerTest` and the real local provider (`WalletProvider.layerTest`); the wallet service is the test's. */
export const layerTest = (options: CreatorFeesOptions) => layer(options).pipe(Layer.provide(walletProviderTest), Layer.provide(Database.layerTest))
