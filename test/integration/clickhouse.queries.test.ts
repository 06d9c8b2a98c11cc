/**
 * The ClickHouse reads on chDB (temp dir), over trades written by the real `TradeWriter` from
 * a real embedded bus: candle roll-ups (1m -> 5m/15m/1h/4h/1d) against the same candles
 * computed straight from `trades FINAL` with ClickHouse's own calendar functions, with
 * retracted (dirty) minutes in the range; token and wallet trade reads; and what is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import { chdbAndTempBus } from "../support/chdbAndBus.js"
import { migrations } from "../../clickhouse/migrations/index.js"
import { alignRange, type CandleInterval, candles, candlesMax } from "../../clickhouse/queries/Candles.js"
import { recentTrades, tradesLimitMax, walletTrades } from "../../clickhouse/queries/Trades.js"
import { tradeRow } from "../../clickhouse/writer/TradeRow.js"
import * as TradeWriter from "../../clickhouse/writer/TradeWriter.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { busKey, type ChainEvent, Retracted, solanaPosition, Trade } from "../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { eventuallyEffect } from "../support/eventually.js"

let dataDir = ""
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-chq-"))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const topic = Topics.chainEvents

const env = () => chdbAndTempBus(dataDir, "curvestream-chq-bus-")

/** chDB + bus + a running TradeWriter. */
const run = <A, E>(program: Effect.Effect<A, E, ClickHouse | Bus | Scope.Scope>) =>
  Effect.scoped(
    Effect.provide(
      Effect.zipRight(TradeWriter.make({ flushIntervalMs: 20 }), program),
      env()
    )
  ).pipe(Logger.withMinimumLogLevel(LogLevel.Error))

const caughtUp = (bus: BusShape) =>
  Effect.gen(function* () {
    const end = yield* bus.endOffsets(topic)
    const committed = yield* bus.committed("clickhouse", topic)
    for (const [partition, offset] of end) if ((committed.get(partition) ?? 0) < offset) return false
    return true
  })

/** Publishes and waits until the writer committed it (so it is in ClickHouse). */
const write = (events: ReadonlyArray<ChainEvent>) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    for (let i = 0; i < events.length; i += 500) {
      yield* bus.publish(topic, events.slice(i, i + 500).map((e) => ({ key: busKey(e), value: encodeChainEvent(e) })))
    }
    yield* eventuallyEffect(caughtUp(bus), { what: "the writer to catch up", deadlineMs: 20_000, intervalMs: 10 })
  })

const T0 = Date.UTC(2024, 4, 10, 21, 0, 0) // three hours before a UTC midnight
let slot = 5_000_000n

/** A deterministic generator, so a failure replays. */
const rng = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed / 2_147_483_648
}

const trade = (mint: string, atMs: number, r: () => number, trader = `w${Math.floor(r() * 5)}`): Trade => {
  slot += 1n
  const side = r() < 0.6 ? "buy" : "sell"
  const quote = 10n ** 17n + BigInt(Math.floor(r() * 1e12)) * 10n ** 9n
  const tokens = 10n ** 22n + BigInt(Math.floor(r() * 1e9)) * 10n ** 15n
  const fee = quote / 100n
  return new Trade({
    id: `solana:q${slot}:0`,
    position: solanaPosition(slot, Math.floor(r() * 5), 0),
    chain: "solana",
    mint,
    timestampMs: atMs,
    signature: `q${slot}`,
    venue: "curve",
    side,
    trader,
    amountInRaw: side === "buy" ? quote : tokens,
    amountOutRaw: side === "buy" ? tokens : quote - fee,
    feeRaw: fee,
    refundRaw: 0n,
    quoteConsumedRaw: side === "buy" ? quote : tokens,
    quoteReserveRaw: 30n * 10n ** 27n,
    tokenReserveRaw: 10n ** 33n,
    realQuoteRaw: 10n ** 20n,
    crossesGraduation: false
  })
}

