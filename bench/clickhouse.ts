/**
 * ClickHouse on chDB, measured (printed, never asserted): insert throughput (bulk, the
 * service's batched insert, and the TradeWriter from an embedded bus backlog), candle reads over
 * 30 days, trade reads, and full scans, over synthetic trades generated in SQL
 * (`INSERT ... SELECT ... FROM numbers(N)`, through the candle view like any insert).
 *
 * The data set: N trades (default 10,000,000) spread evenly over 30 days of January 2024;
 * one hot mint holds every tenth trade (1M at the default, ~23 a minute), the rest fall on
 * 5,000 mints (~1,800 each, mostly one per minute); 200,000 traders.
 *
 *   npx tsx bench/clickhouse.ts [--rows N] [--writer-trades N] [--dir DIR] [--keep]
 *
 * `--dir` with an existing data set reuses it (skips generation); `--keep` leaves the data
 * directory in place. Each read is run once to warm up, then `reps` times; the median is shown.
 */
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ClickHouse, type ClickHouseShape } from "../clickhouse/ClickHouse.js"
import { type CandleInterval, candles } from "../clickhouse/queries/Candles.js"
import { recentTrades, walletTrades } from "../clickhouse/queries/Trades.js"
import { tradeRow } from "../clickhouse/writer/TradeRow.js"
import * as TradeWriter from "../clickhouse/writer/TradeWriter.js"
import { Bus, Topics } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { busKey, solanaPosition, Trade } from "../ingest/ChainEvent.js"
import { encodeChainEvent } from "../ingest/ChainEventCodec.js"

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback
}
const rows = Number(option("rows", "10000000"))
const writerTrades = Number(option("writer-trades", "200000"))
const dataDir = args.includes("--dir") ? option("dir", "") : fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-bench-ch-"))
const keep = flag("keep") || args.includes("--dir")
const reps = 5

const JAN = Date.UTC(2024, 0, 1)
const DAY_MS = 86_400_000

const generateSql = `
INSERT INTO trades (id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw,
  quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, crosses_graduation, position, ts,
  signature, version, retracted)
SELECT
  concat('solana:', hex(cityHash64(number)), ':0') AS id,
  'solana' AS chain,
  if(number % 10 = 0, 'HOTMINT', concat('mint', toString(cityHash64(number, 7) % 5000))) AS mint,
  'curve' AS venue,
  if(number % 3 = 0, 'sell', 'buy') AS side,
  concat('trader', toString(cityHash64(number, 1) % 200000)) AS trader,
  toUInt256(1000000 + cityHash64(number, 2) % 1000000000) * 1000000000 AS amount_in_raw,
  toUInt256(1000000 + cityHash64(number, 3) % 1000000000) * 1000000000 AS amount_out_raw,
  amount_in_raw / 100 AS fee_raw,
  toUInt256(0) AS refund_raw,
  amount_in_raw AS quote_consumed_raw,
  toUInt256(30000000000) * 1000000000000000000 AS quote_reserve_raw,
  toUInt256(1000000000) * 1000000000000000000 AS token_reserve_raw,
  toUInt256(1000000000000000000) AS real_quote_raw,
  false AS crosses_graduation,
  concat('s:', leftPad(toString(300000000 + intDiv(number, 40)), 20, '0'), ':', leftPad(toString(number % 40), 6, '0'), ':0000') AS position,
  toDateTime64('2024-01-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(intDiv(number * 2592000000, {n:UInt64})) AS ts,
  hex(cityHash64(number, 5)) AS signature,
  1 AS version,
  0 AS retracted
FROM numbers({n:UInt64})`

const results: Array<{ readonly what: string; readonly value: string }> = []
const report = (what: string, value: string) =>
  Effect.sync(() => {
    results.push({ what, value })
    console.log(`${what.padEnd(78)} ${value}`)
  })

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = performance.now()
    const value = yield* effect
    return { value, ms: performance.now() - start }
  })

