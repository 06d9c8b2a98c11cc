/**
 * The trades writer: consumes `chain.events` in the bus group `clickhouse`, buffers `Trade` and
 * `Retracted` events and writes them to `trades` in batches (`batchRows`, default 5,000, or
 * every `flushIntervalMs`, default 250), committing a bus batch only after everything in it was
 * inserted.
 *
 * Invariants (the dedupe guarantee):
 * - `trades` holds each trade id once when read with FINAL (the table collapses copies), and
 *   the writer inserts an id at most once per incarnation whenever it can tell: copies within a
 *   flush and ids it inserted recently (`recentIdsMax`, in memory) are dropped; every other id
 *   is looked up in `trades` (by its mint and time, so the lookup reads only those granules)
 *   and dropped when stored. The candle view then counts each trade once.
 * - When a stored id is met again (a redelivery after a crash, an insert retried after an
 *   ambiguous failure) or a stored trade is retracted, the writer cannot know what the view
 *   counted, so it marks that minute in `candles_1m_dirty` before inserting anything; candle
 *   reads recompute marked minutes from `trades FINAL`. Candles are therefore exact for every
 *   minute, whatever the delivery history (see `queries/Candles.ts`).
 * - `Retracted` inserts, for each live stored trade it names, a copy with `retracted = 1` and a
 *   higher version; a trade it names that is still in the same flush is simply not inserted.
 *   A trade re-included later with the same id is inserted again with a higher version.
 * - Versions are a hybrid logical clock: `max(last + 1, nowMs << 20)`, started from the
 *   table's max version, so they grow in bus order within a process and across restarts.
 * - Bounded: at most `maxBufferedRows` events are buffered; a bus batch waits for room and
 *   for its flush, so when ClickHouse is slow or down the partition stops pulling
 *   (backpressure) instead of growing memory. A flush is retried `flushAttemptsMax` times
 *   with capped backoff; then the bus batch fails and the bus redelivers it (capped backoff,
 *   forever), so nothing is skipped.
 * - Closing the scope stops the consumers, flushes the buffer and commits the offsets of the
 *   bus batches whose events were all written, so a clean restart redelivers nothing.
 * - An event that does not decode, or a trade ClickHouse could not store (negative amount,
 *   empty id, ...), is logged and skipped: one poison record must not stall its partition.
 */
import { Clock, Context, Deferred, Effect, Either, Layer, type Scope } from "effect"
import { Bus, type BusBatch, type BusError, Topics } from "../../ingest/bus/Bus.js"
import { type Retracted, type Trade } from "../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { ClickHouse, type ClickHouseShape } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"
import { batcherSettings, type BatcherStats, makeBatcher } from "./internal/Batcher.js"
import { chunkByBytes, chunkRows, insertSplitting } from "./internal/insert.js"
import { formatTs, invalidTrade, minuteOf, parseTs, tradeInsertColumns, type TradeRow, tradeRow } from "./TradeRow.js"

export interface TradeWriterOptions {
  /** Bus consumer group (default `clickhouse`). */
  readonly group: string
  /** Bus topic (default `chain.events`). */
  readonly topic: string
  /** Where a partition with no committed offset starts (default true: the whole log). */
  readonly fromBeginning: boolean
  /** Records per bus batch (default 1,000); at most `maxBufferedRows`. */
  readonly busMaxBatch: number
  /** Events per insert, and the size that triggers a flush (default 5,000). */
  readonly batchRows: number
  /** The longest an event waits for its flush, in ms (default 250). */
  readonly flushIntervalMs: number
  /** Bound on buffered events (default 20,000). */
  readonly maxBufferedRows: number
  /** Attempts per flush before the bus batch fails and is redelivered (default 5). */
  readonly flushAttemptsMax: number
  /** Attempts per flush at close (default 3). */
  readonly closeFlushAttemptsMax: number
  /** Retry backoff: first delay and cap, in ms (defaults 20 and 2,000). */
  readonly retryBaseMs: number
  readonly retryMaxDelayMs: number
  /** Ids remembered as written, to drop redelivered copies without a lookup (default 100,000). */
  readonly recentIdsMax: number
}

