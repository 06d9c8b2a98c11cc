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
import { FieldReader, writeBigint, writeF64, writeString } from "./BinaryFields.js"
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
  // JSON has no negative zero: the Schema codec's value is 0 (writeF64 writes it so).
  let p = writeF64(slab, e.timestampMs, start + 4)
  if (around < 0) p = writeString(slab, e.id, p)
  else {
    p = writeString(slab, e.id.slice(0, around), p)
    p = writeString(slab, e.id.slice(around + e.signature.length), p)
  }
  p = writeString(slab, e.position, p)
  p = writeString(slab, e.mint, p)
  p = writeString(slab, e.signature, p)
  p = writeString(slab, e.trader, p)
  p = writeBigint(slab, e.amountInRaw, p)
  p = writeBigint(slab, e.amountOutRaw, p)
  p = writeBigint(slab, e.feeRaw, p)
  p = writeBigint(slab, e.refundRaw, p)
  p = writeBigint(slab, e.quoteConsumedRaw, p)
  p = writeBigint(slab, e.quoteReserveRaw, p)
  p = writeBigint(slab, e.tokenReserveRaw, p)
  p = writeBigint(slab, e.realQuoteRaw, p)
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

const reader = new FieldReader()

/** `kept`: also accepts the kept form's flag. */
const decodeTrade = (buf: Uint8Array, kept: boolean): ChainEvent | undefined => {
  if (buf.length < 12) return undefined
  const flags = buf[3]!
  if ((flags & ~(kept ? FLAGS_KNOWN | FLAG_ID_AROUND_SIGNATURE : FLAGS_KNOWN)) !== 0) return undefined
  const r = reader
  r.reset(buf, 4)
  const timestampMs = r.f64()
  const idHead = r.string()
  const idTail = flags & FLAG_ID_AROUND_SIGNATURE ? r.string() : undefined
  const position = r.string()
  const mint = r.string()
  const signature = r.string()
  const id = idTail === undefined ? idHead : idHead + signature + idTail
  const trader = r.string()
  const amountInRaw = r.bigint()
  const amountOutRaw = r.bigint()
  const feeRaw = r.bigint()
  const refundRaw = r.bigint()
  const quoteConsumedRaw = r.bigint()
  const quoteReserveRaw = r.bigint()
  const tokenReserveRaw = r.bigint()
  const realQuoteRaw = r.bigint()
  if (r.pos !== buf.length) return undefined
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
  try {
    return bytes[2] === KIND_TRADE ? decodeTrade(bytes, kept) : undefined
  } finally {
    reader.clear()
  }
}

/** The event binary bytes encode, or undefined when they are malformed or of an unknown version or kind. */
export const decodeBinary = (bytes: Uint8Array): ChainEvent | undefined => decode(bytes, false)

/** The event `encodeKept` (or `encodeBinary`) bytes encode, or undefined when malformed. */
export const decodeKept = (bytes: Uint8Array): ChainEvent | undefined => decode(bytes, true)
