/**
 * An atomic bundle's reads (spec 2.7's job record with its newest `bundleId`, 2.8's bundle record)
 * and the recovery pass that carries every unsettled bundle on under its lease: stale builds
 * expire, sent or landed ones settle from the chain, a submit whose driver is gone is settled.
 */
import { Clock, Effect } from "effect"
import { jobRecord, type LaunchJobView } from "../internal/LaunchRecords.js"
import type { LaunchRecord, LaunchRef } from "../LaunchLedger.js"
import type { LaunchError } from "../LaunchError.js"
import type { AtomicBundles } from "./AtomicBundles.js"
import { decodeBuild, identity } from "./AtomicRules.js"
import { findBundleOfAttempt, unsettledBundles } from "./BundleStore.js"
import { bundleRecord, type BundleView } from "./BundleViews.js"

export const makeAtomicReads = (b: AtomicBundles) => {
  const { withSql, runner, stored, notFound, load, drive, settle } = b

  // ---- reads -------------------------------------------------------------------------------

  const bundle = (accountId: string, bundleId: string): Effect.Effect<BundleView, LaunchError> =>
    Effect.gen(function* () {
      const row = yield* load(bundleId)
      if (row === undefined || row.accountId !== accountId) return yield* notFound()
      return bundleRecord(identity(row), row.state)
    })

  /** An atomic row's job record (2.7), the row read by the caller (`LaunchJobs.ts`); undefined for another path's row. */
  const job = (ref: LaunchRef, row: LaunchRecord): Effect.Effect<LaunchJobView | undefined, LaunchError> =>
    Effect.gen(function* () {
      if (row.path !== "atomic") return undefined
      const b = yield* findBundleOfAttempt(ref.accountId, ref.clientLaunchId, row.attempt, decodeBuild).pipe(withSql, stored("reading the job"))
      return jobRecord(row, { mint: b?.mint, pool: b?.build.booking.curve, signature: b?.state.launchSignature }, b !== undefined ? { bundleId: b.bundleId } : {})
    })

  // ---- recovery ----------------------------------------------------------------------------

  const recoverPass: Effect.Effect<{ readonly bundles: number; readonly failed: number }> = Effect.gen(function* () {
    if (runner === undefined) return { bundles: 0, failed: 0 }
    const nowMs = yield* Clock.currentTimeMillis
    const rows = yield* unsettledBundles().pipe(withSql, Effect.orElseSucceed(() => []))
    // A live build has nothing due (it expires at expiresAt): left alone, no lease taken.
    const due = rows.filter((r) => r.phase !== "built" || r.expiresAtMs <= nowMs)
    let failed = 0
    for (const { bundleId } of due) {
      // Re-read under the lease: the row may have moved since the listing.
      const r = yield* Effect.either(drive(bundleId, Effect.void, Effect.flatMap(load(bundleId), (row) => (row === undefined ? Effect.void : Effect.asVoid(settle(row))))))
      if (r._tag === "Left") failed++
    }
    return { bundles: due.length, failed }
  })

  return { bundle, job, recoverPass }
}
