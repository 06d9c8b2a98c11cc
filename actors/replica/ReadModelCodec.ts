/**
 * The bytes of the read-model topics (docs/architecture.md, "Roles"). What a reader of them needs
 * of a market is its `MarketCore` (the API replicas publish it into their index, the cluster
 * keeper takes the completed ones); the retract window is the actors' own (their checkpoints keep
 * it), so the topics carry the core alone and a decoded state has `window: null`.
 *
 * - `market.snapshots`: one market's latest core per record, keyed by the market; an empty value
 *   is a tombstone (the market is gone).
 * - `market.feed`: one actors drain per record, or several past `FEED_RECORD_MAX_BYTES` (its
 *   changed markets in drain order, each market's key and the same value as its snapshot). A
 *   drain's snapshot values are views of its feed record's bytes: each core is encoded once.
 *
 * Format (version 1; integers little-endian; fields as `ingest/BinaryFields.ts` writes them):
 *   [0] 0x02 MAGIC (a JSON text never starts with it), [1] VERSION, [2] kind: 1 core, 2 feed
 *   core: flags u16 (`F_*` below), lifecycle u8, migration status u8, mode u8, dex version u8
 *     (0 none, 1 v3, 2 v4), then the fields in `MarketCore`'s order: strings, bigints, f64 for the
 *     times, uint for counts, bps and decimals, a field the flags say is absent or null not
 *     written, each trade window as a count and its slots, the recent traders as a count and its
 *     numbers. `priceFloat` is derived and recomputed on decoding (`priceFloatOf`).
 *   feed: entries to the end, each: key form u8 (1: the key as a string field; 2: a key that is
 *     not well-formed UTF-16 or is over 0x7fff bytes, as a uint length and the UTF-8 of its JSON string), the value's
 *     length u32 and the value (empty, a core record, or the version-1 JSON text below).
 *   A core this format cannot carry (a string over 0x7fff bytes, a count or bps that is not a
 *   non-negative safe integer, a non-finite time) goes as the checkpoint codec's JSON text of
 *   `{core, window: null}` instead, and is decoded as such: it carries what the checkpoints carry
 *   (every core the actors make; their times are finite, as the bus's JSON is).
 *
 * Records written before this format (JSON: a snapshot was the checkpoint codec's text of the
 * whole state, a feed record `[[key, text | null], ...]`) still decode: the topics are read from
 * their log start and keep them until retention or compaction drops them.
 *
 * Decoding throws on bytes it did not write (a record from another writer, or corrupt): the
 * follower logs and skips such a record, never guessing.
 */
import { CurveMode } from "../../ingest/ChainEvent.js"
import {
  BIGINT_MAX_BYTES,
  FieldReader,
  isWellFormed,
  STRING_BYTES_PER_UNIT,
  UINT_MAX_BYTES,
  writeBigint,
  writeF64,
  writeString,
  writeUint,
  writeUtf8
} from "../../ingest/BinaryFields.js"
import type { Slot } from "../market/internal/tradeWindows.js"
import {
  type Lifecycle,
  type MarketCore,
  type MarketIdentity,
  type MarketParams,
  type MarketState,
  type Migration,
  type MigrationStatus,
  type Pool,
  priceFloatAt,
  type Recovery,
  type TradeStats
} from "../market/MarketActor.js"
import { decodeMarketState, encodeMarketState } from "../market/MarketCodec.js"
import type { CurveState } from "../../src/domain/CurveMath.js"

/** The key of every `market.feed` record: one key, so one partition holds the whole feed in one order. */
export const FEED_KEY = "feed"

export type MarketChange = readonly [key: string, state: MarketState | undefined]

/**
 * The most bytes one `market.feed` record carries. A drain (up to `drainMax` markets) or a
 * partition's reload (every checkpoint it holds) can hold megabytes of states, and the buses refuse
 * a record over 1 MiB, a refusal the publisher would retry forever; so the change list goes out as
 * several records, in order, each at most this (a quarter of the bound, leaving room for a batch's
 * other records). A replica applies each record's changes as it reads them, so a split drain is
 * only seen a record at a time, each market's state whole. One change larger than this alone still
 * goes out alone.
 */
