/**
 * Signs instructions into a real transaction and sends it over Solana JSON-RPC with
 * `@solana/kit`, as any client of the chain would. Used by the keeper and the simulation.
 * The recent blockhash is fetched at most once per `blockhashTtlMs` (a blockhash stays valid
 * for ~150 slots, so reusing it briefly is safe and saves a round trip per transaction).
 */
import { type Base64EncodedWireTransaction, type Instruction, type TransactionSigner } from "@solana/kit"
import { createNodeSolanaRpc } from "../internal/JsonRpcHttp.js"
import { buildAndSignTransaction } from "./client/Transactions.js"

export interface RpcSender {
  /** Resolves with the signature once the node accepted it (preflight passed); rejects with the node's error. */
  readonly send: (feePayer: TransactionSigner, instructions: ReadonlyArray<Instruction>) => Promise<string>
  readonly rpc: ReturnType<typeof createNodeSolanaRpc>
}

export const makeRpcSender = (rpcUrl: string, options: { readonly blockhashTtlMs?: number } = {}): RpcSender => {
  const rpc = createNodeSolanaRpc(rpcUrl)
  const ttl = options.blockhashTtlMs ?? 1_000
  let cached: { blockhash: string; lastValidBlockHeight: bigint; at: number } | undefined
  const lifetime = async () => {
    const now = Date.now()
    if (cached === undefined || now - cached.at > ttl) {
      const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
      cached = { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight, at: now }
    }
    return cached
  }
  return {
    rpc,
    send: async (feePayer, instructions) => {
      const l = await lifetime()
      const signed = await buildAndSignTransaction({
        feePayer,
        lifetime: l,
        instructions
      })
      await rpc.sendTransaction(signed.base64 as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" }).send()
      return signed.signature
    }
  }
}
