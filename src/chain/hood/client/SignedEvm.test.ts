import { Effect } from "effect"
import { createHash } from "node:crypto"
import { type Hex, keccak256, parseTransaction, serializeTransaction, type Transaction } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { builtHashOf, builtTransactionHashOf, signedEvmOf } from "./SignedEvm.js"

const unsigned = serializeTransaction({
  type: "eip1559",
  chainId: 31337,
  nonce: 7,
  gas: 400_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  to: "0x00000000000000000000000000000000000000aa",
  data: "0x12345678",
  value: 5n
})
const messageHash = createHash("sha256").update(Buffer.from(unsigned.slice(2), "hex")).digest("hex")
const owner = privateKeyToAccount(generatePrivateKey())

/** The node's view of a signed transaction (what `eth_getTransactionByHash` answers). */
const asNode = (signed: Hex): Transaction => {
  const p = parseTransaction(signed) as ReturnType<typeof parseTransaction> & { r: Hex; s: Hex; yParity: number }
  return { ...p, input: p.data ?? "0x", from: owner.address, hash: keccak256(signed), accessList: p.accessList ?? [] } as unknown as Transaction
}

describe("SignedEvm", () => {
  it("the built transaction signed by its wallet proves its hash; another signer, another transaction or the unsigned bytes do not", async () => {
    const signed = await owner.signTransaction(parseTransaction(unsigned) as never)
    expect(await Effect.runPromise(builtHashOf(signed, messageHash, owner.address))).toBe(keccak256(signed))
    const other = await privateKeyToAccount(generatePrivateKey()).signTransaction(parseTransaction(unsigned) as never)
    expect(await Effect.runPromise(builtHashOf(other, messageHash, owner.address))).toBeUndefined()
    const altered = await owner.signTransaction({ ...(parseTransaction(unsigned) as object), value: 6n } as never)
    expect(await Effect.runPromise(builtHashOf(altered, messageHash, owner.address))).toBeUndefined()
    expect(await Effect.runPromise(builtHashOf(unsigned, messageHash, owner.address))).toBeUndefined()
  })

  it("rebuilds a node-held transaction into exactly its signed bytes, so a broadcast hash is checked by the same rule", async () => {
    const signed = await owner.signTransaction(parseTransaction(unsigned) as never)
    expect(signedEvmOf(asNode(signed))).toBe(signed)
    expect(await Effect.runPromise(builtTransactionHashOf(asNode(signed), messageHash, owner.address))).toBe(keccak256(signed))
    // Not an EIP-1559 transaction: nothing to rebuild.
    expect(signedEvmOf({ ...asNode(signed), type: "legacy" } as Transaction)).toBeUndefined()
  })
})
