/**
 * The bus codec of `ChainEvent` (ingest/ChainEvent.ts) for every hot path (actors, ClickHouse writer). The Schema
 * decoder costs ~15 µs per event (most of it in the Schema class constructor), which alone would cap
 * the pipeline near 65k events/s; this one costs ~3 µs (JSON.parse included) on JSON values, and
 * the binary encoding of the hot kinds (ChainEventBinary.ts, versioned; Trade) decodes without
 * JSON. Values are JSON or binary by their first byte, so bus data written as JSON still replays.
 *
 * Invariants (pinned by chainEventCodec.test.ts against the Schema decoder, property-based):
 * - It accepts only what the Schema decoder accepts and produces an equal value (same class
 *   prototype, same fields). Anything it does not recognize exactly (an unusual bigint string, a
 *   wrong type, unparseable JSON) goes to the Schema decoder, which has the last word and gives the
 *   parse error. So the contract stays `ChainEvent` in ingest/, this is only a shortcut.
 * - Excess properties are dropped, as the Schema decoder drops them.
 * - `toWire` is the JSON wire encoding as a plain object (bigints as decimal strings): exactly what
 *   `encodeFast` writes, without the Schema machinery. Checkpoints store events this way.
 */
import { Either, ParseResult } from "effect"
import { decodeBinary, encodeBinary, isBinary, MAGIC, TradeValue, VERSION } from "./ChainEventBinary.js"
import {
  type ChainEvent,
  CreatorFeeClaimed,
  CurveCompleted,
  CurveCreated,
  CurveMigrated,
  ChainEvent as ChainEventSchema,
  decodeChainEventStrict,
  MigrationProgress,
  RecoverySnapshot,
  Retracted,
  Trade
} from "./ChainEvent.js"

type Kind =
  | "string"
  | "number"
  | "boolean"
  | "bigint"
  | "nullString"
  | "nullNumber"
  | "stringArray"
  | "optionalString"
  | { readonly literals: ReadonlyArray<string>; readonly nullable: boolean }

const lit = (...literals: ReadonlyArray<string>): Kind => ({ literals, nullable: false })
const nullLit = (...literals: ReadonlyArray<string>): Kind => ({ literals, nullable: true })

const base: Record<string, Kind> = {
  id: "string",
  position: "string",
  chain: lit("solana", "hood"),
  mint: "string",
  timestampMs: "number",
  signature: "string"
}

interface Spec {
  readonly prototype: object
  readonly fields: ReadonlyArray<readonly [string, Kind]>
}

const spec = (ctor: { readonly prototype: object }, fields: Record<string, Kind>): Spec => ({
  prototype: ctor.prototype,
  fields: Object.entries({ ...base, ...fields })
})

const specs: Record<ChainEvent["_tag"], Spec> = {
  CurveCreated: spec(CurveCreated, {
    curve: "string",
    creator: "string",
    quoteMint: "string",
    quoteDecimals: "number",
    decimals: "number",
    virtualQuoteRaw: "bigint",
    thresholdRaw: "bigint",
    supplyRaw: "bigint",
    tokenReserveRaw: "bigint",
    stakerAllocationBps: "number",
    feeBps: "number",
    creatorFeeBps: "number",
    mode: lit("open", "exclusive", "exp-a", "exp-b", "exp-c", "exp-custom"),
    name: "string",
    symbol: "string",
    uri: "string",
    dexVersion: nullLit("v3", "v4"),
    configHash: "nullString"
  }),
  Trade: spec(Trade, {
    venue: lit("curve", "pool"),
    side: lit("buy", "sell"),
    trader: "string",
    amountInRaw: "bigint",
    amountOutRaw: "bigint",
    feeRaw: "bigint",
    refundRaw: "bigint",
    quoteConsumedRaw: "bigint",
    quoteReserveRaw: "bigint",
    tokenReserveRaw: "bigint",
    realQuoteRaw: "bigint",
    crossesGraduation: "boolean"
  }),
  CurveCompleted: spec(CurveCompleted, { curve: "string", realQuoteRaw: "bigint" }),
  CurveMigrated: spec(CurveMigrated, { pool: "nullString", quoteRaw: "bigint", tokensRaw: "bigint", feeBps: "number", dexPool: "optionalString" }),
  MigrationProgress: spec(MigrationProgress, {
    status: lit("in_progress", "delayed", "cancelled"),
    attempts: "number",
    nextAttemptAtMs: "nullNumber",
    gaveUpAtMs: "nullNumber",
    lastError: "nullString"
  }),
  CreatorFeeClaimed: spec(CreatorFeeClaimed, { recipient: "string", amountRaw: "bigint" }),
  Retracted: spec(Retracted, { retractedIds: "stringArray" }),
  RecoverySnapshot: spec(RecoverySnapshot, {
    cause: lit("started", "claimed"),
    curve: "string",
    quoteToken: "string",
    reserveSnapshotRaw: "bigint",
    eligibleSupplyRaw: "bigint",
    surrenderedRaw: "bigint",
    snapshotBlock: "bigint"
  })
}

