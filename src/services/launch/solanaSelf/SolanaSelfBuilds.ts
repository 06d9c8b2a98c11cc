/**
 * A Solana self-signed build and dry run (launch spec 2.3, 3.2, 3.3): the gates, then a new
 * attempt, or a same-id repeat decided by the repeat table (`SelfBuildRules.repeatBuild`): the
 * same transaction again, a refusal while an earlier attempt landed or can still land, or a new
 * attempt once the earlier one is proven dead.
 */
import { Clock, Effect } from "effect"
import type { WalletView } from "../../wallets/WalletService.js"
import { idempotencyHash } from "../Idempotency.js"
import { launchStorage } from "../internal/LaunchGates.js"
import { admitted, overlapping, sweepOwnBuilds } from "../internal/SelfBuilds.js"
import type { LaunchRecord } from "../LaunchLedger.js"
import { isRevivable } from "../LaunchLedgerMachine.js"
import { fromLedger, fromSolana, fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"
import { repeatBuild } from "../SelfBuildRules.js"
import type { SelfBuildOutcome, SelfCaller } from "../SolanaSelfLaunch.js"
import type { SolanaSelfAttempts } from "./SolanaSelfAttempt.js"
import type { SolanaSelfContext } from "./SolanaSelfContext.js"
import type { SolanaSelfGates } from "./SolanaSelfGates.js"
import { type SelfDryRunView, selfDryRunView } from "../internal/SelfDryRunView.js"

const storage = launchStorage

export const makeSolanaSelfBuilds = (ctx: SolanaSelfContext, gates: SolanaSelfGates, attempts: SolanaSelfAttempts) => {
  const { deps, slotMs } = ctx
  const { ledger, images, solana, wallets } = deps
  const { beginInput, tier, checkedPayer, eligible, resolveImages, spec, freshMetadata, solanaOnly } = gates
  const { readStored, buildAttempt } = attempts

  const repeat = (caller: SelfCaller, body: SelfLaunchBody, payer: WalletView, row: LaunchRecord) =>
    Effect.gen(function* () {
      const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
      const stored = yield* readStored(ref).pipe(storage("reading the build"))
      const nowMs = yield* Clock.currentTimeMillis
      // Without a stored build (not produced by this service: the build row commits with the attempt) the mint is still the attempt's.
      const mint = stored?.build.mint ?? (yield* solana.attemptMint(row.accountId, row.clientLaunchId, row.attempt))
      const view = yield* solana.mintView(mint)
      const claim = stored === undefined ? undefined : yield* wallets.claimStatus(stored.build.signClaim.claimId).pipe(Effect.mapError(fromWallet))
      const answer = repeatBuild(
        {
          stored: stored !== undefined,
          swept: row.state === "failed",
          lastValidBlockHeight: stored?.lastValidBlockHeight ?? null,
          builtAtMs: stored?.builtAtMs ?? row.attemptStartedAtMs,
          mint,
          payer: stored?.walletKind === "tee" ? "tee" : "linked",
          signed: claim !== undefined && claim.state !== "open"
        },
        view,
        nowMs,
        slotMs
      )
      switch (answer._tag) {
        case "OnChain":
          return yield* launchFailure("idempotency_conflict", "an earlier build of this clientLaunchId landed: confirm it with its signature; do not build again", {
            retryable: false,
            details: { reason: "prior_attempt_on_chain", mint: answer.mint }
          })
        case "InFlight":
          return yield* launchFailure(
            "idempotency_conflict",
            "an earlier build of this clientLaunchId can still land: broadcast and confirm what was signed, or build again after retryAfter",
            { retryable: true, details: { reason: "prior_attempt_in_flight", retryAfter: answer.retryAfterMs } }
          )
        case "ChainReadFailed":
          return yield* launchFailure("launch_failed", "the chain could not be read to decide this repeat build; retry", {
            retryable: true,
            details: { reason: "chain_read_failed" }
          })
        case "SameTransaction":
          return { _tag: "Built", build: stored!.build } satisfies SelfBuildOutcome
        case "Rebuild": {
          // Proven dead: a new transaction, mint and expiresAt. The stored metadata is reused (nothing re-uploaded).
          const metadataUri = stored?.metadataUri ?? (yield* freshMetadata(caller, body))
          const next = row.attempt + 1
          const built = yield* buildAttempt(caller, body, payer, next, metadataUri, (also) =>
            row.state === "failed"
              ? Effect.map(ledger.begin(beginInput(caller, body, payer.walletKind === "tee" ? "tee" : "linked"), also), (a) =>
                  a._tag === "Replay" ? ("replay" as const) : a.record
                )
              : ledger.rebuild(ref, also)
          ).pipe(admitted)
          if (built === undefined) return yield* overlapping()
          return { _tag: "Built", build: built } satisfies SelfBuildOutcome
        }
      }
    })

  const sweep = (accountId: string) => sweepOwnBuilds(ledger, accountId)

  const build = (caller: SelfCaller, body: SelfLaunchBody): Effect.Effect<SelfBuildOutcome, LaunchError> =>
    Effect.gen(function* () {
      yield* solanaOnly(body.request)
      yield* tier(caller)
      yield* sweep(caller.accountId)
      const payer = yield* checkedPayer(caller, body)
      const payerKind = payer.walletKind === "tee" ? "tee" : "linked"
      const input = beginInput(caller, body, payerKind)
      // One read of the row for the repeat rules and the ledger's preview (nothing between them writes).
      const peeked = yield* ledger.peek(input).pipe(storage("reading the launch ledger"))
      const row = peeked.record
      const sameRequest = row !== undefined && row.path === "self" && row.bodyHash === idempotencyHash(input.canonicalBody)
      if (sameRequest && (row.state === "submitted" || isRevivable(row))) return yield* repeat(caller, body, payer, row)
      // A new attempt (or a replay, or a refusal the ledger decides): nothing written before `begin`.
      const seen = yield* ledger.preview(input, peeked).pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("reading the launch ledger"))
      if (seen._tag === "Replay") return { _tag: "Replay", result: seen.result } satisfies SelfBuildOutcome
      yield* eligible(caller, body.request)
      const metadataUri = yield* freshMetadata(caller, body, payer.address)
      const attempt = row === undefined ? 1 : row.attempt + 1
      const built = yield* buildAttempt(caller, body, payer, attempt, metadataUri, (also) =>
        Effect.map(ledger.begin(input, also), (a) => (a._tag === "Replay" ? ("replay" as const) : a.record))
      ).pipe(admitted)
      if (built === undefined) {
        // Confirmed between the preview and `begin`: answer the stored result.
        const now = yield* ledger.get(input).pipe(storage("reading the launch ledger"))
        return { _tag: "Replay", result: now?.result ?? {} } satisfies SelfBuildOutcome
      }
      return { _tag: "Built", build: built } satisfies SelfBuildOutcome
    })

  const dryRun = (caller: SelfCaller, body: SelfLaunchBody): Effect.Effect<SelfDryRunView, LaunchError> =>
    Effect.gen(function* () {
      yield* solanaOnly(body.request)
      yield* tier(caller)
      const payer = yield* checkedPayer(caller, body)
      const request = body.request
      const exclusive = yield* eligible(caller, request)
      const pictures = yield* resolveImages(request)
      const size = (yield* solana.size(spec(caller, request, payer.address, images.metadataUrlOf(request, pictures))).pipe(Effect.mapError(fromSolana))).size
      return selfDryRunView(request, payer, pictures.banner !== null, exclusive, size)
    })

  return { build, dryRun }
}
