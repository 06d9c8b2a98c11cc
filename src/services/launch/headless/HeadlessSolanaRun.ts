/**
 * A headless Solana attempt's run (spec 2.5, 3.1): `SolanaLaunch.launch` with the ledger's `sent`
 * written (hash, mint, curve, last valid block height, the attribution) before the transaction
 * leaves; a confirmation timeout leaves the row in flight and reads the chain until the attempt
 * is decided (`recoveryMaxMs`); a resumed row that reached `sent` is only ever read, never resent.
 */
import { Effect, Either, Option } from "effect"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import { solanaLaunchResult } from "../internal/LaunchRecords.js"
import { fromSolana, launchFailure } from "../LaunchError.js"
import type { SolanaLaunched } from "../SolanaLaunch.js"
import { SolanaLaunchReasonTraits } from "../SolanaLaunchError.js"
import { readLastValid } from "./HeadlessAttemptStore.js"
import type { Attempt, HeadlessContext } from "./HeadlessContext.js"
import type { HeadlessGates } from "./HeadlessGates.js"
import type { HeadlessSpend } from "./HeadlessSpend.js"
import type { HeadlessWrites } from "./HeadlessWrites.js"

export type HeadlessSolanaRun = ReturnType<typeof makeHeadlessSolanaRun>

export const makeHeadlessSolanaRun = (ctx: HeadlessContext, gates: HeadlessGates, writes: HeadlessWrites, spend: HeadlessSpend) => {
  const { o, deps, withSql, fence } = ctx
  const { ledger, solana } = deps
  const { solanaSpec } = gates
  const { links, attributed, confirmedAlso, settleFailure } = writes

  const confirmSolana = (a: Attempt, launched: SolanaLaunched) => {
    const result = solanaLaunchResult(links, a.request, launched)
    const fee = launched.fee === null ? null : { quoteAsset: a.request.quoteAsset, feeRaw: launched.fee.feeRaw }
    return ledger
      .confirm(a.ref, result, { mint: launched.mint, pool: launched.curve, signature: launched.signature }, (record) =>
        Effect.zipRight(
          // The dev buy rode in the launch transaction: it landed with it (none planned: nothing was spent).
          launched.devBuy !== null ? spend.bookDevBuy(a)(record) : spend.releaseDevBuy(a.ref)(record),
          confirmedAlso(a.resolved.keyId, fee, result.devBuy)(record)
        ), fence(a.ref))
      .pipe(Effect.as(result))
  }

  const solanaInput = (a: Attempt) => ({
    ...solanaSpec(a.request, a.resolved.payer!, a.resolved.metadataUri, BigInt(a.resolved.platformFeeBps)),
    accountId: a.ref.accountId,
    attempt: a.ref.attempt
  })

  /** Reads the chain until a recorded Solana attempt is decided, within `recoveryMaxMs`. */
  const recoverSolana = (a: Attempt, signature: string, lastValidBlockHeight: bigint) =>
    Effect.gen(function* () {
      const look = solana.recover({ ...solanaInput(a), signature, lastValidBlockHeight }).pipe(Effect.either)
      const seen = yield* awaitUntil(look, (r) => Either.isRight(r) && r.right._tag !== "Pending", {
        what: "the recorded attempt's outcome",
        timeoutMs: o.recoveryMaxMs,
        intervalMs: o.recoveryPollMs,
        interruptPoll: true
      }).pipe(Effect.option)
      if (Option.isNone(seen) || Either.isLeft(seen.value) || seen.value.right._tag === "Pending") {
        return yield* launchFailure("launch_failed", "the launch's outcome is not known yet; retry with the same clientLaunchId", { retryable: true })
      }
      const r = seen.value.right
      switch (r._tag) {
        case "Landed":
          return yield* confirmSolana(a, r.launched)
        case "Reverted":
          return yield* settleFailure(a.ref, launchFailure("launch_failed", `the launch transaction failed on chain: ${r.chainError}`, { retryable: true }))
        case "NeverLands":
          return yield* settleFailure(a.ref, launchFailure("launch_failed", "the launch transaction expired before it landed", { retryable: true }))
      }
    })

  const runSolana = (a: Attempt) =>
    solana
      .launch(solanaInput(a), (sending) =>
        // The attempt's last valid block height rides in the attribution's statement (one round trip).
        ledger.sent(a.ref, { mint: sending.mint, pool: sending.curve, signature: sending.signature },
          attributed({ accountId: a.ref.accountId, keyId: a.resolved.keyId }, a.request, sending.mint, (s) => s`
            UPDATE headless_launch_attempts SET last_valid_block_height = ${sending.lastValidBlockHeight.toString()}::numeric
            WHERE account_id = ${a.ref.accountId} AND client_launch_id = ${a.ref.clientLaunchId} AND attempt = ${a.ref.attempt}`),
          fence(a.ref)
        )
      )
      .pipe(
        Effect.flatMap((launched) => confirmSolana(a, launched)),
        Effect.catchTag("SolanaLaunchError", (e) => {
          if (SolanaLaunchReasonTraits[e.reason].definitive) return settleFailure(a.ref, fromSolana(e))
          // Confirmation timed out: the transaction may still land; read the chain until it is decided.
          return ledger.timedOut(a.ref).pipe(
            Effect.zipRight(withSql(readLastValid(a.ref))),
            Effect.flatMap((lvbh) => recoverSolana(a, e.signature!, lvbh ?? 0n))
          )
        })
      )

  const runSolanaOrResume = (a: Attempt, resumed: boolean) =>
    Effect.gen(function* () {
      if (!resumed) return yield* runSolana(a)
      const row = yield* ledger.get(a.ref)
      const lvbh = yield* withSql(readLastValid(a.ref))
      if (row?.signature != null && lvbh !== undefined) return yield* recoverSolana(a, row.signature, lvbh)
      // Never reached `sent`: nothing left; run the attempt (its mint is its own, so it cannot create twice).
      return yield* runSolana(a)
    })

  return { runSolanaOrResume }
}
