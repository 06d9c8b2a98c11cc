/**
 * The claim (3.7, 4.3): one per token at a time across processes (the token lease) and at most
 * `claimsInFlightMax` in this process; Solana one transaction, Hood one call per asset.
 */
import { Effect } from "effect"
import { feeError } from "../FeeError.js"
import { type CallStatus, outcomeOf } from "../FeeClaimOutcome.js"
import { type SolanaFeeRead } from "../SolanaCreatorFees.js"
import type { FeeClaim } from "../FeeViews.js"
import type { CreatorFeesShape, FeeCaller } from "../CreatorFees.js"
import { type ClaimBase, type FeeCtx, storage } from "./FeeContext.js"
import type { FeeAssessment } from "./FeeAssessment.js"

export const makeFeeClaims = (ctx: FeeCtx, assessment: FeeAssessment) => {
  const { options, sql, provider, solana, hood, clock, inFlight, locks, inFlightMax } = ctx
  const { assess, amounts, hoodClaimPlan, hoodAmounts } = assessment
  const tokenOf = (accountId: string, mint: string) =>
    Effect.map(
      // EVM addresses compare case-insensitively (older rows may be lowercase).
      sql<{ chain: string; mint: string }>`
        SELECT chain, mint FROM launched_tokens
        WHERE account_id = ${accountId} AND (mint = ${mint} OR (chain = 'hood' AND lower(mint) = ${mint.toLowerCase()}))`,
      (rows) => rows[0]
    )

  /**
   * Runs `claimOf` holding the token's lease and one of this process's in-flight places; a
   * claim of the token running anywhere (or no place left) answers `below_dust`.
   */
  const exclusively = <A, E, R>(mint: string, claimOf: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      if (inFlight.size >= inFlightMax) return yield* feeError("not_claimable", "Too many claims in flight; try again", { details: { reason: "below_dust" } })
      const holder = yield* locks.acquire(mint, yield* clock.currentTimeMillis)
      if (holder === undefined) return yield* feeError("not_claimable", "A claim of this token is running", { details: { reason: "below_dust" } })
      inFlight.add(holder)
      return yield* Effect.ensuring(
        claimOf,
        Effect.zipRight(Effect.sync(() => inFlight.delete(holder)), locks.release(mint, holder).pipe(Effect.catchAll((e) => Effect.logWarning("a fee claim lease was not given back; it expires", e))))
      )
    })

  const claim: CreatorFeesShape["claim"] = (caller, requested, dryRun) =>
    storage(
      Effect.gen(function* () {
        const token = yield* tokenOf(caller.accountId, requested)
        if (token === undefined) return yield* feeError("token_not_found", `No token launched by this account has mint ${requested.slice(0, 64)}`)
        let mint = requested
        if (token.chain !== "solana") return yield* claimHood(caller, token.mint, dryRun)
        mint = token.mint
        const fees = yield* solana.readFees(mint)
        if (fees === undefined) return yield* feeError("chain_unavailable", `the fee vault of ${mint} is not readable`, { retryable: true })
        const reason = yield* assess(caller, fees, mint)
        const base: ClaimBase = { mint, chain: "solana", dryRun, recipient: fees.recipient, warnings: [] }
        if (dryRun) {
          return {
            ...base,
            claimable: reason === undefined,
            ...(reason !== undefined ? { reason } : {}),
            claimed: amounts(fees).map((a) => ({ ...a, txHash: null })),
            remaining: []
          } satisfies FeeClaim
        }
        if (reason !== undefined) {
          return yield* feeError("not_claimable", `The fees of ${mint} cannot be claimed now: ${reason}`, { details: { reason } })
        }
        return yield* exclusively(mint, send(caller, mint, fees, base))
      }).pipe(Effect.withSpan("CreatorFees.claim"))
    )

  const send = (caller: FeeCaller, mint: string, fees: SolanaFeeRead, base: ClaimBase) =>
    Effect.gen(function* () {
      const built = yield* solana.buildClaim(mint, fees)
      const signed = yield* provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(
        Effect.mapError((e) =>
          feeError("claim_failed", `signing failed: ${e.message}`, { retryable: true, details: { stage: "not_broadcast" } })
        )
      )
      const sent = yield* Effect.either(solana.watch.send(signed.signedTransaction))
      const failed = (stage: "not_broadcast" | "unconfirmed" | "reverted", message: string) =>
        feeError("claim_failed", message, { retryable: stage !== "reverted", details: { stage, signature: signed.signature } })
      if (sent._tag === "Left") return yield* failed("not_broadcast", `the node refused the claim: ${sent.left.message}`)
      const seen = yield* solana.watch.settle(
        signed.signature,
        built.lastValidBlockHeight,
        (yield* clock.currentTimeMillis) + (options.confirmTimeoutMs ?? 30_000),
        options.pollIntervalMs ?? 250,
        // The chain watch checks its deadline between polls, outside this Effect: the same clock, read synchronously.
        () => clock.unsafeCurrentTimeMillis()
      )
      const status: CallStatus = seen.outcome === "landed" ? "confirmed" : seen.outcome === "reverted" ? "reverted" : seen.outcome === "never_lands" ? "not_sent" : "submitted_unknown"
      if (status === "reverted") return yield* failed("reverted", `the claim failed on chain: ${seen.error ?? ""}`)
      if (status !== "confirmed") return yield* failed("unconfirmed", "the claim was not confirmed in time; read fees before retrying")
      // What the program paid (its CreatorFeeClaimed event): a trade between the read and the claim adds to it.
      const paid = yield* Effect.either(solana.claimedAmount(signed.signature))
      const paidRaw = paid._tag === "Right" && paid.right !== undefined ? paid.right : fees.owedRaw
      const after = yield* Effect.either(solana.readFees(mint))
      return {
        ...base,
        claimed: amounts({ ...fees, owedRaw: paidRaw }).map((a) => ({ ...a, txHash: signed.signature })),
        remaining: after._tag === "Right" && after.right !== undefined ? amounts(after.right) : [],
        outcome: outcomeOf([{ status }])
      } satisfies FeeClaim
    })

  const claimHood = (caller: FeeCaller, mint: string, dryRun: boolean) =>
    Effect.gen(function* () {
      if (hood === undefined) return yield* feeError("chain_unavailable", "Hood is not configured on this server", { retryable: false })
      const fees = yield* hood.readFees(mint)
      if (fees === undefined) return yield* feeError("chain_unavailable", `the fee splitter has no curve for ${mint}`, { retryable: true })
      const { reason, claimable, prepared } = yield* hoodClaimPlan(caller, fees, mint)
      const dust = fees.assets.filter((a) => a.amountRaw > 0n && !hood.aboveDust(a, fees.gasPrice)).map((a) => ({ symbol: a.symbol, mint: a.mint, decimals: a.decimals, amountRaw: a.amountRaw.toString() }))
      const wallet = fees.recipient as `0x${string}`
      const notSent = claimable.map((a) => ({ operation: "claim", target: options.hood!.feeSplitter, txHash: null, status: "not_sent" as const, asset: a }))
      const base: ClaimBase = { mint, chain: "hood", dryRun, recipient: fees.recipient, warnings: [], dust }
      const callsOut = (calls: ReadonlyArray<{ operation: string; target: string; txHash: string | null; status: CallStatus }>) =>
        calls.map(({ operation, target, txHash, status }) => ({ operation, target, txHash, status }))
      if (dryRun) {
        return {
          ...base,
          claimable: reason === undefined,
          ...(reason !== undefined ? { reason } : {}),
          claimed: claimable.map((a) => ({ symbol: a.symbol, mint: a.mint, decimals: a.decimals, amountRaw: a.amountRaw.toString(), txHash: null })),
          remaining: [],
          calls: callsOut(notSent),
          outcome: "not_started" as const
        }
      }
      if (reason !== undefined) return yield* feeError("not_claimable", `The fees of ${mint} cannot be claimed now: ${reason}`, { details: { reason } })
      if (yield* hood.unsettled(wallet)) {
        return { ...base, warnings: ["an earlier transaction of the wallet is unsettled; nothing was sent"], claimed: [], remaining: hoodAmounts(fees), calls: callsOut(notSent), outcome: "not_started" as const }
      }
      const calls = yield* exclusively(mint, hood.send(caller.accountId, prepared!))
      const after = yield* Effect.either(hood.readFees(mint))
      return {
        ...base,
        claimed: calls
          .filter((c) => c.status === "confirmed")
          .map((c) => ({ symbol: c.asset.symbol, mint: c.asset.mint, decimals: c.asset.decimals, amountRaw: (c.paidRaw ?? c.asset.amountRaw).toString(), txHash: c.txHash })),
        remaining: after._tag === "Right" && after.right !== undefined ? hoodAmounts(after.right) : [],
        calls: callsOut(calls),
        outcome: outcomeOf(calls)
      }
    })
  return { claim }
}
