/**
 * `Database.layer` against both PostgreSQL backends with one suite: the embedded PGlite (a
 * temp data directory, reopened between tests) and the run's real PostgreSQL server (a fresh
 * database of this file's own). Every test opens the layer and closes it again, so each also
 * exercises start-up migrations and the close order.
 *
 * These tests see a truly empty database: the suite's migrated PGlite template
 * (`CURVESTREAM_PGLITE_TEMPLATE`, set by the global setup) is unset for this file, so the embedded
 * database runs initdb and every migration from zero, except in the last describe, which tests the
 * template itself.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import * as Database from "../../src/db/Database.js"
import { pgliteTemplateEnv } from "../../src/db/internal/embeddedPostgres.js"
import { migrations } from "../../src/db/migrations/index.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

// Read at each embedded start (embeddedPostgres.ts); the template describe puts it back for its tests.
const template = process.env[pgliteTemplateEnv]
delete process.env[pgliteTemplateEnv]

type Db = PgClient.PgClient | SqlClient.SqlClient

/** `[id, name]` of every migration the code ships, from the record's `<id>_<name>` keys. */
const shipped = Object.keys(migrations)
  .sort()
  .map((key) => [Number(key.slice(0, key.indexOf("_"))), key.slice(key.indexOf("_") + 1)] as const)

