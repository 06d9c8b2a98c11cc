/**
 * The on-disk record frame of the embedded bus. One frame per record, big-endian, self-checking:
 *
 *   u32 bodyLength | u32 crc32(body) | body:
 *     u8 magic (1) | u64 offset | u64 timestampMs | u32 keyLength | key (UTF-8) | u32 valueLength | value
 *
 * A frame is valid only when its length is plausible, all of it is present, its CRC-32 (IEEE, as
 * zlib computes it) matches, the magic is known and the two inner lengths add up to the body. A
 * reader stops at the first frame that is not valid: at the tail of the newest segment that is a
 * torn write and is truncated; anywhere else it is corruption.
 */
import * as zlib from "node:zlib"

export const MAGIC = 1
/** Length and CRC words before the body. */
export const FRAME_PREFIX_BYTES = 8
/** Body bytes besides key and value: magic, offset, timestamp, the two length words. */
const BODY_FIXED_BYTES = 1 + 8 + 8 + 4 + 4
export const FRAME_OVERHEAD_BYTES = FRAME_PREFIX_BYTES + BODY_FIXED_BYTES

const TWO_POW_32 = 0x1_0000_0000

const CRC_TABLE = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

/** Table-driven CRC-32 for Node 20 releases before 20.15, which lack `zlib.crc32`. */
export const crc32Table = (data: Uint8Array): number => {
  let crc = -1
  for (let i = 0; i < data.length; i++) crc = CRC_TABLE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}

const nativeCrc32 = (zlib as { readonly crc32?: (data: Uint8Array) => number }).crc32
export const crc32: (data: Uint8Array) => number = typeof nativeCrc32 === "function" ? nativeCrc32 : crc32Table

export const frameBytes = (keyBytes: number, valueBytes: number): number => FRAME_OVERHEAD_BYTES + keyBytes + valueBytes

/** Encodes one record; `keyBytes` is `Buffer.byteLength(key)`, computed once by the caller. */
export const encodeFrame = (offset: number, timestampMs: number, key: string, keyBytes: number, value: Uint8Array): Buffer => {
  const size = frameBytes(keyBytes, value.length)
  const buf = Buffer.allocUnsafe(size)
  buf.writeUInt32BE(size - FRAME_PREFIX_BYTES, 0)
  let pos = FRAME_PREFIX_BYTES
  buf[pos++] = MAGIC
  buf.writeUInt32BE(Math.floor(offset / TWO_POW_32), pos)
  buf.writeUInt32BE(offset >>> 0, pos + 4)
  buf.writeUInt32BE(Math.floor(timestampMs / TWO_POW_32), pos + 8)
  buf.writeUInt32BE(timestampMs >>> 0, pos + 12)
  buf.writeUInt32BE(keyBytes, pos + 16)
  pos += 20
  pos += buf.write(key, pos, "utf8")
  buf.writeUInt32BE(value.length, pos)
  buf.set(value, pos + 4)
  buf.writeUInt32BE(crc32(buf.subarray(FRAME_PREFIX_BYTES)), 4)
  return buf
}

/** Where the value starts inside a frame built by `encodeFrame`. */
export const valueStart = (keyBytes: number): number => FRAME_OVERHEAD_BYTES + keyBytes

export type Decoded =
  | {
      readonly _tag: "Frame"
      /** Whole frame size in bytes (prefix included). */
      readonly size: number
      readonly offset: number
      readonly timestampMs: number
      /** Present when decoded with payload. */
      readonly key: string
      readonly value: Uint8Array
    }
  /** Not all of the frame is in the buffer; `needBytes` from `pos` would hold it (or at least its prefix). */
  | { readonly _tag: "Partial"; readonly needBytes: number }
  | { readonly _tag: "Invalid"; readonly why: string }

const EMPTY = new Uint8Array(0)

/**
 * Decodes the frame at `buf[pos..end)`. With `payload` false the key and value are skipped (for
 * scans that only need offsets and positions); with it the value is copied out of `buf`, so a
 * kept record never pins a whole read buffer.
 */
export const decodeFrame = (buf: Buffer, pos: number, end: number, maxFrameBytes: number, payload: boolean): Decoded => {
  const available = end - pos
  if (available < FRAME_PREFIX_BYTES) return { _tag: "Partial", needBytes: FRAME_PREFIX_BYTES }
  const bodyLength = buf.readUInt32BE(pos)
  const size = FRAME_PREFIX_BYTES + bodyLength
  if (bodyLength < BODY_FIXED_BYTES || size > maxFrameBytes) return { _tag: "Invalid", why: `implausible frame length ${bodyLength}` }
  if (available < size) return { _tag: "Partial", needBytes: size }
  const body = pos + FRAME_PREFIX_BYTES
  if (crc32(buf.subarray(body, pos + size)) !== buf.readUInt32BE(pos + 4)) return { _tag: "Invalid", why: "CRC mismatch" }
  if (buf[body] !== MAGIC) return { _tag: "Invalid", why: `unknown magic ${buf[body]}` }
  const offset = buf.readUInt32BE(body + 1) * TWO_POW_32 + buf.readUInt32BE(body + 5)
  const timestampMs = buf.readUInt32BE(body + 9) * TWO_POW_32 + buf.readUInt32BE(body + 13)
  const keyLength = buf.readUInt32BE(body + 17)
  const keyAt = body + 21
  if (keyLength > bodyLength - BODY_FIXED_BYTES) return { _tag: "Invalid", why: "key length past the frame" }
  const valueLength = buf.readUInt32BE(keyAt + keyLength)
  if (BODY_FIXED_BYTES + keyLength + valueLength !== bodyLength) return { _tag: "Invalid", why: "lengths do not add up" }
  if (!payload) return { _tag: "Frame", size, offset, timestampMs, key: "", value: EMPTY }
  const valueAt = keyAt + keyLength + 4
  return {
    _tag: "Frame",
    size,
    offset,
    timestampMs,
    key: buf.toString("utf8", keyAt, keyAt + keyLength),
    value: new Uint8Array(buf.subarray(valueAt, valueAt + valueLength))
  }
}
