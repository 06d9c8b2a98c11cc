/**
 * Staking of the platform token (spec document 2: 2.4, 3.3, 4.2): positions, and the `stake`,
 * `unstake` and `finish` operations, each idempotent on (account, `clientStakeId`) and moving
 * funds at most once whatever retries, races and crashes do; and reward claims (3.4).
 *
 * The service is a table of methods over parts in `internal/`: `StakeBuild` (checks, dry run,
 * the embedded payer's send, linked/TEE builds), `SignedOperations` (submit, confirm),
 * `Positions`, and `RewardClaims`. Operations and claims are attempts of the one runner
 * (`src/services/attempt/AttemptRunner.ts`) over their pure machines (`StakingMachine`,
 * `RewardClaimMachine`): each state is saved before it is acted on, one process drives an attempt
 * in flight (`RowLease`, kinds `staking_operation` and `staking_reward_claim`), and recovery
 * passes settle from the chain what a dead process left in flight, never resending it.
 *
 * Invariants:
 * - A changed body under one id is refused; a replay answers the stored operation.
 * - Embedded payer: checks → build → sign → the row (`sending`, signature, last valid block
 *   height) → send once → confirm. A crash after the row is written is settled from the chain by
 *   `resumeInFlight` (at start, then periodically in every API process); never re-signed or resent.
 * - Linked/TEE: `built` holds the exact message; `submit` broadcasts only a transaction with every
 *   signature over that message, once; `confirm` records a landing of that message without
 *   sending anything, even on an expired row.
 * - Unreadable chain data is `chain_unavailable`, never a zero.
 * - Failures are reasons and domain facts (`StakingError`); statuses, codes and envelopes are the
 *   routes' and `api/ErrorTable.ts`'s. Answers are the typed views of `StakingViews.ts`.
 * - Hood (EVM-chain) rewards (`HoodRewards.ts`) are listed in positions and never claimed here:
 *   a claim of one is refused (`reward_not_owned`), as spec 4.2 has them claimed from the site.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { KeyPairSigner } from "@solana/kit"
import { Context, Effect, Layer } from "effect"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import type { AccountWalletsShape } from "../accounts/AccountWallets.js"
import type { BalanceReaderShape } from "../accounts/BalanceReader.js"
import { WalletProvider, layerTest as walletProviderTest } from "../wallets/WalletProvider.js"
import { type PayerError, type SignClaimError, type WalletError, WalletService } from "../wallets/WalletService.js"
import { HOOD_REWARD_ID, type HoodRewardChain, type HoodRewards, makeHoodRewards } from "./HoodRewards.js"
import { makeRewardClaims } from "./RewardClaims.js"
import { makeStakingChain, type StakingChain } from "./StakingChain.js"
import { type StakingError, stakingError } from "./StakingError.js"
import type { StakeBuildInput, StakingCaller } from "./StakingInputs.js"
import { makeClaimStore, makeStakingStore } from "./StakingStore.js"
import type { PositionsView, RewardClaimView, StakeBuildView, StakeOperationView } from "./StakingViews.js"
import { makeOperationRunner } from "./internal/OperationAttempt.js"
import { makePositions } from "./internal/Positions.js"
import type { ConfirmInput, SubmitInput } from "./internal/SignedOperations.js"
import { makeSignedOperations } from "./internal/SignedOperations.js"
import { makeStakeBuild } from "./internal/StakeBuild.js"
import type { StakingContext } from "./internal/StakingContext.js"
import * as Database from "../../db/Database.js"

export { STAKING_LEASE_KIND, stakingLeaseKey } from "./internal/OperationAttempt.js"
export { bodyHashOf } from "./internal/StakeBuild.js"
export type { ConfirmInput, SubmitInput } from "./internal/SignedOperations.js"
export type { StakeBuildInput, StakingCaller } from "./StakingInputs.js"
export type * from "./StakingViews.js"

export type StakingFailure = StakingError | PayerError | WalletError | SignClaimError

export interface StakingServiceOptions {
  readonly rpcUrl: string
  readonly platformMint: string
  readonly receiptMint: string
  /** How long a send waits for its verdict (default 30 s); past it the operation stays pending. */
  readonly confirmTimeoutMs?: number
  readonly pollIntervalMs?: number
  /** How long a linked build may be submitted (the sign claim's lifetime, 30 minutes). */
  readonly buildLifetimeMs?: number
  /** Pays reward claims' fees and rent (the service's Solana key); unset: claims fail retryably. */
  readonly distributor?: KeyPairSigner | undefined
}

export interface StakingServiceShape {
  readonly positions: (caller: StakingCaller) => Effect.Effect<PositionsView, StakingFailure>
  readonly build: (caller: StakingCaller, input: StakeBuildInput) => Effect.Effect<StakeBuildView, StakingFailure>
  readonly submit: (caller: StakingCaller, input: SubmitInput) => Effect.Effect<StakeOperationView, StakingFailure>
  readonly confirm: (caller: StakingCaller, input: ConfirmInput) => Effect.Effect<StakeOperationView, StakingFailure>
  /** Claims a staking reward for its recorded owner, at most once (3.4). */
  readonly claimReward: (caller: StakingCaller, rewardId: string) => Effect.Effect<RewardClaimView, StakingFailure>
  /** Settles every operation and reward claim a previous run left in flight, from the chain; how many it took. */
  readonly resumeInFlight: Effect.Effect<number, StakingFailure>
  /**
   * The operations part of `resumeInFlight`: settles (in the background) the in-flight operations
   * no live process drives; how many it took.
   */
  readonly resumeOperations: Effect.Effect<number, StakingFailure>
  readonly chain: StakingChain
  /** Hood (EVM-chain) rewards: their distributor's sweep and the reads positions use. */
  readonly hoodRewards: HoodRewards
}

