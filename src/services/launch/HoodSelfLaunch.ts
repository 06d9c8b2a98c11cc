/**
 * Self-signed launches on Hood from an imported linked EVM wallet (launch spec 2.3, 3.1's
 * self-signed rows, 3.2, 3.3's last paragraph, 3.4, endpoint rules 4 and 5): the service builds
 * the unsigned `createCurve` transaction (the factory entry point is non-payable: nothing is spent
 * at build) and, when the dev buy carries a platform fee, the `feeTransfer` leg, each staked out
 * with a single-use sign claim; the agent has the relay sign them, broadcasts them itself, and
 * `confirm` records what the chain shows. Typed input, one failure (`LaunchError`); no HTTP.
 *
 * Invariants:
 * - No token row at build (3.2): the predicted curve is stored as `pool`; the token row is
 *   inserted by `confirm`, which verifies the launcher and every curve parameter on chain: the
 *   curve sits at the CREATE2 address predicted from the build's own init code (every constructor
 *   argument and the payer as creator), and the receipt's `CurveCreated` names it.
 * - A build with a nonzero fee confirms only with a `feeTxHash` that verifies (a successful plain
 *   transfer of exactly the fee from the payer to the treasury): else `FEE_LEG_MISSING` (402),
 *   nothing recorded. A `devBuySignature` is bound only when its `to` is the curve and its value
 *   exactly `buyAmount`; otherwise it is ignored and the confirm still succeeds (endpoint rule 5).
 * - A repeat build from a linked wallet gets a NEW curve address (a new attempt, new salt), unless
 *   the chain shows the earlier attempt's curve exists: then 409 `prior_attempt_on_chain`, so a
 *   landed launch is confirmed, never built twice (docs/decisions.md).
 * - A TEE wallet's dev buy (buy plus fee, the `tee` rail) is held by the spend gate in the build's
 *   ledger transaction before any leg is signed (a refusal records nothing; the dry run does not
 *   check the USD window, endpoint rule 4), settled at the record from the operation's own legs
 *   (booked when the buy landed; its fee alone when only the fee did), and for a dead attempt by
 *   its dev-buy claim (`hoodSelf/HoodSelfSpend.ts`; docs/decisions.md "The Hood TEE self-signed
 *   dev buy through the spend gate").
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import type { Address, Chain, Hex } from "viem"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import { TierService } from "../accounts/TierService.js"
import { ImageService, type ImageServiceShape } from "../images/ImageService.js"
import { PriceSource, type PriceSourceShape } from "../prices/PriceSource.js"
import { WalletService, type WalletServiceShape } from "../wallets/WalletService.js"
import { makeHoodSelfAttempts } from "./hoodSelf/HoodSelfAttempt.js"
import { makeHoodSelfBuilds } from "./hoodSelf/HoodSelfBuilds.js"
import { makeHoodSelfChain } from "./hoodSelf/HoodSelfChain.js"
import type { SelfDryRunView } from "./internal/SelfDryRunView.js"
import { makeHoodSelfConfirm } from "./hoodSelf/HoodSelfConfirm.js"
import type { HoodSelfContext } from "./hoodSelf/HoodSelfContext.js"
import { makeHoodSelfSpend } from "./hoodSelf/HoodSelfSpend.js"
import type { HoodOperation } from "./HoodOperation.js"
import { launchHoldings } from "./internal/LaunchGates.js"
import { LaunchLedger, type LaunchLedgerShape, layerTest as launchLedgerTest } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import type { LaunchError } from "./LaunchError.js"
import type { SelfLaunchBody } from "./request/DecodeLaunchRequest.js"
import type { SelfCaller } from "./SolanaSelfLaunch.js"
import * as Database from "../../db/Database.js"

/** An unsigned Hood transaction the relay can sign once (the claim binds its serialized bytes). */
export interface HoodUnsignedLeg {
  readonly to: string
  readonly data: string
  /** Wei, decimal string. */
  readonly value: string
  readonly nonce: number
  /** The EIP-1559 transaction, serialized and unsigned (0x hex): what the relay signs. */
  readonly unsignedTransaction: string
  readonly claimId: string
  readonly walletId: string
}

/** A Hood build's artifacts (launch spec 4: `transaction`, `mint`, `pool`, `expiresAt`, `fee`, `feeTransfer`, `clientLaunchId`). */
export interface HoodSelfBuild {
  readonly clientLaunchId: string
  readonly chain: "hood"
  /** The `createCurve` call. */
  readonly transaction: HoodUnsignedLeg
  /** The token the curve will create (its first CREATE). */
  readonly mint: string
  /** The predicted curve address. */
  readonly pool: string
  /** When the sign claims lapse (epoch ms): the relay signs these legs until then. */
  readonly expiresAtMs: number
  readonly fee: { readonly bps: number; readonly feeRaw: string; readonly treasury: string } | null
  /** The platform fee leg (a plain ETH transfer of `fee.feeRaw` to the treasury); null without a fee. */
  readonly feeTransfer: (HoodUnsignedLeg & { readonly quoteAsset: "eth"; readonly amountRaw: string }) | null
  /** A TEE wallet's build: the sequenced operation (its legs are signed one at a time, `nextLeg` first). */
  readonly operation?: HoodOperation
}

