/**
 * A headless Solana launch sent (launch spec 2.5, 3.1): sized, built on a fresh blockhash,
 * simulated and signed within the build deadline; `beforeSend` records it (the ledger's `sent`)
 * before it leaves; sent once; a node's refusal is explained by simulating the signed bytes; then
 * confirmed by the Clock within `confirmTimeoutMs` (past it the launch may still land).
 */
import { address, type Base64EncodedWireTransaction, partiallySignTransactionMessageWithSigners } from "@solana/kit"
import { Effect, Either, Option } from "effect"
import { type LaunchAttemptId, launchMintSigner } from "../../../chain/solana/launch/LaunchMint.js"
import { assembleLaunchTransaction, type LaunchPlan } from "../../../chain/solana/launch/LaunchTransaction.js"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import { statusBeside } from "../../../platform/ReadBeside.js"
import type { LaunchSending, SolanaLaunchInput, SolanaLaunchShape } from "../SolanaLaunch.js"
import { fromWalletProvider, launchError } from "../SolanaLaunchError.js"
import type { SolanaBuilds } from "./SolanaBuilds.js"
import type { SolanaContext } from "./SolanaContext.js"
import { launchedFromStream, type SolanaReads } from "./SolanaReads.js"
import { nodeAnswered, SIZING_LIFETIME } from "./SolanaRules.js"

export const makeSolanaSend = (ctx: SolanaContext, reads: SolanaReads, builds: SolanaBuilds) => {
  const { provider, rpc, secret, fromBase64, encoder, confirmTimeoutMs, pollIntervalMs, timedBuild, read, arrivals } = ctx
  const { simulate, transactionOf, landedFrom, observe } = reads
  const { transactionInput, checkedSize } = builds

  const confirm = (sending: LaunchSending, payer: string, plan: LaunchPlan) => {
    const status = observe(sending.signature, sending.lastValidBlockHeight, false)
    const txRead = transactionOf(sending.signature)
    /**
     * One look: the landed launch, or none yet (a failed read is retried like a pending status,
     * within the deadline). When the ingest stream carried the landed launch at a deciding
     * commitment, that is the verdict, with no read of the node (`launchedFromStream`). Else, once
     * the stream delivered the transaction, the transaction is read beside its status
     * (`statusBeside`).
     */
    const look = Effect.gen(function* () {
      const fromStream = launchedFromStream(arrivals?.landed(sending.signature), sending, payer, plan)
      if (fromStream !== undefined) return Option.some(fromStream)
      const seen = yield* Effect.either(statusBeside(status, txRead, arrivals?.delivered(sending.signature) === true))
      if (Either.isRight(seen)) {
        const { status: o, transaction } = seen.right
        if (o._tag === "Reverted") {
          return yield* launchError("reverted", `the launch transaction failed on chain: ${o.chainError}`, {
            signature: sending.signature,
            mint: sending.mint,
            chainError: o.chainError
          })
        }
        if (o._tag === "NeverLands") {
          return yield* launchError("expired", "the launch transaction's blockhash expired before it landed; it never will", {
            signature: sending.signature,
            mint: sending.mint
          })
        }
        if (o._tag === "Landed") {
          const landed = yield* Effect.either(Effect.flatMap(transaction, (t) => landedFrom(t, sending.signature, sending.mint, sending.curve, payer, plan)))
          if (Either.isRight(landed) && landed.right !== undefined) return Option.some(landed.right)
        }
      }
      return Option.none()
    })
    return awaitUntil(look, Option.isSome, {
      what: "the launch's confirmation",
      timeoutMs: confirmTimeoutMs,
      intervalMs: pollIntervalMs,
      interruptPoll: true,
      // Read at once when the ingest stream delivers the launch (the poll stays the fallback), cutting a
      // look in flight: the next one takes the verdict from the stream (the look only reads).
      wake: arrivals?.arrived(sending.signature),
      wakeCutsPoll: true
    }).pipe(
      Effect.map((landed) => landed.value),
      Effect.catchTag("AwaitTimedOut", () =>
        Effect.fail(
          launchError("confirmation_timeout", `no confirmation within ${confirmTimeoutMs} ms; the launch may still land`, {
            signature: sending.signature,
            mint: sending.mint
          })
        )
      )
    )
  }

  const launch: SolanaLaunchShape["launch"] = <E>(input: SolanaLaunchInput, beforeSend: (sending: LaunchSending) => Effect.Effect<void, E>) =>
    Effect.gen(function* () {
      const attemptId: LaunchAttemptId = { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt }
      const mint = yield* Effect.promise(() => launchMintSigner(secret, attemptId))
      const payer = address(input.payer)
      const built = yield* Effect.gen(function* () {
        // The size first: an oversized request reads nothing from the chain.
        const sizing = yield* transactionInput(input, mint, SIZING_LIFETIME)
        yield* checkedSize(sizing.input, sizing.plan)
        const latest = yield* read("getLatestBlockhash", (signal) =>
          rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal })
        )
        const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
        const { input: txInput, plan } = yield* transactionInput(input, mint, lifetime)
        const assembled = yield* Effect.promise(() => assembleLaunchTransaction(txInput, plan))
        const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(assembled.message))
        const unsigned = new Uint8Array(encoder.encode(partial))
        yield* simulate(unsigned, assembled, txInput.quoteMint, payer)
        const signed = yield* provider.signWithEmbedded(input.accountId, "solana", unsigned).pipe(
          Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromWalletProvider(e) : launchError("signing_failed", `wallet provider: ${e.message}`)))
        )
        return { assembled, plan, lifetime, signed, quoteMint: txInput.quoteMint }
      }).pipe(timedBuild("the launch", "; nothing was sent"))
      const sending: LaunchSending = {
        mint: mint.address,
        curve: built.assembled.curve,
        signature: built.signed.signature,
        lastValidBlockHeight: built.lifetime.lastValidBlockHeight
      }
      yield* beforeSend(sending)
      const sent = yield* Effect.either(
        Effect.tryPromise({
          try: (signal) =>
            rpc
              .sendTransaction(built.signed.signedTransaction as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" })
              .send({ abortSignal: signal }),
          catch: (e) => e
        })
      )
      if (Either.isLeft(sent) && nodeAnswered(sent.left)) {
        // Refused at preflight or by the node: nothing is on its way. Simulate the signed bytes for the reason.
        const signedWire = new Uint8Array(fromBase64.encode(built.signed.signedTransaction))
        const refused = launchError("send_refused", `the node refused the launch transaction: ${String(sent.left)}`, {
          signature: sending.signature,
          mint: sending.mint
        })
        // A simulation that now passes, or cannot run, leaves the node's own refusal as the reason.
        const why = yield* Effect.match(
          simulate(signedWire, built.assembled, built.quoteMint, payer, { signature: sending.signature, mint: sending.mint }),
          { onSuccess: () => refused, onFailure: (e) => (e.reason === "chain_unavailable" ? refused : e) }
        )
        return yield* Effect.fail(why)
      }
      // Sent, or the answer was lost in transport: either way the chain decides.
      return yield* confirm(sending, input.payer, built.plan)
    }).pipe(Effect.withSpan("SolanaLaunch.launch"))

  return { launch }
}