export const FEED_RECORD_MAX_BYTES = 256 * 1024

export const MAGIC = 0x02
export const VERSION = 1
const KIND_CORE = 1
const KIND_FEED = 2
const KEY_STRING = 1
const KEY_JSON = 2

const F_HOOD = 1 << 0
const F_COMPLETE = 1 << 1
const F_POOL = 1 << 2
const F_POOL_ADDRESS = 1 << 3
const F_DEX_POOL = 1 << 4
const F_MIGRATED_POSITION = 1 << 5
const F_COMPLETED_POSITION = 1 << 6
const F_RECOVERY = 1 << 7
const F_CONFIG_HASH = 1 << 8
const F_NEXT_ATTEMPT = 1 << 9
const F_GAVE_UP = 1 << 10
const F_LAST_ERROR = 1 << 11
const F_MIGRATED_AT = 1 << 12
const F_LAST_TRADE_AT = 1 << 13
const F_KNOWN = (1 << 14) - 1

const LIFECYCLES: ReadonlyArray<Lifecycle> = ["trading", "completed", "migrated", "recovery"]
const STATUSES: ReadonlyArray<MigrationStatus> = ["not_started", "in_progress", "completed", "delayed", "cancelled"]
const MODES: ReadonlyArray<CurveMode> = CurveMode.literals
const DEX_VERSIONS: ReadonlyArray<MarketIdentity["dexVersion"]> = [null, "v3", "v4"]

/** Compile-time: every field of `T` is one of `K` (a field added to the core fails the build here until the codec carries it). */
type Covers<T, K extends keyof T> = [Exclude<keyof T, K>] extends [never] ? true : false
const covered: [
  Covers<MarketCore, "chain" | "mint" | "lastPosition" | "lastEventAtMs" | "identity" | "params" | "curveState" | "lifecycle" | "migration" | "pool" | "migratedPosition" | "completedPosition" | "stats" | "creatorFeesClaimedRaw" | "recovery" | "priceFloat">,
  Covers<MarketIdentity, "curveAddress" | "creator" | "quoteMint" | "quoteDecimals" | "decimals" | "name" | "symbol" | "uri" | "mode" | "dexVersion" | "configHash" | "createdPosition" | "createdAtMs" | "createdSignature">,
  Covers<MarketParams, "virtualQuoteRaw" | "thresholdRaw" | "supplyRaw" | "tokenReserveRaw" | "stakerAllocationBps" | "feeBps" | "creatorFeeBps">,
  Covers<CurveState, "virtualQuoteRaw" | "virtualTokenRaw" | "realQuoteRaw" | "complete">,
  Covers<Migration, "status" | "attempts" | "nextAttemptAtMs" | "gaveUpAtMs" | "lastError" | "migratedAtMs">,
  Covers<Pool, "address" | "dexPool" | "feeBps" | "quoteReserveRaw" | "tokenReserveRaw">,
  Covers<TradeStats, "tradesTotal" | "buysTotal" | "volumeTotalRaw" | "lastTradeAtMs" | "fiveMinutes" | "hours" | "recentTraders">,
  Covers<Slot, "slot" | "volumeRaw" | "trades" | "buys">,
  Covers<Recovery, "curve" | "quoteToken" | "reserveSnapshotRaw" | "eligibleSupplyRaw" | "surrenderedRaw" | "snapshotBlock">
] = [true, true, true, true, true, true, true, true, true]
void covered

// ---------------------------------------------------------------------------------------------
// Encode

/**
 * The drain's bytes are written here, then each feed record copied out of it once (the snapshots
 * are views of that copy). Grown for a larger record; shrunk back after a drain past 1 MiB.
 */
const SCRATCH_BYTES = 64 * 1024
let scratch = new Uint8Array(SCRATCH_BYTES)

const ensure = (at: number, room: number): void => {
  if (at + room <= scratch.length) return
  const grown = new Uint8Array(Math.max(scratch.length * 2, at + room))
  grown.set(scratch.subarray(0, at))
  scratch = grown
}

