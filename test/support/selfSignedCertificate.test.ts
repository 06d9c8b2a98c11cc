import { X509Certificate, createPrivateKey } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { selfSignedCertificate } from "./selfSignedCertificate.js"

describe("selfSignedCertificate", () => {
  it("makes a certificate OpenSSL reads, for the name, its own CA, signed by the returned key", async () => {
    const { cert, key } = await selfSignedCertificate("images.test.example", 7)
    const parsed = new X509Certificate(cert)
    expect(parsed.checkHost("images.test.example")).toBe("images.test.example")
    expect(parsed.checkHost("other.example")).toBeUndefined()
    expect(parsed.subject).toBe("CN=images.test.example")
    expect(parsed.ca).toBe(true)
    expect(parsed.checkPrivateKey(createPrivateKey(key))).toBe(true)
    expect(parsed.verify(parsed.publicKey)).toBe(true)
    const validFromMs = Date.parse(parsed.validFrom)
    const validToMs = Date.parse(parsed.validTo)
    expect(validFromMs).toBeLessThan(Date.now())
    expect(validToMs).toBeGreaterThan(Date.now() + 6 * 86_400_000)
    expect(validToMs).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000)
  })

  // The hand-written encoder this replaced wrote a non-minimal serial INTEGER about one time in
  // 256 (OpenSSL: "illegal padding"); 1,024 fresh certificates all parse (that encoder fails this
  // about 98 times in 100).
  it("every certificate's DER is one OpenSSL accepts (minimal serial INTEGER)", async () => {
    for (let i = 0; i < 1_024; i++) {
      const { cert } = await selfSignedCertificate("localhost")
      expect(() => new X509Certificate(cert)).not.toThrow()
    }
  })
})