/** Warm once, then the median of `reps` runs, in ms. */
const median = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    yield* effect
    const times: Array<number> = []
    let last: A | undefined = undefined
    for (let i = 0; i < reps; i++) {
      const { value, ms } = yield* timed(effect)
      times.push(ms)
      last = value
    }
    times.sort((a, b) => a - b)
    return { ms: times[Math.floor(times.length / 2)]!, value: last as A }
  })

const fmtMs = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`
const perSec = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString("en-US")} rows/s`

const count = (ch: ClickHouseShape, sql: string) =>
  Effect.map(ch.query<{ n: string }>(sql), ([r]) => Number(r?.n ?? "0"))

const generate = Effect.gen(function* () {
  const ch = yield* ClickHouse
  const existing = yield* count(ch, "SELECT toString(count()) AS n FROM trades WHERE mint = 'HOTMINT' OR mint LIKE 'mint%'")
  if (existing > 0) {
    yield* report("synthetic trades already present (reused)", existing.toLocaleString("en-US"))
    return
  }
  const { ms } = yield* timed(ch.command(generateSql, { n: rows }))
  yield* report(`bulk INSERT ... SELECT of ${rows.toLocaleString("en-US")} trades (through the 1m view)`, `${fmtMs(ms)}, ${perSec(rows, ms)}`)
  const candleRows = yield* count(ch, "SELECT toString(count()) AS n FROM candles_1m")
  yield* report("candles_1m rows after the load", candleRows.toLocaleString("en-US"))
})

/** The same bulk load into a copy of `trades` with no view on it: what the view costs. */
const viewCost = Effect.gen(function* () {
  const ch = yield* ClickHouse
  const n = Math.min(rows, 1_000_000)
  yield* ch.command("DROP TABLE IF EXISTS bench_trades_no_view")
  yield* ch.command("CREATE TABLE bench_trades_no_view AS trades")
  const { ms } = yield* timed(ch.command(generateSql.replace("INSERT INTO trades", "INSERT INTO bench_trades_no_view"), { n }))
  yield* ch.command("DROP TABLE bench_trades_no_view")
  yield* report(`bulk INSERT ... SELECT of ${n.toLocaleString("en-US")} trades into a table without the view`, `${fmtMs(ms)}, ${perSec(n, ms)}`)
})

let slot = 900_000_000n
const benchTrade = (i: number, mintCount: number): Trade => {
  slot += 1n
  const quote = 10n ** 17n + BigInt(i) * 1_000_003n
  return new Trade({
    id: `solana:bench${slot}:0`,
    position: solanaPosition(slot, 0, 0),
    chain: "solana",
    mint: `wmint${i % mintCount}`,
    timestampMs: Date.UTC(2024, 1, 1) + i * 10,
    signature: `bench${slot}`,
    venue: "curve",
    side: i % 3 === 0 ? "sell" : "buy",
    trader: `wtrader${i % 10_000}`,
    amountInRaw: quote,
    amountOutRaw: 10n ** 22n + BigInt(i),
    feeRaw: quote / 100n,
    refundRaw: 0n,
    quoteConsumedRaw: quote,
    quoteReserveRaw: 30n * 10n ** 27n,
    tokenReserveRaw: 10n ** 33n,
    realQuoteRaw: 10n ** 20n,
    crossesGraduation: false
  })
}

/** The service's insert path: JSONEachRow batches of 5,000 rows (what the writer sends). */
const serviceInsert = Effect.gen(function* () {
  const ch = yield* ClickHouse
  const n = 100_000
  const batch = 5_000
  const trades = Array.from({ length: n }, (_, i) => tradeRow(benchTrade(i, 1_000), 1n))
  const { ms } = yield* timed(
    Effect.forEach(Array.from({ length: n / batch }, (_, b) => trades.slice(b * batch, (b + 1) * batch)), (chunk) => ch.insert("trades", chunk), {
      discard: true
    })
  )
  yield* report(`ClickHouse.insert: ${n.toLocaleString("en-US")} trades in 5,000-row JSONEachRow inserts`, `${fmtMs(ms)}, ${perSec(n, ms)}`)
})

