/**
 * The ClickHouse writers end to end: events published on a real embedded bus (temp dir), the
 * `TradeWriter` consuming them into chDB (temp dir), read back through the queries.
 *
 * Faults are injected around the real ClickHouse service (`faulty`): inserts that fail, inserts
 * that land and then report failure (the ambiguous case a retry must survive), and an outage.
 * Waits are on receipts (the group's committed offsets, the writer's counters), never sleeps.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { ClickHouseError } from "../../clickhouse/ClickHouseError.js"
import { candles } from "../../clickhouse/queries/Candles.js"
import { recentTrades, walletTrades } from "../../clickhouse/queries/Trades.js"
import * as MarketSnapshotWriter from "../../clickhouse/writer/MarketSnapshotWriter.js"
import { tradeRow } from "../../clickhouse/writer/TradeRow.js"
import * as TradeWriter from "../../clickhouse/writer/TradeWriter.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { chdbAndTempBus } from "../support/chdbAndBus.js"
import { busKey, type ChainEvent, Retracted, solanaPosition, Trade } from "../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { eventuallyEffect } from "../support/eventually.js"

let dataDir = ""
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-chw-"))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const topic = Topics.chainEvents
const group = "clickhouse"

/** chDB (one directory for the file) and a fresh file-backed bus in a temp directory. */
const env = () => chdbAndTempBus(dataDir, "curvestream-chw-bus-")

// Injected faults log a warning per failed attempt; only errors are worth printing here.
const run = <A, E>(program: Effect.Effect<A, E, ClickHouse | Bus | Scope.Scope>) =>
  Effect.scoped(Effect.provide(program, env())).pipe(Logger.withMinimumLogLevel(LogLevel.Error))

// ---------------------------------------------------------------------------------------------
// Events

const T0 = Date.UTC(2024, 2, 1, 10, 0, 0) // 2024-03-01 10:00:00 UTC
let slot = 1_000n

interface TradeSpec {
  readonly mint: string
  readonly side: "buy" | "sell"
  readonly atMs: number
  /** Gross quote: paid by a buyer (before a refund), or a seller's proceeds before the fee. */
  readonly quote: bigint
  readonly fee: bigint
  readonly tokens: bigint
  readonly refund?: bigint
  readonly trader?: string
  readonly chain?: "solana" | "hood"
}

const trade = (s: TradeSpec, overrides: { readonly amountOutRaw?: bigint } = {}): Trade => {
  slot += 1n
  const refund = s.refund ?? 0n
  const chain = s.chain ?? "solana"
  return new Trade({
    id: `${chain}:sig${slot}:0`,
    position: solanaPosition(slot, 0, 0),
    chain,
    mint: s.mint,
    timestampMs: s.atMs,
    signature: `sig${slot}`,
    venue: "curve",
    side: s.side,
    trader: s.trader ?? "trader-1",
    amountInRaw: s.side === "buy" ? s.quote + refund : s.tokens,
    amountOutRaw: overrides.amountOutRaw ?? (s.side === "buy" ? s.tokens : s.quote - s.fee),
    feeRaw: s.fee,
    refundRaw: refund,
    quoteConsumedRaw: s.side === "buy" ? s.quote : s.tokens,
    quoteReserveRaw: 30n * 10n ** 27n,
    tokenReserveRaw: 10n ** 33n,
    realQuoteRaw: 10n ** 21n,
    crossesGraduation: false
  })
}

/** What the table computes: the fee-free execution price, and the trade's gross quote. */
const priceOf = (t: Trade): number =>
  t.side === "buy" ? Number(t.quoteConsumedRaw - t.feeRaw) / Number(t.amountOutRaw) : Number(t.amountOutRaw + t.feeRaw) / Number(t.amountInRaw)
const quoteOf = (t: Trade): bigint => (t.side === "buy" ? t.quoteConsumedRaw : t.amountOutRaw + t.feeRaw)
const tokensOf = (t: Trade): bigint => (t.side === "buy" ? t.amountOutRaw : t.amountInRaw)

