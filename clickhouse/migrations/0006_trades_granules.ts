/**
 * `trades` rebuilt with smaller granules (issue 34: the typical replay under 2 s). The table of
 * 0002 keeps ClickHouse's 8192-row granules, and a replay's per-token range read pays for whole
 * granules: one holds about four small mints' whole month, so a read of one token's day
 * decompresses 8192 rows of every column it needs (five `UInt256` among them). The new table
 * has `index_granularity = 1024` and compressed blocks no larger than a granule needs, so a
 * read decompresses about what it selects, and is copied a day per insert, so its parts hold
 * stretches of time (measured: docs/decisions.md, "`trades` rebuilt with 1024-row granules, by
 * copy and swap"). Columns, types, engine, partitioning and keys are 0002's, unchanged.
 *
 * A rebuild is a program, not idempotent DDL (ClickHouse cannot change a table's granularity in
 * place, and plain DDL cannot say "only if not done yet"), so it is this migration's `run`.
 * Its state lives in the database, and every step is safe to re-run from wherever a crash
 * (kill -9) left it. It is not safe to run twice at once (two runs drop each other's copy, and
 * one can drop the only complete table), and it must run with no writer: on chDB the engine's
 * start runs it (one process per data directory, migrating before its writers start); on a
 * ClickHouse server a start refuses it and `npm run clickhouse:migrate` runs it, once, with
 * every engine stopped (`MigrationPrograms` in ClickHouse.ts). The steps:
 * 1. Merges on `trades` started (idempotent: a run killed with them stopped, on a server, left
 *    them so). `trades` already has the new layout (the table's comment `layout 0006`): a
 *    crash came after the exchange; only the finish is left (step 5).
 * 2. Otherwise `trades` is 0002's table and holds every row. A leftover `trades_0006` is a
 *    copy an interrupted run began: dropped. The disk must have the table's bytes and half
 *    again free (`copySpaceRefusal`). The new table is created empty and every stored
 *    row copied into it as it is, unmerged copies of a trade included, one day per insert in
 *    time order (logged at Info: rows and time per day), merges stopped on both tables until the
 *    check (`copyDaySql`; the `MATERIALIZED` volume and price columns are recomputed by the same
 *    expressions). On any failure from here to the swap, merges on `trades` are started again and
 *    the copy dropped (`undoCopy`).
 * 3. Verified: the same row count and the same order-free fingerprint (a wrapping sum of a
 *    hash of every stored column) in both tables, or the migration fails with `trades` untouched.
 *    This catches a row written during the copy, not one written between the check and the
 *    swap (that row stays in the old table and is dropped with it): the check narrows the
 *    window; only running with no writer closes it.
 * 4. `EXCHANGE TABLES trades AND trades_0006`: one atomic swap (the Atomic database engine,
 *    chDB's and the server's default), so `trades` is at every instant one complete table.
 * 5. The finish: the candle view (0003) re-created with 0003's statement if `trades` no longer
 *    feeds it (chDB 26.7 keeps a view on its source's name, so after the swap it reads the new
 *    `trades`; a ClickHouse that bound it to the old table's identity would leave it there), then
 *    merges started again and `trades_0006`, now the old table, dropped. The candles and the
 *    dirty-minute marks are untouched (the copy's inserts feed no view). Reads and the writer
 *    name `trades` only.
 * The runner records the migration only after `run` returns, so a crash anywhere re-runs it.
 */
import { Clock, Effect } from "effect"
import type { ClickHouseShape } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"
import { candles1m } from "./0003_candles_1m.js"
import type { ClickHouseMigration } from "./index.js"

/** The table comment that marks the rebuilt layout. */
export const tradesLayoutComment = "layout 0006: 1024-row granules"
/** Where the copy is built, and where the old table is left after the swap until dropped. */
export const tradesStaging = "trades_0006"
/** Rows per granule (with `min_compress_block_size = 8192`, a granule of a wide column is its own compressed block). */
export const tradesGranuleRows = 1024