/** An upper bound of the bytes `writeCore` may use for `core`. */
const roomFor = (core: MarketCore): number => {
  const id = core.identity
  let chars =
    core.mint.length +
    core.lastPosition.length +
    id.curveAddress.length +
    id.creator.length +
    id.quoteMint.length +
    id.name.length +
    id.symbol.length +
    id.uri.length +
    (id.configHash?.length ?? 0) +
    id.createdPosition.length +
    id.createdSignature.length +
    (core.migration.lastError?.length ?? 0) +
    (core.migratedPosition?.length ?? 0) +
    (core.completedPosition?.length ?? 0)
  if (core.pool !== null) chars += (core.pool.address?.length ?? 0) + (core.pool.dexPool?.length ?? 0)
  if (core.recovery !== undefined) chars += core.recovery.curve.length + core.recovery.quoteToken.length
  const s = core.stats
  const slots = s.fiveMinutes.length + s.hours.length
  return 16 + 20 * 2 + chars * STRING_BYTES_PER_UNIT + 16 * BIGINT_MAX_BYTES + 16 * UINT_MAX_BYTES + 6 * 8 + slots * (3 * UINT_MAX_BYTES + BIGINT_MAX_BYTES) + (s.recentTraders.length + 3) * UINT_MAX_BYTES
}

const writeSlots = (out: Uint8Array, slots: ReadonlyArray<Slot>, at: number): number => {
  let p = writeUint(out, slots.length, at)
  for (let i = 0; i < slots.length && p >= 0; i++) {
    const x = slots[i]!
    p = writeUint(out, x.slot, p)
    p = writeBigint(out, x.volumeRaw, p)
    p = writeUint(out, x.trades, p)
    p = writeUint(out, x.buys, p)
  }
  return p
}

const flagsOf = (core: MarketCore): number => {
  const { pool, migration: m, recovery } = core
  return (
    (core.chain === "hood" ? F_HOOD : 0) |
    (core.curveState.complete ? F_COMPLETE : 0) |
    (pool !== null ? F_POOL : 0) |
    (pool !== null && pool.address !== null ? F_POOL_ADDRESS : 0) |
    (pool !== null && pool.dexPool !== undefined ? F_DEX_POOL : 0) |
    (core.migratedPosition !== null ? F_MIGRATED_POSITION : 0) |
    (core.completedPosition !== undefined ? F_COMPLETED_POSITION : 0) |
    (recovery !== undefined ? F_RECOVERY : 0) |
    (core.identity.configHash !== null ? F_CONFIG_HASH : 0) |
    (m.nextAttemptAtMs !== null ? F_NEXT_ATTEMPT : 0) |
    (m.gaveUpAtMs !== null ? F_GAVE_UP : 0) |
    (m.lastError !== null ? F_LAST_ERROR : 0) |
    (m.migratedAtMs !== null ? F_MIGRATED_AT : 0) |
    (core.stats.lastTradeAtMs !== null ? F_LAST_TRADE_AT : 0)
  )
}

