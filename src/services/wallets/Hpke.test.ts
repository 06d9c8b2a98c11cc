/**
 * The import's HPKE: first the independent test sealer is pinned to RFC 9180's own test vectors
 * (DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 with ChaCha20-Poly1305, and with AES-128-GCM), then the
 * server's `@hpke/core` recipient opens what that sealer produced, and refuses what it must.
 */
import { describe, expect, it } from "vitest"
import { generateRecipient, openSealed } from "./Hpke.js"
import { sealBase, sealForImport } from "../../../test/support/hpkeSealer.js"

const hex = (s: string) => new Uint8Array(Buffer.from(s.replace(/\s+/g, ""), "hex"))
const toHex = (b: Uint8Array) => Buffer.from(b).toString("hex")

// RFC 9180 test vectors (draft-irtf-cfrg-hpke final text, appendix A), mode_base, sequence 0 and 1.
const PT = "4265617574792069732074727574682c20747275746820626561757479"
const INFO = "4f6465206f6e2061204772656369616e2055726e"
const vectors = {
  chacha20poly1305: {
    skEm: "7550253e1147aae48839c1f8af80d2770fb7a4c763afe7d0afa7e0f42a5b3689",
    pkRm: "04a697bffde9405c992883c5c439d6cc358170b51af72812333b015621dc0f40bad9bb726f68a5c013806a790ec716ab8669f84f6b694596c2987cf35baba2a006",
    skRm: "a4d1c55836aa30f9b3fbb6ac98d338c877c2867dd3a77396d13f68d3ab150d3b",
    enc: "04c07836a0206e04e31d8ae99bfd549380b072a1b1b82e563c935c095827824fc1559eac6fb9e3c70cd3193968994e7fe9781aa103f5b50e934b5b2f387e381291",
    sharedSecret: "806520f82ef0b03c823b7fc524b6b55a088f566b9751b89551c170f4113bd850",
    keyScheduleContext:
      "00b738cd703db7b4106e93b4621e9a19c89c838e55964240e5d3f331aaf8b0d58b2e986ea1c671b61cf45eec134dac0bae58ec6f63e790b1400b47c33038b0269c",
    secret: "fe891101629aa355aad68eff3cc5170d057eca0c7573f6575e91f9783e1d4506",
    key: "a8f45490a92a3b04d1dbf6cf2c3939ad8bfc9bfcb97c04bffe116730c9dfe3fc",
    baseNonce: "726b4390ed2209809f58c693",
    ct: [
      "6469c41c5c81d3aa85432531ecf6460ec945bde1eb428cb2fedf7a29f5a685b4ccb0d057f03ea2952a27bb458b",
      "f1564199f7e0e110ec9c1bcdde332177fc35c1adf6e57f8d1df24022227ffa8716862dbda2b1dc546c9d114374"
    ]
  },
  aes128gcm: {
    skEm: "4995788ef4b9d6132b249ce59a77281493eb39af373d236a1fe415cb0c2d7beb",
    pkRm: "04fe8c19ce0905191ebc298a9245792531f26f0cece2460639e8bc39cb7f706a826a779b4cf969b8a0e539c7f62fb3d30ad6aa8f80e30f1d128aafd68a2ce72ea0",
    skRm: "f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2",
    enc: "04a92719c6195d5085104f469a8b9814d5838ff72b60501e2c4466e5e67b325ac98536d7b61a1af4b78e5b7f951c0900be863c403ce65c9bfcb9382657222d18c4",
    sharedSecret: "c0d26aeab536609a572b07695d933b589dcf363ff9d93c93adea537aeabb8cb8",
    keyScheduleContext:
      "00b88d4e6d91759e65e87c470e8b9141113e9ad5f0c8ceefc1e088c82e6980500798e486f9c9c09c9b5c753ac72d6005de254c607d1b534ed11d493ae1c1d9ac85",
    secret: "2eb7b6bf138f6b5aff857414a058a3f1750054a9ba1f72c2cf0684a6f20b10e1",
    key: "868c066ef58aae6dc589b6cfdd18f97e",
    baseNonce: "4e0bc5018beba4bf004cca59",
    ct: [
      "5ad590bb8baa577f8619db35a36311226a896e7342a6d836d8b7bcd2f20b6c7f9076ac232e3ab2523f39513434",
      "fa6f037b47fc21826b610172ca9637e82d6e5801eb31cbd3748271affd4ecb06646e0329cbdf3c3cd655b28e82"
    ]
  }
} as const

describe("independent HPKE sealer against RFC 9180 test vectors", () => {
  for (const aead of ["chacha20poly1305", "aes128gcm"] as const) {
    it(`reproduces DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, ${aead} (mode_base)`, () => {
      const v = vectors[aead]
      const trace = sealBase({
        recipientPublicKey: hex(v.pkRm),
        info: hex(INFO),
        aead,
        ephemeralSecret: hex(v.skEm),
        messages: [
          { pt: hex(PT), aad: Buffer.from("Count-0") },
          { pt: hex(PT), aad: Buffer.from("Count-1") }
        ]
      })
      expect(toHex(trace.enc)).toBe(v.enc)
      expect(toHex(trace.sharedSecret)).toBe(v.sharedSecret)
      expect(toHex(trace.keyScheduleContext)).toBe(v.keyScheduleContext)
      expect(toHex(trace.secret)).toBe(v.secret)
      expect(toHex(trace.key)).toBe(v.key)
      expect(toHex(trace.baseNonce)).toBe(v.baseNonce)
      expect(trace.ciphertexts.map(toHex)).toEqual(v.ct)
    })
  }

  it("the server's recipient, holding the vector's skRm, opens an import-style seal (empty info and aad) to pkRm", async () => {
    const v = vectors.chacha20poly1305
    const sealed = sealForImport(hex(v.pkRm), "vector")
    const opened = await openSealed(hex(v.skRm), sealed.enc, sealed.ciphertext)
    expect(opened && new TextDecoder().decode(opened)).toBe("vector")
  })
})

describe("server recipient (@hpke/core)", () => {
  it("opens what the independent sealer sealed to its key", async () => {
    const recipient = await generateRecipient()
    expect(recipient.publicKey.byteLength).toBe(65)
    expect(recipient.publicKey[0]).toBe(0x04)
    const text = "0x" + "11".repeat(32)
    const { enc, ciphertext } = sealForImport(recipient.publicKey, text)
    const opened = await openSealed(recipient.privateKey, enc, ciphertext)
    expect(opened && new TextDecoder().decode(opened)).toBe(text)
  })

  it("refuses a ciphertext sealed to another key, an altered ciphertext and a wrong encapsulated key", async () => {
    const a = await generateRecipient()
    const b = await generateRecipient()
    const { enc, ciphertext } = sealForImport(a.publicKey, "secret")
    expect(await openSealed(b.privateKey, enc, ciphertext)).toBeUndefined()
    const altered = ciphertext.slice()
    altered[0] = (altered[0] as number) ^ 1
    expect(await openSealed(a.privateKey, enc, altered)).toBeUndefined()
    const otherEnc = sealForImport(a.publicKey, "secret").enc
    expect(await openSealed(a.privateKey, otherEnc, ciphertext)).toBeUndefined()
  })
})
