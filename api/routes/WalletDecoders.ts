/**
 * Request decoding for the wallet routes (spec document 2, 2.3 and the wallet and TEE rows of
 * 4.1): each decoder turns a parsed JSON body (or the query string) into the typed input the
 * `WalletService` takes, or into the spec's field-level `VALIDATION_FAILED` naming the first bad
 * field. A null value reads as absent. Pure, except the signer key, which WebCrypto converts.
 * Business rules (plans, limits, bindings, claims) stay in the service.
 */
import { Effect } from "effect"
import { type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import { canonicalAddress, parseWalletChain, type WalletChain } from "../../src/services/wallets/ChainKeys.js"
import { MAX_SEALED_BYTES, P256_PUBLIC_KEY_BYTES } from "../../src/services/wallets/Hpke.js"
import {
  type CreateTeeInput,
  type ImportSubmitInput,
  type LinkInput,
  REBIND_HISTORY_LIMIT_DEFAULT,
  REBIND_HISTORY_LIMIT_MAX,
  type RebindInput,
  type SignInput,
  type WalletPatch
} from "../../src/services/wallets/WalletService.js"
import { isApiError } from "../QueryParams.js"
import type { Decoded } from "./ServiceCall.js"

export const LABEL_MAX_CHARS = 64
export const ID_MAX_CHARS = 128
export const SELECTOR_MAX_CHARS = 128
/** Link proofs: a base58 ed25519 signature or a 0x personal_sign signature fit well inside. */
export const SIGNATURE_MAX_CHARS = 256
/** EVM transactions travel as 0x-hex of at most this many bytes; Solana ones as base64 of at most 4,096. */
export const EVM_TX_MAX_BYTES = 128 * 1024
export const SOLANA_TX_MAX_BYTES = 4096

type Body = Readonly<Record<string, unknown>>

const objectBody = (body: unknown): Decoded<Body> =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Body) : validationFailed("body", "Request body must be a JSON object")

/** A null value reads as absent. */
const present = (body: Body, key: string): boolean => body[key] !== undefined && body[key] !== null

const chainField = (body: Body): Decoded<WalletChain> => parseWalletChain(body.chain) ?? validationFailed("chain", "chain must be solana or evm")

const addressField = (body: Body, key: string, chain: WalletChain): Decoded<string> =>
  canonicalAddress(chain, body[key]) ??
  validationFailed(key, chain === "solana" ? `${key} must be a base58 Solana address` : `${key} must be a 0x-prefixed 20-byte address (EIP-55 when mixed case)`)

const stringField = (body: Body, key: string, maxChars: number): Decoded<string> => {
  const v = body[key]
  return typeof v === "string" && v.length >= 1 && v.length <= maxChars ? v : validationFailed(key, `${key} must be a string of 1 to ${maxChars} characters`)
}

