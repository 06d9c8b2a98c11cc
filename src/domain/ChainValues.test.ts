import { getBase58Decoder } from "@solana/kit"
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { decodeOption, EvmAddress, EvmTxHash, RawAmount, RawAmountString, SolanaAddress, SolanaSignature } from "./ChainValues.js"

const base58 = getBase58Decoder()
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill)
const ok = <A, I>(schema: Schema.Schema<A, I, never>, u: unknown) => Either.getOrThrow(Schema.decodeUnknownEither(schema)(u))
const refused = <A, I>(schema: Schema.Schema<A, I, never>, u: unknown) => Either.isLeft(Schema.decodeUnknownEither(schema)(u))

/** 88 base58 characters that decode to more than 64 bytes: the shape of a signature, not its bytes. */
const NOT_64_BYTES = "z".repeat(88)

describe("SolanaSignature", () => {
  it("accepts base58 of exactly 64 bytes", () => {
    const sig = base58.decode(bytes(64, 7))
    expect(ok(SolanaSignature, sig)).toBe(sig)
    expect(ok(SolanaSignature, base58.decode(bytes(64, 255)))).toHaveLength(88)
  })
  it("refuses 88 base58 characters that are not 64 bytes, 32 bytes, non-base58 and non-strings", () => {
    for (const bad of [NOT_64_BYTES, base58.decode(bytes(32, 9)), "0".repeat(88), "", "l".repeat(87), 42, null]) expect(refused(SolanaSignature, bad)).toBe(true)
  })
})

describe("EvmTxHash", () => {
  it("accepts 0x and 64 hex digits, either case", () => {
    expect(ok(EvmTxHash, `0x${"ab".repeat(32)}`)).toBe(`0x${"ab".repeat(32)}`)
    expect(ok(EvmTxHash, `0x${"AB".repeat(32)}`)).toBe(`0x${"AB".repeat(32)}`)
  })
  it("refuses a short or long hash, no prefix, non-hex and a Solana signature", () => {
    for (const bad of [`0x${"ab".repeat(31)}`, `0x${"ab".repeat(33)}`, "ab".repeat(32), `0x${"zz".repeat(32)}`, base58.decode(bytes(64, 7)), 1]) {
      expect(refused(EvmTxHash, bad)).toBe(true)
    }
  })
})

describe("SolanaAddress", () => {
  it("accepts base58 of exactly 32 bytes", () => {
    const a = base58.decode(bytes(32, 3))
    expect(ok(SolanaAddress, a)).toBe(a)
  })
  it("refuses 31 or 64 bytes and non-base58", () => {
    for (const bad of [base58.decode(bytes(31, 3)), base58.decode(bytes(64, 3)), "0OIl".repeat(10), ""]) expect(refused(SolanaAddress, bad)).toBe(true)
  })
})

describe("EvmAddress", () => {
  const checksummed = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
  it("accepts the EIP-55 form, all lower and all upper case, and decodes each to the EIP-55 form", () => {
    expect(ok(EvmAddress, checksummed)).toBe(checksummed)
    expect(ok(EvmAddress, checksummed.toLowerCase())).toBe(checksummed)
    expect(ok(EvmAddress, `0x${checksummed.slice(2).toUpperCase()}`)).toBe(checksummed)
  })
  it("refuses a mixed-case address with a wrong checksum, a short one, no prefix and a Solana address", () => {
    const wrong = checksummed.replace("aAeb", "aaEb")
    for (const bad of [wrong, checksummed.slice(0, 41), checksummed.slice(2), base58.decode(bytes(32, 3)), 0]) expect(refused(EvmAddress, bad)).toBe(true)
  })
  it("encodes to the checksummed form", () => {
    expect(Schema.encodeSync(EvmAddress)(ok(EvmAddress, checksummed.toLowerCase()))).toBe(checksummed)
  })
})

describe("raw amounts", () => {
  it("RawAmountString accepts 0 and whole decimal strings up to 78 digits", () => {
    for (const good of ["0", "1", "1500000", "9".repeat(78)]) expect(ok(RawAmountString, good)).toBe(good)
  })
  it("RawAmountString refuses a leading zero, a sign, a fraction, an exponent, spaces, numbers and 79 digits", () => {
    for (const bad of ["01", "-1", "+1", "1.0", "1e3", " 1", "", 1, "1".repeat(79)]) expect(refused(RawAmountString, bad)).toBe(true)
  })
  it("RawAmount decodes to bigint within its inclusive bounds and encodes back to the string", () => {
    const positiveSafe = RawAmount({ min: 1n, max: BigInt(Number.MAX_SAFE_INTEGER) })
    expect(ok(positiveSafe, "1")).toBe(1n)
    expect(ok(positiveSafe, String(Number.MAX_SAFE_INTEGER))).toBe(BigInt(Number.MAX_SAFE_INTEGER))
    for (const bad of ["0", String(Number.MAX_SAFE_INTEGER + 1), "01", "1.5", 5]) expect(refused(positiveSafe, bad)).toBe(true)
    expect(ok(RawAmount(), "0")).toBe(0n)
    expect(Schema.encodeSync(positiveSafe)(42n)).toBe("42")
  })
  it("names the bounds in the refusal", () => {
    const r = Schema.decodeUnknownEither(RawAmount({ min: 1n, max: 10n }))("11")
    expect(Either.isLeft(r) && r.left.message).toContain("from 1 to 10")
  })
})

describe("decodeOption", () => {
  it("answers the decoded value or undefined, never throws", () => {
    const sig = decodeOption(SolanaSignature)
    expect(sig(NOT_64_BYTES)).toBeUndefined()
    expect(sig({})).toBeUndefined()
    expect(sig(base58.decode(bytes(64, 1)))).toBe(base58.decode(bytes(64, 1)))
  })
})