export const tradeWriterDefaults: TradeWriterOptions = {
  group: "clickhouse",
  topic: Topics.chainEvents,
  fromBeginning: true,
  busMaxBatch: 1_000,
  batchRows: 5_000,
  flushIntervalMs: 250,
  maxBufferedRows: 20_000,
  flushAttemptsMax: 5,
  closeFlushAttemptsMax: 3,
  retryBaseMs: 20,
  retryMaxDelayMs: 2_000,
  recentIdsMax: 100_000
}

export interface TradeWriterStats extends BatcherStats {
  /** Trades inserted (first incarnations and re-inclusions). */
  readonly tradesInserted: number
  /** Copies dropped in memory (same flush, or a recently written id). */
  readonly duplicatesDropped: number
  /** Copies dropped because `trades` already held them (their minutes marked dirty). */
  readonly duplicatesFoundStored: number
  /** Retraction rows inserted (one per live stored trade a `Retracted` named). */
  readonly retractionRows: number
  /** Minutes marked in `candles_1m_dirty`. */
  readonly dirtyMinutesMarked: number
  /** Events that did not decode, or trades that could not be stored (skipped, logged). */
  readonly invalidEvents: number
  /** Other `ChainEvent`s (not this writer's). */
  readonly ignoredEvents: number
}

export interface TradeWriterShape {
  readonly stats: Effect.Effect<TradeWriterStats>
}

export class TradeWriter extends Context.Tag("curvestream/TradeWriter")<TradeWriter, TradeWriterShape>() {
  /** Starts consuming in the layer's scope; closing it flushes and commits. */
  static layer(options: Partial<TradeWriterOptions> = {}): Layer.Layer<TradeWriter, ClickHouseError | BusError, Bus | ClickHouse> {
    return Layer.scoped(TradeWriter, make(options))
  }
}

type Entry =
  | { readonly _tag: "Trade"; readonly trade: Trade }
  | { readonly _tag: "Retracted"; readonly event: Retracted }

/** Bounds on one lookup: rows, and bytes of ids and mints (they travel as query parameters). */
const lookupRowsMax = 5_000
const lookupIdBytesMax = 256 * 1024

const tradeColumnsSql = tradeInsertColumns.join(", ")

