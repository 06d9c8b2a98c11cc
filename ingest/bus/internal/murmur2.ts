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

/**
 * `murmur2` of the UTF-8 bytes of `text` when every unit is ASCII (a UTF-8 byte per unit), read
 * straight from the string: no encoded copy. Undefined for any other text (encode it, then `murmur2`).
 */
export const murmur2Ascii = (text: string): number | undefined => {
  const length = text.length
  let h = SEED ^ length
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    const a = text.charCodeAt(i4)
    const b = text.charCodeAt(i4 + 1)
    const c = text.charCodeAt(i4 + 2)
    const d = text.charCodeAt(i4 + 3)
    if ((a | b | c | d) >= 0x80) return undefined
    let k = a | (b << 8) | (c << 16) | (d << 24)
    k = Math.imul(k, M)
    k ^= k >>> R
    k = Math.imul(k, M)
    h = Math.imul(h, M)
    h ^= k
  }
  const tail = length & ~3
  const rem = length & 3
  for (let i = tail; i < length; i++) if (text.charCodeAt(i) >= 0x80) return undefined
  if (rem === 3) h ^= text.charCodeAt(tail + 2) << 16
  if (rem >= 2) h ^= text.charCodeAt(tail + 1) << 8
  if (rem >= 1) {
    h ^= text.charCodeAt(tail)
    h = Math.imul(h, M)
  }
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h | 0
}

export const murmur2 = (data: Uint8Array): number => {
  const length = data.length
  let h = SEED ^ length
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    let k = (data[i4]! & 0xff) | ((data[i4 + 1]! & 0xff) << 8) | ((data[i4 + 2]! & 0xff) << 16) | ((data[i4 + 3]! & 0xff) << 24)
    k = Math.imul(k, M)
    k ^= k >>> R
    k = Math.imul(k, M)
    h = Math.imul(h, M)
    h ^= k
  }
  const tail = length & ~3
  const rem = length & 3
  if (rem === 3) h ^= (data[tail + 2]! & 0xff) << 16
  if (rem >= 2) h ^= (data[tail + 1]! & 0xff) << 8
  if (rem >= 1) {
    h ^= data[tail]! & 0xff
    h = Math.imul(h, M)
  }
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h | 0
}