/** ClickHouse's own bucketing for each interval, independent of the minute roll-up. */
const directBucket: Record<CandleInterval, string> = {
  "1m": "toStartOfMinute(ts)",
  "5m": "toStartOfFiveMinutes(ts)",
  "15m": "toStartOfFifteenMinutes(ts)",
  "1h": "toStartOfHour(ts)",
  "4h": "toStartOfInterval(ts, INTERVAL 4 HOUR)",
  "1d": "toStartOfDay(ts)"
}

const directCandles = (mint: string, interval: CandleInterval, fromMs: number, toMs: number) =>
  Effect.gen(function* () {
    const ch = yield* ClickHouse
    const { fromS, toS } = alignRange(interval, fromMs, toMs)
    const rows = yield* ch.query<Record<string, string | number>>(
      `SELECT toUnixTimestamp(${directBucket[interval]}) AS s,
         argMin(price, position) AS open, max(price) AS high, min(price) AS low, argMax(price, position) AS close,
         toString(sum(quote_volume_raw)) AS vq, toString(sum(token_volume_raw)) AS vt,
         toString(count()) AS n, toString(countIf(side = 'buy')) AS nb, toString(countIf(side = 'sell')) AS ns
       FROM trades FINAL
       WHERE chain = 'solana' AND mint = {mint:String}
         AND ts >= toDateTime64({fromS:UInt32}, 3, 'UTC') AND ts < toDateTime64({toS:UInt32}, 3, 'UTC')
       GROUP BY s ORDER BY s`,
      { mint, fromS, toS }
    )
    return rows.map((r) => ({
      startMs: Number(r.s) * 1000,
      open: Number(r.open),
      high: Number(r.high),
      low: Number(r.low),
      close: Number(r.close),
      volumeQuoteRaw: BigInt(r.vq!),
      volumeTokenRaw: BigInt(r.vt!),
      trades: Number(r.n),
      buys: Number(r.nb),
      sells: Number(r.ns)
    }))
  })

describe("candles", () => {
  it.live("every interval rolled up from the 1m view equals computing it from trades, dirty minutes included", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintRollup"
        const r = rng(42)
        // ~900 trades over 27 hours (across a UTC midnight), bursts and gaps, some on exact boundaries.
        const trades: Array<Trade> = []
        let at = T0 - 2 * 60_000
        while (at < T0 + 27 * 3_600_000) {
          trades.push(trade(mint, at, r))
          at += r() < 0.1 ? 0 : r() < 0.7 ? Math.floor(r() * 90_000) : Math.floor(r() * 1_800_000)
          if (r() < 0.05) at = Math.ceil(at / 3_600_000) * 3_600_000 // land on an hour boundary
        }
        yield* write(trades)
        // Reorg some out (dirty minutes), and re-include one of them.
        const gone = trades.filter((_, i) => i % 37 === 5)
        yield* write([
          new Retracted({
            id: "solana:reorg:1",
            position: solanaPosition(slot + 1n, 0, 0),
            chain: "solana",
            mint,
            timestampMs: T0,
            signature: "",
            retractedIds: gone.map((t) => t.id)
          })
        ])
        yield* write([gone[0]!])
        const ch = yield* ClickHouse
        const [dirty] = yield* ch.query<{ n: string }>("SELECT toString(count()) AS n FROM candles_1m_dirty WHERE mint = {mint:String}", { mint })
        expect(Number(dirty?.n)).toBeGreaterThan(5)

        const fromMs = T0 - 7 * 60_000 + 13_000 // not aligned to anything
        const toMs = T0 + 26 * 3_600_000 + 2 * 60_000 + 1
        for (const interval of ["1m", "5m", "15m", "1h", "4h", "1d"] as const) {
          const series = yield* candles("solana", mint, interval, fromMs, toMs)
          const direct = yield* directCandles(mint, interval, fromMs, toMs)
          expect(series.candles.length).toBeGreaterThan(0)
          expect({ interval, candles: series.candles }).toEqual({ interval, candles: direct })
          const { fromS, toS } = alignRange(interval, fromMs, toMs)
          expect([series.fromMs, series.toMs]).toEqual([fromS * 1000, toS * 1000])
        }
        // The summary agrees across intervals (same trades, same range once aligned to a day).
        const day = yield* candles("solana", mint, "1d", fromMs, toMs)
        const minutes = yield* candles("solana", mint, "1m", day.fromMs, day.toMs)
        expect(minutes.summary).toEqual(day.summary)
        const live = trades.filter((t) => !gone.slice(1).includes(t))
        expect(day.summary?.trades).toBe(live.length)
      })
    )
  )

  it.live("returns nothing for an unknown or hostile mint, and refuses bad requests before running", () =>
    run(
      Effect.gen(function* () {
        const empty = yield* candles("solana", "' OR 1=1 --", "1h", T0, T0 + 86_400_000)
        expect(empty.candles).toEqual([])
        expect(empty.summary).toBeNull()
        const refusals = yield* Effect.all([
          Effect.flip(candles("solana", "M", "2m" as CandleInterval, T0, T0 + 60_000)),
          Effect.flip(candles("solana", "M", "1m", T0, T0)),
          Effect.flip(candles("solana", "M", "1m", T0, T0 + (candlesMax + 1) * 60_000)),
          Effect.flip(candles("solana", "M", "1m", 1.5, T0))
        ])
        expect(refusals.map((e) => e.reason)).toEqual(["InvalidRequest", "InvalidRequest", "InvalidRequest", "InvalidRequest"])
        // At the bound is accepted.
        const full = yield* candles("solana", "M", "1m", T0, T0 + candlesMax * 60_000)
        expect(full.candles).toEqual([])
      })
    )
  )
})

