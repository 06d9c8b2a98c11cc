/**
 * The field encodings the project's binary records share (`ChainEventBinary`: the bus's trades;
 * `actors/replica/ReadModelCodec`: the read-model topics). Writers put one field into a caller's
 * buffer at a position and return the next position, or -1 when the field cannot be carried
 * exactly (the caller then writes its record in JSON); the caller makes room first (`*_MAX_BYTES`
 * per field). `FieldReader` is a cursor that turns `pos` to -1 at the first malformed field and
 * never throws.
 *
 * - string: a length (u8 < 0x80, or u16 big-endian with the top bit set, at most 0x7fff) and that
 *   many bytes of UTF-8; only well-formed UTF-16 is written (a lone surrogate has no UTF-8).
 * - bigint: a header u8 (bit7 negative, bits0-6 the magnitude's byte count, 0 for zero, no leading
 *   zero byte) and the magnitude, little-endian.
 * - uint: a non-negative safe integer as unsigned LEB128 (at most 8 bytes, no trailing zero group).
 * - f64: a finite number, never negative zero, in 8 bytes little-endian.
 *
 * Every value has exactly one encoding (the shortest prefix, the minimal magnitude, valid UTF-8);
 * the reader refuses any other. Pinned by ChainEventBinary.test.ts and ReadModelCodec.test.ts.
 */
import { isUtf8 } from "node:buffer"

const MAX_STRING_BYTES = 0x7fff
const MAX_MAGNITUDE_BYTES = 127
/** Room a writer may use per UTF-16 unit of a string (plus its two-byte prefix). */
export const STRING_BYTES_PER_UNIT = 3
/** Room one bigint may use. */
export const BIGINT_MAX_BYTES = 1 + MAX_MAGNITUDE_BYTES
export const UINT_MAX_BYTES = 8

interface NodeBytes {
  utf8Write(this: Uint8Array, text: string, offset: number): number
  utf8Slice(this: Uint8Array, start: number, end: number): string
}
const bytesProto = Buffer.prototype as unknown as NodeBytes
const utf8Write = bytesProto.utf8Write
const utf8Slice = bytesProto.utf8Slice

/** `String.prototype.isWellFormed` (ES2024; Node 20+), which the project's `lib` setting does not declare. */
export const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed

/** Writes `text`'s UTF-8 at `at` without a prefix (room: 3 per unit); returns the bytes written. */
export const writeUtf8 = (out: Uint8Array, text: string, at: number): number => utf8Write.call(out, text, at)

const f64 = new Float64Array(1)
const f64Bytes = new Uint8Array(f64.buffer)

/** Writes a string with its length prefix at `at` (room: 2 + 3 per unit); returns the next position, or -1 when it cannot. */
export const writeString = (out: Uint8Array, text: string, at: number): number => {
  if (at < 0) return -1
  const length = text.length
  if (length < 0x80) {
    // ASCII (every id, address and signature in practice): one byte per unit, copied here; the
    // first other unit falls through to the general path, which rewrites the field.
    let p = at + 1
    let i = 0
    for (; i < length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0x80) break
      out[p++] = c
    }
    if (i === length) {
      out[at] = length
      return p
    }
  }
  if (!isWellFormed.call(text)) return -1
  if (length < 43) {
    // At most 3 bytes per UTF-16 unit: 126 bytes fit the one-byte prefix.
    const n = utf8Write.call(out, text, at + 1)
    out[at] = n
    return at + 1 + n
  }
  if (length * 3 > MAX_STRING_BYTES && Buffer.byteLength(text, "utf8") > MAX_STRING_BYTES) return -1
  const n = utf8Write.call(out, text, at + 2)
  if (n < 0x80) {
    // Canonical: the short prefix whenever it fits.
    out.copyWithin(at + 1, at + 2, at + 2 + n)
    out[at] = n
    return at + 1 + n
  }
  out[at] = 0x80 | (n >>> 8)
  out[at + 1] = n & 0xff
  return at + 2 + n
}

const u64 = new DataView(new ArrayBuffer(8))
const u64Bytes = new Uint8Array(u64.buffer)
const U64_MAX = (1n << 64n) - 1n
/** The value of each lowercase hex digit's char code (`bigint.toString(16)`'s digits). */
const HEX = new Uint8Array(128)
for (let i = 0; i < 16; i++) HEX["0123456789abcdef".charCodeAt(i)] = i

/**
 * Writes `header | magnitude` (room: BIGINT_MAX_BYTES); returns the next position, or -1 past
 * MAX_MAGNITUDE_BYTES. Up to 64 bits through a DataView, above that from the hex digits: neither
 * allocates a bigint per byte group (shifting 48 bits at a time did, 3-6x slower).
 */
export const writeBigint = (out: Uint8Array, value: bigint, at: number): number => {
  if (at < 0) return -1
  const negative = value < 0n
  const magnitude = negative ? -value : value
  let p = at + 1
  if (magnitude <= U64_MAX) {
    u64.setBigUint64(0, magnitude, true)
    let n = 8
    while (n > 0 && u64Bytes[n - 1] === 0) n--
    for (let i = 0; i < n; i++) out[p++] = u64Bytes[i]!
  } else {
    const hex = magnitude.toString(16)
    if (hex.length > 2 * MAX_MAGNITUDE_BYTES) return -1
    let i = hex.length
    for (; i >= 2; i -= 2) out[p++] = (HEX[hex.charCodeAt(i - 2)]! << 4) | HEX[hex.charCodeAt(i - 1)]!
    if (i === 1) out[p++] = HEX[hex.charCodeAt(0)]!
  }
  out[at] = (negative ? 0x80 : 0) | (p - at - 1)
  return p
}