/** Writes `core`'s record at `at` (room: `roomFor`); returns the next position, or -1 when this format cannot carry it. */
const writeCore = (out: Uint8Array, core: MarketCore, at: number): number => {
  const id = core.identity
  const lifecycle = LIFECYCLES.indexOf(core.lifecycle)
  const status = STATUSES.indexOf(core.migration.status)
  const mode = MODES.indexOf(id.mode)
  const dex = DEX_VERSIONS.indexOf(id.dexVersion)
  if (lifecycle < 0 || status < 0 || mode < 0 || dex < 0 || (core.chain !== "hood" && core.chain !== "solana")) return -1
  const flags = flagsOf(core)
  out[at] = MAGIC
  out[at + 1] = VERSION
  out[at + 2] = KIND_CORE
  out[at + 3] = flags & 0xff
  out[at + 4] = flags >>> 8
  out[at + 5] = lifecycle
  out[at + 6] = status
  out[at + 7] = mode
  out[at + 8] = dex
  let p = writeString(out, core.mint, at + 9)
  p = writeString(out, core.lastPosition, p)
  p = writeF64(out, core.lastEventAtMs, p)
  // identity
  p = writeString(out, id.curveAddress, p)
  p = writeString(out, id.creator, p)
  p = writeString(out, id.quoteMint, p)
  p = writeUint(out, id.quoteDecimals, p)
  p = writeUint(out, id.decimals, p)
  p = writeString(out, id.name, p)
  p = writeString(out, id.symbol, p)
  p = writeString(out, id.uri, p)
  if (id.configHash !== null) p = writeString(out, id.configHash, p)
  p = writeString(out, id.createdPosition, p)
  p = writeF64(out, id.createdAtMs, p)
  p = writeString(out, id.createdSignature, p)
  // params, curve state
  const params = core.params
  p = writeBigint(out, params.virtualQuoteRaw, p)
  p = writeBigint(out, params.thresholdRaw, p)
  p = writeBigint(out, params.supplyRaw, p)
  p = writeBigint(out, params.tokenReserveRaw, p)
  p = writeUint(out, params.stakerAllocationBps, p)
  p = writeUint(out, params.feeBps, p)
  p = writeUint(out, params.creatorFeeBps, p)
  p = writeBigint(out, core.curveState.virtualQuoteRaw, p)
  p = writeBigint(out, core.curveState.virtualTokenRaw, p)
  p = writeBigint(out, core.curveState.realQuoteRaw, p)
  // migration
  const m = core.migration
  p = writeUint(out, m.attempts, p)
  if (m.nextAttemptAtMs !== null) p = writeF64(out, m.nextAttemptAtMs, p)
  if (m.gaveUpAtMs !== null) p = writeF64(out, m.gaveUpAtMs, p)
  if (m.lastError !== null) p = writeString(out, m.lastError, p)
  if (m.migratedAtMs !== null) p = writeF64(out, m.migratedAtMs, p)
  // pool, positions
  const pool = core.pool
  if (pool !== null) {
    if (pool.address !== null) p = writeString(out, pool.address, p)
    if (pool.dexPool !== undefined) p = writeString(out, pool.dexPool, p)
    p = writeUint(out, pool.feeBps, p)
    p = writeBigint(out, pool.quoteReserveRaw, p)
    p = writeBigint(out, pool.tokenReserveRaw, p)
  }
  if (core.migratedPosition !== null) p = writeString(out, core.migratedPosition, p)
  if (core.completedPosition !== undefined) p = writeString(out, core.completedPosition, p)
  // stats
  const s = core.stats
  p = writeUint(out, s.tradesTotal, p)
  p = writeUint(out, s.buysTotal, p)
  p = writeBigint(out, s.volumeTotalRaw, p)
  if (s.lastTradeAtMs !== null) p = writeF64(out, s.lastTradeAtMs, p)
  p = writeSlots(out, s.fiveMinutes, p)
  p = writeSlots(out, s.hours, p)
  p = writeUint(out, s.recentTraders.length, p)
  for (let i = 0; i < s.recentTraders.length && p >= 0; i++) p = writeUint(out, s.recentTraders[i]!, p)
  p = writeBigint(out, core.creatorFeesClaimedRaw, p)
  const r = core.recovery
  if (r !== undefined) {
    p = writeString(out, r.curve, p)
    p = writeString(out, r.quoteToken, p)
    p = writeBigint(out, r.reserveSnapshotRaw, p)
    p = writeBigint(out, r.eligibleSupplyRaw, p)
    p = writeBigint(out, r.surrenderedRaw, p)
    p = writeBigint(out, r.snapshotBlock, p)
  }
  return p
}

/** Writes the value of `state` at `at` (the core record, its JSON text when the record cannot carry it, or nothing for a tombstone); returns the next position. */
const writeValue = (state: MarketState | undefined, at: number): number => {
  const core = state?.core
  if (core === undefined) return at
  ensure(at, roomFor(core))
  const p = writeCore(scratch, core, at)
  if (p >= 0) return p
  const text = encodeMarketState({ core, window: null })
  ensure(at, text.length * STRING_BYTES_PER_UNIT)
  return at + writeUtf8(scratch, text, at)
}

const EMPTY = new Uint8Array(0)

/** The `market.snapshots` value of `state` (empty for a tombstone). */
export const encodeSnapshot = (state: MarketState | undefined): Uint8Array => {
  const end = writeValue(state, 0)
  return end === 0 ? EMPTY : scratch.slice(0, end)
}

