/** What a transfer row answers: its view, or (by the machine, for this request) its refusal. Pure. */
import { Effect } from "effect"
import { stateOf } from "../TransferAttempt.js"
import { type TransferError, transferError } from "../TransferError.js"
import { step } from "../TransferMachine.js"
import type { TransferView } from "../TransferService.js"
import type { TransferRow } from "../TransferStore.js"

/** The view of a stored transfer (`replay`: answered from its row). */
export const viewOf = (r: TransferRow, replay: boolean): TransferView => ({
  status: r.state === "confirmed" ? "confirmed" : r.state === "built" ? "built" : "sending",
  clientTransferId: r.clientTransferId,
  chain: r.chain,
  asset: r.asset,
  amountRaw: r.amountRaw.toString(),
  from: r.from,
  to: r.to,
  destinationClass: r.destinationClass,
  destinationKind: r.destinationKind,
  ...(r.toWalletId !== null ? { walletId: r.toWalletId } : {}),
  ...(r.state !== "built" ? { signature: r.signature } : {}),
  replay,
  payer: r.payer,
  ...(r.walletId !== null ? { linkedWalletId: r.walletId } : {}),
  ...(r.state === "built" && r.transaction !== null && r.claimId !== null
    ? {
        transaction: r.transaction,
        signClaim: { claimId: r.claimId, expiresAt: new Date(r.claimExpiresAtMs ?? r.createdAtMs).toISOString() },
        ...(r.chain === "solana" ? { lastValidBlockHeight: (r.lastValidBlockHeight ?? 0n).toString() } : {})
      }
    : {})
})


/** A row under the id, answered by the machine for this request (`Recorded`: a TEE build's repeat): the view, or its refusal. */
export const answer = (row: TransferRow, requestHash: string, replay: boolean, as: "Built" | "Recorded" = "Built"): Effect.Effect<TransferView, TransferError> => {
  const [, outputs] = step(stateOf(row), as === "Built" ? { _tag: "Built", requestHash, signature: row.signature } : { _tag: "Recorded", requestHash })
  const refusal = outputs.find((o) => o._tag === "Refuse")
  if (refusal?._tag === "Refuse") {
    return refusal.reason === "idempotency_conflict"
      ? Effect.fail(transferError("idempotency_conflict", `clientTransferId ${row.clientTransferId} was used for another transfer`))
      : refusal.reason === "built"
        ? Effect.fail(transferError("idempotency_conflict", `clientTransferId ${row.clientTransferId} is a TEE build waiting for its signed transaction (POST /transfer/submit)`))
        : Effect.fail(
            transferError("transfer_failed", `The transfer under ${row.clientTransferId} failed: ${row.error ?? "unknown"}; use a new clientTransferId`, {
              details: { signature: row.signature, error: row.error }
            })
          )
  }
  return Effect.succeed(viewOf(row, replay))
}

