/**
 * The headless route's operations (spec 2.5 to 2.7): `launch` (gates, the wallet's delegation and
 * the size before anything is stored, then the ledger's `begin` with the attempt's inputs and its
 * lease, then a run; blocking requests wait up to `syncWaitMs`), `dryRun` (every check, no write)
 * and `job`.
 */
import { Deferred, Duration, Effect } from "effect"
import type { HeadlessCaller, LaunchOutcome } from "../HeadlessLaunch.js"
import { launchStorage } from "../internal/LaunchGates.js"
import { jobRecord, type LaunchJobView, storedDevBuy } from "../internal/LaunchRecords.js"
import type { LaunchRecord, LaunchRef } from "../LaunchLedger.js"
import { fromHood, fromLedger, fromSpend, fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import { type LaunchRequest, needsExclusiveEligibility } from "../request/LaunchRequest.js"
import { LAUNCH_LEASE_KIND, launchLeaseKey, writeAttempt } from "./HeadlessAttemptStore.js"
import type { Attempt, HeadlessContext, Resolved } from "./HeadlessContext.js"
import type { HeadlessGates } from "./HeadlessGates.js"
import { devBuyFields, type HeadlessDryRunView, headlessDryRunView } from "./HeadlessRules.js"
import type { HeadlessRuns } from "./HeadlessRuns.js"
import type { HeadlessSpend } from "./HeadlessSpend.js"

const storage = launchStorage

export const makeHeadlessOperations = (ctx: HeadlessContext, gates: HeadlessGates, runs: HeadlessRuns, spendGate: HeadlessSpend) => {
  const { o, deps, leases } = ctx
  const { ledger, images, hood } = deps
  const { beginInput, eligible, resolveImages, hostLaunch, embeddedWallet, sized, admitted } = gates
  const { start } = runs

  const launch = (caller: HeadlessCaller, request: LaunchRequest): Effect.Effect<LaunchOutcome, LaunchError> =>
    Effect.gen(function* () {
      const checked = yield* admitted(caller, request)
      if (checked._tag === "Replay") return { _tag: "Launched", result: checked.result, replayed: true } satisfies LaunchOutcome
      // The spend gate on the dev buy before anything is stored; decided again, and held, in the accepting transaction.
      const spend = yield* spendGate.devBuySpend(caller, request)
      yield* spendGate.spendAllowed(caller, request, spend)
      // The embedded wallet's delegation (live, on either chain) and the size before anything is
      // stored: a refusal here records nothing, not even the re-hosted image.
      const wallet = yield* embeddedWallet(caller.accountId, request.chain)
      const payer = request.chain === "solana" ? wallet.address : null
      if (payer !== null) yield* sized(caller, request, payer, images.metadataUrlOf(request, checked.pictures))
      const hosted = yield* hostLaunch(request, checked.pictures)
      const resolved: Resolved = {
        keyId: caller.keyId,
        payer,
        metadataUri: hosted.metadataUrl,
        platformFeeBps: String(caller.plan.feeBps),
        principal: caller.principal
      }
      let attempt: Attempt | undefined
      const admission = yield* ledger
        .begin(beginInput(caller, request), (record) => {
          attempt = { ref: { accountId: record.accountId, clientLaunchId: record.clientLaunchId, attempt: record.attempt }, request, resolved }
          // The dev buy's hold under the key's lock: a refusal rolls the acceptance back (nothing recorded).
          const held = spendGate.holdIn(caller, request, attempt.ref, spend)
          // The accepting process owns the new attempt from the transaction that makes it in flight (its claim rides with the inputs' write).
          return Effect.zipRight(held, writeAttempt(attempt, leases.claim(LAUNCH_LEASE_KIND, launchLeaseKey(record)))(record))
        })
        .pipe(
          Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)), SpendError: (e) => Effect.fail(fromSpend(e)) }),
          storage("recording the launch")
        )
      if (admission._tag === "Replay") return { _tag: "Launched", result: admission.result, replayed: true } satisfies LaunchOutcome
      const done = yield* start(attempt!, false)
      if (request.async) return { _tag: "Accepted", clientLaunchId: request.clientLaunchId, status: "submitted" } satisfies LaunchOutcome
      const result = yield* Deferred.await(done).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(o.syncWaitMs),
          onTimeout: () =>
            launchFailure("launch_failed", "the launch is still confirming; retry with the same clientLaunchId or poll its job", { retryable: true })
        })
      )
      return { _tag: "Launched", result, replayed: false } satisfies LaunchOutcome
    })

  const dryRun = (caller: HeadlessCaller, request: LaunchRequest): Effect.Effect<HeadlessDryRunView, LaunchError> =>
    Effect.gen(function* () {
      const checked = yield* admitted(caller, request)
      yield* spendGate.spendChecked(caller, request, yield* spendGate.devBuySpend(caller, request))
      const pictures = checked._tag === "Checked" ? checked.pictures : yield* resolveImages(request)
      // The metadata URI the launch would write: its hosted document's (content-addressed), so the size is the launch's.
      const metadataUri = images.metadataUrlOf(request, pictures)
      // The delegation first, as the launch checks it; then Hood's in-run gates (rule 8, the configuration).
      const wallet = yield* embeddedWallet(caller.accountId, request.chain)
      if (request.chain === "hood") {
        yield* hood.preflight({ principal: caller.principal, request, metadataUri }).pipe(
          Effect.catchTags({ HoodLaunchError: (e) => Effect.fail(fromHood(e)), WalletError: (e) => Effect.fail(fromWallet(e)) }),
          storage("reading the wallets")
        )
      }
      // Checked already by `admitted` (holdings read once); a replayed id is checked here, after the wallet, as before.
      const exclusive = checked._tag === "Checked" ? checked.exclusive : needsExclusiveEligibility(request.mode) ? yield* eligible(caller, request) : undefined
      const size = request.chain === "solana" ? (yield* sized(caller, request, wallet.address, metadataUri)).size : undefined
      return headlessDryRunView(request, wallet.address, pictures.banner !== null, exclusive, size)
    })

  /** A headless row's job record (2.7), the row read by the caller (`LaunchJobs.ts`); undefined for another path's row. */
  const job = (ref: LaunchRef, row: LaunchRecord): Effect.Effect<LaunchJobView | undefined, LaunchError> =>
    Effect.gen(function* () {
      if (row.path !== "headless") return undefined
      const live = row.chain === "hood" ? yield* hood.devBuyStatus(ref) : undefined
      const devBuy = live ?? storedDevBuy(row.result)
      return jobRecord(row, {}, row.chain === "hood" && devBuy !== undefined ? { devBuy: devBuyFields(devBuy) } : {})
    })

  return { launch, dryRun, job }
}
