/**
 * The binary bus encoding of the hot `ChainEvent` kinds (version 1: `Trade`). The bus value of a
 * trade is this instead of JSON: decoded without `JSON.parse`, without an intermediate object and
 * without a decimal string per amount. `ChainEventCodec.ts` chooses the encoding per event and
 * decodes both, so bus data written as JSON (every event before this encoding, and the cold kinds
 * still) replays unchanged. The Kafka adapter carries these bytes as the record value.
 *
 * Layout (all multi-byte integers little-endian unless said otherwise):
 *   [0] 0x01 MAGIC (a JSON text never starts with it), [1] VERSION, [2] kind (1 = Trade)
 *   Trade, version 1:
 *     flags u8: bit0 chain hood (else solana), bit1 venue pool (else curve), bit2 side sell (else buy),
 *               bit3 crossesGraduation; other bits zero
 *     timestampMs f64 (finite, never negative zero)
 *     id, position, mint, signature, trader: each a length (u8 < 0x80, or u16 big-endian with the
 *               top bit set, at most 0x7fff) and that many bytes of UTF-8
 *     amountInRaw, amountOutRaw, feeRaw, refundRaw, quoteConsumedRaw, quoteReserveRaw,
 *     tokenReserveRaw, realQuoteRaw: each a header u8 (bit7 negative, bits0-6 the magnitude's byte
 *               count, 0 for zero, no leading zero byte) and the magnitude
 *   Every value has exactly one encoding (shortest length prefix, minimal magnitude, valid UTF-8);
 *   the decoder refuses any other.
 *   and nothing after.
 *
 * Invariants (pinned by ChainEventBinary.test.ts against the Schema codec, property-based):
 * - `decodeBinary(encodeBinary(e))` equals the Schema decoder's result for `e`'s JSON encoding.
 * - `encodeBinary` returns undefined for an event it cannot carry exactly (another kind, a string
 *   that is not well-formed UTF-16, a string over 0x7fff bytes, a magnitude over 127 bytes, a
 *   non-finite time): the caller writes JSON then.
 * - `decodeBinary` never throws: malformed bytes (short, trailing, unknown version, kind or flag,
 *   a non-minimal amount) are `undefined`, which the codec reports as a parse error.
 *
 * The kept form (`encodeKept`/`decodeKept`: the market actor's retract window, in memory only,
 * never on the bus or in a checkpoint) is the same layout with one more flag, bit4 "id around the
 * signature": the id is then written as the two strings before and after the signature inside it
 * (a Hood id is `hood:<tx hash>:<log index>`, the tx hash being the signature), ~66 bytes less per
 * kept Hood trade. `decodeBinary` refuses bit4, so the bus keeps one encoding per value.
 */
import { isUtf8 } from "node:buffer"
import { Trade, type ChainEvent } from "./ChainEvent.js"

export const MAGIC = 0x01
export const VERSION = 1
const KIND_TRADE = 1

const FLAG_HOOD = 1
const FLAG_POOL = 2
const FLAG_SELL = 4
const FLAG_CROSSES = 8
const FLAGS_KNOWN = FLAG_HOOD | FLAG_POOL | FLAG_SELL | FLAG_CROSSES
/** Kept form only: the id is written as the strings before and after the signature in it. */
const FLAG_ID_AROUND_SIGNATURE = 16

const MAX_STRING_BYTES = 0x7fff
const MAX_MAGNITUDE_BYTES = 127

interface NodeBytes {
  utf8Write(this: Uint8Array, text: string, offset: number): number
  utf8Slice(this: Uint8Array, start: number, end: number): string
}
const bytesProto = Buffer.prototype as unknown as NodeBytes
const utf8Write = bytesProto.utf8Write
const utf8Slice = bytesProto.utf8Slice

/** `String.prototype.isWellFormed` (ES2024; Node 20+), which the project's `lib` setting does not declare. */
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed

const f64 = new Float64Array(1)
const f64Bytes = new Uint8Array(f64.buffer)

// ---------------------------------------------------------------------------------------------
// Encode