const labelField = (body: Body): Decoded<string | undefined> => {
  if (!present(body, "label")) return undefined
  const v = body.label
  const trimmed = typeof v === "string" ? v.trim() : ""
  return trimmed.length >= 1 && trimmed.length <= LABEL_MAX_CHARS
    ? trimmed
    : validationFailed("label", `label must be 1 to ${LABEL_MAX_CHARS} characters after trimming`)
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$|^[A-Za-z0-9_-]+$/

const base64Field = (body: Body, key: string, minBytes: number, maxBytes: number): Decoded<Uint8Array> => {
  const v = body[key]
  if (typeof v !== "string" || v.length === 0 || v.length > Math.ceil((maxBytes * 4) / 3) + 4 || !BASE64.test(v)) {
    return validationFailed(key, `${key} must be base64`)
  }
  const bytes = new Uint8Array(Buffer.from(v, v.includes("-") || v.includes("_") ? "base64url" : "base64"))
  return bytes.byteLength >= minBytes && bytes.byteLength <= maxBytes
    ? bytes
    : validationFailed(key, `${key} must decode to ${minBytes === maxBytes ? minBytes : `${minBytes} to ${maxBytes}`} bytes`)
}

/** Solana transactions travel as base64 wire bytes, EVM ones as 0x-hex. */
const transactionField = (body: Body): Decoded<Uint8Array> => {
  const v = body.transaction
  if (typeof v === "string" && /^0x([0-9a-fA-F]{2})+$/.test(v) && v.length <= 2 + 2 * EVM_TX_MAX_BYTES) return new Uint8Array(Buffer.from(v.slice(2), "hex"))
  return base64Field(body, "transaction", 1, SOLANA_TX_MAX_BYTES)
}

const booleanField = (body: Body, key: string): Decoded<boolean | undefined> => {
  if (!present(body, key)) return undefined
  const v = body[key]
  return typeof v === "boolean" ? v : validationFailed(key, `${key} must be a boolean`)
}

const stringArray = (body: Body, key: string, maxChars: number): Decoded<ReadonlyArray<string>> => {
  const v = body[key]
  if (!Array.isArray(v)) return validationFailed(key, `${key} must be an array of strings`)
  for (const item of v) {
    if (typeof item !== "string" || item.length < 1 || item.length > maxChars) {
      return validationFailed(key, `${key} must hold strings of 1 to ${maxChars} characters`)
    }
  }
  return v as ReadonlyArray<string>
}

/** A decode step as an effect: its value, or its refusal. */
const parsed = <A>(v: Decoded<A>): Effect.Effect<A, ApiError> => (isApiError(v) ? Effect.fail(v) : Effect.succeed(v))

const optional = <K extends string, A>(key: K, v: A | undefined): { [P in K]?: A } => (v === undefined ? {} : ({ [key]: v } as { [P in K]: A }))

/** `?chain=&address=` of the link challenge. */
export const decodeChallengeQuery = (query: string): Effect.Effect<{ chain: WalletChain; address: string }, ApiError> =>
  Effect.gen(function* () {
    const q = new URLSearchParams(query)
    const body = { chain: q.get("chain"), address: q.get("address") }
    const chain = yield* parsed(chainField(body))
    return { chain, address: yield* parsed(addressField(body, "address", chain)) }
  })

/** `{chain, address, signature, label?}`. */
export const decodeLinkBody = (raw: unknown): Effect.Effect<LinkInput, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    const chain = yield* parsed(chainField(body))
    const address = yield* parsed(addressField(body, "address", chain))
    const signature = yield* parsed(stringField(body, "signature", SIGNATURE_MAX_CHARS))
    return { chain, address, signature, ...optional("label", yield* parsed(labelField(body))) }
  })

/** `{allowLaunch?, label?}`, at least one. */
export const decodeUpdateBody = (raw: unknown): Effect.Effect<WalletPatch, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    if (!present(body, "allowLaunch") && !present(body, "label")) return yield* Effect.fail(validationFailed("body", "Send allowLaunch or label"))
    const allowLaunch = yield* parsed(booleanField(body, "allowLaunch"))
    return { ...optional("allowLaunch", allowLaunch), ...optional("label", yield* parsed(labelField(body))) }
  })

/** `{chain, address}`. */
export const decodeImportInitBody = (raw: unknown): Effect.Effect<{ chain: WalletChain; address: string }, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    const chain = yield* parsed(chainField(body))
    return { chain, address: yield* parsed(addressField(body, "address", chain)) }
  })

/** A P-256 public key as SPKI DER, from base64 of either the 65-byte uncompressed point or SPKI DER. */
const signerSpki = (raw: Uint8Array): Effect.Effect<Uint8Array, ApiError> =>
  Effect.tryPromise({
    try: async () => {
      const format = raw.byteLength === P256_PUBLIC_KEY_BYTES ? "raw" : "spki"
      const key = await crypto.subtle.importKey(format, new Uint8Array(raw), { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"])
      return new Uint8Array(await crypto.subtle.exportKey("spki", key))
    },
    catch: () => validationFailed("signerPublicKey", "signerPublicKey must be a P-256 public key (uncompressed point or SPKI), base64")
  })

/** `{ciphertext, encapsulatedKey, signerPublicKey, label?}` (base64); the signer key is checked by WebCrypto. */
export const decodeImportSubmitBody = (raw: unknown): Effect.Effect<ImportSubmitInput, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    const ciphertext = yield* parsed(base64Field(body, "ciphertext", 17, MAX_SEALED_BYTES))
    const encapsulatedKey = yield* parsed(base64Field(body, "encapsulatedKey", P256_PUBLIC_KEY_BYTES, P256_PUBLIC_KEY_BYTES))
    if (encapsulatedKey[0] !== 0x04) return yield* Effect.fail(validationFailed("encapsulatedKey", "encapsulatedKey must be an uncompressed P-256 point"))
    const signer = yield* signerSpki(yield* parsed(base64Field(body, "signerPublicKey", P256_PUBLIC_KEY_BYTES, 200)))
    const label = yield* parsed(labelField(body))
    return { ciphertext, encapsulatedKey, signerSpki: signer, ...optional("label", label) }
  })