/** Hand-computed 1m OHLCV of `trades` (open/close by position). */
const expectedCandles = (trades: ReadonlyArray<Trade>) => {
  const byMinute = new Map<number, Array<Trade>>()
  for (const t of trades) {
    const m = Math.floor(t.timestampMs / 60_000) * 60_000
    byMinute.set(m, [...(byMinute.get(m) ?? []), t])
  }
  return [...byMinute.entries()]
    .sort(([a], [b]) => a - b)
    .map(([startMs, ts]) => {
      const ordered = [...ts].sort((a, b) => (a.position < b.position ? -1 : 1))
      const prices = ordered.map(priceOf)
      return {
        startMs,
        open: prices[0]!,
        high: Math.max(...prices),
        low: Math.min(...prices),
        close: prices[prices.length - 1]!,
        volumeQuoteRaw: ordered.reduce((sum, t) => sum + quoteOf(t), 0n),
        volumeTokenRaw: ordered.reduce((sum, t) => sum + tokensOf(t), 0n),
        trades: ordered.length,
        buys: ordered.filter((t) => t.side === "buy").length,
        sells: ordered.filter((t) => t.side === "sell").length
      }
    })
}

const publish = (events: ReadonlyArray<ChainEvent>) =>
  Effect.flatMap(Bus, (bus) => bus.publish(topic, events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))))

/** True once the group has committed everything published (the writer's receipt). */
const caughtUp = (bus: BusShape) =>
  Effect.gen(function* () {
    const end = yield* bus.endOffsets(topic)
    const committed = yield* bus.committed(group, topic)
    for (const [partition, offset] of end) if ((committed.get(partition) ?? 0) < offset) return false
    return true
  })

const drained = Effect.flatMap(Bus, (bus) => eventuallyEffect(caughtUp(bus), { what: "the writer to commit everything published", deadlineMs: 20_000, intervalMs: 10 }))

/** Runs a writer in its own scope, so a test can stop it (flush + commit) and start another. */
const startWriter = (options: Partial<TradeWriter.TradeWriterOptions> = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const writer = yield* TradeWriter.make({ flushIntervalMs: 20, ...options }).pipe(Scope.extend(scope))
    return { writer, stop: Scope.close(scope, Exit.void) }
  })

/** Rows per id in the raw table (no FINAL): the writer's own dedupe, before any merge. */
const rawCopies = (mints: ReadonlyArray<string>) =>
  Effect.flatMap(ClickHouse, (ch) =>
    ch.query<{ id: string; n: string }>(
      "SELECT id, toString(count()) AS n FROM trades WHERE mint IN {mints:Array(String)} GROUP BY id ORDER BY id",
      { mints }
    )
  )

const liveIds = (mint: string) =>
  Effect.flatMap(ClickHouse, (ch) =>
    Effect.map(
      ch.query<{ id: string }>("SELECT id FROM trades FINAL WHERE mint = {mint:String} ORDER BY position", { mint }),
      (rows) => rows.map((r) => r.id)
    )
  )

const dirtyMinutes = (mint: string) =>
  Effect.flatMap(ClickHouse, (ch) =>
    Effect.map(
      ch.query<{ b: number }>("SELECT DISTINCT toUnixTimestamp(bucket) AS b FROM candles_1m_dirty WHERE mint = {mint:String} ORDER BY b", { mint }),
      (rows) => rows.map((r) => r.b * 1000)
    )
  )

const expectCandlesMatch = (mint: string, trades: ReadonlyArray<Trade>, chain: "solana" | "hood" = "solana") =>
  Effect.gen(function* () {
    const series = yield* candles(chain, mint, "1m", T0 - 3_600_000, T0 + 3_600_000)
    const expected = expectedCandles(trades)
    expect(series.candles.map((c) => ({ ...c, open: 0, high: 0, low: 0, close: 0 }))).toEqual(
      expected.map((c) => ({ ...c, open: 0, high: 0, low: 0, close: 0 }))
    )
    series.candles.forEach((c, i) => {
      const e = expected[i]!
      for (const k of ["open", "high", "low", "close"] as const) expect(c[k]).toBeCloseTo(e[k], 12)
    })
    return series
  })

