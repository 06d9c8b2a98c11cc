/**
 * The headless launch (launch spec 1 rules 1-10, 2.1, 2.5-2.7, 3.1, endpoint rules 1-3): the gates
 * in the spec's order, the ledger's admission, the chain run on either chain, the writes that
 * follow a settled attempt, the job read, the dry run, and the recovery of attempts a crash left
 * in flight. Typed input (a decoded `LaunchRequest` and the caller), one failure (`LaunchError`);
 * no HTTP.
 *
 * Order of a launch (each refusal before `begin` records nothing):
 *   embedded-wallet permission → idempotency preview (a confirmed same-body id replays here,
 *   touching nothing else) → exclusive eligibility → image (and banner) fetch → the embedded
 *   wallet's delegation (live, either chain) → Solana: the transaction's size → the image
 *   re-host → `begin` (the id and a daily-cap slot, one transaction, writing the attempt's
 *   inputs beside the row) → the chain run, in the background. A blocking request waits for it (`syncWaitMs`); `async`
 *   answers 202 at once.
 *
 * Invariants:
 * - Money moves once: an attempt's mint (Solana, from the attempt) or curve address (Hood,
 *   CREATE2 salt from the attempt) is fixed before anything is sent, and the ledger row records
 *   the signed transaction before it leaves (`sent`). A request that goes away does not stop the
 *   run (it runs in the service's scope), so no attempt is abandoned half-sent.
 * - Runs are bounded: at most `executionsMax` chain runs at once in this process; more wait.
 * - After a crash, `resumeInFlight` (at start, and then periodically in every API process) carries
 *   every in-flight headless row no live process drives to `confirmed` or `failed` from what the
 *   chain shows: a Solana attempt with a recorded signature is recovered (landed / reverted /
 *   never lands); one that never reached `sent` sent nothing and is run again with its own mint;
 *   Hood resumes through `HoodHeadlessLaunch.recover`.
 * - One process drives a row at a time (`RowLease`, kind `launch`): `begin` makes the accepting
 *   process its owner in the same transaction, the run renews the lease while it is alive and gives
 *   it back when it ends, and a resume skips rows whose lease is live and takes over only rows whose
 *   lease ended (their owner died). The ledger writes that send or settle (`sent`, `confirm`,
 *   `fail`) check the lease in their own transaction, so a process that lost the row sends and
 *   books nothing more.
 * - 3.1 "Also": the launch attribution (`launched_tokens`, the `AgentLaunches` registry) is
 *   written in the `sent` transaction, before the transaction leaves; confirmation writes the
 *   token's `confirmed_at`, the key's launch usage, the platform fee total and `launch.confirmed`
 *   in the ledger's `confirm` transaction; a definitive failure after acceptance emits
 *   `launch.failed` in the ledger's `fail` transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import type { Chain } from "../../domain/Chain.js"
import type { Plan } from "../../domain/Plans.js"
import { ImageService, type ImageServiceShape } from "../images/ImageService.js"
import { TierService } from "../accounts/TierService.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletProvider, type WalletProviderShape, layerTest as walletProviderTest } from "../wallets/WalletProvider.js"
import { PriceSource, type PriceSourceShape } from "../prices/PriceSource.js"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"
import { LAUNCH_LEASE_KIND, launchLeaseKey } from "./headless/HeadlessAttemptStore.js"
import type { HeadlessContext } from "./headless/HeadlessContext.js"
import { makeHeadlessGates } from "./headless/HeadlessGates.js"
import { makeHeadlessOperations } from "./headless/HeadlessOperations.js"
import { makeHeadlessResume } from "./headless/HeadlessResume.js"
import { makeHeadlessRuns } from "./headless/HeadlessRuns.js"
import { makeHeadlessSolanaRun } from "./headless/HeadlessSolanaRun.js"
import { makeHeadlessSpend } from "./headless/HeadlessSpend.js"
import { makeHeadlessWrites } from "./headless/HeadlessWrites.js"
import type { HeadlessDryRunView } from "./headless/HeadlessRules.js"
import { HoodHeadlessLaunch, type HoodHeadlessLaunchShape } from "./HoodHeadlessLaunch.js"
import { LaunchLedger, type LaunchLedgerShape, type LaunchRecord, type LaunchRef, layerTest as launchLedgerTest } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import type { CheckedKey } from "../spend/SpendStore.js"
import type { LaunchError } from "./LaunchError.js"
import type { LaunchRequest } from "./request/LaunchRequest.js"
import { launchHoldings } from "./internal/LaunchGates.js"
import { SolanaLaunch, type SolanaLaunchShape } from "./SolanaLaunch.js"
import type { LaunchJobView } from "./internal/LaunchRecords.js"
import * as Database from "../../db/Database.js"
export type { LaunchJobView }

export { LAUNCH_LEASE_KIND, launchLeaseKey } from "./headless/HeadlessAttemptStore.js"

export interface HeadlessCaller {
  readonly accountId: string
  readonly keyId: string
  /** The key's prefix: the spend gate reads (and locks) the key's limits by it. */
  readonly keyPrefix: string
  /** General rule 2: `denied` keys cannot use the headless route. */
  readonly embeddedWallet: "allowed" | "denied"
  /** The key's issued daily launch cap (the effective cap is the higher of it and the plan's). */
  readonly keyDailyCap: number
  readonly plan: Plan
  /** The caller as the wallet rules see it (Hood's linked-wallet rule). */
  readonly principal: Principal
  /**
   * The calling key's row as this request's authentication read it (its id, prefix and limits):
   * the dry run's spend decision uses it instead of reading the key again, as the trade's dry run
   * does. Absent: the dry run reads the key by `keyPrefix`. The launch's own decision and its hold
   * always read (and the hold locks) the key itself.
   */
  readonly spendKey?: CheckedKey
}

