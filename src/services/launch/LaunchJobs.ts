/**
 * The job read (launch spec 2.7) of any clientLaunchId: the launch ledger's row is read once and
 * handed to the service of the row's own path (headless, self-signed, atomic), which adds what its
 * path keeps beside the row (a Hood dev buy's live status, the stored build, the newest bundle).
 * `api/routes/LaunchRoutes.ts` answers the job route with it.
 *
 * Invariant: one ledger statement per job read, whatever the path (issue 34: the route used to ask
 * the headless, self-signed and atomic services in turn, each reading the same row, three statements
 * for an unknown id); an id naming no row on this account, or a row its path's service does not
 * answer, is `job_not_found` with the headless route's message, as before.
 */
import { Effect } from "effect"
import type { LaunchJobView } from "./internal/LaunchRecords.js"
import { type LaunchError, launchFailure } from "./LaunchError.js"
import { launchStorage } from "./internal/LaunchGates.js"
import type { LaunchLedgerShape, LaunchRecord, LaunchRef } from "./LaunchLedger.js"
import type { LaunchPath } from "./LaunchLedgerMachine.js"

/** The job record of a row the caller already read; undefined when the row is not this path's. */
export type JobOfRow<A = LaunchJobView> = (ref: LaunchRef, row: LaunchRecord) => Effect.Effect<A | undefined, LaunchError>

export interface LaunchJobParts<A = LaunchJobView> {
  /** The ledger row (storage failures already mapped to the launch's retryable refusal). */
  readonly read: (ref: LaunchRef) => Effect.Effect<LaunchRecord | undefined, LaunchError>
  /** Each path's record of its own rows. */
  readonly paths: { readonly [P in LaunchPath]: JobOfRow<A> }
}

/** An unknown or foreign id (2.7): the route's 404 `JOB_NOT_FOUND`. */
export const jobNotFound = (): LaunchError => launchFailure("job_not_found", "No launch job with this clientLaunchId on this account", { retryable: false })

export const launchJob =
  <A = LaunchJobView>(parts: LaunchJobParts<A>) =>
  (ref: LaunchRef): Effect.Effect<A, LaunchError> =>
    Effect.flatMap(parts.read(ref), (row) =>
      row === undefined
        ? Effect.fail(jobNotFound())
        : Effect.flatMap(parts.paths[row.path](ref, row), (record) => (record === undefined ? Effect.fail(jobNotFound()) : Effect.succeed(record)))
    )

/** The job read over the launch ledger (storage failures the launch's retryable refusal) and the three paths' services. */
export const ledgerLaunchJob = (
  ledger: Pick<LaunchLedgerShape, "get">,
  paths: LaunchJobParts["paths"]
): ((ref: LaunchRef) => Effect.Effect<LaunchJobView, LaunchError>) =>
  launchJob({ read: (ref) => ledger.get(ref).pipe(launchStorage("reading the job")), paths })