const E18 = 10n ** 18n

// ---------------------------------------------------------------------------------------------

describe("TradeWriter (bus -> chDB)", () => {
  it.live("writes each trade once through duplicates and redelivery, and candles equal a hand-computed OHLCV", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintOhlcv"
        const sameTs = T0 + 90_000
        const trades = [
          trade({ mint, side: "buy", atMs: T0 + 5_000, quote: 12_345_678_901_234_567_890_123n, fee: 123_456_789_012_345_678_901n, tokens: 7n * 10n ** 26n }),
          trade({ mint, side: "sell", atMs: T0 + 20_000, quote: 9_876_543_210_987_654_321_098n, fee: 98_765_432_109_876_543_210n, tokens: 5n * 10n ** 26n, trader: "trader-2" }),
          trade({ mint, side: "buy", atMs: T0 + 59_999, quote: 3n * E18, fee: 3n * 10n ** 16n, tokens: 2n * 10n ** 23n }),
          trade({ mint, side: "sell", atMs: T0 + 60_000, quote: 25n * E18, fee: 25n * 10n ** 16n, tokens: 10n ** 24n }),
          // Two prints at the same millisecond: the later position is the close.
          trade({ mint, side: "buy", atMs: sameTs, quote: 40n * E18, fee: 4n * 10n ** 17n, tokens: 10n ** 24n }),
          trade({ mint, side: "buy", atMs: sameTs, quote: 41n * E18 + 1n, fee: 41n * 10n ** 16n, tokens: 10n ** 24n })
        ]
        const { writer, stop } = yield* startWriter()
        // Copies in one publish (same bus batch), and again later (a recently written id).
        yield* publish([trades[0]!, trades[1]!, trades[1]!, trades[2]!, trades[3]!])
        yield* drained
        yield* publish([trades[2]!, trades[4]!, trades[5]!, trades[0]!])
        yield* drained
        const stats = yield* writer.stats
        expect(stats.tradesInserted).toBe(6)
        expect(stats.duplicatesDropped).toBe(3)
        expect(stats.duplicatesFoundStored).toBe(0)
        yield* stop

        expect((yield* rawCopies([mint])).every((r) => r.n === "1")).toBe(true)
        expect(yield* liveIds(mint)).toEqual(trades.map((t) => t.id))
        const series = yield* expectCandlesMatch(mint, trades)
        // Exact past 2^64, and the volumes are the hand sums.
        expect(series.candles[0]!.volumeQuoteRaw).toBe(12_345_678_901_234_567_890_123n + 9_876_543_210_987_654_321_098n + 3n * E18)
        expect(series.candles[1]!.close).toBeCloseTo(priceOf(trades[5]!), 12)
        expect(series.summary).toMatchObject({
          open: series.candles[0]!.open,
          close: series.candles[1]!.close,
          trades: 6,
          buys: 4,
          sells: 2,
          volumeQuoteRaw: trades.reduce((s, t) => s + quoteOf(t), 0n)
        })
        expect(yield* dirtyMinutes(mint)).toEqual([])

        // Restart from offset 0 (as after a crash before the commit): a fresh writer remembers
        // nothing, finds every id stored, writes none again, and marks their minutes.
        const bus = yield* Bus
        for (let p = 0; p < bus.partitions; p++) yield* bus.commit(group, topic, p, 0)
        const second = yield* startWriter()
        yield* drained
        const again = yield* second.writer.stats
        expect(again.tradesInserted).toBe(0)
        expect(again.duplicatesFoundStored).toBe(6)
        yield* second.stop
        expect((yield* rawCopies([mint])).every((r) => r.n === "1")).toBe(true)
        expect(yield* dirtyMinutes(mint)).toEqual([T0, T0 + 60_000])
        yield* expectCandlesMatch(mint, trades)
      })
    )
  )

  it.live("survives an insert that lands and then reports failure: the bus redelivers, nothing is doubled", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintAmbiguous"
        const trades = [0, 1, 2, 3].map((i) =>
          trade({ mint, side: i % 2 === 0 ? "buy" : "sell", atMs: T0 + i * 15_000, quote: BigInt(i + 1) * E18, fee: 10n ** 16n, tokens: BigInt(i + 2) * 10n ** 24n })
        )
        const real = yield* ClickHouse
        const faults = { landThenFail: 1, failBefore: 0, down: false }
        // One attempt per flush: the failure goes back to the bus, which redelivers the batch.
        const { writer, stop } = yield* startWriter({ flushAttemptsMax: 1 }).pipe(Effect.provide(Layer.succeed(ClickHouse, faulty(real, faults))))
        yield* publish(trades)
        yield* drained
        const stats = yield* writer.stats
        expect(stats.failedBatches).toBe(1)
        expect(stats.duplicatesFoundStored).toBe(4)
        yield* stop
        expect((yield* rawCopies([mint])).every((r) => r.n === "1")).toBe(true)
        expect(yield* liveIds(mint)).toEqual(trades.map((t) => t.id))
        expect(yield* dirtyMinutes(mint)).toEqual([T0])
        yield* expectCandlesMatch(mint, trades)
      })
    )
  )

  it.live("a dirty minute is exact even when the view counted a trade twice", () =>
    run(
      Effect.gen(function* () {
        // Two writers racing on one mint (what partition ownership rules out) would insert a
        // copy the view counts twice; the mark makes the read recompute the minute.
        const mint = "MintRace"
        const t = trade({ mint, side: "buy", atMs: T0 + 1_000, quote: 5n * E18, fee: 5n * 10n ** 16n, tokens: 10n ** 24n })
        const ch = yield* ClickHouse
        yield* ch.insert("trades", [tradeRow(t, 1n)])
        yield* ch.insert("trades", [tradeRow(t, 1n)])
        const doubled = yield* candles("solana", mint, "1m", T0, T0 + 60_000)
        expect(doubled.candles[0]!.trades).toBe(2) // the view alone is wrong here
        yield* ch.insert("candles_1m_dirty", [{ chain: "solana", mint, bucket: T0 / 1000 }])
        yield* expectCandlesMatch(mint, [t])
      })
    )
  )

  it.live("flushes at batchRows, holds the rest until the interval, and a stop flushes and commits it", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintSize"
        const trades = Array.from({ length: 120 }, (_, i) =>
          trade({ mint, side: "buy", atMs: T0 + i * 100, quote: E18 + BigInt(i), fee: 10n ** 16n, tokens: 10n ** 24n })
        )
        const first = yield* startWriter({ batchRows: 50, flushIntervalMs: 600_000 })
        yield* publish(trades)
        yield* eventuallyEffect(Effect.map(first.writer.stats, (s) => s.flushesBySize === 2 && s.bufferedRows === 20), { what: "two size-triggered flushes", deadlineMs: 20_000, intervalMs: 10 })
        const stats = yield* first.writer.stats
        expect(stats.flushesByTime).toBe(0)
        expect(stats.recentBatchRows).toEqual([50, 50])
        const bus = yield* Bus
        // The bus batch (all 120) is not committed: 20 of its events are not written yet.
        expect(yield* caughtUp(bus)).toBe(false)
        yield* first.stop
        expect((yield* first.writer.stats).flushesByClose).toBe(1)
        expect(yield* caughtUp(bus)).toBe(true)
        expect((yield* liveIds(mint)).length).toBe(120)

        // A clean restart redelivers nothing.
        const second = yield* startWriter()
        yield* publish([trade({ mint, side: "sell", atMs: T0 + 59_000, quote: E18, fee: 1n, tokens: 10n ** 20n })])
        yield* drained
        const after = yield* second.writer.stats
        expect([after.tradesInserted, after.duplicatesFoundStored, after.duplicatesDropped]).toEqual([1, 0, 0])
        yield* second.stop
      })
    )
  )

  it.live("flushes a small batch when its oldest event is flushIntervalMs old", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintTime"
        const { writer, stop } = yield* startWriter({ batchRows: 10_000, flushIntervalMs: 150 })
        yield* publish([0, 1, 2].map((i) => trade({ mint, side: "buy", atMs: T0 + i, quote: E18, fee: 1n, tokens: 10n ** 20n })))
        yield* drained
        const stats = yield* writer.stats
        expect(stats.flushesByTime).toBeGreaterThanOrEqual(1)
        expect(stats.flushesBySize).toBe(0)
        expect(stats.tradesInserted).toBe(3)
        yield* stop
      })
    )
  )

  it.live("when ClickHouse is down the consumer stops pulling (bounded buffer), then catches up exactly once", () =>
    run(
      Effect.gen(function* () {
        const mints = ["MintDown0", "MintDown1", "MintDown2", "MintDown3", "MintDown4", "MintDown5"]
        const trades = Array.from({ length: 600 }, (_, i) =>
          trade({ mint: mints[i % mints.length]!, side: "buy", atMs: T0 + i * 10, quote: E18 + BigInt(i), fee: 1n, tokens: 10n ** 22n })
        )
        const real = yield* ClickHouse
        const faults = { landThenFail: 0, failBefore: 0, down: false }
        const { writer, stop } = yield* startWriter({
          batchRows: 40,
          maxBufferedRows: 100,
          busMaxBatch: 50,
          flushAttemptsMax: 2,
          retryBaseMs: 5,
          retryMaxDelayMs: 20
        }).pipe(Effect.provide(Layer.succeed(ClickHouse, faulty(real, faults))))
        faults.down = true
        yield* publish(trades)
        yield* eventuallyEffect(Effect.map(writer.stats, (s) => s.failedBatches >= 4 && s.offerWaits > 0), { what: "failed flushes and waiting partitions", deadlineMs: 20_000, intervalMs: 10 })
        const during = yield* writer.stats
        expect(during.bufferedRowsHighWater).toBeLessThanOrEqual(100)
        const bus = yield* Bus
        const committed = yield* bus.committed(group, topic)
        expect([...committed.values()].reduce((a, b) => a + b, 0)).toBe(0)

        faults.down = false
        yield* drained
        const after = yield* writer.stats
        expect(after.bufferedRowsHighWater).toBeLessThanOrEqual(100)
        expect(after.tradesInserted).toBe(600)
        yield* stop
        const copies = yield* rawCopies(mints)
        expect(copies.length).toBe(600)
        expect(copies.every((r) => r.n === "1")).toBe(true)
      })
    )
  )

  it.live("Retracted removes a trade from trades, candles and reads; a re-included trade comes back", () =>
    run(
      Effect.gen(function* () {
        const mint = "0xRetract"
        const chain = "hood" as const
        const t1 = trade({ chain, mint, side: "buy", atMs: T0 + 1_000, quote: 10n * E18, fee: 10n ** 17n, tokens: 10n ** 24n, refund: 3n * E18 })
        const t2 = trade({ chain, mint, side: "buy", atMs: T0 + 2_000, quote: 20n * E18, fee: 2n * 10n ** 17n, tokens: 10n ** 24n, trader: "0xreorged" })
        const t3 = trade({ chain, mint, side: "sell", atMs: T0 + 3_000, quote: 5n * E18, fee: 5n * 10n ** 16n, tokens: 4n * 10n ** 23n })
        const t4 = trade({ chain, mint, side: "buy", atMs: T0 + 61_000, quote: 7n * E18, fee: 7n * 10n ** 16n, tokens: 10n ** 23n })
        const retract = (ids: ReadonlyArray<string>) =>
          new Retracted({ id: `hood:reorg:${ids.join(",")}`, position: t4.position, chain, mint, timestampMs: T0 + 62_000, signature: "", retractedIds: ids })

        const { writer, stop } = yield* startWriter()
        yield* publish([t1, t2, t3])
        yield* drained
        yield* expectCandlesMatch(mint, [t1, t2, t3], chain)

        yield* publish([retract([t2.id])])
        yield* drained
        expect(yield* liveIds(mint)).toEqual([t1.id, t3.id])
        expect(yield* dirtyMinutes(mint)).toEqual([T0])
        const series = yield* expectCandlesMatch(mint, [t1, t3], chain)
        // The refund is not volume: 10 of the 13 sent.
        expect(series.candles[0]!.volumeQuoteRaw).toBe(10n * E18 + 5n * E18)
        expect((yield* recentTrades(chain, mint, 10)).map((t) => t.id)).toEqual([t3.id, t1.id])
        expect(yield* walletTrades("0xreorged", 10)).toEqual([])

        // The same transaction re-included (same id): visible again.
        yield* publish([t2])
        yield* drained
        expect(yield* liveIds(mint)).toEqual([t1.id, t2.id, t3.id])
        yield* expectCandlesMatch(mint, [t1, t2, t3], chain)
        expect((yield* walletTrades("0xreorged", 10)).map((t) => t.id)).toEqual([t2.id])

        // A trade and its retraction in one batch: never written at all.
        yield* publish([t4, retract([t4.id])])
        yield* drained
        expect((yield* rawCopies([mint])).map((r) => r.id)).not.toContain(t4.id)
        yield* expectCandlesMatch(mint, [t1, t2, t3], chain)

        const stats = yield* writer.stats
        expect(stats.retractionRows).toBe(1)
        yield* stop
      })
    )
  )

  it.live("skips events that are not trades or cannot be stored, and keeps going", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintPoison"
        const good = trade({ mint, side: "buy", atMs: T0, quote: E18, fee: 1n, tokens: 10n ** 20n })
        const negative = trade({ mint, side: "buy", atMs: T0 + 1, quote: E18, fee: 1n, tokens: 1n }, { amountOutRaw: -1n })
        const { writer, stop } = yield* startWriter()
        const bus = yield* Bus
        yield* bus.publish(topic, [{ key: `solana:${mint}`, value: new TextEncoder().encode("not json") }])
        yield* publish([negative, good])
        yield* drained
        const stats = yield* writer.stats
        expect(stats.invalidEvents).toBe(2)
        expect(stats.tradesInserted).toBe(1)
        expect(yield* liveIds(mint)).toEqual([good.id])
        yield* stop
      })
    )
  )
})

