/**
 * The `x-svc-signature` header of spec section 6: `t=<unix seconds>,v1=<hex HMAC-SHA256>` over the
 * bytes `<t>.<raw body>`, keyed with the endpoint's signing secret (the whole `whsec_...` string as
 * UTF-8). `verifySignature` is what a receiver does (and what our tests do): recompute over the
 * raw bytes, compare in constant time, refuse timestamps outside the tolerance.
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { timingSafeEqual } from "node:crypto"

/** The tolerance the spec suggests for receivers. */
export const defaultToleranceSeconds = 300

export const signatureHex = (secret: string, unixSeconds: number, rawBody: Uint8Array): string =>
  bytesToHex(hmac(sha256, utf8ToBytes(secret), concatBytes(utf8ToBytes(`${unixSeconds}.`), rawBody)))

export const signatureHeader = (secret: string, unixSeconds: number, rawBody: Uint8Array): string =>
  `t=${unixSeconds},v1=${signatureHex(secret, unixSeconds, rawBody)}`

export type VerifyResult =
  | { readonly ok: true; readonly timestamp: number }
  | { readonly ok: false; readonly reason: "malformed" | "timestamp_out_of_tolerance" | "mismatch" }

/**
 * Verifies a header against the raw body. `nowSeconds` is the receiver's clock. Any `v1` entry
 * that matches is accepted (a sender may list several).
 */
export const verifySignature = (
  secret: string,
  header: string | undefined,
  rawBody: Uint8Array,
  nowSeconds: number,
  toleranceSeconds: number = defaultToleranceSeconds
): VerifyResult => {
  if (header === undefined) return { ok: false, reason: "malformed" }
  let t: number | undefined
  const candidates: string[] = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    if (eq < 0) return { ok: false, reason: "malformed" }
    const k = part.slice(0, eq).trim()
    const v = part.slice(eq + 1).trim()
    if (k === "t") t = /^\d{1,12}$/.test(v) ? Number(v) : undefined
    else if (k === "v1" && /^[0-9a-f]{64}$/.test(v)) candidates.push(v)
  }
  if (t === undefined || candidates.length === 0) return { ok: false, reason: "malformed" }
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return { ok: false, reason: "timestamp_out_of_tolerance" }
  const expected = hexToBytes(signatureHex(secret, t, rawBody))
  for (const c of candidates) {
    if (timingSafeEqual(Buffer.from(expected), Buffer.from(hexToBytes(c)))) return { ok: true, timestamp: t }
  }
  return { ok: false, reason: "mismatch" }
}
