/**
 * Little-endian fixed-width readers and writers for account, instruction and event layouts.
 * Bounds are checked on every access: a writer that is not filled exactly, a reader that runs
 * past the end, an integer out of its width or a string over its byte limit throws RangeError.
 * Public decoders catch it and return `undefined`; encoders let it surface (a programmer error).
 */
import { address, getAddressDecoder, getAddressEncoder, isAddress, type Address } from "@solana/kit"
import { BoundedMemo } from "../../../../platform/BoundedMemo.js"

const addressEncoder = getAddressEncoder()
const addressDecoder = getAddressDecoder()
const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8", { fatal: true })

export const U64_MAX = (1n << 64n) - 1n
const ZERO32 = new Uint8Array(32)

/**
 * Base58 through kit's codec is a BigInt loop (about 7 KB of garbage per 32-byte key, both ways),
 * and the keys an engine decodes and checks recur (its curves, mints, vaults, wallets): each is
 * converted once and kept, keyed by its 32 bytes (as a latin1 string) or by its text (three memos:
 * bytes to text, text checked, text to bytes). Bounded: a memo that reaches `ADDRESS_MEMO_MAX`
 * entries is cleared. Pure functions of their input, so a hit answers exactly what the codec would.
 */
export const ADDRESS_MEMO_MAX = 4_096
const addressOfBytes = new BoundedMemo<string, Address>(ADDRESS_MEMO_MAX)
const checkedText = new BoundedMemo<string, Address>(ADDRESS_MEMO_MAX)
const bytesOfAddress = new BoundedMemo<string, Uint8Array>(ADDRESS_MEMO_MAX)
const decodeAddress = (bytes: Uint8Array): Address => addressDecoder.decode(bytes)
const encodeAddress = (a: Address): Uint8Array => {
  const out = new Uint8Array(32)
  out.set(addressEncoder.encode(a))
  return out
}

/**
 * The 32 bytes of an address (kit's encoder, memoized by its text): the memo's own array, to read
 * and never to write (a hash's input, a layout's field). Throws as kit's encoder does on a text that
 * is not 32 bytes of base58, and keeps nothing then.
 */
export const addressBytesShared = (a: Address): Uint8Array => bytesOfAddress.get(a, a, encodeAddress)

/** The 32 bytes of an address, a fresh array the caller owns (`addressBytesShared`, copied). */
export const addressToBytes = (a: Address): Uint8Array => addressBytesShared(a).slice()

/** The base58 address of 32 bytes (kit's decoder, memoized). */
export const addressFromBytes = (bytes: Uint8Array): Address =>
  bytes.length !== 32 ? addressDecoder.decode(bytes) : addressOfBytes.get(Buffer.from(bytes.buffer, bytes.byteOffset, 32).toString("latin1"), bytes, decodeAddress)

/** `text` as an `Address` once kit's `address()` accepted it (throws as it does otherwise); memoized. */
export const checkedAddress = (text: string): Address => checkedText.get(text, text, address)

/**
 * kit's `isAddress(text)` (base58 of exactly 32 bytes), through `checkedAddress`'s memo: a text
 * accepted once is answered from it (and kept there: a request body's mint recurs); a refused text
 * is checked by kit each time and never kept.
 */
export const isCheckedAddress = (text: string): boolean => checkedText.has(text) || (isAddress(text) && checkedAddress(text) === text)

/**
 * The base58 address of 32 bytes, NOT memoized: for keys that seldom come back (a PDA search's
 * rejected candidates, the wallets in a stream of events), which would only evict the hot ones.
 */
export const addressFromBytesOnce = (bytes: Uint8Array): Address => addressDecoder.decode(bytes)

/** Entries kept now (bytes → address, text checked, address → bytes): for tests of the bound. */
export const addressMemoSizes = (): { readonly bytes: number; readonly text: number; readonly toBytes: number } => ({
  bytes: addressOfBytes.size,
  text: checkedText.size,
  toBytes: bytesOfAddress.size
})

export const utf8Bytes = (s: string): Uint8Array => utf8Encoder.encode(s)