describe("MarketSnapshotWriter", () => {
  const snapshot = (mint: string, i: number): MarketSnapshotWriter.MarketSnapshot => ({
    chain: "solana",
    mint,
    timestampMs: T0 + i * 1_000,
    lifecycle: "trading",
    price: 2.5e-8 * (1 + i),
    progressBps: 100 * i,
    realQuoteRaw: 10n ** 30n + BigInt(i),
    volume24hQuoteRaw: 123n,
    marketCapQuoteRaw: 2n ** 200n,
    marketCapUsd: null,
    migrationStatus: "not_started",
    position: solanaPosition(BigInt(i), 0, 0)
  })

  it.live("buffers snapshots and writes them in batches, exactly and idempotently", () =>
    run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const scope = yield* Scope.make()
        const writer = yield* MarketSnapshotWriter.make({ batchRows: 4, flushIntervalMs: 20 }).pipe(Scope.extend(scope))
        yield* writer.record(Array.from({ length: 10 }, (_, i) => snapshot("MintSnap", i)))
        yield* writer.record([snapshot("MintSnap", 3)]) // re-sent: collapses
        const count = ch.query<{ n: string }>("SELECT toString(count()) AS n FROM market_snapshots FINAL WHERE mint = 'MintSnap'")
        yield* eventuallyEffect(Effect.map(count, ([r]) => r?.n === "10"), { what: "10 snapshots", deadlineMs: 20_000, intervalMs: 10 })
        const [row] = yield* ch.query<Record<string, unknown>>(
          "SELECT lifecycle, progress_bps, real_quote_raw, market_cap_quote_raw, market_cap_usd, migration_status FROM market_snapshots FINAL WHERE mint = 'MintSnap' AND ts = fromUnixTimestamp64Milli({ms:Int64}, 'UTC')",
          { ms: T0 + 3_000 }
        )
        expect(row).toEqual({
          lifecycle: "trading",
          progress_bps: 300,
          real_quote_raw: (10n ** 30n + 3n).toString(),
          market_cap_quote_raw: (2n ** 200n).toString(),
          market_cap_usd: null,
          migration_status: "not_started"
        })
        const stats = yield* writer.stats
        expect(stats.flushesBySize).toBeGreaterThanOrEqual(2)
        yield* Scope.close(scope, Exit.void)
      })
    )
  )

  it.live("refuses a snapshot it could not store; tryRecord drops (and counts) when the buffer is full", () =>
    run(
      Effect.gen(function* () {
        const real = yield* ClickHouse
        const faults = { landThenFail: 0, failBefore: 0, down: true }
        const scope = yield* Scope.make()
        const writer = yield* MarketSnapshotWriter.make({ batchRows: 2, maxBufferedRows: 3, flushIntervalMs: 10, closeFlushAttemptsMax: 1 }).pipe(
          Effect.provide(Layer.succeed(ClickHouse, faulty(real, faults))),
          Scope.extend(scope)
        )
        const bad = yield* Effect.flip(writer.record([{ ...snapshot("MintSnapBad", 0), progressBps: 10_001 }]))
        expect(bad.reason).toBe("InvalidRequest")
        expect(yield* writer.tryRecord([snapshot("MintSnapFull", 0), snapshot("MintSnapFull", 1), snapshot("MintSnapFull", 2)])).toBe(true)
        expect(yield* writer.tryRecord([snapshot("MintSnapFull", 3)])).toBe(false)
        expect((yield* writer.stats).dropped).toBe(1)
        faults.down = false
        yield* eventuallyEffect(Effect.map(writer.stats, (s) => s.flushedRows === 3), { what: "the buffered snapshots to land", deadlineMs: 20_000, intervalMs: 10 })
        yield* Scope.close(scope, Exit.void)
      })
    )
  )
})