export interface StakingServiceDeps {
  readonly balances: BalanceReaderShape
  readonly accountWallets: AccountWalletsShape
  /** The Hood chain's graduations; undefined: no Hood reward is distributed. */
  readonly hoodChain?: HoodRewardChain | undefined
  /** Who drives an attempt in flight (default: this service's own leases over its database). */
  readonly leases?: RowLeases
}

export class StakingService extends Context.Tag("curvestream/StakingService")<StakingService, StakingServiceShape>() {}

/** Storage failures, decided once at the service's edge (logged; the caller sees `storage`). */
const storage = storageFailure("staking", () => stakingError("storage", "Internal error; nothing was recorded"))

export const make = (options: StakingServiceOptions, deps: StakingServiceDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** Time: the Effect `Clock` the service is built under, handed to its parts. */
    const clock = yield* Effect.clock
    const chain = makeStakingChain({ rpcUrl: options.rpcUrl })
    const store = makeStakingStore(sql, clock)
    const leases = deps.leases ?? makeRowLeases(sql)
    const wallets = yield* WalletService
    const figures = { confirmTimeoutMs: options.confirmTimeoutMs ?? 30_000, pollIntervalMs: options.pollIntervalMs ?? 250 }
    const ctx: StakingContext = {
      sql,
      leases,
      store,
      claimStore: makeClaimStore(sql, clock),
      chain,
      provider: yield* WalletProvider,
      wallets,
      balances: deps.balances,
      accountWallets: deps.accountWallets,
      hoodRewards: makeHoodRewards({ sql, accountWallets: deps.accountWallets, balances: deps.balances, chain: deps.hoodChain }),
      operations: makeOperationRunner({ chain, wallets, sql, leases, store, ...figures }),
      platformMint: options.platformMint,
      receiptMint: options.receiptMint,
      ...figures,
      buildLifetimeMs: options.buildLifetimeMs ?? 30 * 60_000,
      distributor: options.distributor,
      clock
    }
    const builds = makeStakeBuild(ctx)
    const signed = makeSignedOperations(ctx)
    const positions = makePositions(ctx)
    const rewards = makeRewardClaims({ ...ctx, store: ctx.claimStore })

    /** A Hood reward is read-only here (4.2: "made from the site"): refused as not usable by the key, or not found. */
    const refuseHoodReward = (caller: StakingCaller, rewardId: string) =>
      Effect.gen(function* () {
        const r = yield* ctx.hoodRewards.byId(rewardId)
        if (r === undefined) return yield* stakingError("reward_not_found", `No reward ${rewardId.slice(0, 64)}`)
        return yield* stakingError(
          "reward_not_owned",
          r.accountId === caller.accountId ? "Rewards on the EVM chain are not agent-claimable: claim this one from the site" : "This reward belongs to a wallet this key may not use",
          { details: { chain: "hood" } }
        )
      })

    const resumeOperations = storage(ctx.operations.recover).pipe(Effect.withSpan("StakingService.resumeOperations"))

    const service: StakingServiceShape = {
      positions: Effect.fn("StakingService.positions")(function* (caller: StakingCaller) {
        return yield* storage(positions.positions(caller))
      }),
      build: Effect.fn("StakingService.build")(function* (caller: StakingCaller, input: StakeBuildInput) {
        return yield* storage(builds.build(caller, input))
      }),
      submit: Effect.fn("StakingService.submit")(function* (caller: StakingCaller, input: SubmitInput) {
        return yield* storage(signed.submit(caller, input))
      }),
      confirm: Effect.fn("StakingService.confirm")(function* (caller: StakingCaller, input: ConfirmInput) {
        return yield* storage(signed.confirm(caller, input))
      }),
      claimReward: Effect.fn("StakingService.claimReward")(function* (caller: StakingCaller, rewardId: string) {
        if (caller.keyPaused) return yield* stakingError("key_paused", "This key is paused; a paused key cannot claim staking rewards")
        return yield* storage(HOOD_REWARD_ID.test(rewardId) ? refuseHoodReward(caller, rewardId) : rewards.claim(caller, rewardId))
      }),
      resumeInFlight: Effect.zipWith(resumeOperations, storage(rewards.resume), (a, b) => a + b).pipe(Effect.withSpan("StakingService.resumeInFlight")),
      resumeOperations,
      chain,
      hoodRewards: ctx.hoodRewards
    }
    return service
  })

export const layer = (
  options: StakingServiceOptions,
  deps: StakingServiceDeps
): Layer.Layer<StakingService, never, SqlClient.SqlClient | WalletProvider | WalletService> => Layer.effect(StakingService, make(options, deps))

/** The real staking service over `Database.layerTest` and the real local provider (`WalletProvider.layerTest`); the chain ports and the wallet service are the test's. */
export const layerTest = (options: StakingServiceOptions, deps: StakingServiceDeps) =>
  layer(options, deps).pipe(Layer.provide(walletProviderTest), Layer.provide(Database.layerTest))
