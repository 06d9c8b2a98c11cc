/**
 * A caller-signed Hood (EVM) transaction checked against the one the service built, shared by every
 * rail whose payer signs outside the server (the TEE transfer rail, the trade rail's linked payer):
 * the signed bytes' unsigned form and signer, in their one canonical form; and the signed bytes of a
 * transaction the node holds, rebuilt from its fields, so a hash a caller broadcast itself is
 * checked by exactly the same rule.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { getAddress, type Hex, hexToBigInt, keccak256, parseTransaction, recoverTransactionAddress, serializeTransaction, type Transaction } from "viem"

/** The secp256k1 group order: a signature's `s` above half of it is the malleated twin of a canonical one. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/**
 * The unsigned serialization of a signed EVM transaction and its signer, or undefined when the
 * bytes are not one in its one canonical form: `s` in the lower half of the order (a high-s twin
 * recovers the same signer under another hash), and the bytes exactly what viem serializes again
 * from their parse (no other encoding of the same transaction). Pure but for the signer's recovery.
 */
export const signedEvmParts = (signed: Hex): Effect.Effect<{ readonly unsigned: Hex; readonly signer: string; readonly hash: Hex } | undefined> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.option(Effect.try(() => parseTransaction(signed)))
    if (parsed._tag === "None") return undefined
    const { r, s, v: _v, yParity: _y, ...fields } = parsed.value as typeof parsed.value & { r?: Hex; s?: Hex; v?: bigint; yParity?: number }
    if (r === undefined || s === undefined) return undefined
    if (hexToBigInt(s) > SECP256K1_N / 2n) return undefined
    const again = yield* Effect.option(Effect.try(() => serializeTransaction(parsed.value as Parameters<typeof serializeTransaction>[0])))
    if (again._tag === "None" || again.value.toLowerCase() !== signed.toLowerCase()) return undefined
    const unsigned = yield* Effect.option(Effect.try(() => serializeTransaction(fields as Parameters<typeof serializeTransaction>[0])))
    const signer = yield* Effect.option(Effect.tryPromise(() => recoverTransactionAddress({ serializedTransaction: signed as never })))
    if (unsigned._tag === "None" || signer._tag === "None") return undefined
    return { unsigned: unsigned.value, signer: getAddress(signer.value), hash: keccak256(signed) }
  })

/**
 * The signed EIP-1559 bytes of a transaction as the node returns it (`eth_getTransactionByHash`),
 * or undefined when it is not an EIP-1559 transaction. Pure. Their keccak is the transaction's
 * hash exactly when the fields are the ones that were signed, so `signedEvmParts` of these bytes
 * (and a hash check) verifies a transaction a caller broadcast itself like a submitted one.
 */
export const signedEvmOf = (tx: Transaction): Hex | undefined => {
  if (tx.type !== "eip1559" || tx.yParity === undefined) return undefined
  try {
    return serializeTransaction(
      {
        type: "eip1559",
        chainId: tx.chainId,
        nonce: tx.nonce,
        gas: tx.gas,
        maxFeePerGas: tx.maxFeePerGas,
        maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
        ...(tx.to !== null ? { to: tx.to } : {}),
        data: tx.input,
        value: tx.value,
        accessList: tx.accessList
      },
      { r: tx.r, s: tx.s, yParity: tx.yParity }
    )
  } catch {
    return undefined
  }
}

/**
 * The hash of `signed` when it is the built transaction (its unsigned serialization's sha-256 hex
 * is `messageHash`) canonically signed by `signer`; else undefined.
 */
export const builtHashOf = (signed: Hex, messageHash: string, signer: string): Effect.Effect<Hex | undefined> =>
  Effect.map(signedEvmParts(signed), (parts) =>
    parts !== undefined &&
    createHash("sha256").update(Buffer.from(parts.unsigned.slice(2), "hex")).digest("hex") === messageHash &&
    parts.signer === getAddress(signer)
      ? parts.hash
      : undefined
  )

/** `builtHashOf` for a transaction as the node returns it. */
export const builtTransactionHashOf = (tx: Transaction, messageHash: string, signer: string): Effect.Effect<Hex | undefined> => {
  const signed = signedEvmOf(tx)
  return signed === undefined ? Effect.succeed(undefined) : builtHashOf(signed, messageHash, signer)
}
