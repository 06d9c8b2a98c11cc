/**
 * Atomic launches on Solana (launch spec 1's atomic row and rules 2, 3 and 7; 2.4; 2.8; 3.5;
 * endpoint rules 7 to 10): a launch and its 1 to 4 first buys built as one block-engine bundle,
 * submitted once, and followed until every landed item is booked. Typed input (a decoded
 * `AtomicLaunchBody` and the caller), one failure (`LaunchError`); no HTTP. The decisions live in
 * the pure parts this composes: `PricingLadder` (the fills), `SpendGate` (limits and holds),
 * `SubmitCheck` (the client legs), the `BundleActor` (every state and what is owed), `BundleViews`
 * (the answers); `BundleRunner` performs the actor's outputs; the rows are `BundleStore`'s.
 *
 * Build, in order (every refusal before the ledger's `begin` records nothing): the block engine is
 * configured (501) → plan → the creator and each buyer resolved (main: the key may use the embedded
 * wallet and its delegation is live; linked: the payer rules, TEE only with `TEE_LAUNCH_BUYS_ENABLED`)
 * → the ledger's repeat rules (a same-id build of a live bundle answers it again; one that cannot
 * land any more is superseded; one that was sent waits for the chain, up to `sameIdWaitMs`) →
 * exclusive eligibility → images → the ladder → the spend gate → the tip account → the bundle on
 * one blockhash → `begin`, whose transaction re-checks the gate under the key's row lock, stores
 * the bundle, reserves the main payer's holds, records a sign claim per client leg and the token
 * row (`hidden` until booked).
 *
 * Submit: the bundle consumed (`SubmitBegun`, stored under the row lock: a second submit meanwhile
 * is 409 retryable), the client legs checked (bytes refusal: resubmittable; shape: consumed), the
 * owner's legs signed (`Signing` stored first: holds kept from here), then the runner sends once.
 * A repeat after a send answers the stored outcome; nothing is ever sent twice.
 *
 * One fiber of one process drives a bundle at a time (its row lease); a background pass every `recoveryIntervalMs`
 * expires stale builds and settles sent or landed bundles from the chain, and at start every
 * unsettled bundle resumes where it was (`BundleResume.ts`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import type { AgentLaunches } from "../../../../actors/AgentLaunches.js"
import { AgentLaunchRegistry } from "../../../../actors/AgentLaunches.js"
import type { BlockEngineClient } from "../../../chain/solana/client/BlockEngineClient.js"
import type { RowLeases } from "../../../db/RowLease.js"
import type { Plan } from "../../../domain/Plans.js"
import { TierService } from "../../accounts/TierService.js"
import { ImageService, type ImageServiceShape } from "../../images/ImageService.js"
import type { SpendLimit, TxLimit } from "../../keys/KeyRules.js"
import { PriceSource, type PriceSourceShape } from "../../prices/PriceSource.js"
import type { Principal } from "../../wallets/Principal.js"
import { WalletProvider, type WalletProviderShape, layerTest as walletProviderTest } from "../../wallets/WalletProvider.js"
import { WalletService, type WalletServiceShape } from "../../wallets/WalletService.js"
import { launchHoldings } from "../internal/LaunchGates.js"
import { LaunchLedger, type LaunchLedgerShape, type LaunchRecord, type LaunchRef, layerTest as launchLedgerTest } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import type { LaunchError } from "../LaunchError.js"
import type { AtomicLaunchBody } from "../request/DecodeLaunchRequest.js"
import { SolanaLaunch, type SolanaLaunchShape } from "../SolanaLaunch.js"
import { makeAtomicBuild } from "./AtomicBuild.js"
import { makeAtomicBundles } from "./AtomicBundles.js"
import { makeAtomicPayers } from "./AtomicPayers.js"
import { makeAtomicReads } from "./AtomicReads.js"
import { makeAtomicSubmit } from "./AtomicSubmit.js"
import type { StoredBundleBuild } from "./BundleResume.js"
import type { BundleView, SubmitOutcome } from "./BundleViews.js"
import type { AtomicBuildView } from "./AtomicRules.js"
import type { LaunchJobView } from "../internal/LaunchRecords.js"
import * as Database from "../../../db/Database.js"


/** Who builds: the key's account, the key, and what the gates read from them. */
export interface AtomicCaller {
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  readonly keyDailyCap: number
  readonly plan: Plan
  readonly embeddedWallet: "allowed" | "denied"
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  readonly txLimit: TxLimit | null
  /** The account was referred: 10% off the platform fee (document 2, 2.1). */
  readonly referred: boolean
  readonly principal: Principal
}

