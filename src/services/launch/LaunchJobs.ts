/**
 * The job read (launch spec 2.7) of a clientLaunchId that is not headless: a self-signed row's
 * record, else an atomic row's (with its newest `bundleId`); undefined when the id names neither
 * on this account. `api/routes/LaunchRoutes.ts` asks it when the headless read finds no job.
 */
import { Effect } from "effect"
import type { AtomicLaunchShape } from "./atomic/AtomicLaunch.js"
import type { LaunchRef } from "./LaunchLedger.js"
import type { LaunchError } from "./LaunchError.js"
import type { SelfLaunchShape } from "./SelfLaunch.js"

export const selfOrAtomicJob =
  (self: Pick<SelfLaunchShape, "job">, atomic: Pick<AtomicLaunchShape, "job">) =>
  (ref: LaunchRef): Effect.Effect<Record<string, unknown> | undefined, LaunchError> =>
    Effect.flatMap(self.job(ref), (record) => (record !== undefined ? Effect.succeed(record) : atomic.job(ref)))
