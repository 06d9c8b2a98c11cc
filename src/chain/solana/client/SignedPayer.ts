/**
 * What a submitted signed transaction proves about its payer, for the rails that build a
 * transaction and take it back signed (the trade rail's linked and TEE payers, the transfer rail's
 * TEE payer): its message bytes and the payer's signature slot, and whether that signature is the
 * payer's ed25519 signature over the message. Knows nothing of any ledger.
 */
import { type Address, getPublicKeyFromAddress, getTransactionDecoder, type SignatureBytes, verifySignature } from "@solana/kit"
import { Effect } from "effect"

/** The signed bytes' message and the payer's signature in them; undefined when they do not decode or carry no payer signature. Pure. */
export const signedPayerParts = (wire: Uint8Array, payer: string): { readonly messageBytes: Uint8Array; readonly signature: SignatureBytes } | undefined => {
  try {
    const tx = getTransactionDecoder().decode(wire)
    const signature = tx.signatures[payer as Address]
    if (signature === undefined || signature === null || signature.every((b) => b === 0)) return undefined
    return { messageBytes: new Uint8Array(tx.messageBytes), signature }
  } catch {
    return undefined
  }
}

/** Whether `signature` is the payer's ed25519 signature over `message`. */
export const validSignature = (payer: string, signature: SignatureBytes, message: Uint8Array): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    try {
      return await verifySignature(await getPublicKeyFromAddress(payer as Address), signature, message)
    } catch {
      return false
    }
  })
