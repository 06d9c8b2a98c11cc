/**
 * Request decoding for the wallet routes (spec document 2, 2.3 and the wallet and TEE rows of
 * 4.1): each decoder turns a parsed JSON body (or a query parameter) into the typed input the
 * `WalletService` takes, or into the spec's field-level `VALIDATION_FAILED` naming the first bad
 * field. A null value reads as absent. Pure and synchronous (the router runs them before the
 * handler), except the signer key, which WebCrypto converts (`signerSpki`, run by the handler).
 * Business rules (plans, limits, bindings, claims) stay in the service.
 */
import { Effect, Schema } from "effect"
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
import { decodeQuery, isApiError, param, stringParam } from "../QueryParams.js"
import { schemaBodyDecoder } from "../Router.js"
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

const optional = <K extends string, A>(key: K, v: A | undefined): { [P in K]?: A } => (v === undefined ? {} : ({ [key]: v } as { [P in K]: A }))

/** `?chain=&address=` of the link challenge; the address is checked against the chain by `challengeAddress`. */
export const challengeQuery = {
  chain: param<WalletChain>({
    description: "solana or evm",
    required: true,
    schema: { type: "string", enum: ["solana", "evm", "hood"] },
    decode: (raw) => parseWalletChain(raw) ?? validationFailed("chain", "chain must be solana or evm")
  }),
  address: stringParam("The wallet's address", { required: true })
}

/** The challenge's address in its canonical form for `chain`. */
export const challengeAddress = (chain: WalletChain, address: string): Decoded<string> => addressField({ address }, "address", chain)

/** The link challenge's query (what the router decodes from `challengeQuery`, then `challengeAddress`). */
export const decodeChallengeQuery = (query: string): Decoded<{ chain: WalletChain; address: string }> => {
  const q = decodeQuery(challengeQuery, query)
  if (isApiError(q)) return q
  const address = challengeAddress(q.chain, q.address)
  return isApiError(address) ? address : { chain: q.chain, address }
}

/** An object body's `chain` and its `address` on that chain. */
const chainAddressBody = (raw: unknown): Decoded<{ body: Body; chain: WalletChain; address: string }> => {
  const body = objectBody(raw)
  if (isApiError(body)) return body
  const chain = chainField(body)
  if (isApiError(chain)) return chain
  const address = addressField(body, "address", chain)
  return isApiError(address) ? address : { body, chain, address }
}

/** `{chain, address, signature, label?}`. */
export const decodeLinkBody = (raw: unknown): Decoded<LinkInput> => {
  const linked = chainAddressBody(raw)
  if (isApiError(linked)) return linked
  const { address, body, chain } = linked
  const signature = stringField(body, "signature", SIGNATURE_MAX_CHARS)
  if (isApiError(signature)) return signature
  const label = labelField(body)
  if (isApiError(label)) return label
  return { chain, address, signature, ...optional("label", label) }
}

const labelMessage = () => `must be 1 to ${LABEL_MAX_CHARS} characters after trimming`
/** A label, trimmed, then 1 to 64 characters. */
const Label = Schema.compose(Schema.Trim, Schema.String.pipe(Schema.minLength(1, { message: labelMessage }), Schema.maxLength(LABEL_MAX_CHARS, { message: labelMessage })))

/** `{allowLaunch?, label?}`, at least one (a null reads as absent; other members are ignored). The route decodes it by this Schema. */
export const UpdateBody = Schema.Struct({
  allowLaunch: Schema.optionalWith(Schema.Boolean, { nullable: true, exact: true }),
  label: Schema.optionalWith(Label, { nullable: true, exact: true })
}).pipe(
  Schema.filter((b) => (b.allowLaunch !== undefined || b.label !== undefined ? true : { path: [], message: "Send allowLaunch or label" })),
  Schema.annotations({ identifier: "UpdateWalletBody", description: "`{allowLaunch?, label?}`" })
)

/** `UpdateBody`'s decoder with the router's refusal. */
export const decodeUpdateBody: (raw: unknown) => Decoded<WalletPatch> = schemaBodyDecoder(UpdateBody)

