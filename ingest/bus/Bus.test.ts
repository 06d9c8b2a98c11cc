import * as fc from "fast-check"
import { Partitioners, type PartitionMetadata } from "kafkajs"
import { describe, expect, it } from "vitest"
import { partitionForKey } from "./Bus.js"
import { murmur2, murmur2Ascii } from "./internal/murmur2.js"

const kafkajsPartitioner = Partitioners.DefaultPartitioner()
const metadata = (count: number): Array<PartitionMetadata> =>
  Array.from({ length: count }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0] }))
const kafkajsPartitionFor = (key: string, count: number): number =>
  kafkajsPartitioner({ topic: "chain.events", partitionMetadata: metadata(count), message: { key, value: null } })

describe("partitionForKey", () => {
  it("maps fixed keys to fixed partitions (a change here remaps every stored key)", () => {
    const expected: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
      ["solana:So11111111111111111111111111111111111111112", [0, 1, 10, 10]],
      ["hood:0x5FbDB2315678afecb367f032d93F642f64180aa3", [0, 2, 14, 46]],
      ["a", [0, 1, 12, 60]],
      ["", [0, 0, 9, 25]],
      ["mint-42", [0, 0, 11, 59]],
      ["ключ", [0, 2, 0, 48]]
    ]
    for (const [key, partitions] of expected) {
      expect([1, 3, 16, 64].map((count) => partitionForKey(key, count)), key).toEqual(partitions)
    }
  })

  it("agrees with kafkajs's DefaultPartitioner for any key and partition count", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), fc.integer({ min: 1, max: 256 }), (key, count) => {
        expect(partitionForKey(key, count)).toBe(kafkajsPartitionFor(key, count))
      }),
      { numRuns: 2000 }
    )
  })

  it("agrees with kafkajs's DefaultPartitioner for ASCII keys (the string path) too", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii", maxLength: 80 }), fc.integer({ min: 1, max: 256 }), (key, count) => {
        expect(partitionForKey(key, count)).toBe(kafkajsPartitionFor(key, count))
      }),
      { numRuns: 2000 }
    )
  })

  it("murmur2Ascii equals murmur2 of the UTF-8 bytes for ASCII text and declines any other", () => {
    const utf8 = new TextEncoder()
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary-ascii", maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 })), (text) => {
        const ascii = [...text].every((c) => c.charCodeAt(0) < 0x80)
        expect(murmur2Ascii(text)).toBe(ascii ? murmur2(utf8.encode(text)) : undefined)
      }),
      { numRuns: 2000 }
    )
    // A non-ASCII unit in the tail or in a four-unit block is seen.
    for (const text of ["abcd\u00e9", "abc\u00e9", "\u00e9bcd", "abcdefgh\u0080"]) expect(murmur2Ascii(text)).toBeUndefined()
  })

  it("is always inside 0..partitions-1", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 4096 }), (key, count) => {
        const p = partitionForKey(key, count)
        expect(Number.isInteger(p) && p >= 0 && p < count).toBe(true)
      })
    )
  })

  it("murmur2 returns Kafka's signed 32-bit values", () => {
    // Values from Kafka's Java Utils.murmur2 test vectors (UTF-8 bytes of the string).
    expect(murmur2(new TextEncoder().encode("21"))).toBe(-973932308)
    expect(murmur2(new TextEncoder().encode("foobar"))).toBe(-790332482)
    expect(murmur2(new TextEncoder().encode("a-little-bit-long-string"))).toBe(-985981536)
    expect(murmur2(new TextEncoder().encode("a-little-bit-longer-string"))).toBe(-1486304829)
    expect(murmur2(new TextEncoder().encode("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"))).toBe(-58897971)
  })
})
