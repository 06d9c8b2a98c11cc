/**
 * The recipient side of the wallet import (spec 2.3): RFC 9180 HPKE in Base mode with
 * DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and ChaCha20-Poly1305, through `@hpke/core` and
 * `@hpke/chacha20poly1305`. The client seals the key's text with the encryption public key that
 * import init returned, with an empty `info` and empty `aad`, and sends the ciphertext and the
 * encapsulated key (`enc`).
 *
 * Public keys travel as the 65-byte uncompressed P-256 point, base64; the recipient private key
 * (32 bytes) is only ever stored sealed under the wallet master key.
 */
import { Chacha20Poly1305 } from "@hpke/chacha20poly1305"
import { CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core"

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Chacha20Poly1305() })

/** How a client must seal: published in the import init response. */
export const HPKE_PARAMETERS = {
  mode: "base",
  kem: "DHKEM(P-256, HKDF-SHA256)",
  kemId: 0x0010,
  kdf: "HKDF-SHA256",
  kdfId: 0x0001,
  aead: "ChaCha20-Poly1305",
  aeadId: 0x0003,
  info: "",
  aad: "",
  publicKeyEncoding: "base64 of the 65-byte uncompressed P-256 point",
  plaintext: "UTF-8 text of the key: hex for evm, base58 for solana"
} as const

export const P256_PUBLIC_KEY_BYTES = 65
/** The largest ciphertext accepted: a 64-byte Solana keypair in base58 (88 chars) plus the tag, with room. */
export const MAX_SEALED_BYTES = 512

export interface RecipientKeyPair {
  readonly publicKey: Uint8Array
  readonly privateKey: Uint8Array
}

export const generateRecipient = async (): Promise<RecipientKeyPair> => {
  const pair = await suite.kem.generateKeyPair()
  return {
    publicKey: new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey)),
    privateKey: new Uint8Array(await suite.kem.serializePrivateKey(pair.privateKey))
  }
}

/** Opens a Base-mode sealed message; undefined when it does not authenticate under this key. */
export const openSealed = async (privateKey: Uint8Array, enc: Uint8Array, ciphertext: Uint8Array): Promise<Uint8Array | undefined> => {
  try {
    const recipientKey = await suite.kem.deserializePrivateKey(new Uint8Array(privateKey))
    return new Uint8Array(await suite.open({ recipientKey, enc: new Uint8Array(enc) }, new Uint8Array(ciphertext)))
  } catch {
    return undefined
  }
}
