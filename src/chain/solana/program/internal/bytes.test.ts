import { address, type Address, getAddressDecoder, getAddressEncoder, getBase58Decoder, isAddress } from "@solana/kit"
import fc from "fast-check"
import { describe, expect, it, vi } from "vitest"
import { ADDRESS_MEMO_MAX, addressFromBytes, addressMemoSizes, ByteReader, checkedAddress, isCheckedAddress } from "./bytes.js"

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

  it("isCheckedAddress answers kit's isAddress on any text, keeps only the texts it accepted, and answers a kept one again", async () => {
    vi.resetModules()
    const fresh = await import("./bytes.js")
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    console.log(`isCheckedAddress property: FC_SEED=${seed}`)
    const base58 = getBase58Decoder()
    const text = fc.oneof(
      fc.uint8Array({ minLength: 31, maxLength: 33 }).map((b) => base58.decode(b)),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => base58.decode(b)),
      fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{30,46}$/),
      fc.string({ minLength: 32, maxLength: 44 })
    )
    fc.assert(
      fc.property(text, (t) => {
        const kept = fresh.addressMemoSizes().text
        const answer = fresh.isCheckedAddress(t)
        expect(answer).toBe(isAddress(t))
        if (!answer) expect(fresh.addressMemoSizes().text).toBe(kept)
        expect(fresh.isCheckedAddress(t)).toBe(answer)
      }),
      { seed, numRuns: 500 }
    )
    // Pattern-valid text that does not decode to 32 bytes (44 leading zeros): refused, as kit refuses it.
    expect(isCheckedAddress("1".repeat(44))).toBe(false)
    expect(isAddress("1".repeat(44))).toBe(false)
    expect(isCheckedAddress(kitDecoder.decode(keyBytes(5)))).toBe(true)
  })

  it("stores: from an empty memo 4,096 distinct keys are 4,096 entries, one more clears it to 1, a repeat adds none", async () => {
    vi.resetModules()
    const fresh = await import("./bytes.js")
    expect(fresh.addressMemoSizes().bytes).toBe(0)
    for (let n = 0; n < fresh.ADDRESS_MEMO_MAX; n++) fresh.addressFromBytes(keyBytes(50_000 + n))
    expect(fresh.ADDRESS_MEMO_MAX).toBe(4_096)
    expect(fresh.addressMemoSizes().bytes).toBe(4_096)
    // A repeat is a hit: same string as kit's decoder, size unchanged.
    const again = fresh.addressFromBytes(keyBytes(50_000 + 17))
    expect(again).toBe(kitDecoder.decode(keyBytes(50_000 + 17)))
    expect(fresh.addressMemoSizes().bytes).toBe(4_096)
    // One more distinct key: full, so cleared, then this one kept.
    fresh.addressFromBytes(keyBytes(99_999))
    expect(fresh.addressMemoSizes().bytes).toBe(1)
    fresh.addressFromBytes(keyBytes(99_999))
    expect(fresh.addressMemoSizes().bytes).toBe(1)
    // The text memo too.
    for (let n = 0; n < fresh.ADDRESS_MEMO_MAX; n++) fresh.checkedAddress(kitDecoder.decode(keyBytes(70_000 + n)))
    expect(fresh.addressMemoSizes().text).toBe(4_096)
    fresh.checkedAddress(kitDecoder.decode(keyBytes(70_000)))
    expect(fresh.addressMemoSizes().text).toBe(4_096)
    fresh.checkedAddress(kitDecoder.decode(keyBytes(99_999)))
    expect(fresh.addressMemoSizes().text).toBe(1)
  })

  it("text to bytes: kit's encoder's bytes, a fresh copy each call (the memo's own array unchanged by a caller's write), bounded, nothing kept for a bad text", async () => {
    vi.resetModules()
    const fresh = await import("./bytes.js")
    const encoder = getAddressEncoder()
    const text = kitDecoder.decode(keyBytes(123))
    const a = fresh.addressToBytes(text)
    expect(a).toEqual(new Uint8Array(encoder.encode(text)))
    a.fill(0)
    const b = fresh.addressToBytes(text)
    expect(b).toEqual(keyBytes(123))
    expect(b).not.toBe(fresh.addressBytesShared(text))
    expect(fresh.addressBytesShared(text)).toBe(fresh.addressBytesShared(text))
    expect(fresh.addressMemoSizes().toBytes).toBe(1)
    expect(() => fresh.addressToBytes("not-base58-0OIl" as Address)).toThrow()
    expect(fresh.addressMemoSizes().toBytes).toBe(1)
    for (let n = 0; n < fresh.ADDRESS_MEMO_MAX; n++) fresh.addressBytesShared(kitDecoder.decode(keyBytes(80_000 + n)))
    expect(fresh.addressMemoSizes().toBytes).toBe(1)
    expect(fresh.addressToBytes(text)).toEqual(keyBytes(123))
    expect(fresh.addressMemoSizes().toBytes).toBe(2)
  })

  it("a PDA derivation adds at most one entry (its rejected candidates are not kept); an event's wallets none", async () => {
    vi.resetModules()
    const fresh = await import("./bytes.js")
    const pda = await import("../Pda.js")
    const ids = await import("../ProgramIds.js")
    const events = await import("../Events.js")
    // Seeds whose search rejects some bumps (on-curve candidates) before one is found.
    let rejecting: Uint8Array | undefined
    for (let n = 0; n < 64 && rejecting === undefined; n++) {
      const seed = keyBytes(n)
      if (pda.findProgramAddressSync([seed], ids.SVC_CURVE_PROGRAM_ID).bump < 255) rejecting = seed
    }
    expect(rejecting).toBeDefined()
    const before = fresh.addressMemoSizes().bytes
    pda.findProgramAddressSync([rejecting!, Uint8Array.of(1)], ids.SVC_CURVE_PROGRAM_ID)
    for (let n = 100; n < 132; n++) pda.findProgramAddressSync([keyBytes(n)], ids.TOKEN_PROGRAM_ID)
    expect(fresh.addressMemoSizes().bytes - before).toBeLessThanOrEqual(1)
    // A trade event keeps its mint and curve (they recur), not its trader.
    const mint = kitDecoder.decode(keyBytes(1)), curve = kitDecoder.decode(keyBytes(2))
    const sizeBefore = fresh.addressMemoSizes().bytes
    for (let n = 0; n < 20; n++) {
      const trader = kitDecoder.decode(keyBytes(5_000 + n))
      const bytes = events.encodeCurveEvent({
        kind: "Trade", mint, curve, trader, side: "buy", amountInRaw: 1n, amountOutRaw: 2n, feeRaw: 0n, creatorFeeRaw: 0n,
        virtualQuoteAfterRaw: 3n, virtualTokenAfterRaw: 4n, realQuoteAfterRaw: 5n, crossesGraduation: false
      })
      expect(events.decodeCurveEvent(bytes)).toMatchObject({ mint, curve, trader })
    }
    expect(fresh.addressMemoSizes().bytes - sizeBefore).toBe(2)
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