/** 0002's columns and keys; only the table settings differ. */
export const tradesTableSql = (name: string) => `CREATE TABLE ${name} (
      id String,
      chain LowCardinality(String),
      mint String,
      venue Enum8('curve' = 1, 'pool' = 2),
      side Enum8('buy' = 1, 'sell' = 2),
      trader String,
      amount_in_raw UInt256,
      amount_out_raw UInt256,
      fee_raw UInt256,
      refund_raw UInt256,
      quote_consumed_raw UInt256,
      quote_reserve_raw UInt256,
      token_reserve_raw UInt256,
      real_quote_raw UInt256,
      quote_volume_raw UInt256 MATERIALIZED if(side = 'buy', quote_consumed_raw, amount_out_raw + fee_raw),
      token_volume_raw UInt256 MATERIALIZED if(side = 'buy', amount_out_raw, amount_in_raw),
      price Float64 MATERIALIZED multiIf(
        token_volume_raw > 0,
        toFloat64(if(side = 'buy', quote_consumed_raw - least(fee_raw, quote_consumed_raw), amount_out_raw + fee_raw)) / toFloat64(token_volume_raw),
        token_reserve_raw > 0,
        toFloat64(quote_reserve_raw) / toFloat64(token_reserve_raw),
        0),
      crosses_graduation Bool,
      position String,
      ts DateTime64(3, 'UTC'),
      signature String,
      version UInt64,
      retracted UInt8
    ) ENGINE = ReplacingMergeTree(version, retracted)
    PARTITION BY toYYYYMM(ts)
    PRIMARY KEY (chain, mint, ts)
    ORDER BY (chain, mint, ts, position, id)
    SETTINGS primary_key_ratio_of_unique_prefix_values_to_skip_suffix_columns = 1,
      index_granularity = ${tradesGranuleRows}, min_compress_block_size = 8192
    COMMENT '${tradesLayoutComment}'`

/** The stored (not MATERIALIZED) columns: what a copy inserts. */
export const tradesStoredColumns =
  "id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw, quote_consumed_raw, quote_reserve_raw, token_reserve_raw, real_quote_raw, crosses_graduation, position, ts, signature, version, retracted"

/** The days (UTC) that hold trades in `source`, oldest first, with their stored rows. */
export const tradesDaysSql = (source: string) =>
  `SELECT toString(toDate(ts, 'UTC')) AS day, toString(count()) AS n FROM ${source} GROUP BY day ORDER BY day`

/**
 * One day's stored rows of `source` into `target`, as they are (`day`: `YYYY-MM-DD`, checked by
 * the caller). One insert per day, in time order, so each part the copy writes holds a stretch
 * of time, as the writer's inserts do (measured: a copy in one statement reads in parallel
 * streams, every part then spans the whole month, and a read of a short time selects granules
 * in every part). `optimize_on_insert = 0`: otherwise the insert would already collapse copies
 * of a trade that fall in one block (what a merge does).
 */
export const copyDaySql = (target: string, source: string, day: string) =>
  `INSERT INTO ${target} (${tradesStoredColumns}) SETTINGS optimize_on_insert = 0
   SELECT ${tradesStoredColumns} FROM ${source}
   WHERE ts >= toDateTime64(toDate('${day}'), 3, 'UTC') AND ts < toDateTime64(toDate('${day}') + 1, 3, 'UTC')`

const fingerprintSql = (table: string) =>
  `SELECT toString(count()) AS n, toString(sum(cityHash64(${tradesStoredColumns}))) AS h FROM ${table}`

/** The points `rebuildTrades` reports after (the crash tests stop the process at each). */
export type RebuildStep = "copying" | "copied" | "verified" | "exchanged" | "view" | "dropped"

