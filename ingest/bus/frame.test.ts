import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { crc32, crc32Table, decodeFrame, encodeFrame, FRAME_OVERHEAD_BYTES, frameBytes } from "./internal/frame.js"

const MAX = 1 << 20
const encode = (offset: number, ts: number, key: string, value: Uint8Array) => encodeFrame(offset, ts, key, Buffer.byteLength(key), value)

describe("record frame", () => {
  it("round-trips offset, timestamp, key and exact value bytes", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.string({ unit: "binary", maxLength: 64 }),
        fc.uint8Array({ maxLength: 512 }),
        (offset, ts, key, value) => {
          const frame = encode(offset, ts, key, value)
          expect(frame.length).toBe(frameBytes(Buffer.byteLength(key), value.length))
          const decoded = decodeFrame(frame, 0, frame.length, MAX, true)
          expect(decoded).toEqual({ _tag: "Frame", size: frame.length, offset, timestampMs: ts, key, value: new Uint8Array(value) })
        }
      )
    )
  })

  it("decodes frames back to back and reports the partial one at the end", () => {
    const a = encode(7, 1, "k", new Uint8Array([1, 2, 3]))
    const b = encode(8, 2, "kk", new Uint8Array(100))
    const buf = Buffer.concat([a, b])
    const first = decodeFrame(buf, 0, buf.length, MAX, false)
    expect(first._tag === "Frame" && first.offset).toBe(7)
    const second = decodeFrame(buf, a.length, buf.length, MAX, false)
    expect(second._tag === "Frame" && second.offset).toBe(8)
    // Cut anywhere inside the second frame: partial, with the size that would complete it.
    for (const cut of [1, 7, 8, 20, b.length - 1]) {
      expect(decodeFrame(buf, a.length, a.length + cut, MAX, false)).toEqual({
        _tag: "Partial",
        needBytes: cut < 8 ? 8 : b.length
      })
    }
  })

  it("refuses a frame whose bytes changed (CRC), an implausible length, or inconsistent inner lengths", () => {
    const frame = encode(1, 2, "key", new Uint8Array([9, 9, 9, 9]))
    for (let i = 8; i < frame.length; i++) {
      const flipped = Buffer.from(frame)
      flipped[i] = flipped[i]! ^ 0x40
      expect(decodeFrame(flipped, 0, flipped.length, MAX, true)._tag, `byte ${i}`).toBe("Invalid")
    }
    const crcFlipped = Buffer.from(frame)
    crcFlipped[5] = crcFlipped[5]! ^ 1
    expect(decodeFrame(crcFlipped, 0, frame.length, MAX, true)).toEqual({ _tag: "Invalid", why: "CRC mismatch" })
    const tooShort = Buffer.from(frame)
    tooShort.writeUInt32BE(3, 0)
    expect(decodeFrame(tooShort, 0, frame.length, MAX, true)._tag).toBe("Invalid")
    const tooLong = Buffer.from(frame)
    tooLong.writeUInt32BE(MAX, 0)
    expect(decodeFrame(tooLong, 0, frame.length, MAX, true)._tag).toBe("Invalid")
    // Key length pointing past the body, with a CRC recomputed so only the structure is wrong.
    const badKey = Buffer.from(frame)
    badKey.writeUInt32BE(1000, 8 + 17)
    badKey.writeUInt32BE(crc32(badKey.subarray(8)), 4)
    expect(decodeFrame(badKey, 0, frame.length, MAX, true)._tag).toBe("Invalid")
  })

  it("has a fixed 33-byte overhead and copies values out of the read buffer", () => {
    expect(FRAME_OVERHEAD_BYTES).toBe(33)
    const frame = encode(0, 0, "", new Uint8Array([5]))
    const decoded = decodeFrame(frame, 0, frame.length, MAX, true)
    frame.fill(0)
    expect(decoded._tag === "Frame" && [...decoded.value]).toEqual([5])
  })

  it("uses the IEEE CRC-32 (zlib's); the table fallback agrees", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926)
    expect(crc32Table(Buffer.from("123456789"))).toBe(0xcbf43926)
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        expect(crc32Table(data)).toBe(crc32(data))
      })
    )
  })
})
