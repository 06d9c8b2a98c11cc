/**
 * What the chain shows of a sent atomic bundle (launch spec 3.5's recovery passes): each leg's
 * signature status, whether the shared blockhash can still land anything, and for each landed buy
 * the tokens its own transaction delivered to its buyer (`deliveredTokensRaw` over the
 * transaction's token balances). Read at `confirmed`. A read that fails is `unreadable`, never
 * guessed: the caller keeps what it owes and asks again later.
 */
import { type Rpc, type SolanaRpcApi, signature as asSignature } from "@solana/kit"
import { deliveredTokensRaw } from "./BuyLegTransaction.js"

export interface SentBundleView {
  readonly launchSignature: string
  readonly buySignatures: ReadonlyArray<string>
  readonly buyers: ReadonlyArray<string>
  readonly mint: string
  readonly lastValidBlockHeight: bigint
}

export type LegRead =
  | { readonly status: "landed"; readonly deliveredRaw: bigint | null }
  | { readonly status: "failed"; readonly err: unknown }
  | { readonly status: "absent" }
  | { readonly status: "unreadable" }

export interface BundleRead {
  readonly launch: "landed" | "failed" | "absent" | "unreadable"
  readonly slot: bigint | null
  /** A healthy node is past the blockhash's last valid block height: nothing of it can land any more. */
  readonly blockhashExpired: boolean
  readonly buys: ReadonlyArray<LegRead>
}

const attempt = async <A>(f: () => Promise<A>): Promise<A | undefined> => {
  try {
    return await f()
  } catch {
    return undefined
  }
}

/** `signal` (the caller's fiber's, when it runs under Effect) ends the pass's reads when the fiber is interrupted. */
export const readSentBundle = async (rpc: Rpc<SolanaRpcApi>, v: SentBundleView, signal?: AbortSignal): Promise<BundleRead> => {
  const sent = signal === undefined ? {} : { abortSignal: signal }
  const signatures = [v.launchSignature, ...v.buySignatures]
  const [statuses, height, health] = await Promise.all([
    attempt(() => rpc.getSignatureStatuses(signatures.map(asSignature), { searchTransactionHistory: true }).send(sent)),
    attempt(() => rpc.getBlockHeight({ commitment: "confirmed" }).send(sent)),
    attempt(() => rpc.getHealth().send(sent))
  ])
  const blockhashExpired = health === "ok" && height !== undefined && height > v.lastValidBlockHeight
  if (statuses === undefined) return { launch: "unreadable", slot: null, blockhashExpired: false, buys: v.buySignatures.map(() => ({ status: "unreadable" })) }
  const seen = statuses.value.map((s) => (s === null || (s.confirmationStatus !== "confirmed" && s.confirmationStatus !== "finalized") ? null : s))
  const launch = seen[0] ?? null
  const buys = await Promise.all(
    v.buySignatures.map(async (sig, i): Promise<LegRead> => {
      const s = seen[i + 1] ?? null
      if (s === null) return { status: "absent" }
      if (s.err !== null) return { status: "failed", err: s.err }
      const tx = await attempt(() =>
        rpc.getTransaction(asSignature(sig), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send(sent)
      )
      if (tx === undefined || tx === null || tx.meta === null) return { status: "unreadable" }
      const view = (rows: ReadonlyArray<{ mint: string; owner?: string | undefined; uiTokenAmount: { amount: string } }> | null | undefined) =>
        (rows ?? []).map((b) => ({ mint: b.mint, owner: b.owner, amount: BigInt(b.uiTokenAmount.amount) }))
      return { status: "landed", deliveredRaw: deliveredTokensRaw(view(tx.meta.preTokenBalances), view(tx.meta.postTokenBalances), v.buyers[i]!, v.mint) }
    })
  )
  return {
    launch: launch === null ? "absent" : launch.err !== null ? "failed" : "landed",
    slot: launch === null ? null : launch.slot,
    blockhashExpired,
    buys
  }
}