export interface AtomicSubmitInput {
  readonly bundleId: string
  readonly signedTxsBase64: ReadonlyArray<string>
}

export type AtomicBuildAnswer =
  | { readonly _tag: "Built"; readonly view: AtomicBuildView }
  /** Same id and body already confirmed: the stored launch result. */
  | { readonly _tag: "Replay"; readonly result: StoredResult }

export type AtomicSubmitAnswer = SubmitOutcome

export interface AtomicLaunchShape {
  readonly build: (caller: AtomicCaller, body: AtomicLaunchBody) => Effect.Effect<AtomicBuildAnswer, LaunchError>
  readonly submit: (caller: AtomicCaller, input: AtomicSubmitInput) => Effect.Effect<AtomicSubmitAnswer, LaunchError>
  /** Spec 2.8; unknown or foreign id: `JOB_NOT_FOUND`. */
  readonly bundle: (accountId: string, bundleId: string) => Effect.Effect<BundleView, LaunchError>
  /** The job record (2.7) of an atomic row the caller read (`LaunchJobs.ts`: one ledger read per job read), with its newest `bundleId`; undefined for another path's row. */
  readonly job: (ref: LaunchRef, row: LaunchRecord) => Effect.Effect<LaunchJobView | undefined, LaunchError>
  /**
   * Carries every unsettled bundle on under its lease: expires stale builds, settles sent or
   * landed ones from the chain, and settles a submit whose driver is gone (its lease ended).
   */
  readonly recoverPass: Effect.Effect<{ readonly bundles: number; readonly failed: number }>
}

export class AtomicLaunch extends Context.Tag("curvestream/AtomicLaunch")<AtomicLaunch, AtomicLaunchShape>() {}

export const AtomicLaunchDefaults = {
  /** Spec 4 rule 9: a `bundleId` is held up to 10 minutes. */
  holdMs: 10 * 60_000,
  /** Rule 9: a same-id build after a send can take up to about 95 s to answer. */
  sameIdWaitMs: 95_000,
  /** How often that wait reads the bundle and settles it from the chain. */
  sameIdPollMs: 1_000,
  statusDeadlineMs: 30_000,
  pollMs: 100,
  recoveryIntervalMs: 2_000,
  slotMs: 400
} as const

export interface AtomicLaunchConfig {
  readonly baseUrl: string
  readonly solanaExplorerUrl: string
  readonly exclusiveHolderPassRaw: bigint
  readonly teeLaunchBuysEnabled: boolean
  readonly rpcUrl: string
  /** `BLOCK_ENGINE_URL`'s client; undefined: atomic builds answer 501 (rule 10). */
  readonly engine: BlockEngineClient | undefined
  /** `BUNDLE_TIP_LAMPORTS`: the tip the launch transaction's payer pays the block engine. */
  readonly tipLamports: bigint
  readonly holdMs?: number
  readonly sameIdWaitMs?: number
  readonly sameIdPollMs?: number
  readonly statusDeadlineMs?: number
  readonly pollMs?: number
  readonly recoveryIntervalMs?: number
  readonly slotMs?: number
}

