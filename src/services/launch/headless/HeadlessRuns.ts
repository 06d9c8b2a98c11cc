/**
 * A headless attempt's run, fresh or resumed (spec 3.1): Solana's (`HeadlessSolanaRun`), or
 * Hood's, whose ledger writes happen inside `HoodHeadlessLaunch` with the "Also" writes riding on
 * them; at most `executionsMax` at once, each in the service's scope (a request going away does
 * not stop it) and under the row's lease.
 */
import { Deferred, Effect } from "effect"
import type { RowLeaseLost } from "../../../db/RowLease.js"
import { hoodFeePaid, storedDevBuy } from "../internal/LaunchRecords.js"
import { launchStorage } from "../internal/LaunchGates.js"
import type { LaunchRecord, LaunchRef } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { fromHood, fromLedger, fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import { LAUNCH_LEASE_KIND, launchLeaseKey } from "./HeadlessAttemptStore.js"
import type { Attempt, HeadlessContext } from "./HeadlessContext.js"
import type { HeadlessSolanaRun } from "./HeadlessSolanaRun.js"
import type { HeadlessSpend } from "./HeadlessSpend.js"
import type { HeadlessWrites } from "./HeadlessWrites.js"

const storage = launchStorage

export type HeadlessRuns = ReturnType<typeof makeHeadlessRuns>

export const makeHeadlessRuns = (
  ctx: HeadlessContext,
  writes: HeadlessWrites,
  spend: HeadlessSpend,
  solanaRun: HeadlessSolanaRun
) => {
  const { deps, scope, leases, runs, fenced } = ctx
  const { hood } = deps
  const { attributed, confirmedAlso, failedAlso } = writes
  const { runSolanaOrResume } = solanaRun

  /** Hood's ledger writes happen inside `HoodHeadlessLaunch`; the "Also" writes ride on them. */
  const driveHood = (a: Attempt, resumed: boolean) => {
    const input = {
      attempt: a.ref,
      principal: a.resolved.principal,
      request: a.request,
      metadataUri: a.resolved.metadataUri,
      onSend: (token: `0x${string}`) => fenced(a.ref, attributed({ accountId: a.ref.accountId, keyId: a.resolved.keyId }, a.request, token)),
      also: fenced(a.ref, (record: LaunchRecord) =>
        record.state === "confirmed"
          ? Effect.zipRight(spend.hoodDevBuySettled(a, record), confirmedAlso(a.resolved.keyId, hoodFeePaid(storedDevBuy(record.result)), record.result?.devBuy)(record))
          : Effect.zipRight(spend.releaseDevBuy(a.ref)(record), failedAlso(record)))
    }
    return (resumed ? hood.recover(input) : hood.launch(input)).pipe(
      Effect.map((r) => r.result),
      Effect.catchTags({
        HoodLaunchError: (e) => Effect.fail(fromHood(e)),
        LaunchLedgerError: (e) => Effect.fail(fromLedger(e)),
        WalletError: (e) => Effect.fail(fromWallet(e))
      }),
      storage("recording the Hood launch")
    )
  }

  const run = (a: Attempt, resumed: boolean): Effect.Effect<StoredResult, LaunchError> =>
    (a.request.chain === "solana" ? runSolanaOrResume(a, resumed) : driveHood(a, resumed)).pipe(
      Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("recording the launch"),
      runs.withPermits(1)
    ) as Effect.Effect<StoredResult, LaunchError>

  /** A run stopped because another process took the row over (this one stalled past its lease). */
  const leaseLost = (_: RowLeaseLost) =>
    launchFailure("launch_failed", "another engine process carries this launch on; poll its job or retry with the same clientLaunchId", { retryable: true })

  /** Runs `self` as the owner of the row's lease (already taken): renewed while it runs, given back after. */
  const owning = <A>(ref: LaunchRef, self: Effect.Effect<A, LaunchError>) =>
    leases.whileHeld(LAUNCH_LEASE_KIND, launchLeaseKey(ref), self).pipe(Effect.catchTag("RowLeaseLost", (e) => Effect.fail(leaseLost(e))))

  /**
   * Starts a run in the service's scope (a request going away does not stop it), holding the row's
   * lease, which the caller took; the deferred gets its outcome.
   */
  const start = (a: Attempt, resumed: boolean) =>
    Effect.gen(function* () {
      const done = yield* Deferred.make<StoredResult, LaunchError>()
      yield* owning(a.ref, run(a, resumed)).pipe(
        Effect.tapErrorCause((cause) => Effect.logDebug(`launch ${a.ref.clientLaunchId} attempt ${a.ref.attempt} ended`, cause)),
        Effect.exit,
        Effect.flatMap((exit) => Deferred.done(done, exit)),
        Effect.forkIn(scope)
      )
      return done
    })

  return { owning, start }
}
