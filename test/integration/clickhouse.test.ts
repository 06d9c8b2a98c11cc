/**
 * The `ClickHouse` service on its embedded executor, chDB, in a temp data directory (one per
 * file: libchdb binds one data directory per process), and the server layer's refusal when
 * nothing listens. The server executor's own behaviour is `clickhouse.server.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import {
  applyMigrations,
  ClickHouse,
  type ChdbOptions,
  type ClickHouseError,
  insertRowsMaxDefault
} from "../../clickhouse/ClickHouse.js"
import { migrations } from "../../clickhouse/migrations/index.js"

let dataDir = ""
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-chdb-"))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const withClickHouse = <A, E>(
  program: Effect.Effect<A, E, ClickHouse>,
  options: Partial<ChdbOptions> = {}
): Effect.Effect<A, E | ClickHouseError> =>
  Effect.suspend(() => Effect.provide(program, ClickHouse.layerChdb({ dataDir, ...options })))

const tradesTable = `
  CREATE TABLE IF NOT EXISTS test_trades (
    mint String,
    slot UInt64,
    amount_raw UInt256,
    side Enum8('buy' = 1, 'sell' = 2),
    at DateTime64(3, 'UTC')
  ) ENGINE = MergeTree ORDER BY (mint, slot)`

interface TradeRow {
  readonly mint: string
  readonly slot: string
  readonly amount_raw: string
  readonly side: "buy" | "sell"
  readonly at: string
}

describe("ClickHouse on chDB", () => {
  it.live("creates the database, applies the migrations at start and nothing on reopen", () =>
    Effect.gen(function* () {
      const first = yield* withClickHouse(
        Effect.gen(function* () {
          const ch = yield* ClickHouse
          expect(ch.executor).toBe("chdb")
          expect(ch.database).toBe("curvestream")
          const [current] = yield* ch.query<{ db: string }>("SELECT currentDatabase() AS db")
          expect(current?.db).toBe("curvestream")
          // Already applied by the layer: running the runner again applies nothing.
          expect(yield* applyMigrations(ch, migrations)).toEqual([])
          return yield* ch.query<{ migration_id: number; name: string; applied_at: string }>(
            "SELECT migration_id, name, applied_at FROM schema_migrations ORDER BY migration_id"
          )
        })
      )
      expect(first.map((m) => [m.migration_id, m.name])).toEqual(migrations.map((m) => [m.id, m.name]))
      expect(first[0]).toMatchObject({ migration_id: 1, name: "schema_migrations" })
      // Reopen: still one record per migration (none recorded twice, none re-applied).
      const second = yield* withClickHouse(
        Effect.flatMap(ClickHouse, (ch) =>
          ch.query("SELECT migration_id, name, applied_at FROM schema_migrations ORDER BY migration_id")
        )
      )
      expect(second).toEqual(first)
    })
  )

  it.live("a recorded migration that is not this build's (another name under its id) fails the run before anything is applied", () => {
    const ownDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-chdb-foreign-"))
    return withClickHouse(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        // As a data directory migrated by another build (a branch's migration of the same id) would hold.
        yield* ch.insert("schema_migrations", [{ migration_id: 9000, name: "elsewhere" }])
        const error = yield* Effect.flip(
          applyMigrations(ch, [
            ...migrations,
            { id: 9000, name: "ours", statements: [] },
            { id: 9001, name: "next", statements: ["CREATE TABLE IF NOT EXISTS next_one (id UInt8) ENGINE = Memory"] }
          ])
        )
        expect(error.reason).toBe("MigrationFailed")
        expect(error.message).toContain(`migration 9000 is recorded as "elsewhere", and this build's migration 9000 is "ours"`)
        const [left] = yield* ch.query<{ n: string }>(
          "SELECT toString(count()) AS n FROM system.tables WHERE database = currentDatabase() AND name = 'next_one'"
        )
        expect(left?.n).toBe("0")
      }),
      { dataDir: ownDir }
    ).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(ownDir, { recursive: true, force: true }))))
  })

  it.live("inserts rows into a MergeTree table and queries them with bound parameters", () =>
    withClickHouse(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        yield* ch.command(tradesTable)
        yield* ch.insert("test_trades", [
          { mint: "MintA", slot: 10n, amount_raw: 2n ** 200n, side: "buy", at: "2024-01-01 00:00:00.000" },
          { mint: "MintA", slot: 11, amount_raw: "5", side: "sell", at: "2024-01-01 00:00:00.400" },
          { mint: "MintB", slot: 12, amount_raw: "7", side: "buy", at: "2024-01-01 00:00:00.800" }
        ])
        const rows = yield* ch.query<TradeRow>(
          "SELECT * FROM test_trades WHERE mint = {mint:String} AND slot >= {fromSlot:UInt64} ORDER BY slot",
          { mint: "MintA", fromSlot: 10n }
        )
        expect(rows).toEqual([
          { mint: "MintA", slot: "10", amount_raw: (2n ** 200n).toString(), side: "buy", at: "2024-01-01 00:00:00.000" },
          { mint: "MintA", slot: "11", amount_raw: "5", side: "sell", at: "2024-01-01 00:00:00.400" }
        ])
        // A bound value is data, never SQL.
        const none = yield* ch.query("SELECT * FROM test_trades WHERE mint = {mint:String}", { mint: "' OR 1=1 --" })
        expect(none).toEqual([])
        // command takes parameters too.
        yield* ch.command("ALTER TABLE test_trades DELETE WHERE mint = {mint:String} SETTINGS mutations_sync = 1", {
          mint: "MintB"
        })
        const [count] = yield* ch.query<{ n: string }>("SELECT count() AS n FROM test_trades")
        expect(count?.n).toBe("2")
      })
    )
  )

  it.live("keeps the data after the session is closed and the directory reopened", () =>
    withClickHouse(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const rows = yield* ch.query<{ mint: string; slot: string }>("SELECT mint, slot FROM test_trades ORDER BY slot")
        expect(rows).toEqual([
          { mint: "MintA", slot: "10" },
          { mint: "MintA", slot: "11" }
        ])
      })
    )
  )

  it.live("refuses an insert over the row bound or the byte bound, writing nothing", () =>
    Effect.gen(function* () {
      yield* withClickHouse(
        Effect.gen(function* () {
          const ch = yield* ClickHouse
          yield* ch.command("CREATE TABLE IF NOT EXISTS test_bound (id UInt32, note String) ENGINE = MergeTree ORDER BY id")
          const rows = (n: number, note = "") => Array.from({ length: n }, (_, id) => ({ id, note }))

          const tooMany = yield* Effect.flip(ch.insert("test_bound", rows(4)))
          expect(tooMany.reason).toBe("InsertTooLarge")
          const tooBig = yield* Effect.flip(ch.insert("test_bound", rows(1, "x".repeat(300))))
          expect(tooBig.reason).toBe("InsertTooLarge")
          const [empty] = yield* ch.query<{ n: string }>("SELECT count() AS n FROM test_bound")
          expect(empty?.n).toBe("0")

          // At the bound is accepted.
          yield* ch.insert("test_bound", rows(3, "ok"))
          const [three] = yield* ch.query<{ n: string }>("SELECT count() AS n FROM test_bound")
          expect(three?.n).toBe("3")
        }),
        { insertRowsMax: 3, insertBytesMax: 256 }
      )
      // The default row bound applies when none is given.
      const overDefault = yield* withClickHouse(
        Effect.flatMap(ClickHouse, (ch) =>
          Effect.flip(ch.insert("test_bound", Array.from({ length: insertRowsMaxDefault + 1 }, (_, id) => ({ id, note: "" }))))
        )
      )
      expect(overDefault.reason).toBe("InsertTooLarge")
    })
  )

  it.live("refuses what it cannot run safely and reports ClickHouse's failures", () =>
    withClickHouse(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const badTable = yield* Effect.flip(ch.insert("test_bound; DROP TABLE test_bound", [{ id: 1 }]))
        expect(badTable.reason).toBe("InvalidRequest")
        const unknownTable = yield* Effect.flip(ch.query("SELECT * FROM no_such_table"))
        expect(unknownTable.reason).toBe("QueryFailed")
        expect(unknownTable.clickhouseCode).toBe(60)
        const missingParam = yield* Effect.flip(ch.query("SELECT {x:UInt64} AS x", {}))
        expect(missingParam.reason).toBe("QueryFailed")
        const badRow = yield* Effect.flip(ch.insert("test_bound", [{ id: "not a number" }]))
        expect(badRow.reason).toBe("QueryFailed")
        // The session is still usable after failures.
        yield* ch.ping
      })
    )
  )

  it.live("refuses a bad database name before touching the engine", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(withClickHouse(Effect.void, { database: "curvestream; DROP DATABASE x" }))
      expect(error.reason).toBe("InvalidRequest")
    })
  )

  it.live("refuses a second data directory in the same process (libchdb binds one)", () =>
    withClickHouse(
      Effect.gen(function* () {
        const other = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-chdb-other-"))
        const error = yield* Effect.flip(Effect.provide(Effect.void, ClickHouse.layerChdb({ dataDir: other })))
        fs.rmSync(other, { recursive: true, force: true })
        expect(error.reason).toBe("Unavailable")
      })
    )
  )

  it.live("runs queries off the event loop: a timer fires while a query is running", () =>
    withClickHouse(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const query = yield* Effect.fork(
          ch.query("SELECT count() AS n FROM numbers(10000000) WHERE sipHash64(number) % 7 = 0")
        )
        // A plain timer: it can only fire while the query runs if the query is not on the loop.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1)))
        expect(query.unsafePoll()).toBeNull()
        yield* Fiber.join(query)
      })
    )
  )
})

describe("ClickHouse on a server", () => {
  it.live("fails to start with Unavailable when nothing listens at CLICKHOUSE_URL", () =>
    Effect.gen(function* () {
      const port = yield* Effect.async<number>((resume) => {
        const server = net.createServer().listen(0, "127.0.0.1", () => {
          const address = server.address()
          server.close(() => resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 1)))
        })
      })
      const error = yield* Effect.flip(
        Effect.provide(Effect.void, ClickHouse.layerServer({ url: `http://127.0.0.1:${port}`, database: "curvestream" }))
      )
      expect(error.reason).toBe("Unavailable")
      expect(error.retryable).toBe(true)
    })
  )
})