export type LaunchOutcome =
  /** The launch result (2.5): a confirmed attempt, or the stored one replayed. */
  | { readonly _tag: "Launched"; readonly result: StoredResult; readonly replayed: boolean }
  /** `async`: accepted after the pre-flight gates, running in the background. */
  | { readonly _tag: "Accepted"; readonly clientLaunchId: string; readonly status: "submitted" }

export interface HeadlessLaunchShape {
  /** Every check, no write, no cap slot, nothing on chain (2.6). */
  readonly dryRun: (caller: HeadlessCaller, request: LaunchRequest) => Effect.Effect<HeadlessDryRunView, LaunchError>
  readonly launch: (caller: HeadlessCaller, request: LaunchRequest) => Effect.Effect<LaunchOutcome, LaunchError>
  /** The job record (2.7) of a headless row the caller read (`LaunchJobs.ts`: one ledger read per job read); undefined for another path's row. */
  readonly job: (ref: LaunchRef, row: LaunchRecord) => Effect.Effect<LaunchJobView | undefined, LaunchError>
  /** Carries the in-flight headless rows a previous process left to a settled state (in the background); returns how many. */
  readonly resumeInFlight: Effect.Effect<number, LaunchError>
}

export class HeadlessLaunch extends Context.Tag("curvestream/HeadlessLaunch")<HeadlessLaunch, HeadlessLaunchShape>() {}

export interface HeadlessLaunchConfig {
  /** The engine's public base URL (`links.candle`). */
  readonly baseUrl: string
  /** Solana explorer base; `links.explorer` is `<base>/tx/<signature>` (always present on Solana). */
  readonly solanaExplorerUrl: string
  /** Hood explorer base; `links.explorer` only when set (spec 2.5). */
  readonly hoodExplorerUrl?: string
  /** Holder pass (docs/decisions.md): platform-token units (raw) held or staked for `exclusive`. */
  readonly exclusiveHolderPassRaw: bigint
  /** Chain runs at once in this process (default 64). */
  readonly executionsMax?: number
  /** How long a blocking request waits for its run before answering retryable `LAUNCH_FAILED` (default 90 s). */
  readonly syncWaitMs?: number
  /** Between chain reads while an attempt's outcome is unknown (default 1 s). */
  readonly recoveryPollMs?: number
  /** How long one process keeps reading before leaving an unknown attempt to the next start (default 10 min). */
  readonly recoveryMaxMs?: number
  /** In-flight rows looked at per resume (default 10,000; the rest at the next one). */
  readonly resumeMax?: number
}

export const HeadlessLaunchDefaults = {
  executionsMax: 64,
  syncWaitMs: 90_000,
  recoveryPollMs: 1_000,
  recoveryMaxMs: 10 * 60_000,
  resumeMax: 10_000
} as const