export type HoodSelfBuildOutcome = { readonly _tag: "Built"; readonly build: HoodSelfBuild } | { readonly _tag: "Replay"; readonly result: StoredResult }

export interface HoodSelfConfirmInput {
  readonly clientLaunchId: string
  /** The broadcast `createCurve` hash (a linked wallet's build). */
  readonly signature?: string | undefined
  /** A TEE build's operation, and its next leg signed through the relay (2.3). `operationId` alone advances from what the chain shows. */
  readonly operationId?: string | undefined
  readonly signedTransaction?: string | undefined
  readonly feeTxHash?: string | undefined
  readonly devBuySignature?: string | undefined
}

export interface HoodSelfLaunchShape {
  readonly dryRun: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<SelfDryRunView, LaunchError>
  readonly build: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<HoodSelfBuildOutcome, LaunchError>
  readonly confirm: (caller: SelfCaller, input: HoodSelfConfirmInput) => Effect.Effect<StoredResult, LaunchError>
}

export class HoodSelfLaunch extends Context.Tag("curvestream/HoodSelfLaunch")<HoodSelfLaunch, HoodSelfLaunchShape>() {}

export interface HoodSelfLaunchConfig {
  readonly chain: Chain | undefined
  readonly rpcUrl: string | undefined
  readonly factory: Address | undefined
  readonly bondingCurveBytecode: Hex | undefined
  readonly usdg?: Address
  readonly explorerUrl?: string
  readonly baseUrl: string
  readonly exclusiveHolderPassRaw: bigint
  readonly teeLaunchBuysEnabled: boolean
}

export interface HoodSelfLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly wallets: WalletServiceShape
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
  /** USD prices of the quote assets: the spend gate values a TEE wallet's dev buy against the key's txLimit. */
  readonly prices: PriceSourceShape
}

/**
 * The service is a table of methods over parts in `hoodSelf/`: `HoodSelfChain` (the chain's
 * reads and unsigned legs), `HoodSelfAttempt` (an attempt built, claimed and stored),
 * `HoodSelfBuilds` (gates, build, dry run), `HoodSelfConfirm` (verify and record) and
 * `HoodSelfOperation` (a TEE build's sequenced legs), with the pure decisions in `HoodSelfRules`.
 */
export const make = (config: HoodSelfLaunchConfig, deps: HoodSelfLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ctx: HoodSelfContext = {
      config,
      deps,
      withSql: (self) => Effect.provideService(self, SqlClient.SqlClient, sql),
      chain: makeHoodSelfChain(config)
    }
    const spend = makeHoodSelfSpend(ctx)
    const attempts = makeHoodSelfAttempts(ctx, spend)
    const builds = makeHoodSelfBuilds(ctx, attempts, spend)
    const confirms = makeHoodSelfConfirm(ctx, attempts, spend)
    return {
      dryRun: Effect.fn("HoodSelfLaunch.dryRun")(function* (caller: SelfCaller, body: SelfLaunchBody) {
        return yield* builds.dryRun(caller, body)
      }),
      build: Effect.fn("HoodSelfLaunch.build")(function* (caller: SelfCaller, body: SelfLaunchBody) {
        return yield* builds.build(caller, body)
      }),
      confirm: Effect.fn("HoodSelfLaunch.confirm")(function* (caller: SelfCaller, input: HoodSelfConfirmInput) {
        return yield* confirms.confirm(caller, input)
      })
    } satisfies HoodSelfLaunchShape
  })

export const layer = (
  config: HoodSelfLaunchConfig
): Layer.Layer<HoodSelfLaunch, never, SqlClient.SqlClient | LaunchLedger | ImageService | WalletService | TierService | AgentLaunchRegistry | PriceSource> =>
  Layer.effect(
    HoodSelfLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        wallets: yield* WalletService,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry,
        prices: yield* PriceSource
      })
    })
  )

/** The real Hood self launch over `Database.layerTest` and the real ledger (`LaunchLedger.layerTest`); the rest of its ports are the test's. */
export const layerTest = (config: HoodSelfLaunchConfig) => layer(config).pipe(Layer.provide(launchLedgerTest), Layer.provide(Database.layerTest))
