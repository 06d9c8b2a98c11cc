/**
 * Encryption at rest for wallet secrets (private keys, HPKE import keys): AES-256-GCM through
 * WebCrypto under one master key. A sealed value is `v1.<kid>.<iv>.<ciphertext+tag>` (base64url
 * parts, 12-byte random IV) and is bound to its row by the additional data (`aad`, e.g. the
 * wallet id), so a ciphertext copied onto another row does not open.
 *
 * The master key comes from `WALLET_MASTER_KEY` (base64 of 32 bytes). Unset in embedded mode: it
 * is generated once and kept in `<dataDir>/wallet-master.key` (mode 0600). Unset with no data
 * directory (tests): an ephemeral key for the process. `kid` (a hash of the key) tells a wrong
 * master key apart from a corrupted value.
 */
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { readOrCreateKeyFile } from "../../platform/KeyFile.js"
import * as path from "node:path"

export class MasterKeyError extends Schema.TaggedError<MasterKeyError>()("MasterKeyError", {
  reason: Schema.Literal("invalid_key", "unreadable_file", "wrong_master_key", "corrupt", "decrypt_failed"),
  message: Schema.String
}) {}

export interface MasterKey {
  /** 8 hex chars identifying the key (never the key). */
  readonly id: string
  readonly seal: (plaintext: Uint8Array, aad: string) => Effect.Effect<string>
  readonly open: (sealed: string, aad: string) => Effect.Effect<Uint8Array, MasterKeyError>
}

export const MASTER_KEY_BYTES = 32
export const MASTER_KEY_FILE = "wallet-master.key"
const IV_BYTES = 12
const encoder = new TextEncoder()

const b64u = (b: Uint8Array): string => Buffer.from(b).toString("base64url")
const fromB64u = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "base64url"))

export const masterKeyFromBytes = (bytes: Uint8Array): Effect.Effect<MasterKey, MasterKeyError> =>
  Effect.gen(function* () {
    if (bytes.byteLength !== MASTER_KEY_BYTES) {
      return yield* new MasterKeyError({ reason: "invalid_key", message: `the wallet master key must be ${MASTER_KEY_BYTES} bytes` })
    }
    const raw = new Uint8Array(bytes)
    const key = yield* Effect.promise(() => crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]))
    const digest = yield* Effect.promise(() => crypto.subtle.digest("SHA-256", Buffer.concat([encoder.encode("curvestream-wallet-master-key:"), raw])))
    const id = Buffer.from(digest).toString("hex").slice(0, 8)
    const seal = (plaintext: Uint8Array, aad: string) =>
      Effect.promise(async () => {
        const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES))
        const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(aad) }, key, new Uint8Array(plaintext))
        return `v1.${id}.${b64u(iv)}.${b64u(new Uint8Array(ct))}`
      })
    const open = (sealed: string, aad: string) =>
      Effect.gen(function* () {
        const parts = sealed.split(".")
        if (parts.length !== 4 || parts[0] !== "v1") {
          return yield* new MasterKeyError({ reason: "corrupt", message: "sealed value has an unknown format" })
        }
        if (parts[1] !== id) {
          return yield* new MasterKeyError({ reason: "wrong_master_key", message: `sealed under master key ${parts[1]}, not ${id}` })
        }
        const iv = fromB64u(parts[2] ?? "")
        const ct = fromB64u(parts[3] ?? "")
        return yield* Effect.tryPromise({
          try: async () => new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(aad) }, key, ct)),
          catch: () => new MasterKeyError({ reason: "decrypt_failed", message: "sealed value did not authenticate (altered, or bound to another row)" })
        })
      })
    return { id, seal, open }
  })

export interface MasterKeyOptions {
  /** `WALLET_MASTER_KEY`: base64 of 32 bytes. */
  readonly masterKey: Redacted.Redacted<string> | undefined
  /** Embedded mode: where the generated key is kept. Undefined: an ephemeral key (tests). */
  readonly dataDir: string | undefined
}

const decodeKeyText = (text: string, source: string): Effect.Effect<Uint8Array, MasterKeyError> => {
  const bytes = new Uint8Array(Buffer.from(text.trim(), "base64"))
  return bytes.byteLength === MASTER_KEY_BYTES
    ? Effect.succeed(bytes)
    : Effect.fail(new MasterKeyError({ reason: "invalid_key", message: `${source} must be base64 of ${MASTER_KEY_BYTES} bytes` }))
}

/** The configured key, the embedded one under `<dataDir>` (created on first start), or an ephemeral one. */
export const loadMasterKey = (options: MasterKeyOptions): Effect.Effect<MasterKey, MasterKeyError> =>
  Effect.gen(function* () {
    if (options.masterKey !== undefined) {
      return yield* masterKeyFromBytes(yield* decodeKeyText(Redacted.value(options.masterKey), "WALLET_MASTER_KEY"))
    }
    if (options.dataDir === undefined) return yield* masterKeyFromBytes(crypto.getRandomValues(new Uint8Array(MASTER_KEY_BYTES)))
    const file = path.join(options.dataDir, MASTER_KEY_FILE)
    const text = yield* Effect.try({
      try: () => readOrCreateKeyFile(options.dataDir as string, MASTER_KEY_FILE, MASTER_KEY_BYTES),
      catch: (e) => new MasterKeyError({ reason: "unreadable_file", message: `cannot read or create ${file}: ${String(e)}` })
    })
    return yield* masterKeyFromBytes(yield* decodeKeyText(text, file))
  })

/** The master key as a service, shared by the wallet provider and the wallet service. */
export class WalletMasterKey extends Context.Tag("curvestream/WalletMasterKey")<WalletMasterKey, MasterKey>() {}

export const layer = (options: MasterKeyOptions): Layer.Layer<WalletMasterKey, MasterKeyError> =>
  Layer.effect(WalletMasterKey, loadMasterKey(options))

/** A fixed master key (32 bytes of 42) for tests: the same key every build, no file. */
export const layerTest: Layer.Layer<WalletMasterKey, MasterKeyError> = layer({
  masterKey: Redacted.make(Buffer.alloc(MASTER_KEY_BYTES, 42).toString("base64")),
  dataDir: undefined
})