/** `{chain, address}`. */
export const decodeImportInitBody = (raw: unknown): Decoded<{ chain: WalletChain; address: string }> => {
  const init = chainAddressBody(raw)
  return isApiError(init) ? init : { chain: init.chain, address: init.address }
}

/** The import body before WebCrypto checks the signer key: `signerPublicKey` as sent (decoded base64). */
export type ImportSubmitBody = Omit<ImportSubmitInput, "signerSpki"> & { readonly signerPublicKey: Uint8Array }

/** `{ciphertext, encapsulatedKey, signerPublicKey, label?}` (base64), every check but the signer key's curve. */
export const decodeImportSubmitShape = (raw: unknown): Decoded<ImportSubmitBody> => {
  const body = objectBody(raw)
  if (isApiError(body)) return body
  const ciphertext = base64Field(body, "ciphertext", 17, MAX_SEALED_BYTES)
  if (isApiError(ciphertext)) return ciphertext
  const encapsulatedKey = base64Field(body, "encapsulatedKey", P256_PUBLIC_KEY_BYTES, P256_PUBLIC_KEY_BYTES)
  if (isApiError(encapsulatedKey)) return encapsulatedKey
  if (encapsulatedKey[0] !== 0x04) return validationFailed("encapsulatedKey", "encapsulatedKey must be an uncompressed P-256 point")
  const signerPublicKey = base64Field(body, "signerPublicKey", P256_PUBLIC_KEY_BYTES, 200)
  if (isApiError(signerPublicKey)) return signerPublicKey
  const label = labelField(body)
  if (isApiError(label)) return label
  return { ciphertext, encapsulatedKey, signerPublicKey, ...optional("label", label) }
}