/**
 * Encodings are written straight into a shared slab and handed out as views of it: no scratch copy
 * and one `ArrayBuffer` per slab rather than per event (off-heap buffers are what made V8 collect
 * early under a publishing load). A slab is replaced when the next event may not fit; a view keeps
 * its slab alive, so at most SLAB_BYTES (or one oversized event) is retained per live view.
 */
const SLAB_BYTES = 16 * 1024
let slab = new Uint8Array(SLAB_BYTES)
let slabAt = 0

const MASK_48 = (1n << 48n) - 1n

/** Writes a string with its length prefix at `at`; returns the next position, or -1 when it cannot. */
const writeString = (text: string, at: number): number => {
  const length = text.length
  if (length < 0x80) {
    // ASCII (every id, address and signature in practice): one byte per unit, copied here; the
    // first other unit falls through to the general path, which rewrites the field.
    let p = at + 1
    let i = 0
    for (; i < length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0x80) break
      slab[p++] = c
    }
    if (i === length) {
      slab[at] = length
      return p
    }
  }
  if (!isWellFormed.call(text)) return -1
  if (length < 43) {
    // At most 3 bytes per UTF-16 unit: 126 bytes fit the one-byte prefix.
    const n = utf8Write.call(slab, text, at + 1)
    slab[at] = n
    return at + 1 + n
  }
  if (length * 3 > MAX_STRING_BYTES && Buffer.byteLength(text, "utf8") > MAX_STRING_BYTES) return -1
  const n = utf8Write.call(slab, text, at + 2)
  if (n < 0x80) {
    // Canonical: the short prefix whenever it fits.
    slab.copyWithin(at + 1, at + 2, at + 2 + n)
    slab[at] = n
    return at + 1 + n
  }
  slab[at] = 0x80 | (n >>> 8)
  slab[at + 1] = n & 0xff
  return at + 2 + n
}

/** Writes `header | magnitude`; returns the next position, or -1 past MAX_MAGNITUDE_BYTES. */
const writeBigint = (value: bigint, at: number): number => {
  const negative = value < 0n
  let magnitude = negative ? -value : value
  let p = at + 1
  if (magnitude <= 9007199254740991n) {
    let n = Number(magnitude)
    while (n > 0) {
      slab[p++] = n % 256
      n = Math.floor(n / 256)
    }
  } else {
    // 48 bits at a time; the last chunk's leading zero bytes are not written.
    while (magnitude > 0n) {
      let chunk = Number(magnitude & MASK_48)
      magnitude >>= 48n
      const last = magnitude === 0n
      for (let i = 0; i < 6 && (!last || chunk > 0); i++) {
        slab[p++] = chunk % 256
        chunk = Math.floor(chunk / 256)
      }
      if (p - at - 1 > MAX_MAGNITUDE_BYTES) return -1
    }
  }
  const count = p - at - 1
  if (count > MAX_MAGNITUDE_BYTES) return -1
  slab[at] = (negative ? 0x80 : 0) | count
  return p
}

type TradeEvent = Extract<ChainEvent, { _tag: "Trade" }>

