/**
 * Migration 6 rebuilds `trades` (1024-row granules) by copy and swap. A child process
 * (`test/support/tradesRebuildChild.ts`) prepares a database as migrations 1-5 leave it, with
 * trades over two partitions and copies of trades in parts of their own (redelivered, retracted,
 * re-included), then runs the rebuild and kills itself (SIGKILL) at each step, or in the middle of
 * the copy; the engine's layer, opened on what the kill left, finishes the migration. Whatever
 * the crash point: every stored row once (count and fingerprint of every column equal to
 * before), the trades FINAL shows and the candles unchanged, the new layout in place, no
 * staging table left, the candle view fed by the new `trades`, migration 6 recorded once. And a
 * row written into `trades` during the copy (no writer may run during migrations) fails the
 * check before the swap, with `trades` untouched; a copy that fails half way leaves merges
 * running on `trades` and no staging table; a start on a ClickHouse server (the runner's
 * decision, on a chDB executor presented as a server) refuses the rebuild, naming the one-shot
 * command, and changes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { applyMigrations, ClickHouse, migrateCommand } from "../../clickhouse/ClickHouse.js"
import { makeChdbExecutor } from "../../clickhouse/internal/chdbExecutor.js"
import {
  copySpaceNeeded,
  copySpaceRefusal,
  tradesGranuleRows,
  tradesLayoutComment
} from "../../clickhouse/migrations/0006_trades_granules.js"
import { migrations } from "../../clickhouse/migrations/index.js"
import { shapeOf, tradesStateSql, type TradesState } from "../support/tradesRebuild.js"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..")
const childScript = path.join(root, "test/support/tradesRebuildChild.ts")
const ROWS = 200_000

let work = ""
let prepared = ""
let before: TradesState
beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-rebuild-"))
  prepared = path.join(work, "prepared")
  const out = await child(["prepare", prepared, String(ROWS)])
  expect(out.code).toBe(0)
  before = JSON.parse(out.lines[out.lines.length - 1]!) as TradesState
  // The copies are there: more stored rows than FINAL shows.
  expect(Number(before.rows)).toBeGreaterThan(Number(before.visible))
}, 240_000)
afterAll(() => fs.rmSync(work, { recursive: true, force: true }))

const child = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: Array<string> }>((resolve, reject) => {
    const c = spawn(process.execPath, ["--import", "tsx", childScript, ...args], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
    let text = ""
    c.stdout.on("data", (b: Buffer) => (text += b.toString()))
    c.on("error", reject)
    c.on("exit", (code, signal) => resolve({ code, signal, lines: text.split("\n").filter((l) => l !== "") }))
  })

/** Opens `dir` with the engine's layer (which applies what is pending) and reads what a finished rebuild must show. */
const finishAndRead = (dir: string) =>
  Effect.runPromise(
    Effect.provide(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const [state] = yield* ch.query<TradesState>(tradesStateSql)
        const tables = yield* ch.query<{ name: string; comment: string; create_table_query: string; dependencies_table: ReadonlyArray<string> }>(
          "SELECT name, comment, create_table_query, dependencies_table FROM system.tables WHERE database = currentDatabase() AND name LIKE 'trades%' ORDER BY name"
        )
        const recorded = yield* ch.query<{ migration_id: number }>("SELECT migration_id FROM schema_migrations ORDER BY migration_id")
        // The candle view is fed by the new table: one more trade, one more candle trade.
        yield* ch.command(
          `INSERT INTO trades (id, chain, mint, venue, side, trader, amount_in_raw, amount_out_raw, fee_raw, refund_raw, quote_consumed_raw,
             quote_reserve_raw, token_reserve_raw, real_quote_raw, crosses_graduation, position, ts, signature, version, retracted)
           VALUES ('solana:new:0', 'solana', 'mintNew', 'curve', 'buy', 'w', 10, 20, 0, 0, 10, 30, 40, 0, false,
             's:00000000009999999999:000000:0000', '2024-03-01 00:00:00.000', 'sigNew', 1, 0)`
        )
        const [candles] = yield* ch.query<{ n: string }>("SELECT toString(sum(trades)) AS n FROM candles_1m")
        return { state, tables, recorded: recorded.map((r) => Number(r.migration_id)), candleTradesAfterInsert: candles?.n }
      }),
      ClickHouse.layerChdb({ dataDir: dir })
    ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
  )

const expectFinished = (got: Awaited<ReturnType<typeof finishAndRead>>) => {
  expect(got.state).toEqual(before)
  expect(got.tables.map((t) => t.name)).toEqual(["trades"]) // no staging table left
  const [trades] = got.tables
  expect(trades!.comment).toBe(tradesLayoutComment)
  expect(trades!.create_table_query).toContain(`index_granularity = ${tradesGranuleRows}`)
  expect(trades!.dependencies_table).toEqual(["candles_1m_mv"])
  expect(got.recorded).toEqual(migrations.map((m) => m.id))
  expect(got.candleTradesAfterInsert).toBe(String(Number(before.candle_trades) + 1))
}

