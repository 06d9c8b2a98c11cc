/**
 * The migration keeper's schedule, as a pure state machine (spec 3.6): a completed curve is
 * picked up at the next sweep (every `sweepIntervalMs`, 2 minutes by default), retried with
 * capped exponential backoff, and marked `delayed` once `maxAttempts` have failed, so a human is
 * alerted. With the defaults a curve is live on its venue within 10 minutes whenever one of the
 * first attempts succeeds: sweep ≤ 2 min, then retries after 15 s, 30 s, 60 s, 120 s.
 *
 * Invariants: `attempts` only grows; a mint is `delayed` only after exactly `maxAttempts`
 * failures; a success is final; `nextAttemptAtMs` is always in the future of the failure that set
 * it. The keeper's state is rebuilt after a restart from the markets' migration blocks (they are
 * driven by the `MigrationProgress` events this schedule emits), so nothing here is persisted.
 */

export interface KeeperPolicyOptions {
  readonly sweepIntervalMs: number
  readonly maxAttempts: number
  readonly backoffBaseMs: number
  readonly backoffMaxMs: number
}

export const DefaultKeeperPolicy: KeeperPolicyOptions = {
  sweepIntervalMs: 120_000,
  maxAttempts: 5,
  backoffBaseMs: 15_000,
  backoffMaxMs: 120_000
}

export type MigrationSchedule =
  | { readonly _tag: "Pending"; readonly attempts: number; readonly nextAttemptAtMs: number }
  | { readonly _tag: "Delayed"; readonly attempts: number; readonly gaveUpAtMs: number; readonly lastError: string }
  | { readonly _tag: "Done"; readonly attempts: number }

/** The wait after the n-th failure (n ≥ 1): base·2^(n−1), capped. */
export const backoffMs = (options: KeeperPolicyOptions, failures: number): number =>
  Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** Math.max(0, failures - 1))

/** A curve seen completed at `nowMs`: first attempt at once (the sweep found it). */
export const discovered = (nowMs: number): MigrationSchedule => ({ _tag: "Pending", attempts: 0, nextAttemptAtMs: nowMs })

export const isDue = (s: MigrationSchedule, nowMs: number): boolean => s._tag === "Pending" && s.nextAttemptAtMs <= nowMs

export const succeeded = (s: MigrationSchedule): MigrationSchedule => ({ _tag: "Done", attempts: s.attempts + (s._tag === "Pending" ? 1 : 0) })

export const failed = (options: KeeperPolicyOptions, s: MigrationSchedule, nowMs: number, error: string): MigrationSchedule => {
  if (s._tag !== "Pending") return s
  const attempts = s.attempts + 1
  return attempts >= options.maxAttempts
    ? { _tag: "Delayed", attempts, gaveUpAtMs: nowMs, lastError: error }
    : { _tag: "Pending", attempts, nextAttemptAtMs: nowMs + backoffMs(options, attempts) }
}

/** When the keeper should wake next: the next sweep, or the earliest retry if sooner. */
export const nextWakeMs = (options: KeeperPolicyOptions, lastSweepMs: number, schedules: Iterable<MigrationSchedule>): number => {
  let wake = lastSweepMs + options.sweepIntervalMs
  for (const s of schedules) if (s._tag === "Pending" && s.nextAttemptAtMs < wake) wake = s.nextAttemptAtMs
  return wake
}

/** The worst case from completion to the last automated attempt, for docs and tests. */
export const worstCaseLastAttemptMs = (options: KeeperPolicyOptions): number => {
  let total = options.sweepIntervalMs
  for (let n = 1; n < options.maxAttempts; n++) total += backoffMs(options, n)
  return total
}