/** `kept`: the kept form (the id around the signature when it contains it). */
const encodeTrade = (e: TradeEvent, kept: boolean): Uint8Array | undefined => {
  if (!Number.isFinite(e.timestampMs)) return undefined
  const need = 16 + 3 * (e.id.length + e.position.length + e.mint.length + e.signature.length + e.trader.length) + 10 + 8 * 130
  if (slab.length - slabAt < need) {
    slab = new Uint8Array(Math.max(need, SLAB_BYTES))
    slabAt = 0
  }
  const start = slabAt
  const around = kept && e.signature.length > 0 ? e.id.indexOf(e.signature) : -1
  slab[start] = MAGIC
  slab[start + 1] = VERSION
  slab[start + 2] = KIND_TRADE
  slab[start + 3] =
    (e.chain === "hood" ? FLAG_HOOD : 0) |
    (e.venue === "pool" ? FLAG_POOL : 0) |
    (e.side === "sell" ? FLAG_SELL : 0) |
    (e.crossesGraduation ? FLAG_CROSSES : 0) |
    (around >= 0 ? FLAG_ID_AROUND_SIGNATURE : 0)
  // JSON has no negative zero: the Schema codec's value is 0.
  f64[0] = e.timestampMs === 0 ? 0 : e.timestampMs
  for (let i = 0; i < 8; i++) slab[start + 4 + i] = f64Bytes[i]!
  let p = start + 12
  if (around < 0) p = writeString(e.id, p)
  else {
    p = writeString(e.id.slice(0, around), p)
    if (p >= 0) p = writeString(e.id.slice(around + e.signature.length), p)
  }
  if (p >= 0) p = writeString(e.position, p)
  if (p >= 0) p = writeString(e.mint, p)
  if (p >= 0) p = writeString(e.signature, p)
  if (p >= 0) p = writeString(e.trader, p)
  if (p >= 0) p = writeBigint(e.amountInRaw, p)
  if (p >= 0) p = writeBigint(e.amountOutRaw, p)
  if (p >= 0) p = writeBigint(e.feeRaw, p)
  if (p >= 0) p = writeBigint(e.refundRaw, p)
  if (p >= 0) p = writeBigint(e.quoteConsumedRaw, p)
  if (p >= 0) p = writeBigint(e.quoteReserveRaw, p)
  if (p >= 0) p = writeBigint(e.tokenReserveRaw, p)
  if (p >= 0) p = writeBigint(e.realQuoteRaw, p)
  if (p < 0) return undefined
  slabAt = p
  return slab.subarray(start, p)
}

/** The binary bus value of `event`, or undefined when this encoding does not carry it (write JSON). */
export const encodeBinary = (event: ChainEvent): Uint8Array | undefined => (event._tag === "Trade" ? encodeTrade(event, false) : undefined)

/** The kept form of `event` (see the module notes), or undefined when this encoding does not carry it. */
export const encodeKept = (event: ChainEvent): Uint8Array | undefined => (event._tag === "Trade" ? encodeTrade(event, true) : undefined)

/** True when the bytes are in this encoding (any version); JSON never starts with MAGIC. */
export const isBinary = (bytes: Uint8Array): boolean => bytes.length > 0 && bytes[0] === MAGIC

// ---------------------------------------------------------------------------------------------
// Decode: a cursor over the bytes; `pos` becomes -1 at the first malformed field.

let buf: Uint8Array = new Uint8Array(0)
let pos = 0

const readString = (): string => {
  if (pos < 0 || pos >= buf.length) {
    pos = -1
    return ""
  }
  let n = buf[pos]!
  let start = pos + 1
  if (n >= 0x80) {
    if (start >= buf.length) {
      pos = -1
      return ""
    }
    n = ((n & 0x7f) << 8) | buf[start]!
    start++
    if (n < 0x80) {
      pos = -1
      return ""
    }
  }
  const end = start + n
  if (end > buf.length) {
    pos = -1
    return ""
  }
  pos = end
  if (n === 0) return ""
  const text = utf8Slice.call(buf, start, end)
  // Bytes that are not UTF-8 decode to U+FFFD: refused (one value, one encoding). A real U+FFFD passes.
  if (text.indexOf("\uFFFD") >= 0 && !isUtf8(buf.subarray(start, end))) pos = -1
  return text
}