/**
 * The real service with injected faults on inserts into `trades`/`market_snapshots`:
 * `landThenFail` inserts that write and then report `Unavailable`, `failBefore` inserts that
 * fail without writing, and `down`, every statement failing.
 */
const faulty = (ch: ClickHouseShape, faults: { landThenFail: number; failBefore: number; down: boolean }): ClickHouseShape => {
  const unavailable = (what: string) => new ClickHouseError({ reason: "Unavailable", message: `injected: ${what}` })
  return {
    ...ch,
    query: (sql, params) => (faults.down ? Effect.fail(unavailable("down")) : ch.query(sql, params)),
    command: (sql, params) => (faults.down ? Effect.fail(unavailable("down")) : ch.command(sql, params)),
    insert: (table, rows) =>
      Effect.suspend(() => {
        if (faults.down) return Effect.fail(unavailable("down"))
        if (table !== "trades" && table !== "market_snapshots") return ch.insert(table, rows)
        if (faults.failBefore > 0) {
          faults.failBefore--
          return Effect.fail(unavailable("insert refused"))
        }
        if (faults.landThenFail > 0) {
          faults.landThenFail--
          return Effect.zipRight(ch.insert(table, rows), Effect.fail(unavailable("insert landed, response lost")))
        }
        return ch.insert(table, rows)
      })
  }
}
