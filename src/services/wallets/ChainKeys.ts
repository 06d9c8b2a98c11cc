/**
 * Key material and addresses per wallet chain family: Solana (ed25519 through `@solana/kit`'s
 * WebCrypto key utilities) and EVM (secp256k1 through `viem/accounts`; Hood is an EVM chain).
 * A wallet secret is always 32 bytes: the ed25519 seed or the secp256k1 private key.
 *
 * Addresses: EVM addresses are stored EIP-55 checksummed and compared lower-case (older rows
 * may be lower-case, spec 2.3); Solana addresses are base58 and compared as they are.
 */
import {
  createKeyPairFromBytes,
  createKeyPairFromPrivateKeyBytes,
  getAddressFromPublicKey,
  getBase58Decoder,
  getBase58Encoder
} from "@solana/kit"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { decodeOption, EvmAddress, SolanaAddress } from "../../domain/ChainValues.js"

export const WalletChains = ["solana", "evm"] as const
export type WalletChain = (typeof WalletChains)[number]

/** `solana` or `evm`; `hood` is accepted as the EVM chain's name. */
export const parseWalletChain = (raw: unknown): WalletChain | undefined =>
  raw === "solana" ? "solana" : raw === "evm" || raw === "hood" ? "evm" : undefined

const solanaAddressOf = decodeOption(SolanaAddress)
/** EIP-55; all-lower and all-upper carry no checksum, a mixed-case address must carry a valid one. */
const evmAddressOf = decodeOption(EvmAddress)

/** The canonical stored form, or undefined when `raw` is not an address of the chain. */
export const canonicalAddress = (chain: WalletChain, raw: unknown): string | undefined =>
  chain === "solana" ? solanaAddressOf(raw) : evmAddressOf(raw)

/** The comparison key of an address (normalize before comparing). */
export const addressKey = (chain: WalletChain, address: string): string => (chain === "evm" ? address.toLowerCase() : address)

export const SECRET_BYTES = 32

export const generateSecret = (chain: WalletChain): Uint8Array =>
  chain === "solana" ? crypto.getRandomValues(new Uint8Array(SECRET_BYTES)) : new Uint8Array(Buffer.from(generatePrivateKey().slice(2), "hex"))

export const addressOfSecret = async (chain: WalletChain, secret: Uint8Array): Promise<string> => {
  if (chain === "solana") {
    const pair = await createKeyPairFromPrivateKeyBytes(new Uint8Array(secret))
    return getAddressFromPublicKey(pair.publicKey)
  }
  return privateKeyToAccount(`0x${Buffer.from(secret).toString("hex")}`).address
}

/**
 * The 32-byte secret from an imported key's text: EVM hex (32 bytes, `0x` optional); Solana
 * base58 of the 64-byte keypair (seed then public key, which must match) or of the 32-byte seed.
 */
export const parseImportedSecret = async (chain: WalletChain, text: string): Promise<Uint8Array | undefined> => {
  const trimmed = text.trim()
  if (chain === "evm") {
    const hex = trimmed.startsWith("0x") || trimmed.startsWith("0X") ? trimmed.slice(2) : trimmed
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) return undefined
    const secret = new Uint8Array(Buffer.from(hex, "hex"))
    try {
      privateKeyToAccount(`0x${hex.toLowerCase()}`)
      return secret
    } catch {
      return undefined // zero or not below the curve order
    }
  }
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(trimmed))
  } catch {
    return undefined
  }
  if (bytes.byteLength === SECRET_BYTES) return bytes
  if (bytes.byteLength !== 64) return undefined
  try {
    await createKeyPairFromBytes(bytes) // verifies the public half belongs to the seed
  } catch {
    return undefined
  }
  return bytes.slice(0, SECRET_BYTES)
}

/** The text form a client seals for import (what `parseImportedSecret` reads back). */
export const exportSecretText = async (chain: WalletChain, secret: Uint8Array): Promise<string> => {
  if (chain === "evm") return `0x${Buffer.from(secret).toString("hex")}`
  const pair = await createKeyPairFromPrivateKeyBytes(new Uint8Array(secret), true)
  const pub = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey))
  const full = new Uint8Array(64)
  full.set(secret, 0)
  full.set(pub, 32)
  return getBase58Decoder().decode(full)
}