export const make = (
  input: Partial<TradeWriterOptions> = {}
): Effect.Effect<TradeWriterShape, ClickHouseError | BusError, Bus | ClickHouse | Scope.Scope> =>
  Effect.gen(function* () {
    const options: TradeWriterOptions = { ...tradeWriterDefaults, ...input }
    if (!Number.isSafeInteger(options.busMaxBatch) || options.busMaxBatch < 1 || options.busMaxBatch > options.maxBufferedRows) {
      return yield* new ClickHouseError({
        reason: "InvalidRequest",
        message: `TradeWriter: busMaxBatch must be 1..maxBufferedRows (${options.maxBufferedRows}), got ${options.busMaxBatch}`
      })
    }
    if (!Number.isSafeInteger(options.recentIdsMax) || options.recentIdsMax < 0) {
      return yield* new ClickHouseError({ reason: "InvalidRequest", message: `TradeWriter: recentIdsMax must be a non-negative integer` })
    }
    const bus = yield* Bus
    const ch = yield* ClickHouse

    const counters = {
      tradesInserted: 0,
      duplicatesDropped: 0,
      duplicatesFoundStored: 0,
      retractionRows: 0,
      dirtyMinutesMarked: 0,
      invalidEvents: 0,
      ignoredEvents: 0
    }

    // Hybrid logical clock for row versions, resumed from what is stored.
    const [maxRow] = yield* ch.query<{ v: string }>("SELECT toString(max(version)) AS v FROM trades")
    let lastVersion = BigInt(maxRow?.v ?? "0")
    const nextVersion = (nowMs: number): bigint => {
      const fromClock = BigInt(nowMs) << 20n
      lastVersion = fromClock > lastVersion ? fromClock : lastVersion + 1n
      return lastVersion
    }

    // Ids written by this process, oldest first (a Set iterates in insertion order).
    const recentIds = new Set<string>()
    const rememberWritten = (id: string) => {
      recentIds.delete(id)
      recentIds.add(id)
      while (recentIds.size > options.recentIdsMax) {
        const oldest = recentIds.values().next()
        if (oldest.done === true) break
        recentIds.delete(oldest.value)
      }
    }

    const flush = (entries: ReadonlyArray<Entry>) => flushEntries(ch, entries, { recentIds, nextVersion, counters, rememberWritten })

    // Finalizers run last-registered first: the consumers stop (registered by subscribe below),
    // then the batcher drains, then this commits what the drain wrote.
    const inflight = new Map<number, { readonly nextOffset: number; readonly receipt: Deferred.Deferred<void, ClickHouseError> }>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach(
        [...inflight.entries()],
        ([partition, { nextOffset, receipt }]) =>
          Effect.flatMap(Deferred.poll(receipt), (done) =>
            done._tag === "Some"
              ? Effect.flatMap(Effect.either(done.value), (result) =>
                  Either.isRight(result)
                    ? bus.commit(options.group, options.topic, partition, nextOffset).pipe(
                        Effect.catchAll((error) => Effect.logWarning("TradeWriter: commit at close failed; the batch will be redelivered", error.message))
                      )
                    : Effect.void
                )
              : Effect.void
          ),
        { discard: true }
      )
    )

    const batcher = yield* makeBatcher<Entry>(
      batcherSettings("TradeWriter", options),
      flush
    )

    const onBatch = (batch: BusBatch): Effect.Effect<void, ClickHouseError> =>
      Effect.gen(function* () {
        const entries: Array<Entry> = []
        for (const record of batch.records) {
          const decoded = decodeChainEvent(record.value)
          if (Either.isLeft(decoded)) {
            counters.invalidEvents++
            yield* Effect.logWarning(`TradeWriter: skipping a record that is not a ChainEvent`, decoded.left.message).pipe(
              Effect.annotateLogs({ partition: batch.partition, offset: record.offset })
            )
            continue
          }
          const event = decoded.right
          if (event._tag === "Trade") {
            const why = invalidTrade(event)
            if (why !== undefined) {
              counters.invalidEvents++
              yield* Effect.logWarning(`TradeWriter: skipping trade ${event.id}: ${why}`).pipe(
                Effect.annotateLogs({ partition: batch.partition, offset: record.offset })
              )
              continue
            }
            entries.push({ _tag: "Trade", trade: event })
          } else if (event._tag === "Retracted") {
            entries.push({ _tag: "Retracted", event })
          } else {
            counters.ignoredEvents++
          }
        }
        if (entries.length === 0) return
        const nextOffset = batch.records[batch.records.length - 1]!.offset + 1
        const receipt = yield* batcher.offerWithReceipt(entries)
        inflight.set(batch.partition, { nextOffset, receipt })
        // Interrupted here (close), the entry stays so the close can commit it once drained.
        yield* Effect.ensuring(
          Deferred.await(receipt),
          Effect.flatMap(Deferred.isDone(receipt), (done) =>
            Effect.sync(() => {
              if (done) inflight.delete(batch.partition)
            })
          )
        )
      })

    yield* bus.subscribe(
      { group: options.group, topic: options.topic, fromBeginning: options.fromBeginning, maxBatch: options.busMaxBatch },
      onBatch
    )

    return {
      stats: Effect.map(batcher.stats, (s) => ({ ...s, ...counters }))
    }
  })

interface FlushState {
  readonly recentIds: Set<string>
  readonly nextVersion: (nowMs: number) => bigint
  readonly rememberWritten: (id: string) => void
  readonly counters: {
    tradesInserted: number
    duplicatesDropped: number
    duplicatesFoundStored: number
    retractionRows: number
    dirtyMinutesMarked: number
  }
}

type StoredTrade = Omit<TradeRow, "retracted"> & {
  readonly retracted: number
}

/**
 * One attempt at writing a batch. Idempotent: a retry recomputes everything from the batch and
 * the table, so a previous attempt that (partly) succeeded only turns into "already stored".
 */