/** Writes a non-negative safe integer as LEB128 (room: UINT_MAX_BYTES); -1 for any other number. */
export const writeUint = (out: Uint8Array, value: number, at: number): number => {
  if (at < 0) return -1
  if (!Number.isSafeInteger(value) || value < 0) return -1
  let n = value
  let p = at
  while (n >= 0x80) {
    out[p++] = (n % 0x80) | 0x80
    n = Math.floor(n / 0x80)
  }
  out[p++] = n
  return p
}

/** Writes a finite number (negative zero written as zero); -1 for a non-finite one. */
export const writeF64 = (out: Uint8Array, value: number, at: number): number => {
  if (at < 0) return -1
  if (!Number.isFinite(value)) return -1
  f64[0] = value === 0 ? 0 : value
  for (let i = 0; i < 8; i++) out[at + i] = f64Bytes[i]!
  return at + 8
}

/** A cursor over one record's bytes: each read moves `pos`, or sets it to -1 at the first malformed field (later reads return zero values). */
export class FieldReader {
  buf: Uint8Array = EMPTY
  pos = -1

  /** Starts reading `bytes` at `at`. */
  reset(bytes: Uint8Array, at: number): void {
    this.buf = bytes
    this.pos = at
  }

  /** Drops the bytes (a module-level reader must not keep a record alive). */
  clear(): void {
    this.buf = EMPTY
    this.pos = -1
  }

  u8(): number {
    const pos = this.pos
    if (pos < 0 || pos >= this.buf.length) {
      this.pos = -1
      return 0
    }
    this.pos = pos + 1
    return this.buf[pos]!
  }

  string(): string {
    const buf = this.buf
    const pos = this.pos
    if (pos < 0 || pos >= buf.length) {
      this.pos = -1
      return ""
    }
    let n = buf[pos]!
    let start = pos + 1
    if (n >= 0x80) {
      if (start >= buf.length) {
        this.pos = -1
        return ""
      }
      n = ((n & 0x7f) << 8) | buf[start]!
      start++
      if (n < 0x80) {
        this.pos = -1
        return ""
      }
    }
    const end = start + n
    if (end > buf.length) {
      this.pos = -1
      return ""
    }
    this.pos = end
    if (n === 0) return ""
    const text = utf8Slice.call(buf, start, end)
    // Bytes that are not UTF-8 decode to U+FFFD: refused (one value, one encoding). A real U+FFFD passes.
    if (text.indexOf("\uFFFD") >= 0 && !isUtf8(buf.subarray(start, end))) this.pos = -1
    return text
  }

  bigint(): bigint {
    const buf = this.buf
    const pos = this.pos
    if (pos < 0 || pos >= buf.length) {
      this.pos = -1
      return 0n
    }
    const header = buf[pos]!
    const count = header & 0x7f
    const start = pos + 1
    const end = start + count
    // Minimal: no leading zero byte, no negative zero.
    if (end > buf.length || (count > 0 && buf[end - 1] === 0) || (count === 0 && header !== 0)) {
      this.pos = -1
      return 0n
    }
    this.pos = end
    let magnitude: bigint
    if (count <= 6) {
      let n = 0
      for (let i = end - 1; i >= start; i--) n = n * 256 + buf[i]!
      magnitude = BigInt(n)
    } else {
      // 48-bit chunks from the most significant end.
      let i = end
      const top = count % 6 === 0 ? 6 : count % 6
      let n = 0
      for (let k = 0; k < top; k++) n = n * 256 + buf[--i]!
      magnitude = BigInt(n)
      while (i > start) {
        n = 0
        for (let k = 0; k < 6; k++) n = n * 256 + buf[--i]!
        magnitude = (magnitude << 48n) | BigInt(n)
      }
    }
    return header & 0x80 ? -magnitude : magnitude
  }

  uint(): number {
    const buf = this.buf
    let p = this.pos
    if (p < 0) return 0
    let value = 0
    let scale = 1
    for (let i = 0; i < UINT_MAX_BYTES; i++) {
      if (p >= buf.length) break
      const b = buf[p++]!
      value += (b & 0x7f) * scale
      if (b < 0x80) {
        // Minimal: no trailing zero group; within the safe integers.
        if ((b === 0 && i > 0) || !Number.isSafeInteger(value)) break
        this.pos = p
        return value
      }
      scale *= 0x80
    }
    this.pos = -1
    return 0
  }

  f64(): number {
    const buf = this.buf
    const pos = this.pos
    if (pos < 0 || pos + 8 > buf.length) {
      this.pos = -1
      return 0
    }
    for (let i = 0; i < 8; i++) f64Bytes[i] = buf[pos + i]!
    const value = f64[0]!
    if (!Number.isFinite(value) || Object.is(value, -0)) {
      this.pos = -1
      return 0
    }
    this.pos = pos + 8
    return value
  }
}

const EMPTY = new Uint8Array(0)
