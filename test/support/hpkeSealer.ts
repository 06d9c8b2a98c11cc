/**
 * A small, independent RFC 9180 sealer for tests: Base mode, DHKEM(P-256, HKDF-SHA256),
 * HKDF-SHA256, and ChaCha20-Poly1305 (or AES-128-GCM, to check against the RFC's P-256 vector).
 * Built from `@noble/curves` (P-256 ECDH), `@noble/hashes` (HKDF-SHA256) and node:crypto's
 * OpenSSL AEADs, sharing no code with `@hpke/core`, so a client sealing this way is what the
 * import test proves the server opens. Test-only: the server never seals.
 */
import { p256 } from "@noble/curves/nist.js"
import { expand, extract } from "@noble/hashes/hkdf.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { createCipheriv } from "node:crypto"

export type SealerAead = "chacha20poly1305" | "aes128gcm"

const AEAD: Record<SealerAead, { id: number; nk: number; node: "chacha20-poly1305" | "aes-128-gcm" }> = {
  aes128gcm: { id: 0x0001, nk: 16, node: "aes-128-gcm" },
  chacha20poly1305: { id: 0x0003, nk: 32, node: "chacha20-poly1305" }
}

const KEM_ID = 0x0010
const KDF_ID = 0x0001
const NN = 12
const utf8 = (s: string) => new TextEncoder().encode(s)
const i2osp = (n: number, len: number) => {
  const out = new Uint8Array(len)
  for (let i = len - 1, v = n; i >= 0; i--, v >>>= 8) out[i] = v & 0xff
  return out
}
const concat = (...parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.byteLength
  }
  return out
}

const labeledExtract = (suiteId: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array) =>
  extract(sha256, concat(utf8("HPKE-v1"), suiteId, utf8(label), ikm), salt)

const labeledExpand = (suiteId: Uint8Array, prk: Uint8Array, label: string, info: Uint8Array, length: number) =>
  expand(sha256, prk, concat(i2osp(length, 2), utf8("HPKE-v1"), suiteId, utf8(label), info), length)

export interface SealTrace {
  readonly enc: Uint8Array
  readonly sharedSecret: Uint8Array
  readonly keyScheduleContext: Uint8Array
  readonly secret: Uint8Array
  readonly key: Uint8Array
  readonly baseNonce: Uint8Array
  /** Ciphertexts of the requested plaintexts, sequence numbers 0, 1, ... */
  readonly ciphertexts: ReadonlyArray<Uint8Array>
}

/**
 * SetupBaseS + Seal for each `(pt, aad)` in order. `ephemeralSecret` fixes skE (test vectors);
 * omitted, a fresh one is drawn.
 */
export const sealBase = (input: {
  readonly recipientPublicKey: Uint8Array
  readonly info: Uint8Array
  readonly messages: ReadonlyArray<{ readonly pt: Uint8Array; readonly aad: Uint8Array }>
  readonly aead?: SealerAead
  readonly ephemeralSecret?: Uint8Array
}): SealTrace => {
  const aead = AEAD[input.aead ?? "chacha20poly1305"]
  const skE = input.ephemeralSecret ?? p256.utils.randomSecretKey()
  const enc = p256.getPublicKey(skE, false)
  // Encap: DH x-coordinate, then ExtractAndExpand with kem_context = enc || pkRm.
  const dh = p256.getSharedSecret(skE, input.recipientPublicKey, true).slice(1)
  const kemSuite = concat(utf8("KEM"), i2osp(KEM_ID, 2))
  const eaePrk = labeledExtract(kemSuite, new Uint8Array(), "eae_prk", dh)
  const sharedSecret = labeledExpand(kemSuite, eaePrk, "shared_secret", concat(enc, input.recipientPublicKey), 32)
  // KeySchedule, mode_base, empty psk and psk_id.
  const suiteId = concat(utf8("HPKE"), i2osp(KEM_ID, 2), i2osp(KDF_ID, 2), i2osp(aead.id, 2))
  const pskIdHash = labeledExtract(suiteId, new Uint8Array(), "psk_id_hash", new Uint8Array())
  const infoHash = labeledExtract(suiteId, new Uint8Array(), "info_hash", input.info)
  const keyScheduleContext = concat(Uint8Array.of(0), pskIdHash, infoHash)
  const secret = labeledExtract(suiteId, sharedSecret, "secret", new Uint8Array())
  const key = labeledExpand(suiteId, secret, "key", keyScheduleContext, aead.nk)
  const baseNonce = labeledExpand(suiteId, secret, "base_nonce", keyScheduleContext, NN)
  const ciphertexts = input.messages.map(({ pt, aad }, seq) => {
    const nonce = baseNonce.slice()
    const s = i2osp(seq, NN)
    for (let i = 0; i < NN; i++) nonce[i] = (nonce[i] as number) ^ (s[i] as number)
    const cipher = createCipheriv(aead.node, key, nonce, { authTagLength: 16 } as never) as ReturnType<typeof createCipheriv> & {
      setAAD(b: Uint8Array): void
      getAuthTag(): Buffer
    }
    cipher.setAAD(aad)
    return new Uint8Array(Buffer.concat([cipher.update(pt), cipher.final(), cipher.getAuthTag()]))
  })
  return { enc, sharedSecret, keyScheduleContext, secret, key, baseNonce, ciphertexts }
}

/** What a client does for the import: seal the key's text once, empty info and aad. */
export const sealForImport = (recipientPublicKey: Uint8Array, keyText: string): { enc: Uint8Array; ciphertext: Uint8Array } => {
  const trace = sealBase({ recipientPublicKey, info: new Uint8Array(), messages: [{ pt: utf8(keyText), aad: new Uint8Array() }] })
  return { enc: trace.enc, ciphertext: trace.ciphertexts[0] as Uint8Array }
}
