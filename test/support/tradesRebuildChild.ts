/**
 * The child process of `test/integration/clickhouse.rebuild.test.ts` (not part of the engine):
 * chDB on a data directory, without the engine's layer (which would apply every migration).
 *
 *   prepare <dir> <rows>          migrations 1-5 only, then <rows> trades over two months, plus
 *                                 copies in parts of their own (redelivered, retracted,
 *                                 re-included); prints one JSON line: what the table holds
 *   crash <dir> <step> [delayMs]  runs migration 6's rebuild and kills itself (SIGKILL) after
 *                                 <step>; with a delay, that many ms after the copy started
 *                                 (mid-copy: prints `mid` first), or at `copied` if the copy is
 *                                 done first (then the last line is `copied`);
 *                                 `exchanged-noview`: after the swap, with the candle view dropped
 *                                 (as a ClickHouse that binds a view to its source table's identity
 *                                 would leave it: on the old table)
 *   writer <dir>                  runs the rebuild with a row inserted into `trades` right after
 *                                 the copy (a writer during the migration); prints one JSON line:
 *                                 the failure and what `trades` is then
 *   fail <dir>                    runs the rebuild with a CHECK constraint added to the copy that
 *                                 the first day's rows break (a copy failing half way, as a full
 *                                 disk or a timeout would); prints one JSON line: the failure,
 *                                 the tables left, whether `OPTIMIZE TABLE trades FINAL` merged
 *                                 (it cannot while merges are stopped), and the most parts a
 *                                 partition of `trades` then has
 *
 * Prints `<step>` lines as the rebuild passes each step (synchronous pipe writes: a line is out
 * before the next step runs).
 */
import { Effect, Logger, LogLevel } from "effect"
import { applyMigrations } from "../../clickhouse/ClickHouse.js"
import { makeChdbExecutor } from "../../clickhouse/internal/chdbExecutor.js"
import { rebuildTrades, type RebuildStep, tradesStaging, tradesStoredColumns } from "../../clickhouse/migrations/0006_trades_granules.js"
import { migrations } from "../../clickhouse/migrations/index.js"
import { shapeOf, tradesPartsMaxSql, tradesStateSql, type TradesState } from "./tradesRebuild.js"

const generate = (months: number) => `
INSERT INTO trades (id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw,
  quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, crosses_graduation, position, ts, signature, version, retracted)
SELECT concat('solana:', hex(cityHash64(number)), ':0'), 'solana', concat('mint', toString(number % 97)), 'curve',
  if(number % 3 = 0, 'sell', 'buy'), concat('w', toString(number % 101)),
  toUInt256(1000 + number) * if(number % 1000 = 0, toUInt256('1000000000000000000000000000000'), toUInt256(1)),
  toUInt256(5000 + number % 777), toUInt256(number % 13), toUInt256(0), toUInt256(1000 + number),
  toUInt256(30000000000 + number), toUInt256(1000000000000000 - number), toUInt256(number), number % 500 = 0,
  concat('s:', leftPad(toString(1000 + number), 20, '0'), ':000000:0000'),
  toDateTime64('2024-01-01 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * intDiv(${months} * 2592000000, {n:UInt64})),
  hex(cityHash64(number, 1)), 1, 0
FROM numbers({n:UInt64})`

const say = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

const program = Effect.scoped(
  Effect.gen(function* () {
    const [mode, dir, arg, delay] = process.argv.slice(2)
    if (dir === undefined || (mode !== "prepare" && mode !== "crash" && mode !== "writer" && mode !== "fail")) {
      return yield* Effect.dieMessage("usage: tradesRebuildChild prepare|crash|writer|fail <dir> ...")
    }
    const ch = shapeOf(yield* makeChdbExecutor({ dataDir: dir, database: "curvestream" }))
    yield* applyMigrations(ch, migrations.filter((m) => m.id <= 5))
    if (mode === "prepare") {
      yield* ch.command(generate(2), { n: Number(arg) })
      // Copies in parts of their own: redelivered trades, retractions, re-inclusions.
      const copy = (version: string, retracted: string, where: string) =>
        ch.command(
          `INSERT INTO trades (${tradesStoredColumns}) SELECT ${tradesStoredColumns.replace(", version, retracted", `, ${version} AS v2, ${retracted} AS r2`)} FROM trades WHERE ${where}`
        )
      yield* copy("version", "retracted", "cityHash64(id) % 50 = 0")
      yield* copy("toUInt64(2)", "toUInt8(1)", "cityHash64(id) % 40 = 1")
      yield* copy("toUInt64(3)", "toUInt8(0)", "cityHash64(id) % 80 = 1 AND version = 2")
      const [state] = yield* ch.query<TradesState>(tradesStateSql)
      yield* say(JSON.stringify(state))
      return
    }
    if (mode === "writer") {
      const error = yield* Effect.flip(
        rebuildTrades(ch, {
          onStep: (s) =>
            s === "copied"
              ? Effect.orDie(ch.command(`INSERT INTO trades (${tradesStoredColumns}) SELECT ${tradesStoredColumns.replace("id,", "concat(id, 'w'),")} FROM trades LIMIT 1`))
              : Effect.void
        })
      )
      const [trades] = yield* ch.query<{ comment: string }>("SELECT comment FROM system.tables WHERE database = currentDatabase() AND name = 'trades'")
      const [n] = yield* ch.query<{ n: string }>("SELECT toString(count()) AS n FROM trades")
      yield* say(JSON.stringify({ reason: error.reason, message: error.message, comment: trades?.comment, rows: n?.n }))
      return
    }
    if (mode === "fail") {
      const error = yield* Effect.flip(
        rebuildTrades(ch, {
          onStep: (s) =>
            s === "copying" ? Effect.orDie(ch.command(`ALTER TABLE ${tradesStaging} ADD CONSTRAINT no_mint0 CHECK mint != 'mint0'`)) : Effect.void
        })
      )
      const tables = yield* ch.query<{ name: string }>("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'trades%' ORDER BY name")
      // With merges stopped, OPTIMIZE does nothing; `optimize_throw_if_noop` makes that an error.
      yield* ch.command("SET optimize_throw_if_noop = 1")
      const optimize = yield* Effect.either(ch.command("OPTIMIZE TABLE trades FINAL"))
      const [parts] = yield* ch.query<{ n: string }>(tradesPartsMaxSql)
      yield* say(
        JSON.stringify({
          reason: error.reason,
          message: error.message,
          tables: tables.map((t) => t.name),
          optimize: optimize._tag === "Right" ? "ok" : optimize.left.message,
          parts: parts?.n
        })
      )
      return
    }
    const step = arg as RebuildStep | "exchanged-noview"
    const kill = Effect.sync(() => process.kill(process.pid, "SIGKILL"))
    yield* rebuildTrades(ch, {
      onStep: (s) =>
        Effect.zipRight(
          say(s),
          delay !== undefined
            ? s === "copying"
              ? Effect.sync(
                  () =>
                    void setTimeout(() => {
                      process.stdout.write("mid\n")
                      process.kill(process.pid, "SIGKILL")
                    }, Number(delay))
                )
              : s === "copied" ? kill : Effect.void
            : step === "exchanged-noview" && s === "exchanged"
              ? Effect.zipRight(Effect.orDie(ch.command("DROP VIEW candles_1m_mv SYNC")), kill)
              : s === step ? kill : Effect.void
        )
    })
    yield* say("finished")
  })
)

// Quiet: stdout carries the step lines and the JSON results the test parses.
Effect.runPromise(program.pipe(Logger.withMinimumLogLevel(LogLevel.Warning))).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
