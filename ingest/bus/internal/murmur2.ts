/**
 * 32-bit murmur2 as Kafka's Java client (0.10.2+) and kafkajs's default partitioner compute it,
 * seed 0x9747b28c. Adapted from kafkajs (MIT, src/producer/partitioners/default/murmur2.js,
 * itself a port of org.apache.kafka.common.utils.Utils#murmur2); kafkajs works on 64-bit Longs
 * but only ever reads the low 32 bits, so `Math.imul` gives the same result without allocation.
 * Returns a signed 32-bit integer, like the original.
 */
const SEED = 0x9747b28c
const M = 0x5bd1e995
const R = 24

/** Mixes one little-endian four-byte block into `h`. */
const block = (h: number, k: number): number => {
  k = Math.imul(k, M)
  k ^= k >>> R
  k = Math.imul(k, M)
  return Math.imul(h, M) ^ k
}

/** Mixes the last `length & 3` bytes (as one little-endian word, `tail`) and finishes. */
const finish = (h: number, tail: number, rem: number): number => {
  if (rem > 0) h = Math.imul(h ^ tail, M)
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h | 0
}

/**
 * `murmur2` of the UTF-8 bytes of `text` when every unit is ASCII (a UTF-8 byte per unit), read
 * straight from the string: no encoded copy. Undefined for any other text (encode it, then `murmur2`).
 */
export const murmur2Ascii = (text: string): number | undefined => {
  const length = text.length
  let h = SEED ^ length
  const end4 = length & ~3
  for (let i = 0; i < end4; i += 4) {
    const a = text.charCodeAt(i)
    const b = text.charCodeAt(i + 1)
    const c = text.charCodeAt(i + 2)
    const d = text.charCodeAt(i + 3)
    if ((a | b | c | d) >= 0x80) return undefined
    h = block(h, a | (b << 8) | (c << 16) | (d << 24))
  }
  let tail = 0
  for (let i = length - 1; i >= end4; i--) {
    const c = text.charCodeAt(i)
    if (c >= 0x80) return undefined
    tail = (tail << 8) | c
  }
  return finish(h, tail, length & 3)
}

export const murmur2 = (data: Uint8Array): number => {
  const length = data.length
  let h = SEED ^ length
  const end4 = length & ~3
  for (let i = 0; i < end4; i += 4) h = block(h, data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))
  let tail = 0
  for (let i = length - 1; i >= end4; i--) tail = (tail << 8) | data[i]!
  return finish(h, tail, length & 3)
}