/** Registers the shared suite; `options()` is read when each test runs (after `beforeAll`). */
const databaseSuite = (options: () => Database.DatabaseOptions) => {
  const withDatabase = <A, E>(program: Effect.Effect<A, E, Db>): Effect.Effect<A, E | SqlError> =>
    Effect.suspend(() => Effect.provide(program, Database.layer(options())))

  const migrationsApplied = Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ migration_id: number; name: string; created_at: Date }>`
        SELECT migration_id, name, created_at FROM schema_migrations ORDER BY migration_id`
  )

  it.live("applies every migration at start", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const applied = yield* migrationsApplied
        expect(applied.map((m) => [m.migration_id, m.name])).toEqual(shipped)
        expect(shipped[0]).toEqual([1, "init"])
        const [tables] = yield* sql<{ checkpoints: string | null; meta: string | null }>`
          SELECT to_regclass('checkpoints')::text AS checkpoints, to_regclass('meta')::text AS meta`
        expect(tables).toEqual({ checkpoints: "checkpoints", meta: "meta" })
      })
    )
  )

  it.live("starting again applies nothing", () =>
    Effect.gen(function* () {
      const first = yield* withDatabase(migrationsApplied)
      const [second, rerun] = yield* withDatabase(Effect.all([migrationsApplied, Database.runMigrations(migrations)]))
      expect(second).toEqual(first)
      expect(second).toHaveLength(shipped.length)
      expect(rerun).toEqual([])
    })
  )

  it.live("a failing migration is a SqlError and keeps nothing of its run", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const error = yield* Effect.flip(
          Database.runMigrations({
            ...migrations,
            "0900_half_done": sql`CREATE TABLE half_done (id int)`,
            "0901_broken": sql`SELECT no_such_column FROM half_done`
          })
        )
        expect(error._tag).toBe("SqlError")
        expect(error.message).toContain("901_broken")
        expect(error.message).toContain("no_such_column")
        const [left] = yield* sql<{ table: string | null }>`SELECT to_regclass('half_done')::text AS table`
        expect(left?.table).toBeNull()
        expect((yield* migrationsApplied).map((m) => m.migration_id)).toEqual(shipped.map(([id]) => id))
      })
    )
  )

  it.live("a recorded migration that is not this build's (another name under its id) fails the start before anything is applied", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // As a data directory migrated by another build (a branch's migration of the same id) would hold.
        yield* sql`INSERT INTO schema_migrations (migration_id, name) VALUES (9000, 'elsewhere')`
        const error = yield* Effect.flip(
          Database.runMigrations({ ...migrations, "9000_ours": sql`SELECT 1`, "9001_next": sql`CREATE TABLE next_one (id int)` })
        )
        expect(error._tag).toBe("SqlError")
        expect(error.message).toContain(`migration 9000 is recorded as "elsewhere", and this build's migration 9000 is "ours"`)
        const [left] = yield* sql<{ table: string | null }>`SELECT to_regclass('next_one')::text AS table`
        expect(left?.table).toBeNull()
        // Without the check the Migrator skips 9000 and applies 9001 (ids only): the test fails there.
      }).pipe(
        Effect.ensuring(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM schema_migrations WHERE migration_id >= 9000`).pipe(Effect.orDie))
      )
    )
  )

  it.live("data persists across a close and reopen", () =>
    Effect.gen(function* () {
      const value = { openedAt: "2024-01-01T00:00:00Z", n: "1" }
      yield* withDatabase(
        Effect.flatMap(PgClient.PgClient, (sql) =>
          sql`INSERT INTO meta (key, value) VALUES ('persist', ${sql.json(value)})
              ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`
        )
      )
      const rows = yield* withDatabase(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ value: unknown }>`SELECT value FROM meta WHERE key = 'persist'`)
      )
      expect(rows).toEqual([{ value }])
    })
  )

  it.live("checkpoints round-trip a jsonb state with bigint values as strings", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const state = {
          virtualQuoteRaw: (2n ** 127n + 1n).toString(),
          tokenReserveRaw: "1000000000000000000000000000",
          trades: ["18446744073709551616", "0"],
          nested: { feeBps: 100, graduated: false, name: "ünïcode ✓" }
        }
        const save = (position: string, value: unknown) => sql`
          INSERT INTO checkpoints (owner, key, position, state)
          VALUES ('market', 'solana:Mint111', ${position}, ${sql.json(value)})
          ON CONFLICT (owner, key) DO UPDATE
            SET position = EXCLUDED.position, state = EXCLUDED.state, updated_at = now()`
        yield* save("00000000000000000042:0001:0000", { stale: true })
        yield* save("00000000000000000043:0000:0002", state)
        const rows = yield* sql<{ position: string; state: unknown; updated_at: Date }>`
          SELECT position, state, updated_at FROM checkpoints WHERE owner = 'market' AND key = 'solana:Mint111'`
        expect(rows).toHaveLength(1)
        expect(rows[0]?.position).toBe("00000000000000000043:0000:0002")
        expect(rows[0]?.state).toEqual(state)
        expect(BigInt((rows[0]?.state as typeof state).virtualQuoteRaw)).toBe(2n ** 127n + 1n)
        expect(rows[0]?.updated_at).toBeInstanceOf(Date)
        // jsonb operators work on the stored state (the same on PGlite and the server).
        const [field] = yield* sql<{ raw: string }>`
          SELECT state->>'virtualQuoteRaw' AS raw FROM checkpoints WHERE key = 'solana:Mint111'`
        expect(field?.raw).toBe(state.virtualQuoteRaw)
      })
    )
  )

  it.live("a failed transaction rolls back, a successful one commits", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const put = (key: string) => sql`INSERT INTO meta (key, value) VALUES (${key}, ${sql.json({ key })})`
        const failed = yield* Effect.exit(
          sql.withTransaction(Effect.zipRight(put("tx-rolled-back"), Effect.fail("refused" as const)))
        )
        expect(failed).toEqual(Exit.fail("refused"))
        // A statement error inside the transaction rolls back the earlier statements too.
        const sqlFailed = yield* Effect.exit(sql.withTransaction(Effect.zipRight(put("tx-also-rolled-back"), put("tx-also-rolled-back"))))
        expect(Exit.isFailure(sqlFailed)).toBe(true)
        yield* sql.withTransaction(put("tx-committed"))
        const keys = yield* sql<{ key: string }>`SELECT key FROM meta WHERE key LIKE 'tx-%' ORDER BY key`
        expect(keys.map((r) => r.key)).toEqual(["tx-committed"])
      })
    )
  )

  it.live("a statement with parameters runs prepared from its second run (one plan per connection), with the same answers; a failing one fails as before", () =>
    withDatabase(
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        // One connection for the whole check (a transaction holds one): prepared statements are per session.
        yield* sql.withTransaction(
          Effect.gen(function* () {
            const text = "SELECT $1::int + 1 AS next, 'prepared-probe' AS probe"
            const prepared = sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_prepared_statements WHERE statement LIKE '%prepared-probe%'`
            const before = Number((yield* prepared)[0]!.n)
            expect(yield* sql.unsafe<{ next: number }>(text, [1])).toEqual([{ next: 2, probe: "prepared-probe" }])
            expect(Number((yield* prepared)[0]!.n)).toBe(before) // once: not prepared
            expect(yield* sql.unsafe<{ next: number }>(text, [41])).toEqual([{ next: 42, probe: "prepared-probe" }])
            expect(Number((yield* prepared)[0]!.n)).toBe(before + 1) // twice: prepared under its name
            expect(yield* sql.unsafe<{ next: number }>(text, [99])).toEqual([{ next: 100, probe: "prepared-probe" }])
            expect(Number((yield* prepared)[0]!.n)).toBe(before + 1) // and reused, not prepared again
          })
        )
        const bad = "SELECT $1::int / 0 AS never"
        for (let i = 0; i < 3; i++) expect(Exit.isFailure(yield* Effect.exit(sql.unsafe(bad, [i])))).toBe(true)
        expect(yield* sql.unsafe<{ n: number }>("SELECT $1::int AS n", [7])).toEqual([{ n: 7 }])
      })
    )
  )

  it.live("ping answers", () => withDatabase(Database.ping))
}