export interface RebuildHooks {
  /** Called after each step (and before the copy starts: `copying`). */
  readonly onStep?: (step: RebuildStep) => Effect.Effect<void>
}

const failed = (message: string) => new ClickHouseError({ reason: "MigrationFailed", message })

/**
 * The free space the copy asks for: the old table's bytes on disk plus half (the copy is a second
 * table with the same rows; 1024-row granules and 8 KiB blocks compress a little worse, and the
 * disk also holds everything else).
 */
export const copySpaceNeeded = (tradesBytes: bigint): bigint => tradesBytes + tradesBytes / 2n

/** Why the copy does not start on a disk with `freeBytes` free for a table of `tradesBytes`; undefined when it fits. */
export const copySpaceRefusal = (disk: string, freeBytes: bigint, tradesBytes: bigint): string | undefined => {
  const needed = copySpaceNeeded(tradesBytes)
  return freeBytes >= needed
    ? undefined
    : `rebuild of trades: disk ${disk} has ${freeBytes} bytes free, and the copy needs ${needed} (trades holds ${tradesBytes} bytes on disk, plus half); free space and start again; trades is unchanged`
}

const spaceSql = `SELECT p.disk AS disk, toString(p.bytes) AS bytes, toString(d.free_space) AS free
  FROM (SELECT any(disk_name) AS disk, sum(bytes_on_disk) AS bytes FROM system.parts
        WHERE database = currentDatabase() AND table = 'trades' AND active) AS p
  LEFT JOIN system.disks AS d ON d.name = p.disk`

/** Rebuilds `trades` into the 0006 layout; a no-op once done (see the module comment for the steps). */
export const rebuildTrades = (ch: ClickHouseShape, hooks: RebuildHooks = {}): Effect.Effect<void, ClickHouseError> =>
  Effect.gen(function* () {
    const step = (s: RebuildStep) => hooks.onStep?.(s) ?? Effect.void
    const [trades] = yield* ch.query<{ comment: string }>(
      "SELECT comment FROM system.tables WHERE database = currentDatabase() AND name = 'trades'"
    )
    if (trades === undefined) return yield* failed("rebuild of trades: no trades table (migration 2 creates it)")
    // Merges on `trades` are stopped only by a run of this program; a run killed before it
    // started them again (on a server, the server keeps them stopped) is undone here first.
    yield* ch.command("SYSTEM START MERGES trades")
    if (trades.comment !== tradesLayoutComment) yield* copyAndSwap(ch, step)
    yield* finish(ch, step)
  })

/** Steps 2-4: the copy, the check and the swap; on any failure, merges started and the copy dropped. */
const copyAndSwap = (ch: ClickHouseShape, step: (s: RebuildStep) => Effect.Effect<void>): Effect.Effect<void, ClickHouseError> =>
  Effect.gen(function* () {
    yield* ch.command(`DROP TABLE IF EXISTS ${tradesStaging} SYNC`)
    const [space] = yield* ch.query<{ disk: string; bytes: string; free: string }>(spaceSql)
    const refusal = space === undefined ? undefined : copySpaceRefusal(space.disk, BigInt(space.free), BigInt(space.bytes))
    if (refusal !== undefined) return yield* failed(refusal)
    const days = yield* ch.query<{ day: string; n: string }>(tradesDaysSql("trades"))
    const rows = days.reduce((sum, d) => sum + BigInt(d.n), 0n)
    yield* Effect.logInfo(
      `ClickHouse migration 6: rebuilding trades into 1024-row granules: ${rows} rows, ${space?.bytes ?? "0"} bytes on disk, ${days.length} days, one insert per day`
    )
    yield* ch.command(tradesTableSql(tradesStaging))
    yield* step("copying")
    // No merge in either table until the check: a merge collapses copies of a trade, and the
    // tables are compared row for row.
    yield* ch.command("SYSTEM STOP MERGES trades")
    yield* ch.command(`SYSTEM STOP MERGES ${tradesStaging}`)
    const started = yield* Clock.currentTimeMillis
    for (const [i, { day, n }] of days.entries()) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return yield* failed(`rebuild of trades: a day read as ${JSON.stringify(day)}`)
      const dayStarted = yield* Clock.currentTimeMillis
      yield* ch.command(copyDaySql(tradesStaging, "trades", day))
      const now = yield* Clock.currentTimeMillis
      yield* Effect.logInfo(
        `ClickHouse migration 6: copied ${day} (${i + 1} of ${days.length}): ${n} rows in ${now - dayStarted} ms, ${now - started} ms so far`
      )
    }
    yield* step("copied")
    const [before] = yield* ch.query<{ n: string; h: string }>(fingerprintSql("trades"))
    const [after] = yield* ch.query<{ n: string; h: string }>(fingerprintSql(tradesStaging))
    if (before?.n !== after?.n || before?.h !== after?.h) {
      return yield* failed(
        `rebuild of trades: the copy differs (${before?.n} rows in trades, ${after?.n} in ${tradesStaging}); was a writer running? trades is unchanged`
      )
    }
    yield* step("verified")
    yield* ch.command(`EXCHANGE TABLES trades AND ${tradesStaging}`)
    yield* step("exchanged")
  }).pipe(Effect.onError(() => undoCopy(ch)))