export interface AtomicLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly solana: SolanaLaunchShape
  readonly wallets: WalletServiceShape
  readonly provider: WalletProviderShape
  readonly prices: PriceSourceShape
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
  /** Single ownership of a bundle across processes (default: leases in this database). */
  readonly leases?: RowLeases
}

/** The row-lease kind of an atomic bundle (`RowLease.ts`). */
export const BUNDLE_LEASE_KIND = "atomic_bundle"

/** One leg as built: its bytes (for `/submit`'s check and for signing the owner's legs) and who signs it. */
export interface StoredLeg {
  readonly index: number
  readonly signer: "server" | "client"
  readonly wireBase64: string
  readonly messageBase64: string
  readonly bytes: number
  /** A client leg's sign claim (the relay signs exactly these bytes once); null on server legs. */
  readonly signClaim: { readonly claimId: string; readonly walletId: string } | null
}

/** What an atomic bundle row keeps: the resume's fields plus the legs as built. */
export interface AtomicStoredBuild extends StoredBundleBuild {
  readonly legs: ReadonlyArray<StoredLeg>
}

/**
 * The service is a table of methods over parts: `AtomicBundles` (the runner, the leases, the
 * stored bundle), `AtomicPayers` (payers, pricing, the spend gate, the tip), `AtomicBuild` (with
 * `AtomicRepeat` and `AtomicAdmission`), `AtomicSubmit` and `AtomicReads` (reads and recovery),
 * with the pure parts in `AtomicRules`.
 */
export const make = (config: AtomicLaunchConfig, deps: AtomicLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const bundles = makeAtomicBundles(config, deps, sql)
    const payers = makeAtomicPayers(bundles)
    const builds = makeAtomicBuild(bundles, payers)
    const submits = makeAtomicSubmit(bundles, sql)
    const reads = makeAtomicReads(bundles)
    const recoverPass = reads.recoverPass.pipe(Effect.withSpan("AtomicLaunch.recoverPass"))

    if (bundles.runner !== undefined) {
      yield* Effect.forkScoped(
        recoverPass.pipe(
          Effect.catchAllCause((c) => Effect.logWarning("atomic bundle recovery pass failed", c)),
          Effect.repeat(Schedule.spaced(Duration.millis(bundles.o.recoveryIntervalMs)))
        )
      )
    }

    return {
      build: Effect.fn("AtomicLaunch.build")(function* (caller: AtomicCaller, body: AtomicLaunchBody) {
        return yield* builds.build(caller, body)
      }),
      submit: Effect.fn("AtomicLaunch.submit")(function* (caller: AtomicCaller, input: AtomicSubmitInput) {
        return yield* submits.submit(caller, input)
      }),
      bundle: Effect.fn("AtomicLaunch.bundle")(function* (accountId: string, bundleId: string) {
        return yield* reads.bundle(accountId, bundleId)
      }),
      job: Effect.fn("AtomicLaunch.job")(function* (ref: LaunchRef, row: LaunchRecord) {
        return yield* reads.job(ref, row)
      }),
      recoverPass
    } satisfies AtomicLaunchShape
  })

export const layer = (
  config: AtomicLaunchConfig
): Layer.Layer<AtomicLaunch, never, SqlClient.SqlClient | LaunchLedger | ImageService | SolanaLaunch | WalletService | WalletProvider | PriceSource | AgentLaunchRegistry | TierService> =>
  Layer.scoped(
    AtomicLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        solana: yield* SolanaLaunch,
        wallets: yield* WalletService,
        provider: yield* WalletProvider,
        prices: yield* PriceSource,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry
      })
    })
  )

/** The real atomic launch over `Database.layerTest`, the real ledger and local provider (their `layerTest`); the rest of its ports are the test's. */
export const layerTest = (config: AtomicLaunchConfig) =>
  layer(config).pipe(Layer.provide(Layer.merge(launchLedgerTest, walletProviderTest)), Layer.provide(Database.layerTest))