const writeKey = (key: string, at: number): number => {
  ensure(at, 3 + key.length * STRING_BYTES_PER_UNIT)
  if (isWellFormed.call(key)) {
    scratch[at] = KEY_STRING
    const p = writeString(scratch, key, at + 1)
    if (p >= 0) return p
  }
  const json = JSON.stringify(key)
  ensure(at, 1 + UINT_MAX_BYTES + json.length * STRING_BYTES_PER_UNIT)
  scratch[at] = KEY_JSON
  const bytes = Buffer.byteLength(json, "utf8")
  const p = writeUint(scratch, bytes, at + 1)
  return p + writeUtf8(scratch, json, p)
}

interface Drain {
  readonly feeds: ReadonlyArray<Uint8Array>
  readonly snapshots: ReadonlyArray<{ readonly key: string; readonly value: Uint8Array }>
}

/**
 * One drain's records: its `market.feed` values (one, or several in order past `maxFeedBytes`) and
 * each market's `market.snapshots` value, every core encoded once for both (the drain is on the
 * actors' hot path): the entries are written into the scratch, each record copied out once, and
 * the snapshot values are views of their record's bytes.
 */
export const encodeDrain = (changes: ReadonlyArray<MarketChange>, maxFeedBytes: number = FEED_RECORD_MAX_BYTES): Drain => {
  const feeds: Array<Uint8Array> = []
  const snapshots: Array<{ readonly key: string; readonly value: Uint8Array }> = new Array(changes.length)
  // Per change of the open record: where its value starts and ends in the scratch.
  const starts: Array<number> = []
  const ends: Array<number> = []
  let first = 0 // the open record's first change
  const header = (): number => {
    scratch[0] = MAGIC
    scratch[1] = VERSION
    scratch[2] = KIND_FEED
    return 3
  }
  const cut = (upTo: number, at: number) => {
    const record = scratch.slice(0, at)
    feeds.push(record)
    for (let i = first; i < upTo; i++) {
      const [key] = changes[i]!
      snapshots[i] = { key, value: starts[i - first] === ends[i - first] ? EMPTY : record.subarray(starts[i - first], ends[i - first]) }
    }
    first = upTo
    starts.length = 0
    ends.length = 0
  }
  ensure(0, 3)
  let at = header()
  for (let i = 0; i < changes.length; i++) {
    const [key, state] = changes[i]!
    const entryStart = at
    at = writeKey(key, at)
    ensure(at, 4)
    const valueStart = at + 4
    const valueEnd = writeValue(state, valueStart)
    const length = valueEnd - valueStart
    scratch[at] = length & 0xff
    scratch[at + 1] = (length >>> 8) & 0xff
    scratch[at + 2] = (length >>> 16) & 0xff
    scratch[at + 3] = length >>> 24
    at = valueEnd
    if (i > first && at > maxFeedBytes) {
      // This entry starts the next record: the open one ends before it, and the entry moves up behind a new header.
      cut(i, entryStart)
      scratch.copyWithin(3, entryStart, at)
      const shift = entryStart - 3
      at -= shift
      starts.push(valueStart - shift)
      ends.push(valueEnd - shift)
    } else {
      starts.push(valueStart)
      ends.push(valueEnd)
    }
  }
  if (changes.length > first) cut(changes.length, at)
  if (scratch.length > 16 * SCRATCH_BYTES) scratch = new Uint8Array(SCRATCH_BYTES)
  return { feeds, snapshots }
}

// ---------------------------------------------------------------------------------------------
// Decode

const decoder = new TextDecoder("utf-8", { fatal: true })
const coreReader = new FieldReader()
const feedReader = new FieldReader()

const readSlots = (r: FieldReader): ReadonlyArray<Slot> => {
  const count = r.uint()
  const slots: Array<Slot> = []
  for (let i = 0; i < count && r.pos >= 0; i++) {
    const slot = r.uint()
    const volumeRaw = r.bigint()
    const trades = r.uint()
    const buys = r.uint()
    slots.push({ slot, volumeRaw, trades, buys })
  }
  return slots
}