/** The TradeWriter catching up on a bus backlog (decode, dedupe lookups, dirty checks, inserts). */
const writerCatchUp = Effect.gen(function* () {
  const busDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-bench-bus-"))
  const program = Effect.gen(function* () {
    const bus = yield* Bus
    const events = Array.from({ length: writerTrades }, (_, i) => benchTrade(i, 1_000))
    for (let i = 0; i < events.length; i += 5_000) {
      yield* bus.publish(
        Topics.chainEvents,
        events.slice(i, i + 5_000).map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))
      )
    }
    const scope = yield* Scope.make()
    const start = performance.now()
    const writer = yield* TradeWriter.make({ group: "bench" }).pipe(Scope.extend(scope))
    while (true) {
      const end = yield* bus.endOffsets(Topics.chainEvents)
      const committed = yield* bus.committed("bench", Topics.chainEvents)
      if ([...end].every(([p, o]) => (committed.get(p) ?? 0) >= o)) break
      yield* Effect.sleep("20 millis")
    }
    const ms = performance.now() - start
    const stats = yield* writer.stats
    yield* Scope.close(scope, Exit.void)
    yield* report(
      `TradeWriter: ${writerTrades.toLocaleString("en-US")}-trade bus backlog to committed (16 partitions, defaults)`,
      `${fmtMs(ms)}, ${perSec(writerTrades, ms)} (${stats.flushes} flushes, mean ${Math.round(stats.flushedRows / Math.max(1, stats.flushes))} rows)`
    )
  })
  yield* Effect.provide(program, EmbeddedBus.layer({ dir: busDir, fsync: false })).pipe(
    Effect.ensuring(Effect.sync(() => fs.rmSync(busDir, { recursive: true, force: true })))
  )
})

const reads = Effect.gen(function* () {
  const ch = yield* ClickHouse
  const from = JAN
  const to = JAN + 30 * DAY_MS
  for (const interval of ["1m", "5m", "15m", "1h", "4h", "1d"] as ReadonlyArray<CandleInterval>) {
    const { ms, value } = yield* median(candles("solana", "HOTMINT", interval, from, to))
    yield* report(`candles(HOTMINT, ${interval}, 30 days): ${value.candles.length} candles over ${value.summary?.trades.toLocaleString("en-US")} trades`, fmtMs(ms))
  }
  for (const interval of ["1m", "1h"] as const) {
    const bucket = interval === "1m" ? "toStartOfMinute(ts)" : "toStartOfHour(ts)"
    const { ms } = yield* median(
      ch.query(
        `SELECT toUnixTimestamp(${bucket}) AS s, argMin(price, position) AS o, max(price) AS h, min(price) AS l,
           argMax(price, position) AS c, toString(sum(quote_volume_raw)) AS vq, toString(sum(token_volume_raw)) AS vt, toString(count()) AS n
         FROM trades FINAL WHERE chain = 'solana' AND mint = 'HOTMINT' GROUP BY s ORDER BY s`
      )
    )
    yield* report(`  the same ${interval} candles computed from trades FINAL (no view), for comparison`, fmtMs(ms))
  }
  {
    yield* ch.insert(
      "candles_1m_dirty",
      Array.from({ length: 100 }, (_, i) => ({ chain: "solana", mint: "HOTMINT", bucket: (JAN + i * 7 * 3_600_000) / 1000 }))
    )
    const { ms } = yield* median(candles("solana", "HOTMINT", "1h", from, to))
    yield* report(`candles(HOTMINT, 1h, 30 days) with 100 dirty minutes (recomputed from trades FINAL)`, fmtMs(ms))
  }
  {
    const { ms, value } = yield* median(candles("solana", "mint42", "1h", from, to))
    yield* report(`candles(cold mint, 1h, 30 days): ${value.summary?.trades} trades`, fmtMs(ms))
  }
  for (const limit of [50, 1000]) {
    const { ms } = yield* median(recentTrades("solana", "HOTMINT", limit))
    yield* report(`recentTrades(HOTMINT, ${limit})`, fmtMs(ms))
  }
  {
    const { ms } = yield* median(ch.query("SELECT id FROM trades FINAL WHERE chain = 'solana' AND mint = 'HOTMINT' ORDER BY ts DESC, position DESC LIMIT 50"))
    yield* report(`  the same with FINAL over the whole mint (no window), for comparison`, fmtMs(ms))
  }
  {
    const { ms, value } = yield* median(walletTrades("trader12345", 100))
    yield* report(`walletTrades(one of 200k traders, 100): ${value.length} trades`, fmtMs(ms))
  }
  {
    const final = yield* median(ch.query("SELECT id FROM trades FINAL WHERE trader = 'trader12345' ORDER BY ts DESC LIMIT 100"))
    yield* report(`  the same with FINAL instead of LIMIT 1 BY`, fmtMs(final.ms))
  }
})