/** A P-256 public key as SPKI DER, from the 65-byte uncompressed point or SPKI DER (WebCrypto checks the curve). */
export const signerSpki = (raw: Uint8Array): Effect.Effect<Uint8Array, ApiError> =>
  Effect.tryPromise({
    try: async () => {
      const format = raw.byteLength === P256_PUBLIC_KEY_BYTES ? "raw" : "spki"
      const key = await crypto.subtle.importKey(format, new Uint8Array(raw), { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"])
      return new Uint8Array(await crypto.subtle.exportKey("spki", key))
    },
    catch: () => validationFailed("signerPublicKey", "signerPublicKey must be a P-256 public key (uncompressed point or SPKI), base64")
  })

/** The service's import input: the decoded body with the signer key converted to SPKI. */
export const importSubmitInput = ({ signerPublicKey, ...rest }: ImportSubmitBody): Effect.Effect<ImportSubmitInput, ApiError> =>
  Effect.map(signerSpki(signerPublicKey), (spki) => ({ ...rest, signerSpki: spki }))

/** The whole import decode (`decodeImportSubmitShape`, then `importSubmitInput`). */
export const decodeImportSubmitBody = (raw: unknown): Effect.Effect<ImportSubmitInput, ApiError> => {
  const shape = decodeImportSubmitShape(raw)
  return isApiError(shape) ? Effect.fail(shape) : importSubmitInput(shape)
}

/** `{claimId, transaction, authorizationSignature?}`. */
export const decodeSignBody = (raw: unknown): Decoded<SignInput> => {
  const body = objectBody(raw)
  if (isApiError(body)) return body
  const claimId = stringField(body, "claimId", ID_MAX_CHARS)
  if (isApiError(claimId)) return claimId
  const transaction = transactionField(body)
  if (isApiError(transaction)) return transaction
  const authorizationSignature = present(body, "authorizationSignature") ? base64Field(body, "authorizationSignature", 64, 64) : undefined
  if (isApiError(authorizationSignature)) return authorizationSignature
  return { claimId, transaction, ...optional("authorizationSignature", authorizationSignature) }
}

/** `{chain, keyPrefix, label?, allowLaunch?, vaultDestination?}`. */
export const decodeCreateTeeBody = (raw: unknown): Decoded<CreateTeeInput> => {
  const body = objectBody(raw)
  if (isApiError(body)) return body
  const chain = chainField(body)
  if (isApiError(chain)) return chain
  const keyPrefix = stringField(body, "keyPrefix", ID_MAX_CHARS)
  if (isApiError(keyPrefix)) return keyPrefix
  const label = labelField(body)
  if (isApiError(label)) return label
  const allowLaunch = booleanField(body, "allowLaunch")
  if (isApiError(allowLaunch)) return allowLaunch
  const vaultDestination = present(body, "vaultDestination") ? addressField(body, "vaultDestination", chain) : undefined
  if (isApiError(vaultDestination)) return vaultDestination
  return {
    chain,
    keyPrefix,
    ...optional("label", label),
    ...(allowLaunch === true ? { allowLaunch: true } : {}),
    ...optional("vaultDestination", vaultDestination)
  }
}

/** Preview (`dryRun: true`) or commit; a commit carrying selectors is refused. */
export const decodeRebindBody = (raw: unknown): Decoded<RebindInput> => {
  const body = objectBody(raw)
  if (isApiError(body)) return body
  const dryRun = booleanField(body, "dryRun")
  if (isApiError(dryRun)) return dryRun
  const toKeyPrefix = stringField(body, "toKeyPrefix", ID_MAX_CHARS)
  if (isApiError(toKeyPrefix)) return toKeyPrefix
  if (dryRun === true) {
    const wallets = stringArray(body, "wallets", SELECTOR_MAX_CHARS)
    if (isApiError(wallets)) return wallets
    const labelPrefix = present(body, "labelPrefix") ? stringField(body, "labelPrefix", LABEL_MAX_CHARS) : undefined
    if (isApiError(labelPrefix)) return labelPrefix
    return { _tag: "Preview" as const, toKeyPrefix, wallets, ...optional("labelPrefix", labelPrefix) }
  }
  for (const selector of ["wallets", "labelPrefix"]) {
    if (present(body, selector)) return validationFailed(selector, "A commit names walletIds and expect, not selectors; preview first")
  }
  const walletIds = stringArray(body, "walletIds", ID_MAX_CHARS)
  if (isApiError(walletIds)) return walletIds
  const expect = body.expect
  if (typeof expect !== "object" || expect === null || Array.isArray(expect)) {
    return validationFailed("expect", "expect must map each walletId to its current bound key prefix (from the preview)")
  }
  const expectMap: Record<string, string> = {}
  for (const id of walletIds) {
    const v = (expect as Record<string, unknown>)[id]
    if (typeof v !== "string") return validationFailed(`expect.${id}`, `expect has no current bound key prefix for ${id}`)
    expectMap[id] = v
  }
  return { _tag: "Commit" as const, toKeyPrefix, walletIds, expect: expectMap }
}

/** `?walletId=&limit=` of the rebind history: limit clamped to 1 to 100, default 20 (`limit=` is refused); an empty walletId is none. */
export const rebindsQuery = {
  walletId: stringParam("Only this wallet's rebinds"),
  limit: param({
    description: `1 to ${REBIND_HISTORY_LIMIT_MAX} (clamped), default ${REBIND_HISTORY_LIMIT_DEFAULT}; a non-integer is refused`,
    schema: { type: "string", pattern: "^-?\\d{1,9}$", default: REBIND_HISTORY_LIMIT_DEFAULT },
    emptyIsValue: true,
    decode: (raw, name) => {
      if (raw === undefined) return REBIND_HISTORY_LIMIT_DEFAULT
      return /^-?\d{1,9}$/.test(raw) ? Math.min(REBIND_HISTORY_LIMIT_MAX, Math.max(1, Number(raw))) : validationFailed(name, `${name} must be an integer`)
    }
  })
}

/** The rebind history's query (what the router decodes from `rebindsQuery`). */
export const decodeRebindsQuery = (query: string): Decoded<{ walletId: string | undefined; limit: number }> => decodeQuery(rebindsQuery, query)