/** Canonical integer strings only; anything else (spaces, hex, "+1") is left to the Schema decoder. */
const INTEGER = /^-?\d+$/
const MISS = Symbol("miss")
/** An optional field that is absent: the key is left out (exact optional, as the Schema decoder does). */
const ABSENT = Symbol("absent")

const convert = (kind: Kind, value: unknown): unknown => {
  switch (kind) {
    case "string":
      return typeof value === "string" ? value : MISS
    case "number":
      // JSON carries only finite numbers; a non-finite one (possible only in a hand-built object) is not a wire value.
      return typeof value === "number" && Number.isFinite(value) ? value : MISS
    case "boolean":
      return typeof value === "boolean" ? value : MISS
    case "bigint":
      return typeof value === "string" && INTEGER.test(value) ? BigInt(value) : MISS
    case "nullString":
      return value === null || typeof value === "string" ? value : MISS
    case "nullNumber":
      return value === null || (typeof value === "number" && Number.isFinite(value)) ? value : MISS
    case "optionalString":
      return value === undefined ? ABSENT : typeof value === "string" ? value : MISS
    case "stringArray": {
      if (!Array.isArray(value)) return MISS
      for (const item of value) if (typeof item !== "string") return MISS
      return value.slice()
    }
    default:
      if (value === null) return kind.nullable ? null : MISS
      return typeof value === "string" && kind.literals.includes(value) ? value : MISS
  }
}

const hasOwn = Object.prototype.hasOwnProperty

/** A canonical integer string as a bigint, or undefined (the `bigint` kind of `convert`). */
const bigintOf = (value: unknown): bigint | undefined => (typeof value === "string" && INTEGER.test(value) ? BigInt(value) : undefined)

/**
 * `Trade`, the bus's bulk, with its fields named statically: the same checks and the same result
 * as the table-driven path below, measured ~1.8x faster (property accesses by constant name stay
 * monomorphic; by a variable name they do not).
 */
interface TradeWire {
  readonly [key: string]: unknown
  readonly id?: unknown
  readonly position?: unknown
  readonly chain?: unknown
  readonly mint?: unknown
  readonly timestampMs?: unknown
  readonly signature?: unknown
  readonly venue?: unknown
  readonly side?: unknown
  readonly trader?: unknown
  readonly amountInRaw?: unknown
  readonly amountOutRaw?: unknown
  readonly feeRaw?: unknown
  readonly refundRaw?: unknown
  readonly quoteConsumedRaw?: unknown
  readonly quoteReserveRaw?: unknown
  readonly tokenReserveRaw?: unknown
  readonly realQuoteRaw?: unknown
  readonly crossesGraduation?: unknown
}