/** `{claimId, transaction, authorizationSignature?}`. */
export const decodeSignBody = (raw: unknown): Effect.Effect<SignInput, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    const claimId = yield* parsed(stringField(body, "claimId", ID_MAX_CHARS))
    const transaction = yield* parsed(transactionField(body))
    const authorizationSignature = present(body, "authorizationSignature") ? yield* parsed(base64Field(body, "authorizationSignature", 64, 64)) : undefined
    return { claimId, transaction, ...optional("authorizationSignature", authorizationSignature) }
  })

/** `{chain, keyPrefix, label?, allowLaunch?, vaultDestination?}`. */
export const decodeCreateTeeBody = (raw: unknown): Effect.Effect<CreateTeeInput, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    const chain = yield* parsed(chainField(body))
    const keyPrefix = yield* parsed(stringField(body, "keyPrefix", ID_MAX_CHARS))
    const label = yield* parsed(labelField(body))
    const allowLaunch = yield* parsed(booleanField(body, "allowLaunch"))
    const vaultDestination = present(body, "vaultDestination") ? yield* parsed(addressField(body, "vaultDestination", chain)) : undefined
    return {
      chain,
      keyPrefix,
      ...optional("label", label),
      ...(allowLaunch === true ? { allowLaunch: true } : {}),
      ...optional("vaultDestination", vaultDestination)
    }
  })

/** Preview (`dryRun: true`) or commit; a commit carrying selectors is refused. */
export const decodeRebindBody = (raw: unknown): Effect.Effect<RebindInput, ApiError> =>
  Effect.gen(function* () {
    const body = yield* parsed(objectBody(raw))
    const dryRun = yield* parsed(booleanField(body, "dryRun"))
    const toKeyPrefix = yield* parsed(stringField(body, "toKeyPrefix", ID_MAX_CHARS))
    if (dryRun === true) {
      const wallets = yield* parsed(stringArray(body, "wallets", SELECTOR_MAX_CHARS))
      const labelPrefix = present(body, "labelPrefix") ? yield* parsed(stringField(body, "labelPrefix", LABEL_MAX_CHARS)) : undefined
      return { _tag: "Preview" as const, toKeyPrefix, wallets, ...optional("labelPrefix", labelPrefix) }
    }
    for (const selector of ["wallets", "labelPrefix"]) {
      if (present(body, selector)) return yield* Effect.fail(validationFailed(selector, "A commit names walletIds and expect, not selectors; preview first"))
    }
    const walletIds = yield* parsed(stringArray(body, "walletIds", ID_MAX_CHARS))
    const expect = body.expect
    if (typeof expect !== "object" || expect === null || Array.isArray(expect)) {
      return yield* Effect.fail(validationFailed("expect", "expect must map each walletId to its current bound key prefix (from the preview)"))
    }
    const expectMap: Record<string, string> = {}
    for (const id of walletIds) {
      const v = (expect as Record<string, unknown>)[id]
      if (typeof v !== "string") return yield* Effect.fail(validationFailed(`expect.${id}`, `expect has no current bound key prefix for ${id}`))
      expectMap[id] = v
    }
    return { _tag: "Commit" as const, toKeyPrefix, walletIds, expect: expectMap }
  })

/** `?walletId=&limit=` of the rebind history: limit clamped to 1 to 100, default 20; an empty walletId is none. */
export const decodeRebindsQuery = (query: string): Effect.Effect<{ walletId: string | undefined; limit: number }, ApiError> => {
  const q = new URLSearchParams(query)
  const rawLimit = q.get("limit")
  let limit = REBIND_HISTORY_LIMIT_DEFAULT
  if (rawLimit !== null) {
    if (!/^-?\d{1,9}$/.test(rawLimit)) return Effect.fail(validationFailed("limit", "limit must be an integer"))
    limit = Math.min(REBIND_HISTORY_LIMIT_MAX, Math.max(1, Number(rawLimit)))
  }
  const walletId = q.get("walletId") ?? undefined
  return Effect.succeed({ walletId: walletId === "" ? undefined : walletId, limit })
}
