/**
 * A Solana self-signed confirm (launch spec 2.3, 3.2): the signature checked (base58, 64 bytes),
 * the payer rules again, then what the chain shows of it (`SolanaLaunch.verifySigned`): landed is
 * recorded once (the token row promoted to the requested visibility, the dev buy's spend hold
 * booked); failed fails the attempt;
 * not found is dead only when the node is caught up, no mint account exists and the blockhash
 * expired.
 */
import { Effect } from "effect"
import { isSolanaSignature } from "../../../domain/ChainValues.js"
import { bookIn } from "../../spend/SpendStore.js"
import { devBuyBooking, devBuyReservationId } from "../internal/LaunchSpend.js"
import { launchStorage, payerRules } from "../internal/LaunchGates.js"
import { confirmedWrites, solanaLaunchResult } from "../internal/LaunchRecords.js"
import { failOnChainFailure, recordConfirmed, selfJobNotFound } from "../internal/SelfBuilds.js"
import type { Also, LaunchRef } from "../LaunchLedger.js"
import { isRevivable, type StoredResult } from "../LaunchLedgerMachine.js"
import { fromSolana, type LaunchError, launchFailure } from "../LaunchError.js"
import type { SolanaLaunchInput } from "../SolanaLaunch.js"
import type { SelfCaller, SelfConfirmInput } from "../SolanaSelfLaunch.js"
import type { SolanaSelfAttempts } from "./SolanaSelfAttempt.js"
import type { SolanaSelfContext } from "./SolanaSelfContext.js"
import type { SolanaSelfGates } from "./SolanaSelfGates.js"

const storage = launchStorage

export const makeSolanaSelfConfirm = (ctx: SolanaSelfContext, gates: SolanaSelfGates, attempts: SolanaSelfAttempts) => {
  const { deps, links } = ctx
  const { ledger, solana, wallets } = deps
  const { tier } = gates
  const { readStored } = attempts
  const notFound = selfJobNotFound

  const confirm = (caller: SelfCaller, input: SelfConfirmInput): Effect.Effect<StoredResult, LaunchError> =>
    Effect.gen(function* () {
      yield* tier(caller)
      const ref: LaunchRef = { accountId: caller.accountId, clientLaunchId: input.clientLaunchId }
      const row = yield* ledger.get(ref).pipe(storage("reading the launch ledger"))
      if (row === undefined || row.path !== "self" || row.chain !== "solana") return yield* notFound()
      if (row.state === "confirmed") return row.result ?? {}
      if (row.state === "failed" && !isRevivable(row)) return yield* notFound()
      // The confirm body carries no chain: an EVM hash, or base58 that is not 64 bytes, is refused here, never sent to the chain as a read.
      if (!isSolanaSignature(input.signature)) {
        return yield* launchFailure("validation_failed", "signature must be the launch transaction's base58 Solana signature (64 bytes)", { field: "signature", retryable: false })
      }
      const attemptRef = { ...ref, attempt: row.attempt }
      const stored = yield* readStored(attemptRef).pipe(storage("reading the build"))
      if (stored === undefined) return yield* notFound()
      // The payer rules again (spec 2.3): the wallet is still this account's, active and able to pay.
      yield* payerRules(wallets, caller.principal, stored.walletId, "solana")
      const launchInput: SolanaLaunchInput = {
        request: stored.request,
        payer: stored.payer,
        platformFeeBps: stored.platformFeeBps,
        metadataUri: stored.metadataUri,
        accountId: caller.accountId,
        attempt: row.attempt
      }
      const seen = yield* solana.verifySigned(launchInput, input.signature).pipe(Effect.mapError(fromSolana))
      switch (seen._tag) {
        case "SignerMismatch":
          return yield* launchFailure("signer_mismatch", "the transaction's signers do not include the wallet this launch was built for", { retryable: false })
        case "NotThisLaunch":
          return yield* launchFailure("validation_failed", "this transaction does not create this launch's mint", { field: "signature", retryable: false })
        case "Failed": {
          const failure = launchFailure("launch_failed", `the launch transaction failed on chain: ${seen.chainError}; build again with the same clientLaunchId`, {
            retryable: true,
            details: { reason: "reverted", signature: input.signature }
          })
          yield* failOnChainFailure(ledger, row)
          return yield* failure
        }
        case "NotFound": {
          const view = yield* solana.mintView(stored.build.mint)
          if (view._tag === "Unreadable") {
            return yield* launchFailure("launch_failed", "the chain could not be read; confirm again", { retryable: true, details: { reason: "chain_read_failed" } })
          }
          const dead = view.caughtUp && !view.mintAccountExists && view.blockHeight > stored.lastValidBlockHeight
          if (dead) return yield* notFound()
          return yield* launchFailure("validation_failed", "the signature is not on chain yet; confirm again once it lands", { field: "signature", retryable: true })
        }
        case "Landed": {
          const result = solanaLaunchResult(links, stored.request, seen.launched)
          const onChain = { mint: seen.launched.mint, pool: seen.launched.curve, signature: seen.launched.signature }
          const writes = confirmedWrites({
            keyId: stored.keyId,
            fee: seen.launched.fee === null ? null : { quoteAsset: stored.request.quoteAsset, feeRaw: seen.launched.fee.feeRaw },
            devBuy: result.devBuy,
            visibility: stored.request.visibility
          })
          // The dev buy landed with the launch: its hold books (a build without one books nothing).
          const booked: Also = () =>
            seen.launched.devBuy === null
              ? Effect.void
              : Effect.asVoid(
                  bookIn(
                    devBuyBooking(
                      devBuyReservationId("self", { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: stored.attempt }),
                      { accountId: row.accountId, keyId: stored.keyId },
                      stored.walletKind === "tee" ? "tee" : "linked",
                      { chain: "solana", quoteAsset: stored.request.quoteAsset, buyAmountRaw: stored.request.buyAmountRaw },
                      Number(stored.platformFeeBps)
                    )
                  )
                )
          const confirmed = yield* recordConfirmed(ledger, row, result, onChain, (record) => Effect.zipRight(booked(record), writes(record)))
          yield* wallets.settleClaim(stored.build.signClaim.claimId, "confirmed").pipe(Effect.ignore)
          return confirmed
        }
      }
    })

  return { confirm }
}