const scans = Effect.gen(function* () {
  const ch = yield* ClickHouse
  {
    const { ms, value } = yield* median(
      ch.query<{ n: string }>(
        `SELECT toString(count()) AS n, toString(sum(quote_volume_raw)) AS v, max(price) AS hi FROM trades FINAL`
      )
    )
    yield* report(`full scan with FINAL: count, exact UInt256 volume sum, max price over ${Number(value[0]?.n).toLocaleString("en-US")} trades`, fmtMs(ms))
  }
  {
    const { ms } = yield* median(
      ch.query(
        `SELECT mint, toString(count()) AS n, toString(sum(quote_volume_raw)) AS v, sum(price * toFloat64(token_volume_raw)) / sum(toFloat64(token_volume_raw)) AS vwap
         FROM trades FINAL GROUP BY mint ORDER BY mint`
      )
    )
    yield* report(`full scan with FINAL: per-mint count, volume, VWAP (5,001 groups)`, fmtMs(ms))
  }
  {
    const from = JAN + 10 * DAY_MS
    const to = from + 14 * DAY_MS
    const { ms } = yield* median(
      ch.query(
        `SELECT mint, toString(count()) AS n, toString(sum(quote_volume_raw)) AS v FROM trades FINAL
         WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
         GROUP BY mint`,
        { from, to }
      )
    )
    yield* report(`14-day window with FINAL: per-mint count and volume`, fmtMs(ms))
  }
  {
    // A replay's read: every trade of 14 days in chain order, into JS, one day per statement.
    const from = JAN + 10 * DAY_MS
    let total = 0
    const { ms } = yield* timed(
      Effect.forEach(
        Array.from({ length: 14 }, (_, d) => from + d * DAY_MS),
        (dayStart) =>
          Effect.map(
            ch.query(
              `SELECT mint, side, toUnixTimestamp64Milli(ts) AS ts_ms, price, toString(quote_volume_raw) AS q, toString(token_volume_raw) AS t
               FROM trades FINAL
               WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
               ORDER BY ts, position`,
              { from: dayStart, to: dayStart + DAY_MS }
            ),
            (page) => {
              total += page.length
            }
          ),
        { discard: true }
      )
    )
    yield* report(`14-day replay read into JS (FINAL, ORDER BY ts, position; ${total.toLocaleString("en-US")} trades, 14 pages)`, `${fmtMs(ms)}, ${perSec(total, ms)}`)
  }
})

const program = Effect.gen(function* () {
  console.log(`chDB data directory: ${dataDir}`)
  const ch = yield* ClickHouse
  const [version] = yield* ch.query<{ v: string }>("SELECT version() AS v")
  yield* report("ClickHouse engine (chDB)", version?.v ?? "?")
  yield* report("machine", `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`)
  yield* report("load average at start (1 min; other work on the machine skews every number)", os.loadavg()[0]!.toFixed(2))
  yield* generate
  yield* viewCost
  yield* serviceInsert
  yield* writerCatchUp
  yield* reads
  yield* scans
  yield* report("load average at end (1 min)", os.loadavg()[0]!.toFixed(2))
  console.log("\n" + JSON.stringify({ bench: "clickhouse", rows, results }, null, 2))
})

Effect.runPromise(
  Effect.provide(program, ClickHouse.layerChdb({ dataDir })).pipe(
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.ensuring(Effect.sync(() => (keep ? console.log(`kept ${dataDir}`) : fs.rmSync(dataDir, { recursive: true, force: true }))))
  )
).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
