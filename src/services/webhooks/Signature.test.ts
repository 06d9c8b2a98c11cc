import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { signatureHeader, verifySignature } from "./Signature.js"

const secret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
const body = new TextEncoder().encode('{"id":"evt_1","event":"launch.confirmed","createdAt":"2026-11-21T00:00:00.000Z","data":{"a":"1"}}')

describe("x-svc-signature", () => {
  it("is t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t.rawbody)>, as an independent HMAC computes it", () => {
    const header = signatureHeader(secret, 1_790_000_000, body)
    const independent = createHmac("sha256", secret).update(`1790000000.`).update(body).digest("hex")
    expect(header).toBe(`t=1790000000,v1=${independent}`)
    expect(header).toBe(`t=1790000000,v1=${bytesToHex(hmac(sha256, new TextEncoder().encode(secret), new Uint8Array([...new TextEncoder().encode("1790000000."), ...body])))}`)
  })

  it("verifies over the raw bytes within the tolerance, and refuses everything else", () => {
    const t = 1_790_000_000
    const header = signatureHeader(secret, t, body)
    expect(verifySignature(secret, header, body, t + 300)).toEqual({ ok: true, timestamp: t })
    expect(verifySignature(secret, header, body, t - 300)).toEqual({ ok: true, timestamp: t })
    expect(verifySignature(secret, header, body, t + 301)).toEqual({ ok: false, reason: "timestamp_out_of_tolerance" })
    expect(verifySignature(secret + "x", header, body, t)).toEqual({ ok: false, reason: "mismatch" })
    const altered = body.slice()
    altered[10] = altered[10]! ^ 1
    expect(verifySignature(secret, header, altered, t)).toEqual({ ok: false, reason: "mismatch" })
    expect(verifySignature(secret, header.replace(`t=${t}`, `t=${t + 1}`), body, t)).toEqual({ ok: false, reason: "mismatch" })
    expect(verifySignature(secret, undefined, body, t)).toEqual({ ok: false, reason: "malformed" })
    expect(verifySignature(secret, "v1=abc", body, t)).toEqual({ ok: false, reason: "malformed" })
    expect(verifySignature(secret, `t=${t}`, body, t)).toEqual({ ok: false, reason: "malformed" })
  })
})
