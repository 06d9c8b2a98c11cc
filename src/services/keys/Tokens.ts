/**
 * Bearer secrets: agent keys (`svc_live_…`, `svc_test_…`), session tokens (`svc_ses_…`) and
 * device tokens (`svc_dvc_…`). Each is `<kind>` + an 8-character public id (the `keyPrefix`
 * shown in listings, the lookup key) + 44 characters of secret, all base58 (no look-alike
 * characters, no separators a shell would split on).
 *
 * Only `sha256(whole token)` is stored, as hex. The secret part carries ~258 bits from the OS
 * CSPRNG, so a plain hash (no salt, no stretching) cannot be inverted or brute-forced; a pepper
 * would add a second secret to manage without adding strength. Verification looks the row up by
 * its public id and compares the hashes in constant time.
 */
import { randomBytes } from "@noble/hashes/utils.js"
import { createHash, timingSafeEqual } from "node:crypto"

export const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
export const PREFIX_LENGTH = 8
export const SECRET_LENGTH = 44

export type TokenKind = "live" | "test" | "session" | "device"

export const TokenTags: Readonly<Record<TokenKind, string>> = {
  live: "svc_live_",
  test: "svc_test_",
  session: "svc_ses_",
  device: "svc_dvc_"
}

/** Uniform random characters of `alphabet` (rejection sampling: no modulo bias). */
export const randomString = (length: number, alphabet: string = BASE58): string => {
  const n = alphabet.length
  const limit = 256 - (256 % n)
  let out = ""
  while (out.length < length) {
    for (const b of randomBytes(Math.max(16, (length - out.length) * 2))) {
      if (b < limit) out += alphabet[b % n]
      if (out.length === length) break
    }
  }
  return out
}

export interface Minted {
  /** The plaintext, shown once. */
  readonly token: string
  readonly prefix: string
  readonly hash: string
}

/** sha-256 of the token's UTF-8 bytes, lowercase hex (node's hash: the same digest as `@noble/hashes`, without its per-call arrays). */
export const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

export const mintToken = (kind: TokenKind): Minted => {
  const prefix = randomString(PREFIX_LENGTH)
  const token = TokenTags[kind] + prefix + randomString(SECRET_LENGTH)
  return { token, prefix, hash: hashToken(token) }
}

const BODY = new RegExp(`^[${BASE58}]{${PREFIX_LENGTH + SECRET_LENGTH}}$`)

export interface ParsedToken {
  readonly kind: TokenKind
  readonly prefix: string
}

/** The kind and public id of a well-formed token; undefined for anything malformed. */
export const parseToken = (raw: string): ParsedToken | undefined => {
  for (const kind of ["live", "test", "session", "device"] as const) {
    const tag = TokenTags[kind]
    if (raw.startsWith(tag)) {
      const body = raw.slice(tag.length)
      return BODY.test(body) ? { kind, prefix: body.slice(0, PREFIX_LENGTH) } : undefined
    }
  }
  return undefined
}

/** Constant-time comparison of two hex hashes of equal length. */
export const hashesEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a, "hex")
  const y = Buffer.from(b, "hex")
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}

/** True when `token` hashes to `storedHash` (constant time over the hash): `hashesEqual(hashToken(token), storedHash)` without the digest's hex round trip. */
export const verifyToken = (token: string, storedHash: string): boolean => {
  const x = createHash("sha256").update(token, "utf8").digest()
  const y = Buffer.from(storedHash, "hex")
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Opaque internal ids (`acc_…`, `key_…`, `chg_…`): 16 base58 characters. */
export const newId = (tag: string): string => `${tag}_${randomString(16)}`