describe("trade reads", () => {
  it.live("recentTrades: newest first, each once, retracted ones skipped even when they fill the first window", () =>
    run(
      Effect.gen(function* () {
        const mint = "MintRecent"
        const r = rng(7)
        const trades = Array.from({ length: 40 }, (_, i) => trade(mint, T0 + i * 1_000, r))
        yield* write(trades)
        yield* write(trades.slice(30)) // redelivered copies: dropped by the writer
        // Reorg the newest 25: the first window (limit*2+16 = 26 rows) holds no live trade.
        yield* write([
          new Retracted({
            id: "solana:reorg:recent",
            position: solanaPosition(slot + 1n, 0, 0),
            chain: "solana",
            mint,
            timestampMs: T0,
            signature: "",
            retractedIds: trades.slice(15).map((t) => t.id)
          })
        ])
        const newest = yield* recentTrades("solana", mint, 5)
        expect(newest.map((t) => t.id)).toEqual(trades.slice(10, 15).reverse().map((t) => t.id))
        const all = yield* recentTrades("solana", mint, tradesLimitMax)
        expect(all.map((t) => t.id)).toEqual(trades.slice(0, 15).reverse().map((t) => t.id))
        const first = all[all.length - 1]!
        const t0 = trades[0]!
        expect(first).toMatchObject({
          id: t0.id,
          chain: "solana",
          side: t0.side,
          amountInRaw: t0.amountInRaw,
          amountOutRaw: t0.amountOutRaw,
          feeRaw: t0.feeRaw,
          quoteReserveRaw: t0.quoteReserveRaw,
          timestampMs: t0.timestampMs,
          position: t0.position,
          signature: t0.signature,
          crossesGraduation: false
        })
        expect(yield* recentTrades("solana", "NoSuchMint", 10)).toEqual([])
      })
    )
  )

  it.live("walletTrades: one wallet across mints, newest first, each once; limits are bounded", () =>
    run(
      Effect.gen(function* () {
        const r = rng(99)
        const mine = [0, 1, 2, 3, 4, 5].map((i) => trade(`MintW${i % 3}`, T0 + i * 60_000, r, "wallet-me"))
        const others = [0, 1, 2].map((i) => trade(`MintW${i}`, T0 + i * 60_000 + 1, r, "wallet-other"))
        yield* write([...mine, ...others])
        yield* write([mine[2]!, mine[4]!]) // copies
        const got = yield* walletTrades("wallet-me", 100)
        expect(got.map((t) => t.id)).toEqual([...mine].reverse().map((t) => t.id))
        expect((yield* walletTrades("wallet-me", 2)).map((t) => t.id)).toEqual([mine[5]!.id, mine[4]!.id])
        expect(yield* walletTrades("' OR 1=1 --", 100)).toEqual([])
        const refusals = yield* Effect.all([
          Effect.flip(walletTrades("wallet-me", 0)),
          Effect.flip(walletTrades("wallet-me", tradesLimitMax + 1)),
          Effect.flip(recentTrades("solana", "MintW0", 2.5))
        ])
        expect(refusals.map((e) => e.reason)).toEqual(["InvalidRequest", "InvalidRequest", "InvalidRequest"])
      })
    )
  )
})

