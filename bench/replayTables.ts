/**
 * Other layouts of `trades` beside it, in a data set of `bench/replay.ts`, for `bench/replay.ts
 * --tables` to replay against side by side (issue 34; printed, never asserted). Opens the
 * directory without applying the engine's migrations, so it can keep the table as it is before
 * a migration rebuilds it.
 *
 *   npx tsx bench/replayTables.ts --dir DIR --table NAME (--clone | [--granularity G] [--min-compress B] [--codec C] [--quote-notional] [--by-day])
 *
 * - `--clone`: NAME gets `trades`'s own DDL and its parts (hard links, `ATTACH PARTITION ...
 *   FROM`): the same table, parts and merges as `trades` now (run it before migration 6
 *   rebuilds `trades`, to keep 0002's table to compare with).
 * - otherwise: NAME is migration 6's table (`tradesTableSql`) with `index_granularity = G`
 *   (default 1024), `min_compress_block_size = B` (default: the migration's), each `UInt256`
 *   column with `CODEC(C)` (default: none, LZ4), and with `--quote-notional` a stored
 *   `quote_notional_raw` (the replay's fee-free quote notional); filled with every row of
 *   `trades` (`INSERT ... SELECT` in one statement; with `--by-day`, one insert per day in time
 *   order, as migration 6 copies). Then it waits until the background merges of NAME are done
 *   (the next process would run them), printing the parts.
 * An existing NAME is left as it is; its background merges are waited for (e.g. `trades` after
 * the migration rebuilt it).
 */
import { Effect } from "effect"
import * as os from "node:os"
import { makeChdbExecutor } from "../clickhouse/internal/chdbExecutor.js"
import { copyDaySql, tradesDaysSql, tradesStoredColumns, tradesTableSql } from "../clickhouse/migrations/0006_trades_granules.js"

const args = process.argv.slice(2)
const option = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const dataDir = option("dir")
const table = option("table")
if (dataDir === undefined || table === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new Error("--dir DIR --table NAME (a plain identifier)")

const program = Effect.scoped(
  Effect.gen(function* () {
    const ex = yield* makeChdbExecutor({ dataDir, database: "curvestream" })
    const [exists] = yield* ex.query("SELECT toString(count()) AS n FROM system.tables WHERE database = currentDatabase() AND name = {t:String}", { t: table })
    const t0 = performance.now()
    if ((exists as { n: string }).n !== "0") console.log(`${table} exists; left as it is (its merges waited for)`)
    else if (args.includes("--clone")) {
      const [ddl] = (yield* ex.query("SHOW CREATE TABLE trades", undefined)) as ReadonlyArray<{ statement: string }>
      yield* ex.command(ddl!.statement.replace(/CREATE TABLE (\S+)\.trades\b/, `CREATE TABLE $1.${table}`), undefined)
      const partitions = (yield* ex.query(
        "SELECT DISTINCT partition_id FROM system.parts WHERE database = currentDatabase() AND table = 'trades' AND active",
        undefined
      )) as ReadonlyArray<{ partition_id: string }>
      for (const p of partitions) yield* ex.command(`ALTER TABLE ${table} ATTACH PARTITION ID '${p.partition_id}' FROM trades`, undefined)
    } else {
      const granularity = Number(option("granularity") ?? "1024")
      const minCompress = option("min-compress")
      const codec = option("codec")
      let ddl = tradesTableSql(table).replace(/index_granularity = \d+/, `index_granularity = ${granularity}`)
      if (minCompress !== undefined) ddl = ddl.replace(/min_compress_block_size = \d+/, `min_compress_block_size = ${Number(minCompress)}`)
      if (codec !== undefined) ddl = ddl.replace(/ UInt256(,| MATERIALIZED)/g, ` UInt256 CODEC(${codec})$1`)
      if (args.includes("--quote-notional"))
        ddl = ddl.replace(
          "      crosses_graduation Bool,",
          "      quote_notional_raw UInt256 MATERIALIZED if(side = 'buy', quote_consumed_raw - least(fee_raw, quote_consumed_raw), amount_out_raw + fee_raw),\n      crosses_graduation Bool,"
        )
      ddl = ddl.replace(/COMMENT '[^']*'/, `COMMENT 'bench/replayTables.ts'`)
      console.log(ddl)
      yield* ex.command(ddl, undefined)
      if (args.includes("--by-day")) {
        const days = (yield* ex.query(tradesDaysSql("trades"), undefined)) as ReadonlyArray<{ day: string }>
        for (const { day } of days) yield* ex.command(copyDaySql(table, "trades", day), undefined)
      } else yield* ex.command(`INSERT INTO ${table} (${tradesStoredColumns}) SELECT ${tradesStoredColumns} FROM trades SETTINGS optimize_on_insert = 0`, undefined)
    }
    console.log(`${table} ready in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${os.loadavg()[0]!.toFixed(2)})`)
    // Wait for the background merges: no merge running and the same parts for 10 s.
    let last = ""
    let stableSince = performance.now()
    for (;;) {
      const [state] = (yield* ex.query(
        `SELECT toString((SELECT count() FROM system.merges WHERE database = currentDatabase() AND table = {t:String})) AS merging,
           toString((SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = {t:String} AND active)) AS parts`,
        { t: table }
      )) as ReadonlyArray<{ merging: string; parts: string }>
      const now = `${state!.merging}/${state!.parts}`
      if (now !== last || state!.merging !== "0") {
        last = now
        stableSince = performance.now()
      } else if (performance.now() - stableSince > 10_000) break
      yield* Effect.sleep("2 seconds")
    }
    const [size] = (yield* ex.query(
      `SELECT toString(count()) AS parts, formatReadableSize(sum(data_compressed_bytes)) AS bytes, toString(sum(marks)) AS marks
       FROM system.parts WHERE database = currentDatabase() AND table = {t:String} AND active`,
      { t: table }
    )) as ReadonlyArray<{ parts: string; bytes: string; marks: string }>
    console.log(`${table}: ${size!.parts} active parts, ${size!.marks} marks, ${size!.bytes} compressed; done after ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  })
)

Effect.runPromise(program).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
