import { address, getAddressDecoder } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { ADDRESS_MEMO_MAX, addressFromBytes, addressMemoSizes, ByteReader, checkedAddress } from "./bytes.js"

const kitDecoder = getAddressDecoder()
/** 32 bytes from a counter: distinct keys. */
const keyBytes = (n: number): Uint8Array => {
  const b = new Uint8Array(32)
  new DataView(b.buffer).setUint32(0, n)
  b[31] = 7
  return b
}

describe("base58 memo of 32-byte keys", () => {
  it("answers what kit's codec answers, on a hit too, from a subarray at any offset", () => {
    const page = new Uint8Array(64 + 5)
    page.set(keyBytes(42), 5)
    const slice = page.subarray(5, 37)
    const expected = kitDecoder.decode(keyBytes(42))
    expect(addressFromBytes(slice)).toBe(expected)
    expect(addressFromBytes(keyBytes(42))).toBe(expected)
    expect(new ByteReader(page, 5).address()).toBe(expected)
    // Another key sharing the buffer is another entry.
    page.set(keyBytes(43), 37)
    expect(addressFromBytes(page.subarray(37, 69))).toBe(kitDecoder.decode(keyBytes(43)))
  })

  it("never holds more than ADDRESS_MEMO_MAX entries each way, and answers the same after a clear", () => {
    for (let n = 0; n < ADDRESS_MEMO_MAX + 10; n++) addressFromBytes(keyBytes(1000 + n))
    expect(addressMemoSizes().bytes).toBeLessThanOrEqual(ADDRESS_MEMO_MAX)
    expect(addressFromBytes(keyBytes(1000))).toBe(kitDecoder.decode(keyBytes(1000)))
    for (let n = 0; n < ADDRESS_MEMO_MAX + 10; n++) checkedAddress(kitDecoder.decode(keyBytes(9000 + n)))
    expect(addressMemoSizes().text).toBeLessThanOrEqual(ADDRESS_MEMO_MAX)
  })

  it("checkedAddress refuses what kit's address() refuses, every time (a refusal is not kept)", () => {
    const good = kitDecoder.decode(keyBytes(5))
    expect(checkedAddress(good)).toBe(address(good))
    for (const bad of ["", "0OIl", "1111", `${good}1`]) {
      expect(() => address(bad)).toThrow()
      expect(() => checkedAddress(bad)).toThrow()
      expect(() => checkedAddress(bad)).toThrow()
    }
  })
})