describe("schema", () => {
  it.live("migrations 2-4 are recorded, re-runnable, and shape the tables as designed", () =>
    run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const recorded = yield* ch.query<{ migration_id: number; name: string }>(
          "SELECT DISTINCT migration_id, name FROM schema_migrations ORDER BY migration_id"
        )
        expect(recorded.map((m) => [m.migration_id, m.name])).toEqual(migrations.map((m) => [m.id, m.name]))
        // Every statement is idempotent: running them all again changes nothing and fails nothing.
        for (const m of migrations) for (const statement of m.statements) yield* ch.command(statement)
        const tables = yield* ch.query<{ name: string; engine: string; sorting_key: string }>(
          `SELECT name, engine, sorting_key FROM system.tables
           WHERE database = currentDatabase() AND name IN ('trades', 'candles_1m', 'candles_1m_mv', 'candles_1m_dirty', 'market_snapshots')
           ORDER BY name`
        )
        expect(tables.map((t) => [t.name, t.engine, t.sorting_key])).toEqual([
          ["candles_1m", "AggregatingMergeTree", "chain, mint, bucket"],
          ["candles_1m_dirty", "ReplacingMergeTree", "chain, mint, bucket"],
          ["candles_1m_mv", "MaterializedView", ""],
          ["market_snapshots", "ReplacingMergeTree", "chain, mint, ts"],
          ["trades", "ReplacingMergeTree", "chain, mint, ts, position, id"]
        ])
      })
    )
  )

  it.live("stores the largest raw amounts exactly and derives volume and price at insert", () =>
    run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const max = 2n ** 256n - 1n
        const t = new Trade({
          id: "hood:0xmax:0",
          position: solanaPosition(1n, 0, 0),
          chain: "hood",
          mint: "0xMaxMint",
          timestampMs: T0 + 123,
          signature: "0xmax",
          venue: "pool",
          side: "sell",
          trader: "0xme",
          amountInRaw: 4n * 10n ** 18n,
          amountOutRaw: max - 3n * 10n ** 18n, // proceeds + fee = 2^256 - 1 exactly
          feeRaw: 3n * 10n ** 18n,
          refundRaw: 0n,
          quoteConsumedRaw: 4n * 10n ** 18n,
          quoteReserveRaw: max,
          tokenReserveRaw: max,
          realQuoteRaw: max,
          crossesGraduation: true
        })
        yield* ch.insert("trades", [tradeRow(t, 1n)])
        const [row] = yield* ch.query<Record<string, unknown>>(
          "SELECT quote_reserve_raw, quote_volume_raw, token_volume_raw, price, ts FROM trades FINAL WHERE id = {id:String}",
          { id: t.id }
        )
        expect(row).toEqual({
          quote_reserve_raw: max.toString(),
          quote_volume_raw: max.toString(),
          token_volume_raw: (4n * 10n ** 18n).toString(),
          price: Number(max) / 4e18,
          ts: "2024-05-10 21:00:00.123"
        })
      })
    )
  )
})