const tradeFromWire = (r: TradeWire): ChainEvent | undefined => {
  // Plain reads: a parsed object's missing key falls to Object.prototype, which has none of these names.
  const { id, position, chain, mint, timestampMs, signature, venue, side, trader, crossesGraduation } = r
  if (
    typeof id !== "string" ||
    typeof position !== "string" ||
    (chain !== "solana" && chain !== "hood") ||
    typeof mint !== "string" ||
    typeof timestampMs !== "number" ||
    !Number.isFinite(timestampMs) ||
    typeof signature !== "string" ||
    (venue !== "curve" && venue !== "pool") ||
    (side !== "buy" && side !== "sell") ||
    typeof trader !== "string" ||
    typeof crossesGraduation !== "boolean"
  ) {
    return undefined
  }
  const amountInRaw = bigintOf(r.amountInRaw)
  const amountOutRaw = bigintOf(r.amountOutRaw)
  const feeRaw = bigintOf(r.feeRaw)
  const refundRaw = bigintOf(r.refundRaw)
  const quoteConsumedRaw = bigintOf(r.quoteConsumedRaw)
  const quoteReserveRaw = bigintOf(r.quoteReserveRaw)
  const tokenReserveRaw = bigintOf(r.tokenReserveRaw)
  const realQuoteRaw = bigintOf(r.realQuoteRaw)
  if (
    amountInRaw === undefined ||
    amountOutRaw === undefined ||
    feeRaw === undefined ||
    refundRaw === undefined ||
    quoteConsumedRaw === undefined ||
    quoteReserveRaw === undefined ||
    tokenReserveRaw === undefined ||
    realQuoteRaw === undefined
  ) {
    return undefined
  }
  return new TradeValue(
    id,
    position,
    chain,
    mint,
    timestampMs,
    signature,
    venue,
    side,
    trader,
    amountInRaw,
    amountOutRaw,
    feeRaw,
    refundRaw,
    quoteConsumedRaw,
    quoteReserveRaw,
    tokenReserveRaw,
    realQuoteRaw,
    crossesGraduation
  )
}

/** The event a parsed wire object encodes, or undefined when the fast path does not recognize it exactly. */
export const fromWireObject = (input: unknown): ChainEvent | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const record = input as Record<string, unknown>
  const tag = record["_tag"]
  if (tag === "Trade" && hasOwn.call(record, "_tag")) return tradeFromWire(record)
  if (typeof tag !== "string" || !hasOwn.call(specs, tag)) return undefined
  const s = specs[tag as ChainEvent["_tag"]]
  const out = Object.create(s.prototype) as Record<string, unknown>
  for (const [name, kind] of s.fields) {
    const value = convert(kind, hasOwn.call(record, name) ? record[name] : undefined)
    if (value === MISS) return undefined
    if (value !== ABSENT) out[name] = value
  }
  out["_tag"] = tag
  return out as unknown as ChainEvent
}

const utf8 = new TextDecoder()

/** Same contract as `decodeChainEvent`: never throws; `Left` carries the Schema decoder's parse error. */
export const decodeFast = (bytes: Uint8Array): Either.Either<ChainEvent, ParseResult.ParseError> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(utf8.decode(bytes))
  } catch {
    return decodeChainEventStrict(bytes)
  }
  const event = fromWireObject(parsed)
  return event !== undefined ? Either.right(event) : decodeChainEventStrict(bytes)
}

/** The wire form as a plain object (what `encodeChainEvent` serializes): bigints become decimal strings. */
export const toWire = (event: ChainEvent): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(event)) {
    const value = (event as unknown as Record<string, unknown>)[key]
    out[key] = typeof value === "bigint" ? value.toString() : value
  }
  return out
}

const utf8Encoder = new TextEncoder()

/** The JSON bus value of an event: the same JSON `encodeChainEvent` writes (field order aside), ~20x cheaper. */
export const encodeFast = (event: ChainEvent): Uint8Array => utf8Encoder.encode(JSON.stringify(toWire(event)))

/**
 * The bus encoding: the binary form (ChainEventBinary.ts) for the kinds it carries (Trade), JSON
 * (what `encodeChainEventStrict` writes, without the Schema machinery) for the rest.
 */
export const encodeChainEvent = (event: ChainEvent): Uint8Array => encodeBinary(event) ?? encodeFast(event)

const binaryRefused = (bytes: Uint8Array): ParseResult.ParseError =>
  ParseResult.parseError(
    new ParseResult.Type(
      ChainEventSchema.ast,
      bytes,
      bytes[1] === VERSION ? "malformed binary ChainEvent" : `binary ChainEvent of unknown version ${bytes[1] ?? "(none)"}`
    )
  )

/**
 * Decodes a bus value in either encoding: binary (first byte MAGIC) without JSON, else JSON by the
 * fast path with the Schema decoder's verdict for anything unusual. Never throws.
 */
export const decodeChainEvent = (bytes: Uint8Array): Either.Either<ChainEvent, ParseResult.ParseError> => {
  if (bytes.length > 0 && bytes[0] === MAGIC) {
    const event = decodeBinary(bytes)
    return event !== undefined ? Either.right(event) : Either.left(binaryRefused(bytes))
  }
  return decodeFast(bytes)
}

export { isBinary }
