/**
 * What the local wallet provider does with a key or a signature, without its tables: sign a Solana
 * wire transaction or an EVM serialized one with an opened secret, verify a wallet's ownership
 * proof over the link challenge, and check a signer quorum's P-256 authorization.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import {
  createKeyPairFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  getBase58Encoder,
  getBase64Decoder,
  getTransactionDecoder,
  getTransactionEncoder,
  signBytes,
  type SignatureBytes,
  verifySignature
} from "@solana/kit"
import { Effect } from "effect"
import { type Hex, keccak256, parseTransaction, verifyMessage } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { WalletChain } from "../ChainKeys.js"
import type { SignedTransaction } from "../WalletProvider.js"
import { WalletProviderError } from "../WalletProviderError.js"

/** Signs a Solana wire transaction as `signer` (one of its required signers). */
export const signSolana = (signer: string, secret: Uint8Array, wire: Uint8Array) =>
  Effect.gen(function* () {
    const tx = yield* Effect.try({
      try: () => getTransactionDecoder().decode(wire),
      catch: () => new WalletProviderError({ reason: "bad_transaction", message: "not a Solana wire transaction" })
    })
    if (!Object.hasOwn(tx.signatures, signer)) {
      return yield* new WalletProviderError({ reason: "not_a_signer", message: `${signer} is not a signer of this transaction` })
    }
    const signature = yield* Effect.promise(async () => {
      const pair = await createKeyPairFromPrivateKeyBytes(new Uint8Array(secret))
      return signBytes(pair.privateKey, tx.messageBytes)
    })
    const signed = { ...tx, signatures: { ...tx.signatures, [signer]: signature } }
    const bytes = new Uint8Array(getTransactionEncoder().encode(signed))
    return {
      signature: getBase58Decoder().decode(signature),
      signedTransaction: getBase64Decoder().decode(bytes)
    } satisfies SignedTransaction
  })

/** Signs an EVM serialized (unsigned) transaction. */
export const signEvm = (secret: Uint8Array, serialized: Uint8Array) =>
  Effect.gen(function* () {
    const hex = `0x${Buffer.from(serialized).toString("hex")}` as Hex
    const parsed = yield* Effect.try({
      try: () => parseTransaction(hex),
      catch: () => new WalletProviderError({ reason: "bad_transaction", message: "not an EVM serialized transaction" })
    })
    const account = privateKeyToAccount(`0x${Buffer.from(secret).toString("hex")}`)
    const signed = yield* Effect.tryPromise({
      try: () => account.signTransaction(parsed as Parameters<typeof account.signTransaction>[0]),
      catch: (e) => new WalletProviderError({ reason: "bad_transaction", message: `cannot sign: ${String(e)}` })
    })
    return { signature: keccak256(signed), signedTransaction: signed } satisfies SignedTransaction
  })

export const linkChallenge = (accountId: string, chain: WalletChain, address: string) =>
  `curvestream: link wallet\naccount: ${accountId}\nchain: ${chain}\naddress: ${address}`

export const verifyOwnership = (accountId: string, chain: WalletChain, address: string, signature: string) =>
  Effect.promise(async () => {
    const message = linkChallenge(accountId, chain, address)
    try {
      if (chain === "evm") {
        return await verifyMessage({ address: address as Hex, message, signature: signature as Hex })
      }
      const sig = new Uint8Array(getBase58Encoder().encode(signature))
      if (sig.byteLength !== 64) return false
      const pub = new Uint8Array(getAddressEncoder().encode(address as Parameters<ReturnType<typeof getAddressEncoder>["encode"]>[0]))
      const key = await crypto.subtle.importKey("raw", pub, { name: "Ed25519" }, false, ["verify"])
      return await verifySignature(key, sig as SignatureBytes, new TextEncoder().encode(message))
    } catch {
      return false
    }
  })

/** True when the wallet's signer quorum's keys give at least its threshold of valid signatures over `payload`. */
export const verifyQuorumAuthorization = (sql: SqlClient.SqlClient, providerWalletId: string, payload: Uint8Array, signature: Uint8Array) =>
  Effect.gen(function* () {
    const [row] = yield* sql<{ threshold: number; public_keys: string }>`
      SELECT q.threshold, q.public_keys::text AS public_keys
      FROM wp_wallets w JOIN wp_signer_quorums q ON q.id = w.quorum_id WHERE w.id = ${providerWalletId}`
    if (row === undefined) return false
    const keys = JSON.parse(row.public_keys) as ReadonlyArray<string>
    let valid = 0
    for (const spki of keys) {
      const ok = yield* Effect.promise(async () => {
        try {
          const key = await crypto.subtle.importKey("spki", Buffer.from(spki, "base64"), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"])
          return await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, new Uint8Array(signature), new Uint8Array(payload))
        } catch {
          return false
        }
      })
      if (ok) valid++
    }
    return valid >= row.threshold
  })