describe("migration 6: trades rebuilt by copy and swap", () => {
  it("runs in full on the engine's start, once", async () => {
    const dir = path.join(work, "full")
    fs.cpSync(prepared, dir, { recursive: true })
    expectFinished(await finishAndRead(dir))
  }, 240_000)

  for (const [point, args] of [
    ["in the middle of the copy", ["copying", "150"]],
    ["after the copy", ["copied"]],
    ["after the check", ["verified"]],
    ["after the swap", ["exchanged"]],
    ["after the swap, the candle view gone from trades", ["exchanged-noview"]],
    ["after the view is put back", ["view"]],
    ["after the old table is dropped, before the migration is recorded", ["dropped"]]
  ] as const) {
    it(`killed ${point}: the next start finishes it, every row once`, async () => {
      const dir = path.join(work, args[0] + (args[1] ?? ""))
      fs.cpSync(prepared, dir, { recursive: true })
      const crash = await child(["crash", dir, ...args])
      expect(crash.signal).toBe("SIGKILL")
      expect(crash.lines).not.toContain("finished")
      // The last line is where it died: the step, or `mid` (the timer fired before the copy ended).
      expect(crash.lines[crash.lines.length - 1]).toBe(args[1] === undefined ? args[0].replace("-noview", "") : "mid")
      expectFinished(await finishAndRead(dir))
    }, 240_000)
  }

  it("a row written during the copy fails the check, leaves trades as it was, and the next start copies it too", async () => {
    const dir = path.join(work, "writer")
    fs.cpSync(prepared, dir, { recursive: true })
    const run = await child(["writer", dir])
    expect(run.code).toBe(0)
    const result = JSON.parse(run.lines[run.lines.length - 1]!) as { reason: string; message: string; comment: string; rows: string }
    expect(result.reason).toBe("MigrationFailed")
    expect(result.message).toContain("the copy differs")
    expect(result.comment).toBe("") // still migration 2's table
    expect(result.rows).toBe(String(Number(before.rows) + 1))
    const got = await finishAndRead(dir)
    expect(got.state?.rows).toBe(String(Number(before.rows) + 1))
    expect(got.tables.map((t) => [t.name, t.comment])).toEqual([["trades", tradesLayoutComment]])
    expect(got.recorded).toEqual(migrations.map((m) => m.id))
  }, 240_000)

  it("a copy that fails half way leaves merges running on trades and no staging table, and the next start copies it", async () => {
    const dir = path.join(work, "fail")
    fs.cpSync(prepared, dir, { recursive: true })
    const run = await child(["fail", dir])
    expect(run.code).toBe(0)
    const result = JSON.parse(run.lines[run.lines.length - 1]!) as { message: string; tables: Array<string>; optimize: string; parts: string }
    expect(result.message).toContain("no_mint0") // the copy's insert failed on the constraint
    expect(result.tables).toEqual(["trades"]) // the partial copy dropped
    expect(result.optimize).toBe("ok") // merges run on trades (stopped, OPTIMIZE would refuse)
    expect(result.parts).toBe("1")
    // The OPTIMIZE collapsed the copies, so compare only what FINAL shows and the candles.
    const got = await finishAndRead(dir)
    expect(got.state?.visible).toBe(before.visible)
    expect(got.state?.candle_trades).toBe(before.candle_trades)
    expect(got.tables.map((t) => [t.name, t.comment])).toEqual([["trades", tradesLayoutComment]])
    expect(got.recorded).toEqual(migrations.map((m) => m.id))
  }, 240_000)

  it("a start on a ClickHouse server refuses the pending rebuild, naming the one-shot command, and changes nothing", async () => {
    const dir = path.join(work, "server")
    fs.cpSync(prepared, dir, { recursive: true })
    const got = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          // The runner's decision: the same chDB directory, presented as a server's executor.
          const ch = shapeOf(yield* makeChdbExecutor({ dataDir: dir, database: "curvestream" }), "server")
          const error = yield* Effect.flip(applyMigrations(ch, migrations))
          const [state] = yield* ch.query<TradesState>(tradesStateSql)
          const tables = yield* ch.query<{ name: string; comment: string }>(
            "SELECT name, comment FROM system.tables WHERE database = currentDatabase() AND name LIKE 'trades%' ORDER BY name"
          )
          const recorded = yield* ch.query<{ migration_id: number }>("SELECT migration_id FROM schema_migrations ORDER BY migration_id")
          // The one-shot's choice on the same runner: it runs (read at once, before merges collapse the copies).
          const applied = yield* applyMigrations(ch, migrations, "run")
          const [stateAfter] = yield* ch.query<TradesState>(tradesStateSql)
          const tablesAfter = yield* ch.query<{ name: string; comment: string }>(
            "SELECT name, comment FROM system.tables WHERE database = currentDatabase() AND name LIKE 'trades%' ORDER BY name"
          )
          return {
            error,
            state,
            tables,
            recorded: recorded.map((r) => Number(r.migration_id)),
            applied: applied.map((m) => m.id),
            stateAfter,
            tablesAfter
          }
        })
      ).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
    )
    expect(got.error.reason).toBe("MigrationFailed")
    expect(got.error.message).toContain("migration 6_trades_granules is pending")
    expect(got.error.message).toContain(migrateCommand)
    expect(got.error.message).toContain("Stop every engine")
    expect(got.state).toEqual(before)
    expect(got.tables.map((t) => [t.name, t.comment])).toEqual([["trades", ""]])
    expect(got.recorded).toEqual([1, 2, 3, 4, 5])
    expect(got.applied).toEqual([6])
    expect(got.stateAfter).toEqual(before)
    expect(got.tablesAfter.map((t) => [t.name, t.comment])).toEqual([["trades", tradesLayoutComment]])
  }, 240_000)

  it("the copy's free-space check, at its bound", () => {
    expect(copySpaceNeeded(1000n)).toBe(1500n)
    expect(copySpaceRefusal("default", 1500n, 1000n)).toBeUndefined()
    const refusal = copySpaceRefusal("default", 1499n, 1000n)
    expect(refusal).toContain("disk default has 1499 bytes free, and the copy needs 1500")
    expect(refusal).toContain("trades is unchanged")
    expect(copySpaceRefusal("default", 0n, 0n)).toBeUndefined() // an empty table
  })
})
