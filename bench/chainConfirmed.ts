/**
 * The chain's own confirmation of one transaction, as the item-6 pairings of `bench:launch` and
 * `bench:trade` take it: its status polled until `confirmed` (or `finalized`).
 */
import { createSolanaRpc, signature as asSignature } from "@solana/kit"

/** Resolves with the wall-clock ms (`Date.now`, the engine's clock too) at which `sig` was first seen `confirmed`, polled every `pollMs`. */
export const chainConfirmedAt = async (rpc: ReturnType<typeof createSolanaRpc>, sig: string, pollMs: number): Promise<number> => {
  const signature = asSignature(sig)
  for (;;) {
    const status = (await rpc.getSignatureStatuses([signature]).send()).value[0]
    if (status != null && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized")) return Date.now()
    await new Promise<void>((r) => setTimeout(r, pollMs))
  }
}
