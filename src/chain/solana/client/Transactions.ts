/**
 * Build and sign transactions with kit: a fee-payer signer, a blockhash lifetime, instructions
 * (with optional compute-budget limit and price), compiled as v0 (default) or legacy, signed by
 * every `TransactionSigner` the metas carry, and serialized to wire bytes and base64 — exactly what
 * `sendTransaction`, the localnet ledger and a block engine accept.
 */
import {
  appendTransactionMessageInstructions,
  type Blockhash,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  type Instruction,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageComputeUnitPrice,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner
} from "@solana/kit"

export interface BlockhashLifetime {
  readonly blockhash: string
  readonly lastValidBlockHeight: bigint
}

export interface BuildTransactionInput {
  readonly feePayer: TransactionSigner
  readonly lifetime: BlockhashLifetime
  readonly instructions: ReadonlyArray<Instruction>
  readonly version?: "legacy" | 0
  readonly computeUnitLimit?: number
  readonly computeUnitPriceMicroLamports?: bigint
}

export interface SignedTransaction {
  readonly signature: string
  readonly wireBytes: Uint8Array
  readonly base64: string
}

export const buildTransactionMessage = (i: BuildTransactionInput) => {
  const base = createTransactionMessage({ version: i.version ?? 0 })
  const withPayer = setTransactionMessageFeePayerSigner(i.feePayer, base)
  const withLifetime = setTransactionMessageLifetimeUsingBlockhash(
    { blockhash: i.lifetime.blockhash as Blockhash, lastValidBlockHeight: i.lifetime.lastValidBlockHeight },
    withPayer
  )
  let message = appendTransactionMessageInstructions(i.instructions, withLifetime)
  if (i.computeUnitLimit !== undefined) message = setTransactionMessageComputeUnitLimit(i.computeUnitLimit, message)
  if (i.computeUnitPriceMicroLamports !== undefined) {
    message = setTransactionMessageComputeUnitPrice(i.computeUnitPriceMicroLamports, message)
  }
  return message
}

export type TransactionMessageToSign = ReturnType<typeof buildTransactionMessage>

export const signTransactionMessage = async (message: TransactionMessageToSign): Promise<SignedTransaction> => {
  const tx = await signTransactionMessageWithSigners(message)
  return {
    signature: getSignatureFromTransaction(tx),
    wireBytes: new Uint8Array(getTransactionEncoder().encode(tx)),
    base64: getBase64EncodedWireTransaction(tx)
  }
}

export const buildAndSignTransaction = (i: BuildTransactionInput): Promise<SignedTransaction> =>
  signTransactionMessage(buildTransactionMessage(i))
