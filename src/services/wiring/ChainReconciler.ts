/**
 * The wallet service's `ClaimReconciler` over the chains: whether a transaction the sign relay
 * signed (and the client forwarded) settled. Solana: `getSignatureStatuses` with history search
 * (`confirmed`/`finalized` and no error → confirmed; an error → failed; unknown or only
 * `processed` → pending). Hood: the receipt (`success` → confirmed, `reverted` → failed, none yet →
 * pending). Any read failure is `unavailable`, which the rebind rules turn into
 * `REBIND_RECONCILE_INCOMPLETE` (503, nothing changed). Each read is bounded by `timeoutMs`.
 */
import type { Signature } from "@solana/kit"
import { Effect } from "effect"
import { type PublicClient, TransactionReceiptNotFoundError } from "viem"
import { makeRpcSender } from "../../chain/solana/RpcSender.js"
import type { ClaimReconciler } from "../wallets/WalletService.js"

export interface ChainReconcilerOptions {
  readonly solanaRpcUrl: string
  readonly hood: PublicClient
  /** Deadline of one chain read (default 5 s). */
  readonly timeoutMs?: number
}

export const chainClaimReconciler = (options: ChainReconcilerOptions): ClaimReconciler => {
  const solana = makeRpcSender(options.solanaRpcUrl).rpc
  const timeoutMs = options.timeoutMs ?? 5_000
  const bounded = <A>(effect: Effect.Effect<A, "unavailable">) =>
    effect.pipe(
      Effect.timeoutFail({ duration: timeoutMs, onTimeout: () => "unavailable" as const }),
      Effect.tapError(() => Effect.logWarning("wallets: a chain read for a sign claim failed"))
    )
  return {
    outcome: ({ chain, signature }) =>
      chain === "solana"
        ? bounded(
            Effect.tryPromise({
              try: (signal) => solana.getSignatureStatuses([signature as Signature], { searchTransactionHistory: true }).send({ abortSignal: signal }),
              catch: () => "unavailable" as const
            }).pipe(
              Effect.map((r) => {
                const status = r.value[0]
                if (status === null || status === undefined) return "pending" as const
                if (status.err !== null) return "failed" as const
                return status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized" ? ("confirmed" as const) : ("pending" as const)
              })
            )
          )
        : bounded(
            Effect.tryPromise({
              try: async () => {
                try {
                  const receipt = await options.hood.getTransactionReceipt({ hash: signature as `0x${string}` })
                  return receipt.status === "success" ? ("confirmed" as const) : ("failed" as const)
                } catch (e) {
                  if (e instanceof TransactionReceiptNotFoundError) return "pending" as const
                  throw e
                }
              },
              catch: () => "unavailable" as const
            })
          )
  }
}
