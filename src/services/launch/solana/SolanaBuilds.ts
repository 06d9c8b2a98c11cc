/**
 * Building a Solana launch (launch spec 2.4 to 2.6): the launch transaction's input and plan for
 * an attempt's mint (a dev buy that fills nothing is refused), its size (an oversized request
 * reads nothing from the chain), the payer-signed build, the atomic bundle, and signing with the
 * embedded wallet.
 */
import { address, createNoopSigner, partiallySignTransactionMessageWithSigners } from "@solana/kit"
import { Effect } from "effect"
import type { BlockhashLifetime } from "../../../chain/solana/client/Transactions.js"
import { assembleAtomicBundle } from "../../../chain/solana/launch/AtomicBundle.js"
import { launchMintSigner } from "../../../chain/solana/launch/LaunchMint.js"
import {
  assembleLaunchTransaction,
  isLaunchPlan,
  type LaunchPlan,
  type LaunchTransactionInput,
  planLaunch,
  sizeLaunch,
  SOLANA_TRANSACTION_BYTES_MAX
} from "../../../chain/solana/launch/LaunchTransaction.js"
import type { AtomicBuilt, PayerSignedBuild, SolanaLaunchShape, SolanaLaunchSpec } from "../SolanaLaunch.js"
import { fromWalletProvider, launchError } from "../SolanaLaunchError.js"
import type { SolanaContext } from "./SolanaContext.js"
import type { SolanaReads } from "./SolanaReads.js"
import { blocksLeftOf, launchTransactionInput, oversizeRefusal, SIZING_LIFETIME } from "./SolanaRules.js"

export type SolanaBuilds = ReturnType<typeof makeSolanaBuilds>

export const makeSolanaBuilds = (ctx: SolanaContext, reads: SolanaReads) => {
  const { options, provider, rpc, secret, sizingMint, treasury, base64, fromBase64, encoder, timedBuild, read } = ctx
  const { blockHeight } = reads

  const transactionInput = (spec: SolanaLaunchSpec, mint: LaunchTransactionInput["mint"], lifetime: BlockhashLifetime) =>
    Effect.gen(function* () {
      const r = spec.request
      const input = launchTransactionInput(spec, createNoopSigner(address(spec.payer)), mint, treasury, lifetime, options.computeUnitPriceMicroLamports)
      if (input === undefined) return yield* Effect.dieMessage(`SolanaLaunch: not a Solana request (${r.chain}/${r.quoteAsset})`)
      const plan = planLaunch(input.terms, input.devBuyRaw, input.platformFee)
      if (!isLaunchPlan(plan)) {
        return yield* launchError("dev_buy_unfillable", `a dev buy of ${r.buyAmountRaw} fills nothing on this curve (${plan.reason})`)
      }
      return { input, plan }
    })


  const checkedSize = (input: LaunchTransactionInput, plan: LaunchPlan) =>
    Effect.flatMap(
      Effect.promise(() => sizeLaunch(input, plan, SOLANA_TRANSACTION_BYTES_MAX)),
      (size) => (size.fits ? Effect.succeed(size) : Effect.fail(oversizeRefusal(size)))
    )

  // The process's stand-in mint: no key derived per size, and its curve addresses and the payer's
  // token account are the memos' (derived once per process and payer), not a new mint's each time.
  const size: SolanaLaunchShape["size"] = (spec) =>
    Effect.gen(function* () {
      const { input, plan } = yield* transactionInput(spec, sizingMint, SIZING_LIFETIME)
      return { size: yield* checkedSize(input, plan), plan }
    }).pipe(Effect.withSpan("SolanaLaunch.size"))

  const buildForPayer: SolanaLaunchShape["buildForPayer"] = (input) =>
    Effect.gen(function* () {
      const mint = yield* Effect.promise(() =>
        launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })
      )
      const sizing = yield* transactionInput(input, mint, SIZING_LIFETIME)
      const sized = yield* checkedSize(sizing.input, sizing.plan)
      const latest = yield* read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal }))
      const height = yield* blockHeight
      const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
      const { input: txInput, plan } = yield* transactionInput(input, mint, lifetime)
      const assembled = yield* Effect.promise(() => assembleLaunchTransaction(txInput, plan))
      const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(assembled.message))
      const wire = new Uint8Array(encoder.encode(partial))
      return {
        transactionBase64: base64.decode(wire),
        mint: mint.address,
        curve: assembled.curve,
        lastValidBlockHeight: lifetime.lastValidBlockHeight,
        txBytes: sized.txBytes,
        fee: plan.fee,
        blocksLeft: blocksLeftOf(lifetime, height)
      } satisfies PayerSignedBuild
    }).pipe(timedBuild("the launch"), Effect.withSpan("SolanaLaunch.buildForPayer"))

  const attemptMint: SolanaLaunchShape["attemptMint"] = (accountId, clientLaunchId, attempt) =>
    Effect.promise(() => launchMintSigner(secret, { accountId, clientLaunchId, attempt })).pipe(Effect.map((m) => m.address as string))

  const buildAtomic: SolanaLaunchShape["buildAtomic"] = (input, legs, tip) =>
    Effect.gen(function* () {
      const spec = { ...input, request: { ...input.request, buyAmountRaw: 0n } }
      // The attempt's mint key and the chain's two reads at once (the build's latency is what agents wait on).
      const [mint, latest, height] = yield* Effect.all(
        [
          Effect.promise(() => launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })),
          read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal })),
          blockHeight
        ],
        { concurrency: "unbounded" }
      )
      const bundleTip = { account: address(tip.account), lamports: tip.lamports }
      const lifetime = { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight }
      const { input: txInput, plan } = yield* transactionInput(spec, mint, lifetime)
      const bundle = yield* Effect.promise(() =>
        assembleAtomicBundle({
          launch: { ...txInput, bundleTip },
          launchPlan: plan,
          legs: legs.map((l) => ({ buyer: createNoopSigner(address(l.buyer)), amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
          treasury,
          lifetime
        })
      )
      // Sized as built (a blockhash is 32 bytes whatever its value); only an oversized launch pays for the name search.
      if (bundle.legs[0]!.bytes > SOLANA_TRANSACTION_BYTES_MAX) {
        yield* checkedSize({ ...txInput, bundleTip }, plan)
        return yield* launchError("transaction_too_large", `the launch transaction is ${bundle.legs[0]!.bytes} bytes, over the ${SOLANA_TRANSACTION_BYTES_MAX}-byte limit`)
      }
      return {
        mint: mint.address,
        bundle,
        lastValidBlockHeight: lifetime.lastValidBlockHeight,
        blocksLeft: blocksLeftOf(lifetime, height)
      } satisfies AtomicBuilt
    }).pipe(timedBuild("the bundle"), Effect.withSpan("SolanaLaunch.buildAtomic"))

  const signEmbedded: SolanaLaunchShape["signEmbedded"] = (accountId, wireBase64) =>
    provider.signWithEmbedded(accountId, "solana", new Uint8Array(fromBase64.encode(wireBase64))).pipe(
      Effect.map((s) => s.signedTransaction),
      Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromWalletProvider(e) : launchError("signing_failed", `wallet provider: ${e.message}`)))
    )

  return { transactionInput, checkedSize, size, buildForPayer, attemptMint, buildAtomic, signEmbedded }
}