const flushEntries = (ch: ClickHouseShape, entries: ReadonlyArray<Entry>, state: FlushState): Effect.Effect<void, ClickHouseError> =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    // 1. Plan in bus order: drop copies, apply retractions to what is still in this batch.
    const pending = new Map<string, TradeRow>()
    const retractedHere = new Set<string>()
    const retractions: Array<{ readonly chain: string; readonly mint: string; readonly ids: ReadonlyArray<string>; readonly version: bigint }> = []
    let droppedInMemory = 0
    for (const entry of entries) {
      if (entry._tag === "Trade") {
        const id = entry.trade.id
        if (pending.has(id) || (state.recentIds.has(id) && !retractedHere.has(id))) {
          droppedInMemory++
          continue
        }
        pending.set(id, tradeRow(entry.trade, state.nextVersion(nowMs)))
      } else {
        const { chain, mint, retractedIds } = entry.event
        for (const id of retractedIds) {
          pending.delete(id)
          retractedHere.add(id)
        }
        if (retractedIds.length > 0) retractions.push({ chain, mint, ids: retractedIds, version: state.nextVersion(nowMs) })
      }
    }

    // 2. Retractions of stored trades: a copy of each live row, retracted, at the retraction's version.
    const dirty = new Map<string, { chain: string; mint: string; bucket: number }>()
    const markDirty = (chain: string, mint: string, tsMs: number) => {
      const bucket = minuteOf(tsMs)
      dirty.set(`${chain}\u0000${mint}\u0000${bucket}`, { chain, mint, bucket })
    }
    const retractionRows: Array<TradeRow> = []
    for (const r of retractions) {
      for (const ids of chunkByBytes(r.ids, lookupIdBytesMax)) {
        const live = yield* ch.query<StoredTrade>(
          `SELECT ${tradeColumnsSql} FROM trades FINAL
           WHERE chain = {chain:String} AND mint = {mint:String} AND id IN {ids:Array(String)}`,
          { chain: r.chain, mint: r.mint, ids }
        )
        for (const row of live) {
          retractionRows.push({ ...row, version: r.version, retracted: 1 })
          markDirty(row.chain, row.mint, parseTs(row.ts))
        }
      }
    }

    // 3. Ids already stored (redelivery, or an earlier attempt of this flush that got through).
    //    A re-inclusion after a retraction in this batch is inserted regardless: its version wins.
    const toCheck = [...pending.values()]
      .filter((row) => !retractedHere.has(row.id))
      .sort((a, b) => (a.chain !== b.chain ? (a.chain < b.chain ? -1 : 1) : a.mint !== b.mint ? (a.mint < b.mint ? -1 : 1) : a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0))
    let foundStored = 0
    // In groups, each bounded by its own mints and time range, so every lookup reads only the
    // granules of those mints around those times and no parameter grows without bound.
    for (const group of chunkRows(toCheck, lookupRowsMax, lookupIdBytesMax)) {
      const chains = new Set<string>()
      const mints = new Set<string>()
      let fromMs = Infinity
      let toMs = -Infinity
      for (const row of group) {
        chains.add(row.chain)
        mints.add(row.mint)
        const ms = parseTs(row.ts)
        if (ms < fromMs) fromMs = ms
        if (ms > toMs) toMs = ms
      }
      const stored = yield* ch.query<{ id: string; chain: string; mint: string; ts: string }>(
        `SELECT id, chain, mint, ts FROM trades FINAL
         WHERE chain IN {chains:Array(String)} AND mint IN {mints:Array(String)}
           AND ts >= fromUnixTimestamp64Milli({fromMs:Int64}) AND ts <= fromUnixTimestamp64Milli({toMs:Int64})
           AND id IN {ids:Array(String)}`,
        { chains: [...chains], mints: [...mints], fromMs, toMs, ids: group.map((row) => row.id) }
      )
      for (const row of stored) {
        if (!pending.delete(row.id)) continue
        foundStored++
        markDirty(row.chain, row.mint, parseTs(row.ts))
      }
    }

    // 4. Dirty marks first, so no reader trusts a minute the next insert may make wrong.
    if (dirty.size > 0) {
      yield* insertSplitting(
        ch,
        "candles_1m_dirty",
        [...dirty.values()].map((d) => ({ chain: d.chain, mint: d.mint, bucket: d.bucket, marked_at: formatTs(nowMs) }))
      )
    }
    const rows = [...retractionRows, ...pending.values()]
    if (rows.length > 0) yield* insertSplitting(ch, "trades", rows)

    // 5. Only now is the batch written: remember it.
    for (const id of retractedHere) if (!pending.has(id)) state.recentIds.delete(id)
    for (const id of pending.keys()) state.rememberWritten(id)
    state.counters.tradesInserted += pending.size
    state.counters.duplicatesDropped += droppedInMemory
    state.counters.duplicatesFoundStored += foundStored
    state.counters.retractionRows += retractionRows.length
    state.counters.dirtyMinutesMarked += dirty.size
  })