describe("Database on embedded PGlite", () => {
  let dataDir = ""
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-pglite-"))
  })
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

  databaseSuite(() => ({ url: undefined, dataDir }))

  it.live("persists under <dataDir>/pg", () =>
    Effect.sync(() => expect(fs.existsSync(path.join(dataDir, "pg", "PG_VERSION"))).toBe(true))
  )

  it.live("refuses a second open of the same data directory while the first is open", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(Database.ping, Database.layer({ url: undefined, dataDir })).pipe(
          Effect.provide(Database.layer({ url: undefined, dataDir }))
        )
      )
      expect(error._tag).toBe("SqlError")
      expect(error.message).toContain("in use by process")
      // The refused open did not take the lock from the first: the directory opens again.
      yield* Effect.provide(Database.ping, Database.layer({ url: undefined, dataDir }))
    })
  )

  it.live("runs in memory when no data directory is given", () =>
    Effect.provide(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* Database.ping
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM schema_migrations`
        expect(rows).toEqual([{ n: shipped.length }])
      }),
      Database.layer({ url: undefined, dataDir: undefined })
    )
  )
})

/**
 * A server that cannot be reached fails the layer with a `SqlError` (the pool's first `SELECT 1`),
 * never a defect and never a hang: a listener that drops every connection it accepts, one that
 * accepts and never answers (the dial's bound, `connectTimeoutMs`), and a malformed URL (the
 * driver throws it from inside its connect).
 */
describe("Database against a server that cannot be reached", () => {
  /** A loopback listener doing `onSocket` with each connection, closed with the scope. */
  const listener = (onSocket: (socket: net.Socket) => void) =>
    Effect.acquireRelease(
      Effect.async<net.Server & { port: number }>((resume) => {
        const server = net.createServer(onSocket)
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(Effect.succeed(Object.assign(server, { port: typeof address === "object" && address !== null ? address.port : 0 })))
        })
      }),
      (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    )
  const sockets = new Set<net.Socket>()
  const failureOf = (url: string, connectTimeoutMs?: number) =>
    Effect.flip(Effect.provide(Database.ping, Database.layer({ url, dataDir: undefined, connectTimeoutMs }))).pipe(
      // The bound of this test: far above the dial's, so a hang fails it rather than the file's timeout.
      Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the layer neither failed nor succeeded within 20 s") })
    )

  it.scopedLive("a server that drops every connection: a SqlError", () =>
    Effect.gen(function* () {
      const server = yield* listener((socket) => socket.destroy())
      const error = yield* failureOf(`postgres://postgres@127.0.0.1:${server.port}/curvestream`)
      expect(error._tag).toBe("SqlError")
    })
  )

  it.scopedLive("a server that accepts and never answers: a SqlError at the dial's bound, not a hang", () =>
    Effect.gen(function* () {
      const server = yield* listener((socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      const started = Date.now()
      const error = yield* failureOf(`postgres://postgres@127.0.0.1:${server.port}/curvestream`, 500)
      expect(error._tag).toBe("SqlError")
      expect(Date.now() - started).toBeGreaterThanOrEqual(500)
      for (const socket of sockets) socket.destroy()
    })
  )

  it.live("a malformed URL (port 99999): a SqlError, not a defect", () =>
    Effect.gen(function* () {
      const error = yield* failureOf("postgres://postgres@127.0.0.1:99999/curvestream")
      expect(error._tag).toBe("SqlError")
    })
  )
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(
  `Database on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`,
  () => {
    let url = ""
    beforeAll(async () => {
      url = await freshPostgresDatabase(serverUrl!)
    })

    databaseSuite(() => ({ url, dataDir: undefined }))
  }
)

describe.skipIf(!template)("Database on embedded PGlite from the suite's migrated template", () => {
  let dataDir = ""
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-pglite-template-"))
    process.env[pgliteTemplateEnv] = template
  })
  afterAll(() => {
    delete process.env[pgliteTemplateEnv]
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  const applied = Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ migration_id: number; name: string; created_at: Date }>`SELECT migration_id, name, created_at FROM schema_migrations ORDER BY migration_id`
  )

  it.live("a new data directory starts from the template, every migration recorded before this open, and reopens as it was", () =>
    Effect.gen(function* () {
      const openedAtMs = Date.now()
      const first = yield* Effect.provide(applied, Database.layer({ url: undefined, dataDir }))
      expect(first.map((m) => [m.migration_id, m.name])).toEqual(shipped)
      // Recorded when the template was built: this open applied nothing.
      for (const m of first) expect(m.created_at.getTime()).toBeLessThan(openedAtMs)
      expect(fs.existsSync(path.join(dataDir, "pg", "PG_VERSION"))).toBe(true)
      yield* Effect.provide(
        Effect.flatMap(PgClient.PgClient, (sql) => sql`INSERT INTO meta (key, value) VALUES ('from-template', ${sql.json({ n: 1 })})`),
        Database.layer({ url: undefined, dataDir })
      )
      // An existing directory is opened as it is, not loaded again.
      const [again, rows] = yield* Effect.provide(
        Effect.all([applied, Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string }>`SELECT key FROM meta WHERE key = 'from-template'`)]),
        Database.layer({ url: undefined, dataDir })
      )
      expect(again).toEqual(first)
      expect(rows).toEqual([{ key: "from-template" }])
    })
  )

  it.live("an in-memory database starts from it too", () =>
    Effect.gen(function* () {
      const openedAtMs = Date.now()
      const rows = yield* Effect.provide(applied, Database.layer({ url: undefined, dataDir: undefined }))
      expect(rows.map((m) => [m.migration_id, m.name])).toEqual(shipped)
      for (const m of rows) expect(m.created_at.getTime()).toBeLessThan(openedAtMs)
    })
  )
})
