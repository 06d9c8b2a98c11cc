/**
 * The job read (launch spec 2.7) of a clientLaunchId that is not headless: a self-signed row's
 * record, else an atomic row's (with its newest `bundleId`); undefined when the id names neither
 * on this account. `api/routes/LaunchRoutes.ts` asks it when the headless read finds no job.
 */
import { Effect } from "effect"
import type { LaunchJobView } from "./internal/LaunchRecords.js"
import type { LaunchRef } from "./LaunchLedger.js"
import type { LaunchError } from "./LaunchError.js"

export const selfOrAtomicJob =
  <A = LaunchJobView>(
    self: { readonly job: (ref: LaunchRef) => Effect.Effect<A | undefined, LaunchError> },
    atomic: { readonly job: (ref: LaunchRef) => Effect.Effect<A | undefined, LaunchError> }
  ) =>
  (ref: LaunchRef): Effect.Effect<A | undefined, LaunchError> =>
    Effect.flatMap(self.job(ref), (record) => (record !== undefined ? Effect.succeed(record) : atomic.job(ref)))