/**
 * After a failed copy: merges on `trades` started again and the partial copy dropped, unless the
 * swap took place after all (a server that ran the EXCHANGE after its request failed): then
 * `trades_0006` is the old table, and the next run's finish drops it after the view is checked.
 * Its own failures are logged, and the copy's failure is what the run reports.
 */
const undoCopy = (ch: ClickHouseShape): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* ch.command("SYSTEM START MERGES trades")
    const [trades] = yield* ch.query<{ comment: string }>(
      "SELECT comment FROM system.tables WHERE database = currentDatabase() AND name = 'trades'"
    )
    if (trades !== undefined && trades.comment !== tradesLayoutComment) yield* ch.command(`DROP TABLE IF EXISTS ${tradesStaging} SYNC`)
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning(`ClickHouse migration 6: after the failed copy, restarting merges or dropping ${tradesStaging} failed: ${error.message}`)
    )
  )

/**
 * Step 5, the finish. Here `trades` has the new layout, so a `trades_0006` is the old table. The
 * view is put on `trades` first, so at no point is its source a dropped table.
 */
const finish = (ch: ClickHouseShape, step: (s: RebuildStep) => Effect.Effect<void>): Effect.Effect<void, ClickHouseError> =>
  Effect.gen(function* () {
    const [now] = yield* ch.query<{ dependencies_table: ReadonlyArray<string> }>(
      "SELECT dependencies_table FROM system.tables WHERE database = currentDatabase() AND name = 'trades'"
    )
    if (!(now?.dependencies_table ?? []).includes("candles_1m_mv")) {
      const view = candles1m.statements.find((s) => s.includes("CREATE MATERIALIZED VIEW"))
      if (view === undefined) return yield* failed("rebuild of trades: migration 3 has no candle view statement")
      yield* ch.command("DROP VIEW IF EXISTS candles_1m_mv SYNC")
      yield* ch.command(view)
    }
    yield* step("view")
    yield* ch.command("SYSTEM START MERGES trades")
    yield* ch.command(`DROP TABLE IF EXISTS ${tradesStaging} SYNC`)
    yield* step("dropped")
    yield* Effect.logInfo("ClickHouse migration 6: trades rebuilt into 1024-row granules")
  })

export const tradesGranules: ClickHouseMigration = {
  id: 6,
  name: "trades_granules",
  statements: [],
  // The new table's text is data here too, so a change to it changes what the bench's cache key hashes.
  rebuild: tradesTableSql("trades"),
  run: (ch) => rebuildTrades(ch)
}
