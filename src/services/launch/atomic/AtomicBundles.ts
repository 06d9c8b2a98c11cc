/**
 * What the parts of `AtomicLaunch` share: its figures and dependencies, the bundle runner (when a
 * block engine is configured), the row leases that let one fiber of one process drive a bundle,
 * the stored bundle read under them, and a bundle settled from the chain. Built once by
 * `AtomicLaunch.make`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import type { BundleState } from "../../../../actors/bundle/BundleActor.js"
import { readSentBundle } from "../../../chain/solana/launch/BundleChainRead.js"
import { makeRowLeases } from "../../../db/RowLease.js"
import { launchStorage } from "../internal/LaunchGates.js"
import type { LaunchLedgerError } from "../LaunchLedger.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import { AtomicLaunchDefaults, type AtomicLaunchConfig, type AtomicLaunchDeps, type AtomicStoredBuild, type AtomicSubmitAnswer, BUNDLE_LEASE_KIND } from "./AtomicLaunch.js"
import { decodeBuild, identity } from "./AtomicRules.js"
import { bundleIo, resumeBundle } from "./BundleResume.js"
import { makeRunner } from "./BundleRunner.js"
import { type BundleRow, findBundle } from "./BundleStore.js"
import { submitOutcome } from "./BundleViews.js"
import { createNodeSolanaRpc } from "../../../chain/internal/JsonRpcHttp.js"

export type AtomicBundles = ReturnType<typeof makeAtomicBundles>

export const makeAtomicBundles = (config: AtomicLaunchConfig, deps: AtomicLaunchDeps, sql: SqlClient.SqlClient) => {
  const o = { ...AtomicLaunchDefaults, ...config }
  const { ledger } = deps
  const links = { baseUrl: config.baseUrl, solanaExplorerUrl: config.solanaExplorerUrl }
  const withSql = <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(self, SqlClient.SqlClient, sql)
  const rpc = createNodeSolanaRpc(config.rpcUrl)
  const runner =
    config.engine === undefined
      ? undefined
      : makeRunner({ engine: config.engine, readChain: (v, signal) => readSentBundle(rpc, v, signal), statusDeadlineMs: o.statusDeadlineMs, pollMs: o.pollMs })
  /**
   * A bundle is driven under its row lease, by one fiber of one process: a lease this process
   * already holds is not taken again, so the lease alone excludes a second fiber here too.
   */
  const leases = deps.leases ?? makeRowLeases(sql)
  const fenceOf = (bundleId: string) => leases.fenceIn(BUNDLE_LEASE_KIND, bundleId)

  /** Storage failures (and a ledger refusal while booking, which a later pass retries) answer retryable `LAUNCH_FAILED`. */
  const stored =
    (what: string) =>
    <A, E, R>(self: Effect.Effect<A, E | SqlError | LaunchLedgerError, R>) =>
      launchStorage(what)(
        Effect.catchIf(
          self,
          (e): e is LaunchLedgerError => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "LaunchLedgerError",
          (e) => Effect.fail(launchFailure("launch_failed", `${what} failed: ${e.message}; read the bundle`, { retryable: true }))
        )
      )
  const notFound = () => launchFailure("job_not_found", "No atomic bundle with this bundleId on this account (unknown, expired, consumed or foreign); build again", { retryable: false })

  // ---- stored bundles ----------------------------------------------------------------------

  const load = (bundleId: string) => findBundle(bundleId, decodeBuild).pipe(withSql, stored("reading the bundle"))

  /**
   * Runs `f` while this process holds the bundle's row lease (renewed while `f` runs); a second
   * driver meanwhile, here or in another process, is refused (submit) or skips
   * it (recovery). A driver that loses the lease (it stalled past it) stops with `LAUNCH_FAILED`,
   * retryable, having stored nothing more.
   */
  const drive = <A>(bundleId: string, busy: Effect.Effect<A, LaunchError>, f: Effect.Effect<A, LaunchError>): Effect.Effect<A, LaunchError> =>
    Effect.flatMap(leases.take(BUNDLE_LEASE_KIND, bundleId).pipe(stored("taking the bundle")), (taken) =>
      taken
        ? leases.whileHeld(BUNDLE_LEASE_KIND, bundleId, f).pipe(
            Effect.catchTag("RowLeaseLost", (e) => Effect.fail(launchFailure("launch_failed", `${e.message}; read the bundle`, { retryable: true })))
          )
        : busy
    )

  const ioOf = (row: BundleRow<AtomicStoredBuild>) =>
    bundleIo(ledger, row, fenceOf(row.bundleId)).pipe(withSql)

  const inProgress = () =>
    Effect.fail(launchFailure("idempotency_conflict", "A submit of this bundle is in progress; read the bundle or retry shortly", { retryable: true, details: { reason: "submit_in_progress" } }))

  /**
   * One recovery pass over a stored bundle (chain read, owed bookings), by its lease holder: a
   * bundle found `submitting` or `signing` under our lease lost its driver (that driver's lease
   * ended), so it is settled as a restart would.
   */
  const settle = (row: BundleRow<AtomicStoredBuild>) =>
    Effect.flatMap(Clock.currentTimeMillis, (nowMs) => resumeBundle(runner!, ledger, row, nowMs, fenceOf(row.bundleId))).pipe(withSql, stored("settling the bundle"))

  const answerSent = (row: BundleRow<AtomicStoredBuild>, s: BundleState): AtomicSubmitAnswer | undefined => submitOutcome(identity(row), s)

  return { o, deps, links, withSql, runner, leases, fenceOf, stored, notFound, load, drive, ioOf, inProgress, settle, answerSent }
}
