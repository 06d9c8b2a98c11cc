/**
 * Wire transactions in: decode with kit's codecs, sanitize, and verify signatures. Accepts legacy
 * and v0 messages without address lookup tables, at most 1232 bytes (Solana's packet size).
 * Sanitizing follows the validator: the header fits the key list, keys are unique, every index is
 * in range, the fee payer is a writable signer and never a program. Writability is demoted for
 * every key that is invoked as a program or is a registered program (as the validator demotes
 * program ids). Signatures are verified with node:crypto over the message bytes; public-key
 * objects are cached in a bounded map.
 */
import { createPublicKey, verify, type KeyObject } from "node:crypto"
import {
  type Address,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder
} from "@solana/kit"
import { addressToBytes } from "../../program/internal/bytes.js"
import type { TransactionError } from "../TransactionError.js"

export const PACKET_DATA_SIZE = 1232

export interface CompiledInstructionRecord {
  readonly programIdIndex: number
  readonly accounts: ReadonlyArray<number>
  readonly data: Uint8Array
}

export interface MessageHeader {
  readonly numRequiredSignatures: number
  readonly numReadonlySignedAccounts: number
  readonly numReadonlyUnsignedAccounts: number
}

export interface ParsedTransaction {
  readonly wireBytes: Uint8Array
  readonly messageBytes: Uint8Array
  /** One per required signer, in key order; null when the slot is all zeros (unsigned). */
  readonly signatureBytes: ReadonlyArray<Uint8Array | null>
  /** Base58 signatures; the first is the transaction's id. */
  readonly signatures: ReadonlyArray<string>
  readonly signature: string
  readonly version: "legacy" | 0
  readonly header: MessageHeader
  readonly accountKeys: ReadonlyArray<Address>
  readonly isSigner: ReadonlyArray<boolean>
  readonly isWritable: ReadonlyArray<boolean>
  readonly recentBlockhash: string
  readonly instructions: ReadonlyArray<CompiledInstructionRecord>
}

export type ParseResult =
  | { readonly _tag: "Ok"; readonly tx: ParsedTransaction }
  | { readonly _tag: "Err"; readonly error: TransactionError; readonly detail: string }

const transactionDecoder = getTransactionDecoder()
const messageDecoder = getCompiledTransactionMessageDecoder()
const base58 = getBase58Decoder()
const ZERO_SIGNATURE = new Uint8Array(64)

const err = (error: TransactionError, detail: string): ParseResult => ({ _tag: "Err", error, detail })

export const parseTransaction = (bytes: Uint8Array, programIds: ReadonlySet<string>): ParseResult => {
  if (bytes.length > PACKET_DATA_SIZE) {
    return err("SanitizeFailure", `transaction too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE})`)
  }
  let decoded: ReturnType<typeof transactionDecoder.decode>
  let message: ReturnType<typeof messageDecoder.decode>
  try {
    decoded = transactionDecoder.decode(bytes)
    message = messageDecoder.decode(decoded.messageBytes)
  } catch (e) {
    return err("SanitizeFailure", `failed to decode transaction: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (message.version !== "legacy" && message.version !== 0) return err("UnsupportedVersion", `version ${message.version}`)
  if (message.version === 0 && (message.addressTableLookups?.length ?? 0) > 0) {
    return err("AddressLookupTableNotFound", "address lookup tables are not supported by the localnet")
  }
  const keys = message.staticAccounts
  const h = message.header
  if (
    h.numSignerAccounts < 1 ||
    h.numReadonlySignerAccounts >= h.numSignerAccounts ||
    h.numSignerAccounts + h.numReadonlyNonSignerAccounts > keys.length
  ) {
    return err("SanitizeFailure", "message header does not fit its account keys")
  }
  if (new Set(keys).size !== keys.length) return err("AccountLoadedTwice", "an account key appears twice")
  const instructions: CompiledInstructionRecord[] = []
  const invoked = new Set<number>()
  for (const ix of message.instructions) {
    const accounts = ix.accountIndices ?? []
    if (ix.programAddressIndex <= 0 || ix.programAddressIndex >= keys.length || accounts.some((i) => i >= keys.length)) {
      return err("SanitizeFailure", "instruction index out of range")
    }
    invoked.add(ix.programAddressIndex)
    instructions.push({
      programIdIndex: ix.programAddressIndex,
      accounts: [...accounts],
      data: ix.data === undefined ? new Uint8Array(0) : new Uint8Array(ix.data)
    })
  }
  const signerAddresses = keys.slice(0, h.numSignerAccounts)
  const signatureBytes = signerAddresses.map((a) => {
    const sig = decoded.signatures[a]
    return sig === null || sig === undefined ? null : new Uint8Array(sig)
  })
  const signatures = signatureBytes.map((s) => base58.decode(s ?? ZERO_SIGNATURE))
  const writableSigners = h.numSignerAccounts - h.numReadonlySignerAccounts
  const writableEnd = keys.length - h.numReadonlyNonSignerAccounts
  const isSigner = keys.map((_, i) => i < h.numSignerAccounts)
  const isWritable = keys.map((k, i) => {
    const declared = i < h.numSignerAccounts ? i < writableSigners : i < writableEnd
    return declared && !invoked.has(i) && !(i > 0 && programIds.has(k))
  })
  return {
    _tag: "Ok",
    tx: {
      wireBytes: bytes,
      messageBytes: new Uint8Array(decoded.messageBytes),
      signatureBytes,
      signatures,
      signature: signatures[0] ?? base58.decode(ZERO_SIGNATURE),
      version: message.version,
      header: {
        numRequiredSignatures: h.numSignerAccounts,
        numReadonlySignedAccounts: h.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: h.numReadonlyNonSignerAccounts
      },
      accountKeys: keys,
      isSigner,
      isWritable,
      recentBlockhash: message.lifetimeToken,
      instructions
    }
  }
}

const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex")
const KEY_CACHE_MAX = 100_000
const keyCache = new Map<string, KeyObject>()

const publicKeyOf = (a: Address): KeyObject => {
  const hit = keyCache.get(a)
  if (hit !== undefined) return hit
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, addressToBytes(a)]), format: "der", type: "spki" })
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear()
  keyCache.set(a, key)
  return key
}

/** Index of the first signer whose signature is missing or does not verify, or -1. */
export const firstBadSignature = (tx: ParsedTransaction): number => {
  for (let i = 0; i < tx.signatureBytes.length; i++) {
    const sig = tx.signatureBytes[i]
    const signer = tx.accountKeys[i]
    if (sig === null || sig === undefined || signer === undefined) return i
    try {
      if (!verify(null, tx.messageBytes, publicKeyOf(signer), sig)) return i
    } catch {
      return i
    }
  }
  return -1
}
