/**
 * Reading a sent Solana launch back (launch spec 2.3, 3.1): `recover` settles a recorded attempt
 * from the chain (landed only when this attempt's curve exists, created by the payer), and
 * `verifySigned` checks a transaction a self-signed payer reports (signed by the payer and by
 * this attempt's mint) before reading it as this launch.
 */
import { signature as asSignature } from "@solana/kit"
import { Effect } from "effect"
import { findCurveAddresses } from "../../../chain/solana/client/CurveInstructions.js"
import { launchMintSigner } from "../../../chain/solana/launch/LaunchMint.js"
import { transactionErrorText } from "../../../chain/solana/launch/LaunchFailure.js"
import { decodeCurve } from "../../../chain/solana/program/accounts/Curve.js"
import { SVC_CURVE_PROGRAM_ID } from "../../../chain/solana/program/ProgramIds.js"
import type { Recovery, SignedLaunch, SolanaLaunchShape } from "../SolanaLaunch.js"
import { launchError } from "../SolanaLaunchError.js"
import type { SolanaBuilds } from "./SolanaBuilds.js"
import type { SolanaContext } from "./SolanaContext.js"
import type { SolanaReads } from "./SolanaReads.js"
import { SIZING_LIFETIME } from "./SolanaRules.js"

export const makeSolanaRecover = (ctx: SolanaContext, reads: SolanaReads, builds: SolanaBuilds) => {
  const { rpc, secret, fromBase64, read } = ctx
  const { readLanded, observe } = reads
  const { transactionInput } = builds

  const recover: SolanaLaunchShape["recover"] = (input) =>
    Effect.gen(function* () {
      const o = yield* observe(input.signature, input.lastValidBlockHeight, true)
      if (o._tag === "Reverted") return { _tag: "Reverted", signature: input.signature, chainError: o.chainError } satisfies Recovery
      if (o._tag === "NeverLands") return { _tag: "NeverLands" } satisfies Recovery
      if (o._tag === "Pending") return { _tag: "Pending" } satisfies Recovery
      // Landed: this attempt's curve must exist, created by the payer; then the transaction's fill.
      const mint = yield* Effect.promise(() =>
        launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })
      )
      const { plan } = yield* transactionInput(input, mint, SIZING_LIFETIME)
      const curve = (yield* Effect.promise(() => findCurveAddresses(mint.address))).curve
      const account = yield* read("getAccountInfo", (signal) =>
        rpc.getAccountInfo(curve, { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })
      )
      const decoded =
        account.value === null || account.value.owner !== SVC_CURVE_PROGRAM_ID
          ? undefined
          : decodeCurve(new Uint8Array(fromBase64.encode(account.value.data[0])))
      if (decoded === undefined || decoded.creator !== input.payer) {
        return yield* launchError("chain_unavailable", `${input.signature} landed but no curve of ${mint.address} created by ${input.payer} is readable`)
      }
      const landed = yield* readLanded(input.signature, mint.address, curve, input.payer, plan)
      if (landed === undefined) return yield* launchError("chain_unavailable", `the landed launch ${input.signature} is not readable yet`)
      return { _tag: "Landed", launched: landed } satisfies Recovery
    }).pipe(Effect.withSpan("SolanaLaunch.recover"))

  const verifySigned: SolanaLaunchShape["verifySigned"] = (input, signature) =>
    Effect.gen(function* () {
      const tx = yield* read("getTransaction", (signal) =>
        rpc
          .getTransaction(asSignature(signature), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" })
          .send({ abortSignal: signal })
      )
      if (tx === null) return { _tag: "NotFound" } satisfies SignedLaunch
      const keys = tx.transaction.message.accountKeys as ReadonlyArray<string>
      const signers = keys.slice(0, tx.transaction.message.header.numRequiredSignatures)
      if (!signers.includes(input.payer)) return { _tag: "SignerMismatch" } satisfies SignedLaunch
      const mint = yield* Effect.promise(() =>
        launchMintSigner(secret, { accountId: input.accountId, clientLaunchId: input.request.clientLaunchId, attempt: input.attempt })
      )
      // The attempt's mint signed it: only the service holds that key, and it signs only this attempt's build.
      if (!signers.includes(mint.address)) return { _tag: "NotThisLaunch" } satisfies SignedLaunch
      // Only now is a failure this launch's failure (anyone else's failed transaction proves nothing about it).
      if (tx.meta !== null && tx.meta.err !== null) return { _tag: "Failed", chainError: transactionErrorText(tx.meta.err) } satisfies SignedLaunch
      const seen = yield* recover({ ...input, signature, lastValidBlockHeight: 0n })
      if (seen._tag !== "Landed") return yield* launchError("chain_unavailable", `the landed launch ${signature} is not readable yet`)
      return { _tag: "Landed", launched: seen.launched } satisfies SignedLaunch
    }).pipe(Effect.withSpan("SolanaLaunch.verifySigned"))

  return { recover, verifySigned }
}
