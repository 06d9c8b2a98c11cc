/**
 * Self-signed launches on Solana (launch spec 1 rules 2-4, 2.3, 3.1's self-signed rows, 3.2, 3.3,
 * endpoint rules 4-6): the service builds the launch transaction for the agent's own linked
 * (imported) or TEE wallet, stakes out a single-use sign claim so the relay signs exactly that
 * build once, and `confirm` records what the chain shows after the agent broadcast it. Typed input
 * (a decoded `SelfLaunchBody` and the caller), one failure (`LaunchError`); no HTTP.
 *
 * Order of a build (every refusal before the ledger's `begin` or `rebuild` records nothing):
 *   plan (`TIER_REQUIRED`) → the lazy 30-minute sweep of this account's own builds → the payer
 *   rules (wallet on this account, active, spend-capable, on Solana; TEE: bound to this key and
 *   `allowLaunch`) → TEE dev buy (0 unless `TEE_LAUNCH_BUYS_ENABLED`) → the key's per-asset cap on
 *   `buyAmount` plus the platform fee → then either the repeat table of 3.3 (an earlier build of
 *   this id and body is in flight or was swept), or a new attempt: exclusive eligibility → image
 *   fetch → size → re-host → build (fresh blockhash, signed by the attempt's mint) → `begin`,
 *   whose transaction also stores the build, inserts the token row `hidden` and stakes out the claim.
 *
 * Invariants:
 * - Money moves once: the service never signs for the payer nor sends. An attempt's mint is
 *   derived from (account, id, attempt), so one attempt can create at most one curve; a new
 *   transaction (and mint) is handed out only when the chain proves the earlier one dead (3.3).
 * - A repeat that is refused or answers the same transaction writes nothing (the clock does not
 *   move). Overlapping builds return one transaction; the loser answers retryable `LAUNCH_FAILED`.
 * - `confirm` writes only what it verified on chain: a successful transaction, the build's payer
 *   among its signers, the attempt's mint touched and its curve created by the payer. It may be
 *   called after `expiresAt`, and confirms a swept build from its landed signature even at the cap.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import type { Plan } from "../../domain/Plans.js"
import { TierService } from "../accounts/TierService.js"
import { ImageService, type ImageServiceShape } from "../images/ImageService.js"
import type { SpendLimit } from "../keys/KeyRules.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletService, type WalletServiceShape } from "../wallets/WalletService.js"
import { PriceSource, type PriceSourceShape } from "../prices/PriceSource.js"
import { launchHoldings } from "./internal/LaunchGates.js"
import { LaunchLedger, type LaunchLedgerShape, layerTest as launchLedgerTest } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import type { LaunchError } from "./LaunchError.js"
import type { SelfLaunchBody } from "./request/DecodeLaunchRequest.js"
import { SolanaLaunch, type SolanaLaunchShape } from "./SolanaLaunch.js"
import { makeSolanaSelfAttempts } from "./solanaSelf/SolanaSelfAttempt.js"
import { makeSolanaSelfBuilds } from "./solanaSelf/SolanaSelfBuilds.js"
import { makeSolanaSelfConfirm } from "./solanaSelf/SolanaSelfConfirm.js"
import type { SolanaSelfContext } from "./solanaSelf/SolanaSelfContext.js"
import type { SelfDryRunView } from "./internal/SelfDryRunView.js"
import { makeSolanaSelfGates } from "./solanaSelf/SolanaSelfGates.js"
import * as Database from "../../db/Database.js"

export interface SelfCaller {
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  /** The key's issued daily launch cap (the effective cap is the higher of it and the plan's). */
  readonly keyDailyCap: number
  readonly plan: Plan
  /** The key's per-asset caps (spec document 2, 2.1); null: uncapped. */
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  /** The caller as the wallet rules see it (payer rules, TEE binding). */
  readonly principal: Principal
}

export interface SelfConfirmInput {
  readonly clientLaunchId: string
  readonly signature: string
}

/** The unsigned artifacts of a build (launch spec 4: `transaction`, `mint`, `pool`, `expiresAt`, `fee`, `clientLaunchId`). */
export interface SelfBuild {
  readonly clientLaunchId: string
  /** Wire bytes, base64: the mint's signature in place, the payer's slot empty. */
  readonly transaction: string
  readonly mint: string
  readonly pool: string
  /** Epoch ms at which the transaction's blockhash is expected to expire (docs/decisions.md). */
  readonly expiresAtMs: number
  /** The platform fee leg of the dev buy; null without one. */
  readonly fee: { readonly bps: number; readonly feeRaw: string; readonly treasury: string } | null
  /** The single-use claim the sign relay signs this build under. */
  readonly signClaim: { readonly claimId: string; readonly walletId: string }
}