export interface HeadlessLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly solana: SolanaLaunchShape
  readonly hood: HoodHeadlessLaunchShape
  readonly provider: WalletProviderShape
  /** Raw platform-token holdings (held + staked) of the account; undefined when unreadable. */
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
  /** USD prices of the quote assets: the spend gate values a dev buy against the key's txLimit. */
  readonly prices: PriceSourceShape
  /** Who drives an in-flight row (default: this service's own leases over its database). */
  readonly leases?: RowLeases
}

/** The lease kind of launch ledger rows; the key is the row's (account, clientLaunchId). */

/**
 * The service is a table of methods over parts in `headless/`: `HeadlessGates`, `HeadlessWrites`
 * (the "Also" writes), `HeadlessSpend` (the dev buy through the spend gate), `HeadlessSolanaRun` and `HeadlessRuns` (a run under its lease, in the
 * service's scope), `HeadlessOperations` (launch, dry run, job) and `HeadlessResume`; the
 * attempt's stored inputs are `HeadlessAttemptStore`'s, the pure answers `HeadlessRules`'.
 */
export const make = (config: HeadlessLaunchConfig, deps: HeadlessLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const o = { ...HeadlessLaunchDefaults, ...config }
    const leases = deps.leases ?? makeRowLeases(sql)
    const ctx: HeadlessContext = {
      config,
      o,
      deps,
      withSql: (self) => Effect.provideService(self, SqlClient.SqlClient, sql),
      scope: yield* Effect.scope,
      leases,
      runs: yield* Effect.makeSemaphore(o.executionsMax),
      fenced: (ref, also) => (record) => Effect.zipRight(leases.fenceIn(LAUNCH_LEASE_KIND, launchLeaseKey(ref)), also(record)),
      fence: (ref) => ({
        renewal: leases.renewal(LAUNCH_LEASE_KIND, launchLeaseKey(ref)),
        check: (held) => leases.fenced(LAUNCH_LEASE_KIND, launchLeaseKey(ref), held, undefined)
      })
    }

    // The attributions recorded so far, oldest first, before any read can build a feed row.
    const known = yield* sql<{ chain: Chain; mint: string; account_id: string }>`
      SELECT chain, mint, account_id FROM launched_tokens WHERE visibility = 'production' ORDER BY attributed_at`.pipe(Effect.orDie)
    for (const a of known) deps.agentLaunches.add(a.chain, a.mint, a.account_id)

    const gates = makeHeadlessGates(ctx)
    const spend = makeHeadlessSpend(ctx)
    const writes = makeHeadlessWrites(ctx, spend)
    const runs = makeHeadlessRuns(ctx, writes, spend, makeHeadlessSolanaRun(ctx, gates, writes, spend))
    const operations = makeHeadlessOperations(ctx, gates, runs, spend)
    const { resumeInFlight } = makeHeadlessResume(ctx, writes, runs)

    return {
      dryRun: Effect.fn("HeadlessLaunch.dryRun")(function* (caller: HeadlessCaller, request: LaunchRequest) {
        return yield* operations.dryRun(caller, request)
      }),
      launch: Effect.fn("HeadlessLaunch.launch")(function* (caller: HeadlessCaller, request: LaunchRequest) {
        return yield* operations.launch(caller, request)
      }),
      job: Effect.fn("HeadlessLaunch.job")(function* (ref: LaunchRef, row: LaunchRecord) {
        return yield* operations.job(ref, row)
      }),
      resumeInFlight: resumeInFlight.pipe(Effect.withSpan("HeadlessLaunch.resumeInFlight"))
    } satisfies HeadlessLaunchShape
  })

/** Scoped: background runs live as long as the layer. */
export const layer = (
  config: HeadlessLaunchConfig
): Layer.Layer<
  HeadlessLaunch,
  never,
  SqlClient.SqlClient | LaunchLedger | ImageService | SolanaLaunch | HoodHeadlessLaunch | WalletProvider | TierService | AgentLaunchRegistry | PriceSource
> =>
  Layer.scoped(
    HeadlessLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        solana: yield* SolanaLaunch,
        hood: yield* HoodHeadlessLaunch,
        provider: yield* WalletProvider,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry,
        prices: yield* PriceSource
      })
    })
  )

/**
 * The real headless launch over `Database.layerTest`, the real ledger and local provider (their
 * `layerTest`); the per-chain launchers, images, tiers, prices, agent registry and failure codes are the test's.
 */
export const layerTest = (config: HeadlessLaunchConfig) =>
  layer(config).pipe(Layer.provide(Layer.merge(launchLedgerTest, walletProviderTest)), Layer.provide(Database.layerTest))
