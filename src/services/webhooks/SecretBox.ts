/**
 * Webhook signing secrets at rest: AES-256-GCM (WebCrypto) under a 32-byte master key, a fresh
 * 96-bit IV per seal, and the endpoint id as additional data so a ciphertext copied to another
 * row does not open. Sealed text: `v1.<keyId>.<iv b64url>.<ciphertext+tag b64url>`, where `keyId`
 * (the first 8 hex digits of SHA-256 of the key) names the master key, so opening with the wrong
 * key is reported as such rather than as tampering.
 *
 * The master key comes from configuration (`WEBHOOK_SECRET_KEY`, base64 or hex of 32 bytes); in
 * embedded mode without it, `loadOrCreateKeyFile` generates one once and keeps it in
 * `<dataDir>/webhook-secret.key` (mode 0600).
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, randomBytes } from "@noble/hashes/utils.js"
import { Effect, Schema } from "effect"
import { readOrCreateKeyFile } from "../../platform/KeyFile.js"

export const masterKeyBytes = 32
export const keyFileName = "webhook-secret.key"

/** The fixed master key of the webhook `layerTest`s (the service and the worker seal and open with the same key). */
export const testMasterKey: Uint8Array = new Uint8Array(masterKeyBytes).fill(9)

export class SecretBoxError extends Schema.TaggedError<SecretBoxError>()("SecretBoxError", {
  reason: Schema.Literal("bad_key", "wrong_key", "corrupt", "key_file"),
  message: Schema.String
}) {}

export interface SecretBox {
  /** Names the master key (first 8 hex digits of its SHA-256). */
  readonly keyId: string
  readonly seal: (plaintext: string, aad: string) => Effect.Effect<string>
  readonly open: (sealed: string, aad: string) => Effect.Effect<string, SecretBoxError>
}

const b64u = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url")
const unb64u = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "base64url"))
const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder("utf-8", { fatal: true })

/** Parses a configured master key: 64 hex digits, or base64/base64url of exactly 32 bytes. */
export const parseMasterKey = (text: string): Uint8Array | SecretBoxError => {
  const t = text.trim()
  const bytes = /^[0-9a-fA-F]{64}$/.test(t)
    ? new Uint8Array(Buffer.from(t, "hex"))
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t)
      ? new Uint8Array(Buffer.from(t.replace(/=$/, ""), t.includes("-") || t.includes("_") ? "base64url" : "base64"))
      : undefined
  if (bytes === undefined || bytes.byteLength !== masterKeyBytes) {
    return new SecretBoxError({ reason: "bad_key", message: "the webhook master key must be 32 bytes, as 64 hex digits or base64" })
  }
  return bytes
}

export const makeSecretBox = (masterKey: Uint8Array): Effect.Effect<SecretBox, SecretBoxError> =>
  Effect.gen(function* () {
    if (masterKey.byteLength !== masterKeyBytes) {
      return yield* new SecretBoxError({ reason: "bad_key", message: `the webhook master key must be ${masterKeyBytes} bytes` })
    }
    const key = yield* Effect.promise(() =>
      crypto.subtle.importKey("raw", masterKey, { name: "AES-GCM" }, false, ["encrypt", "decrypt"])
    )
    const keyId = bytesToHex(sha256(masterKey)).slice(0, 8)
    const seal = (plaintext: string, aad: string) =>
      Effect.promise(async () => {
        const iv = randomBytes(12)
        const ct = new Uint8Array(
          await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8.encode(aad) }, key, utf8.encode(plaintext))
        )
        return `v1.${keyId}.${b64u(iv)}.${b64u(ct)}`
      })
    const open = (sealed: string, aad: string) =>
      Effect.gen(function* () {
        const parts = sealed.split(".")
        if (parts.length !== 4 || parts[0] !== "v1") {
          return yield* new SecretBoxError({ reason: "corrupt", message: "sealed secret has an unknown format" })
        }
        if (parts[1] !== keyId) {
          return yield* new SecretBoxError({
            reason: "wrong_key",
            message: `secret was sealed under master key ${parts[1]}, this process holds ${keyId}`
          })
        }
        const iv = unb64u(parts[2]!)
        const ct = unb64u(parts[3]!)
        const plain = yield* Effect.tryPromise({
          try: () => crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: utf8.encode(aad) }, key, ct),
          catch: () => new SecretBoxError({ reason: "corrupt", message: "sealed secret failed authentication" })
        })
        return fromUtf8.decode(plain)
      })
    return { keyId, seal, open }
  })

/**
 * The embedded-mode key: read `<dataDir>/webhook-secret.key`, or create it (exclusively, mode
 * 0600) with 32 random bytes when absent. Two processes racing to create it end with the same key.
 */
export const loadOrCreateKeyFile = (dataDir: string): Effect.Effect<Uint8Array, SecretBoxError> =>
  Effect.try({
    try: () => readOrCreateKeyFile(dataDir, keyFileName, masterKeyBytes),
    catch: (e) => new SecretBoxError({ reason: "key_file", message: `cannot read or create the webhook key file: ${String(e)}` })
  }).pipe(
    Effect.flatMap((text) => {
      const key = parseMasterKey(text)
      return key instanceof SecretBoxError ? Effect.fail(key) : Effect.succeed(key)
    })
  )

/**
 * The master key for a deployment: the configured one when set; otherwise, when a data directory
 * is in use (embedded mode), the key file; otherwise (a server database and no key) a failure, so
 * replicas never each invent their own key.
 */
export const resolveMasterKey = (options: {
  readonly configured: string | undefined
  readonly dataDir: string | undefined
}): Effect.Effect<Uint8Array, SecretBoxError> => {
  if (options.configured !== undefined && options.configured.trim() !== "") {
    const key = parseMasterKey(options.configured)
    return key instanceof SecretBoxError ? Effect.fail(key) : Effect.succeed(key)
  }
  if (options.dataDir !== undefined) return loadOrCreateKeyFile(options.dataDir)
  return Effect.fail(
    new SecretBoxError({ reason: "bad_key", message: "WEBHOOK_SECRET_KEY must be set when the engine uses a PostgreSQL server" })
  )
}
