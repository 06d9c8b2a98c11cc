/**
 * Resuming the in-flight headless rows a previous process left (spec 3.1): each row no live
 * process drives is taken over under its lease, read again under it, and run again from its
 * stored inputs (a run that reached `sent` only reads the chain).
 */
import { Effect } from "effect"
import { launchStorage } from "../internal/LaunchGates.js"
import type { LaunchRecord } from "../LaunchLedger.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import { LAUNCH_LEASE_KIND, launchLeaseKey, readAttempt } from "./HeadlessAttemptStore.js"
import type { HeadlessContext } from "./HeadlessContext.js"
import type { HeadlessRuns } from "./HeadlessRuns.js"
import type { HeadlessWrites } from "./HeadlessWrites.js"

const storage = launchStorage

export const makeHeadlessResume = (ctx: HeadlessContext, writes: HeadlessWrites, runs: HeadlessRuns) => {
  const { o, deps, withSql, leases } = ctx
  const { ledger } = deps
  const { settleFailure } = writes
  const { owning, start } = runs

  /**
   * Takes over one in-flight row whose lease ended (or that never had one); false when a live
   * process drives it, another resume took it first, or it settled meanwhile.
   */
  const takeOver = (row: LaunchRecord) =>
    Effect.gen(function* () {
      const key = launchLeaseKey(row)
      if (!(yield* leases.take(LAUNCH_LEASE_KIND, key))) return false
      const kept = Effect.gen(function* () {
        // Read again under the lease: the previous owner may have settled it after the list was read.
        const current = yield* ledger.get(row)
        const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
        if (current === undefined || current.attempt !== row.attempt || (current.state !== "submitted" && current.state !== "confirming")) return false
        const stored = yield* withSql(readAttempt(row))
        if (stored === undefined) {
          // Accepted, but its inputs never committed with it: impossible (one transaction); fail it cleanly.
          yield* owning(ref, settleFailure(ref, launchFailure("launch_failed", "the attempt's inputs are missing", { retryable: true }))).pipe(Effect.ignore)
          return false
        }
        yield* start({ ref, request: stored.request, resolved: stored.resolved }, true)
        return true
      })
      return yield* kept.pipe(
        Effect.tap((started) => (started ? Effect.void : leases.release(LAUNCH_LEASE_KIND, key))),
        Effect.tapErrorCause(() => leases.release(LAUNCH_LEASE_KIND, key).pipe(Effect.ignore))
      )
    }).pipe(storage("resuming an in-flight launch"))

  const resumeInFlight: Effect.Effect<number, LaunchError> = Effect.gen(function* () {
    const rows = yield* ledger.inFlight("headless", o.resumeMax).pipe(storage("reading in-flight launches"))
    const driven = yield* leases.live(LAUNCH_LEASE_KIND, rows.map(launchLeaseKey)).pipe(storage("reading launch leases"))
    let resumed = 0
    for (const row of rows) {
      if (driven.has(launchLeaseKey(row))) continue
      if (yield* takeOver(row)) resumed++
    }
    return resumed
  })

  return { resumeInFlight }
}