export type SelfBuildOutcome =
  | { readonly _tag: "Built"; readonly build: SelfBuild }
  /** Same id and body already confirmed: the stored launch result. */
  | { readonly _tag: "Replay"; readonly result: StoredResult }

export interface SolanaSelfLaunchShape {
  /** Build's checks with the same refusals; nothing built, reserved, recorded or uploaded (endpoint rule 4). */
  readonly dryRun: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<SelfDryRunView, LaunchError>
  readonly build: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<SelfBuildOutcome, LaunchError>
  /** Verifies the broadcast signature on chain and records the launch (3.1, 3.2). */
  readonly confirm: (caller: SelfCaller, input: SelfConfirmInput) => Effect.Effect<StoredResult, LaunchError>
}

export class SolanaSelfLaunch extends Context.Tag("curvestream/SolanaSelfLaunch")<SolanaSelfLaunch, SolanaSelfLaunchShape>() {}

export interface SolanaSelfLaunchConfig {
  readonly baseUrl: string
  readonly solanaExplorerUrl: string
  /** Holder pass (docs/decisions.md): platform-token units (raw) held or staked for `exclusive`. */
  readonly exclusiveHolderPassRaw: bigint
  /** `TEE_LAUNCH_BUYS_ENABLED`: a TEE wallet may carry a dev buy (general rule 3). */
  readonly teeLaunchBuysEnabled: boolean
  /** The cluster's slot time, turning blocks into `expiresAt` and `retryAfter` (default 400 ms). */
  readonly slotMs?: number
}

export interface SolanaSelfLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly solana: SolanaLaunchShape
  readonly wallets: WalletServiceShape
  /** Raw platform-token holdings (held + staked) of the account; undefined when unreadable. */
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
  /** USD prices of the quote assets: the spend gate values a dev buy against the key's txLimit. */
  readonly prices: PriceSourceShape
}

/**
 * The service is a table of methods over parts in `solanaSelf/`: `SolanaSelfGates`,
 * `SolanaSelfAttempt` (an attempt built, claimed and stored), `SolanaSelfBuilds` (build with the
 * repeat table, dry run) and `SolanaSelfConfirm`, with the dry run's view in `internal/SelfDryRunView`.
 */
export const make = (config: SolanaSelfLaunchConfig, deps: SolanaSelfLaunchDeps) =>
  Effect.gen(function* () {
    const ctx: SolanaSelfContext = {
      config,
      deps,
      sql: yield* SqlClient.SqlClient,
      slotMs: config.slotMs ?? 400,
      links: { baseUrl: config.baseUrl, solanaExplorerUrl: config.solanaExplorerUrl }
    }
    const gates = makeSolanaSelfGates(ctx)
    const attempts = makeSolanaSelfAttempts(ctx, gates)
    const builds = makeSolanaSelfBuilds(ctx, gates, attempts)
    const confirms = makeSolanaSelfConfirm(ctx, gates, attempts)
    return {
      dryRun: Effect.fn("SolanaSelfLaunch.dryRun")(function* (caller: SelfCaller, body: SelfLaunchBody) {
        return yield* builds.dryRun(caller, body)
      }),
      build: Effect.fn("SolanaSelfLaunch.build")(function* (caller: SelfCaller, body: SelfLaunchBody) {
        return yield* builds.build(caller, body)
      }),
      confirm: Effect.fn("SolanaSelfLaunch.confirm")(function* (caller: SelfCaller, input: SelfConfirmInput) {
        return yield* confirms.confirm(caller, input)
      })
    } satisfies SolanaSelfLaunchShape
  })

export const layer = (
  config: SolanaSelfLaunchConfig
): Layer.Layer<SolanaSelfLaunch, never, SqlClient.SqlClient | LaunchLedger | ImageService | SolanaLaunch | WalletService | TierService | AgentLaunchRegistry | PriceSource> =>
  Layer.effect(
    SolanaSelfLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        solana: yield* SolanaLaunch,
        wallets: yield* WalletService,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry,
        prices: yield* PriceSource
      })
    })
  )

/** The real Solana self launch over `Database.layerTest` and the real ledger (`LaunchLedger.layerTest`); the rest of its ports are the test's. */
export const layerTest = (config: SolanaSelfLaunchConfig) => layer(config).pipe(Layer.provide(launchLedgerTest), Layer.provide(Database.layerTest))