const enumAt = <A>(values: ReadonlyArray<A>, index: number | undefined, what: string): A => {
  if (index === undefined || index >= values.length) throw new Error(`a read-model core has an unknown ${what}`)
  return values[index]!
}

/** The core a core record (`[MAGIC, VERSION, KIND_CORE, ...]`) carries; throws on anything else. */
const readCore = (bytes: Uint8Array): MarketCore => {
  if (bytes.length < 9 || bytes[0] !== MAGIC || bytes[1] !== VERSION || bytes[2] !== KIND_CORE) throw new Error("not a version 1 read-model core")
  const flags = bytes[3]! | (bytes[4]! << 8)
  if ((flags & ~F_KNOWN) !== 0) throw new Error("a read-model core has unknown flags")
  const lifecycle = enumAt(LIFECYCLES, bytes[5], "lifecycle")
  const status = enumAt(STATUSES, bytes[6], "migration status")
  const mode = enumAt(MODES, bytes[7], "mode")
  const dexVersion = enumAt(DEX_VERSIONS, bytes[8], "dex version")
  const r = coreReader
  r.reset(bytes, 9)
  try {
    const mint = r.string()
    const lastPosition = r.string()
    const lastEventAtMs = r.f64()
    const curveAddress = r.string()
    const creator = r.string()
    const quoteMint = r.string()
    const quoteDecimals = r.uint()
    const decimals = r.uint()
    const name = r.string()
    const symbol = r.string()
    const uri = r.string()
    const configHash = flags & F_CONFIG_HASH ? r.string() : null
    const createdPosition = r.string()
    const createdAtMs = r.f64()
    const createdSignature = r.string()
    const identity: MarketIdentity = { curveAddress, creator, quoteMint, quoteDecimals, decimals, name, symbol, uri, mode, dexVersion, configHash, createdPosition, createdAtMs, createdSignature }
    const params: MarketParams = {
      virtualQuoteRaw: r.bigint(),
      thresholdRaw: r.bigint(),
      supplyRaw: r.bigint(),
      tokenReserveRaw: r.bigint(),
      stakerAllocationBps: r.uint(),
      feeBps: r.uint(),
      creatorFeeBps: r.uint()
    }
    const curveState: CurveState = { virtualQuoteRaw: r.bigint(), virtualTokenRaw: r.bigint(), realQuoteRaw: r.bigint(), complete: (flags & F_COMPLETE) !== 0 }
    const migration: Migration = {
      status,
      attempts: r.uint(),
      nextAttemptAtMs: flags & F_NEXT_ATTEMPT ? r.f64() : null,
      gaveUpAtMs: flags & F_GAVE_UP ? r.f64() : null,
      lastError: flags & F_LAST_ERROR ? r.string() : null,
      migratedAtMs: flags & F_MIGRATED_AT ? r.f64() : null
    }
    let pool: Pool | null = null
    if (flags & F_POOL) {
      const address = flags & F_POOL_ADDRESS ? r.string() : null
      const dexPool = flags & F_DEX_POOL ? r.string() : undefined
      const feeBps = r.uint()
      const quoteReserveRaw = r.bigint()
      const tokenReserveRaw = r.bigint()
      pool = dexPool === undefined ? { address, feeBps, quoteReserveRaw, tokenReserveRaw } : { address, dexPool, feeBps, quoteReserveRaw, tokenReserveRaw }
    } else if (flags & (F_POOL_ADDRESS | F_DEX_POOL)) throw new Error("a read-model core has pool fields without a pool")
    const migratedPosition = flags & F_MIGRATED_POSITION ? r.string() : null
    const completedPosition = flags & F_COMPLETED_POSITION ? r.string() : undefined
    const tradesTotal = r.uint()
    const buysTotal = r.uint()
    const volumeTotalRaw = r.bigint()
    const lastTradeAtMs = flags & F_LAST_TRADE_AT ? r.f64() : null
    const fiveMinutes = readSlots(r)
    const hours = readSlots(r)
    const traders = r.uint()
    const recentTraders: Array<number> = []
    for (let i = 0; i < traders && r.pos >= 0; i++) recentTraders.push(r.uint())
    const stats: TradeStats = { tradesTotal, buysTotal, volumeTotalRaw, lastTradeAtMs, fiveMinutes, hours, recentTraders }
    const creatorFeesClaimedRaw = r.bigint()
    const recovery: Recovery | undefined =
      flags & F_RECOVERY
        ? { curve: r.string(), quoteToken: r.string(), reserveSnapshotRaw: r.bigint(), eligibleSupplyRaw: r.bigint(), surrenderedRaw: r.bigint(), snapshotBlock: r.bigint() }
        : undefined
    if (r.pos !== bytes.length) throw new Error("a read-model core is malformed")
    // Built once, its derived price computed from the parts (`priceFloatOf`'s definition).
    return {
      chain: flags & F_HOOD ? "hood" : "solana",
      mint,
      lastPosition,
      lastEventAtMs,
      identity,
      params,
      curveState,
      lifecycle,
      migration,
      pool,
      migratedPosition,
      ...(completedPosition === undefined ? {} : { completedPosition }),
      stats,
      creatorFeesClaimedRaw,
      ...(recovery === undefined ? {} : { recovery }),
      priceFloat: priceFloatAt(lifecycle, pool, curveState, identity)
    }
  } finally {
    r.clear()
  }
}

