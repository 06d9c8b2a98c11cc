/**
 * The shared field encodings: fixed bytes for known values (what the records on the bus and the
 * read-model topics hold), one encoding per value, and refusals. The round trips of every kind are
 * property-tested through their records (ChainEventBinary.test.ts, ReadModelCodec.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { FieldReader, writeBigint, writeF64, writeUint } from "./BinaryFields.js"

/** fast-check seed: fixed by `FC_SEED`, else random; printed so a failure can be replayed. */
const seed = process.env.FC_SEED === undefined ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.FC_SEED)
console.log(`BinaryFields.test.ts: fast-check seed ${seed} (rerun with FC_SEED=${seed})`)

const bytesOf = (write: (out: Uint8Array, at: number) => number): ReadonlyArray<number> => {
  const out = new Uint8Array(256)
  const end = write(out, 0)
  return end < 0 ? [] : [...out.subarray(0, end)]
}

const read = <A>(bytes: ReadonlyArray<number>, f: (r: FieldReader) => A): readonly [A, number] => {
  const r = new FieldReader()
  r.reset(Uint8Array.from(bytes), 0)
  const value = f(r)
  return [value, r.pos]
}

describe("BinaryFields", () => {
  it("writes a bigint as its header and its minimal little-endian magnitude, on either side of 64 bits", () => {
    expect(bytesOf((o, at) => writeBigint(o, 0n, at))).toEqual([0])
    expect(bytesOf((o, at) => writeBigint(o, 255n, at))).toEqual([1, 255])
    expect(bytesOf((o, at) => writeBigint(o, 256n, at))).toEqual([2, 0, 1])
    expect(bytesOf((o, at) => writeBigint(o, -1n, at))).toEqual([0x81, 1])
    expect(bytesOf((o, at) => writeBigint(o, (1n << 64n) - 1n, at))).toEqual([8, 255, 255, 255, 255, 255, 255, 255, 255])
    expect(bytesOf((o, at) => writeBigint(o, 1n << 64n, at))).toEqual([9, 0, 0, 0, 0, 0, 0, 0, 0, 1])
    expect(bytesOf((o, at) => writeBigint(o, 0x123n << 64n, at))).toEqual([10, 0, 0, 0, 0, 0, 0, 0, 0, 0x23, 0x01])
    expect(bytesOf((o, at) => writeBigint(o, -(10n ** 27n), at))).toEqual([0x80 | 12, ...[...Buffer.from((10n ** 27n).toString(16).padStart(24, "0"), "hex")].reverse()])
  })

  it("refuses a magnitude past 127 bytes and reads back exactly what it wrote", () => {
    const out = new Uint8Array(300)
    expect(writeBigint(out, (1n << 1016n) - 1n, 0)).toBe(128)
    expect(writeBigint(out, 1n << 1016n, 0)).toBe(-1)
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: -(1n << 1015n), max: 1n << 1015n }), fc.bigInt({ min: -(1n << 70n), max: 1n << 70n })), (value) => {
        const [back, pos] = read(bytesOf((o, at) => writeBigint(o, value, at)), (r) => r.bigint())
        expect(back).toBe(value)
        expect(pos).toBeGreaterThan(0)
      }),
      { seed, numRuns: 500 }
    )
  })

  it("writes a uint as LEB128, refuses what is not a non-negative safe integer, and reads only the minimal form", () => {
    expect(bytesOf((o, at) => writeUint(o, 0, at))).toEqual([0])
    expect(bytesOf((o, at) => writeUint(o, 127, at))).toEqual([127])
    expect(bytesOf((o, at) => writeUint(o, 128, at))).toEqual([0x80, 1])
    expect(bytesOf((o, at) => writeUint(o, 300, at))).toEqual([0xac, 0x02])
    expect(bytesOf((o, at) => writeUint(o, Number.MAX_SAFE_INTEGER, at))).toHaveLength(8)
    for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity]) expect(writeUint(new Uint8Array(16), bad, 0)).toBe(-1)
    expect(read([0x80, 0], (r) => r.uint())[1]).toBe(-1) // a trailing zero group
    expect(read([0x80], (r) => r.uint())[1]).toBe(-1) // cut short
    expect(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], (r) => r.uint())[1]).toBe(-1) // past 2^53
    expect(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], (r) => r.uint())[1]).toBe(-1) // past 8 bytes
    fc.assert(
      fc.property(fc.maxSafeNat(), (value) => {
        expect(read(bytesOf((o, at) => writeUint(o, value, at)), (r) => r.uint())[0]).toBe(value)
      }),
      { seed, numRuns: 500 }
    )
  })

  it("writes a finite f64, negative zero as zero, and reads neither a non-finite number nor negative zero", () => {
    expect(writeF64(new Uint8Array(8), NaN, 0)).toBe(-1)
    expect(writeF64(new Uint8Array(8), -Infinity, 0)).toBe(-1)
    expect(Object.is(read(bytesOf((o, at) => writeF64(o, -0, at)), (r) => r.f64())[0], 0)).toBe(true)
    expect(read([0, 0, 0, 0, 0, 0, 0, 0x80], (r) => r.f64())[1]).toBe(-1)
    expect(read([0, 0, 0, 0, 0, 0, 0xf0, 0x7f], (r) => r.f64())[1]).toBe(-1)
    expect(read(bytesOf((o, at) => writeF64(o, 1_735_689_600_000.5, at)), (r) => r.f64())).toEqual([1_735_689_600_000.5, 8])
  })
})