export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export class ByteWriter {
  readonly bytes: Uint8Array
  private readonly view: DataView
  private offset = 0

  constructor(size: number) {
    this.bytes = new Uint8Array(size)
    this.view = new DataView(this.bytes.buffer)
  }

  private room(n: number): number {
    const at = this.offset
    if (at + n > this.bytes.length) throw new RangeError(`layout overflow: ${at + n} > ${this.bytes.length}`)
    this.offset += n
    return at
  }

  u8(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xff) throw new RangeError(`u8 out of range: ${v}`)
    this.view.setUint8(this.room(1), v)
    return this
  }

  u16(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new RangeError(`u16 out of range: ${v}`)
    this.view.setUint16(this.room(2), v, true)
    return this
  }

  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffff_ffff) throw new RangeError(`u32 out of range: ${v}`)
    this.view.setUint32(this.room(4), v, true)
    return this
  }

  u64(v: bigint): this {
    if (v < 0n || v > U64_MAX) throw new RangeError(`u64 out of range: ${v}`)
    this.view.setBigUint64(this.room(8), v, true)
    return this
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0)
  }

  /** A 32-byte public key; `null` writes 32 zero bytes. */
  address(a: Address | null): this {
    this.bytes.set(a === null ? ZERO32 : addressBytesShared(a), this.room(32))
    return this
  }

  raw(b: Uint8Array): this {
    this.bytes.set(b, this.room(b.length))
    return this
  }

  /** `u8 length` then exactly `maxBytes` bytes, zero-padded (fixed-size account fields). */
  fixedUtf8(s: string, maxBytes: number): this {
    const b = utf8Encoder.encode(s)
    if (b.length > maxBytes) throw new RangeError(`string of ${b.length} bytes over its limit ${maxBytes}`)
    this.u8(b.length)
    const at = this.room(maxBytes)
    this.bytes.set(b, at)
    return this
  }

  /** `u8 length` then the bytes (instruction and event strings: size follows content). */
  lpUtf8(s: string, maxBytes: number): this {
    const b = utf8Encoder.encode(s)
    if (b.length > maxBytes) throw new RangeError(`string of ${b.length} bytes over its limit ${maxBytes}`)
    this.u8(b.length)
    return this.raw(b)
  }

  done(): Uint8Array {
    if (this.offset !== this.bytes.length) throw new RangeError(`layout underfilled: ${this.offset} of ${this.bytes.length}`)
    return this.bytes
  }
}

export class ByteReader {
  private readonly view: DataView
  private offset: number

  constructor(private readonly bytes: Uint8Array, offset = 0) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.offset = offset
  }

  get remaining(): number {
    return this.bytes.length - this.offset
  }

  private take(n: number): number {
    const at = this.offset
    if (at + n > this.bytes.length) throw new RangeError("read past the end")
    this.offset += n
    return at
  }

  u8(): number {
    return this.view.getUint8(this.take(1))
  }

  u16(): number {
    return this.view.getUint16(this.take(2), true)
  }

  u32(): number {
    return this.view.getUint32(this.take(4), true)
  }

  u64(): bigint {
    return this.view.getBigUint64(this.take(8), true)
  }

  bool(): boolean {
    const v = this.u8()
    if (v > 1) throw new RangeError(`bool byte ${v}`)
    return v === 1
  }

  bytesOf(n: number): Uint8Array {
    const at = this.take(n)
    return this.bytes.subarray(at, at + n)
  }

  address(): Address {
    return addressFromBytes(this.bytesOf(32))
  }

  /** A 32-byte key that seldom recurs (an event's wallet): decoded without the memo. */
  walletAddress(): Address {
    return addressFromBytesOnce(this.bytesOf(32))
  }

  /** A 32-byte key where all zeros means none. */
  optionalAddress(): Address | null {
    const b = this.bytesOf(32)
    return b.every((x) => x === 0) ? null : addressFromBytes(b)
  }

  fixedUtf8(maxBytes: number): string {
    const len = this.u8()
    const field = this.bytesOf(maxBytes)
    if (len > maxBytes) throw new RangeError("string length over its field")
    for (let i = len; i < maxBytes; i++) if (field[i] !== 0) throw new RangeError("string padding not zero")
    return utf8Decoder.decode(field.subarray(0, len))
  }

  lpUtf8(maxBytes: number): string {
    const len = this.u8()
    if (len > maxBytes) throw new RangeError("string over its limit")
    return utf8Decoder.decode(this.bytesOf(len))
  }

  end(): void {
    if (this.remaining !== 0) throw new RangeError(`${this.remaining} trailing bytes`)
  }
}

/** Runs a decoder body; any layout error means "not ours": `undefined`, never a throw. */
export const tryDecode = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}