const readBigint = (): bigint => {
  if (pos < 0 || pos >= buf.length) {
    pos = -1
    return 0n
  }
  const header = buf[pos]!
  const count = header & 0x7f
  const start = pos + 1
  const end = start + count
  // Minimal: no leading zero byte, no negative zero.
  if (end > buf.length || (count > 0 && buf[end - 1] === 0) || (count === 0 && header !== 0)) {
    pos = -1
    return 0n
  }
  pos = end
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

/** `kept`: also accepts the kept form's flag. */
const decodeTrade = (kept: boolean): ChainEvent | undefined => {
  if (buf.length < 12) return undefined
  const flags = buf[3]!
  if ((flags & ~(kept ? FLAGS_KNOWN | FLAG_ID_AROUND_SIGNATURE : FLAGS_KNOWN)) !== 0) return undefined
  for (let i = 0; i < 8; i++) f64Bytes[i] = buf[4 + i]!
  const timestampMs = f64[0]!
  if (!Number.isFinite(timestampMs) || Object.is(timestampMs, -0)) return undefined
  pos = 12
  const idHead = readString()
  const idTail = flags & FLAG_ID_AROUND_SIGNATURE ? readString() : undefined
  const position = readString()
  const mint = readString()
  const signature = readString()
  const id = idTail === undefined ? idHead : idHead + signature + idTail
  const trader = readString()
  const amountInRaw = readBigint()
  const amountOutRaw = readBigint()
  const feeRaw = readBigint()
  const refundRaw = readBigint()
  const quoteConsumedRaw = readBigint()
  const quoteReserveRaw = readBigint()
  const tokenReserveRaw = readBigint()
  const realQuoteRaw = readBigint()
  if (pos !== buf.length) return undefined
  return new TradeValue(
    id,
    position,
    flags & FLAG_HOOD ? "hood" : "solana",
    mint,
    timestampMs,
    signature,
    flags & FLAG_POOL ? "pool" : "curve",
    flags & FLAG_SELL ? "sell" : "buy",
    trader,
    amountInRaw,
    amountOutRaw,
    feeRaw,
    refundRaw,
    quoteConsumedRaw,
    quoteReserveRaw,
    tokenReserveRaw,
    realQuoteRaw,
    (flags & FLAG_CROSSES) !== 0
  )
}

/**
 * `new TradeValue(...)`: a `Trade` with the same own keys, key order and prototype as the Schema
 * decoder's result, without its constructor (the decoders' fast paths, JSON and binary; the caller
 * has checked every field). A plain constructor function whose `prototype` is `Trade.prototype`,
 * so V8 gives its objects every field in-object from the first; built with `Object.create` and 19
 * assignments, each object also grew an out-of-object property store step by step.
 */
function tradeFields(
  this: Record<string, unknown>,
  id: string,
  position: string,
  chain: "solana" | "hood",
  mint: string,
  timestampMs: number,
  signature: string,
  venue: "curve" | "pool",
  side: "buy" | "sell",
  trader: string,
  amountInRaw: bigint,
  amountOutRaw: bigint,
  feeRaw: bigint,
  refundRaw: bigint,
  quoteConsumedRaw: bigint,
  quoteReserveRaw: bigint,
  tokenReserveRaw: bigint,
  realQuoteRaw: bigint,
  crossesGraduation: boolean
) {
  this.id = id
  this.position = position
  this.chain = chain
  this.mint = mint
  this.timestampMs = timestampMs
  this.signature = signature
  this.venue = venue
  this.side = side
  this.trader = trader
  this.amountInRaw = amountInRaw
  this.amountOutRaw = amountOutRaw
  this.feeRaw = feeRaw
  this.refundRaw = refundRaw
  this.quoteConsumedRaw = quoteConsumedRaw
  this.quoteReserveRaw = quoteReserveRaw
  this.tokenReserveRaw = tokenReserveRaw
  this.realQuoteRaw = realQuoteRaw
  this.crossesGraduation = crossesGraduation
  this._tag = "Trade"
}
tradeFields.prototype = Trade.prototype
export const TradeValue = tradeFields as unknown as new (...fields: Parameters<typeof tradeFields>) => ChainEvent

/** `kept`: the kept form's flag is accepted too. */
const decode = (bytes: Uint8Array, kept: boolean): ChainEvent | undefined => {
  if (bytes.length < 3 || bytes[0] !== MAGIC || bytes[1] !== VERSION) return undefined
  buf = bytes
  try {
    return bytes[2] === KIND_TRADE ? decodeTrade(kept) : undefined
  } finally {
    buf = EMPTY
  }
}
const EMPTY = new Uint8Array(0)

/** The event binary bytes encode, or undefined when they are malformed or of an unknown version or kind. */
export const decodeBinary = (bytes: Uint8Array): ChainEvent | undefined => decode(bytes, false)

/** The event `encodeKept` (or `encodeBinary`) bytes encode, or undefined when malformed. */
export const decodeKept = (bytes: Uint8Array): ChainEvent | undefined => decode(bytes, true)