/** A snapshot's or a feed entry's value: empty (a tombstone), a core record, or a version-1 JSON state. */
const decodeValue = (bytes: Uint8Array): MarketState | undefined => {
  if (bytes.byteLength === 0) return undefined
  if (bytes[0] === MAGIC) return { core: readCore(bytes), window: null }
  const core = decodeMarketState(decoder.decode(bytes)).core
  return core === undefined ? undefined : { core, window: null }
}

export const decodeSnapshot = (bytes: Uint8Array): MarketState | undefined => decodeValue(bytes)

/** The changes of a `market.feed` record; throws on a record this codec did not write. */
export const decodeFeedRecord = (bytes: Uint8Array): ReadonlyArray<MarketChange> => {
  if (bytes.length > 0 && bytes[0] !== MAGIC) return decodeJsonFeedRecord(bytes)
  if (bytes.length < 3 || bytes[1] !== VERSION || bytes[2] !== KIND_FEED) throw new Error("a market.feed record is not a version 1 feed record")
  const r = feedReader
  r.reset(bytes, 3)
  try {
    const changes: Array<MarketChange> = []
    while (r.pos >= 0 && r.pos < bytes.length) {
      const form = r.u8()
      let key: string
      if (form === KEY_STRING) key = r.string()
      else if (form === KEY_JSON) {
        const n = r.uint()
        if (r.pos < 0 || r.pos + n > bytes.length) throw new Error("a market.feed record is malformed")
        const parsed: unknown = JSON.parse(decoder.decode(bytes.subarray(r.pos, r.pos + n)))
        if (typeof parsed !== "string") throw new Error("a market.feed key is not a string")
        key = parsed
        r.pos += n
      } else throw new Error("a market.feed entry has an unknown key form")
      const at = r.pos
      if (at < 0 || at + 4 > bytes.length) throw new Error("a market.feed record is malformed")
      const length = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! * 0x1000000)
      const end = at + 4 + length
      if (end > bytes.length) throw new Error("a market.feed record is malformed")
      changes.push([key, decodeValue(bytes.subarray(at + 4, end))])
      r.pos = end
    }
    if (r.pos !== bytes.length) throw new Error("a market.feed record is malformed")
    return changes
  } finally {
    r.clear()
  }
}

/** A feed record written before the binary format: `[[key, text | null], ...]`. */
const decodeJsonFeedRecord = (bytes: Uint8Array): ReadonlyArray<MarketChange> => {
  const parsed: unknown = JSON.parse(decoder.decode(bytes))
  if (!Array.isArray(parsed)) throw new Error("a market.feed record is not an array")
  return parsed.map((pair: unknown): MarketChange => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || (pair[1] !== null && typeof pair[1] !== "string")) {
      throw new Error("a market.feed entry is not [key, state | null]")
    }
    const core = pair[1] === null ? undefined : decodeMarketState(pair[1]).core
    return [pair[0], core === undefined ? undefined : { core, window: null }]
  })
}
