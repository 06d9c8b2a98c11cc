/**
 * ClickHouse for the engine (trades, candles, signals, market history, replays): one service
 * and one SQL dialect over two executors, chDB in this process (the embedded default, data at
 * `<dataDir>/chdb`) or a ClickHouse server (`CLICKHOUSE_URL`).
 *
 * Invariants:
 * - Query parameters use ClickHouse's `{name:Type}` syntax and are bound by the engine on
 *   both executors; values never enter the SQL text.
 * - `query` returns JSONEachRow rows as parsed JSON, unchecked (decode them with Schema at
 *   the call site). 64-bit and wider integers arrive as decimal strings on both executors.
 * - `insert` writes JSONEachRow; `bigint` values are sent as decimal strings. One call is one
 *   INSERT, so it is all or nothing; an insert over `insertRowsMax` rows or `insertBytesMax`
 *   bytes of JSONEachRow is refused (`InsertTooLarge`), never split, because splitting would
 *   silently break that atomicity. Batching is the writer's job, above this service.
 * - The layer is ready only after `CREATE DATABASE IF NOT EXISTS <database>` and every
 *   migration in `migrations/` not yet recorded in `schema_migrations`; starting again
 *   applies nothing. A pending migration with a `run` program (a table rebuilt by copy, 0006)
 *   is run by a start on chDB (one process per data directory) and refused by a start on a
 *   server (several engines start against one server, and two rebuilds at once lose rows): that
 *   start fails, changing nothing, and names `migrateCommand`, the one-shot that runs it
 *   (`src/ClickHouseMigrate.ts`) with every engine stopped.
 * - Scoped: the chDB session or the server client closes with the layer's scope.
 */
import { Context, Effect, Layer, type Redacted, type Scope } from "effect"
import { foreignMigration } from "../src/platform/MigrationRecord.js"
import { ClickHouseError } from "./ClickHouseError.js"
import { makeChdbExecutor } from "./internal/chdbExecutor.js"
import type { Executor, Params } from "./internal/executor.js"
import { makeServerExecutor } from "./internal/serverExecutor.js"
import { type ClickHouseMigration, migrations as allMigrations } from "./migrations/index.js"

export { ClickHouseError } from "./ClickHouseError.js"
export type { ClickHouseErrorReason } from "./ClickHouseError.js"
export type { ClickHouseMigration } from "./migrations/index.js"

/** Default bound on the rows of one insert. */
export const insertRowsMaxDefault = 100_000
/** Default bound on the JSONEachRow bytes of one insert (16 MiB). */
export const insertBytesMaxDefault = 16 * 1024 * 1024
/** The database the engine uses unless told otherwise. */
export const databaseDefault = "curvestream"
/** The one-shot that runs pending migrations' programs on a server (`src/ClickHouseMigrate.ts`). */
export const migrateCommand = "npm run clickhouse:migrate"

/**
 * Whether the runner runs a pending migration's `run` program: `run`, or `refuse` (the start
 * fails before anything is applied, naming `migrateCommand`). Default: `run` on chDB, `refuse`
 * on a server.
 */
export type MigrationPrograms = "run" | "refuse"

export interface ClickHouseShape {
  readonly executor: "chdb" | "server"
  readonly database: string
  /** Runs a statement and returns its JSONEachRow rows (unchecked: decode at the call site). */
  readonly query: <A = Record<string, unknown>>(
    sql: string,
    params?: Record<string, unknown>
  ) => Effect.Effect<ReadonlyArray<A>, ClickHouseError>
  /** Runs a statement whose output is not needed (DDL, `INSERT ... SELECT`, mutations). */
  readonly command: (sql: string, params?: Record<string, unknown>) => Effect.Effect<void, ClickHouseError>
  /** One JSONEachRow INSERT of `rows` into `table` (a plain or `db.table` identifier). */
  readonly insert: (table: string, rows: ReadonlyArray<Record<string, unknown>>) => Effect.Effect<void, ClickHouseError>
  /** Readiness probe: `SELECT 1` through the executor. */
  readonly ping: Effect.Effect<void, ClickHouseError>
}

export interface InsertBounds {
  /** Rows in one insert (default `insertRowsMaxDefault`). */
  readonly insertRowsMax?: number | undefined
  /** JSONEachRow bytes in one insert (default `insertBytesMaxDefault`). */
  readonly insertBytesMax?: number | undefined
  /** Pending migration programs at open (default: `run` on chDB, `refuse` on a server). */
  readonly programs?: MigrationPrograms | undefined
}

export interface ChdbOptions extends InsertBounds {
  /** The engine's data directory; chDB persists under `<dataDir>/chdb`. */
  readonly dataDir: string
  /** Default `databaseDefault`. */
  readonly database?: string | undefined
}

export interface ServerOptions extends InsertBounds {
  /** `CLICKHOUSE_URL`, e.g. `http://clickhouse:8123` (credentials may be in the URL). */
  readonly url: string
  readonly database: string
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  /** Per-request timeout (default 30 s, the client's; the one-shot migration sets a long one). */
  readonly requestTimeoutMs?: number | undefined
}

export interface ClickHouseOptions extends InsertBounds {
  /** `CLICKHOUSE_URL`. Set: that server. Unset: chDB under `dataDir`. */
  readonly url: string | undefined
  readonly dataDir: string
  readonly database: string
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  /** Server only: per-request timeout (default 30 s). */
  readonly requestTimeoutMs?: number | undefined
}

export class ClickHouse extends Context.Tag("curvestream/ClickHouse")<ClickHouse, ClickHouseShape>() {
  /** chDB persisted at `<dataDir>/chdb` (one data directory per process). */
  static layerChdb(options: ChdbOptions): Layer.Layer<ClickHouse, ClickHouseError> {
    const database = options.database ?? databaseDefault
    return Layer.scoped(
      ClickHouse,
      open(database, options, () => makeChdbExecutor({ dataDir: options.dataDir, database }))
    )
  }

  /** A ClickHouse server over HTTP (`@clickhouse/client`). */
  static layerServer(options: ServerOptions): Layer.Layer<ClickHouse, ClickHouseError> {
    return Layer.scoped(
      ClickHouse,
      open(options.database, options, () =>
        makeServerExecutor({
          url: options.url,
          database: options.database,
          username: options.username,
          password: options.password,
          requestTimeoutMs: options.requestTimeoutMs
        })
      )
    )
  }

  /** The server when `url` (`CLICKHOUSE_URL`) is set, otherwise chDB under `dataDir`. */
  static layer(options: ClickHouseOptions): Layer.Layer<ClickHouse, ClickHouseError> {
    const bounds = { insertRowsMax: options.insertRowsMax, insertBytesMax: options.insertBytesMax, programs: options.programs }
    return options.url !== undefined
      ? ClickHouse.layerServer({
          ...bounds,
          url: options.url,
          database: options.database,
          username: options.username,
          password: options.password,
          requestTimeoutMs: options.requestTimeoutMs
        })
      : ClickHouse.layerChdb({ ...bounds, dataDir: options.dataDir, database: options.database })
  }
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/
const tableIdentifier = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$/

const invalid = (message: string) => new ClickHouseError({ reason: "InvalidRequest", message })

const open = (
  database: string,
  bounds: InsertBounds,
  makeExecutor: () => Effect.Effect<Executor, ClickHouseError, Scope.Scope>
): Effect.Effect<ClickHouseShape, ClickHouseError, Scope.Scope> =>
  Effect.gen(function* () {
    // The name is spliced into DDL (databases cannot be bound parameters): plain identifiers only.
    if (!identifier.test(database)) return yield* invalid(`database name ${JSON.stringify(database)} is not a plain identifier`)
    const executor = yield* makeExecutor()
    const service = makeService(executor, database, {
      rowsMax: bounds.insertRowsMax ?? insertRowsMaxDefault,
      bytesMax: bounds.insertBytesMax ?? insertBytesMaxDefault
    })
    yield* applyMigrations(service, allMigrations, bounds.programs)
    return service
  })

const makeService = (
  executor: Executor,
  database: string,
  bounds: { readonly rowsMax: number; readonly bytesMax: number }
): ClickHouseShape => {
  const query = (sql: string, params?: Params) =>
    executor.query(sql, params).pipe(Effect.withSpan("ClickHouse.query", { attributes: { "db.statement": sql } }))
  return {
    executor: executor.kind,
    database,
    query: query as ClickHouseShape["query"],
    command: (sql, params) =>
      executor.command(sql, params).pipe(Effect.withSpan("ClickHouse.command", { attributes: { "db.statement": sql } })),
    insert: (table, rows) =>
      Effect.gen(function* () {
        if (rows.length === 0) return
        if (!tableIdentifier.test(table)) return yield* invalid(`table name ${JSON.stringify(table)} is not a plain identifier`)
        if (rows.length > bounds.rowsMax) {
          return yield* new ClickHouseError({
            reason: "InsertTooLarge",
            message: `insert into ${table}: ${rows.length} rows is over the bound of ${bounds.rowsMax} rows per insert`
          })
        }
        const payload = yield* encodeJsonEachRow(table, rows, bounds.bytesMax)
        yield* executor.insertJsonEachRow(table, payload)
      }).pipe(Effect.withSpan("ClickHouse.insert", { attributes: { "db.table": table, "db.rows": rows.length } })),
    ping: executor.ping.pipe(Effect.withSpan("ClickHouse.ping"))
  }
}

/** `bigint` becomes a decimal string (ClickHouse parses quoted numbers into numeric columns). */
const bigintAsString = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : value

/**
 * Serializes rows to JSONEachRow, stopping as soon as the byte bound is passed so an oversized
 * insert costs at most `bytesMax` of work.
 */
const encodeJsonEachRow = (
  table: string,
  rows: ReadonlyArray<Record<string, unknown>>,
  bytesMax: number
): Effect.Effect<Buffer, ClickHouseError> =>
  Effect.suspend(() => {
    const lines: Array<string> = []
    let bytes = 0
    for (const row of rows) {
      let line: string
      try {
        line = JSON.stringify(row, bigintAsString) + "\n"
      } catch (cause) {
        return Effect.fail(
          new ClickHouseError({ reason: "InvalidRequest", message: `insert into ${table}: a row is not JSON`, cause })
        )
      }
      bytes += Buffer.byteLength(line)
      if (bytes > bytesMax) {
        return Effect.fail(
          new ClickHouseError({
            reason: "InsertTooLarge",
            message: `insert into ${table}: over the bound of ${bytesMax} JSONEachRow bytes per insert`
          })
        )
      }
      lines.push(line)
    }
    return Effect.succeed(Buffer.from(lines.join("")))
  })

/**
 * Applies, in id order, every migration whose id is not recorded in `schema_migrations`, and
 * records each after its statements and its `run` program (if any) succeeded. Returns what it
 * applied (empty on a migrated database). Migration 1 creates `schema_migrations` itself. A record
 * that is not this build's (an id with another name, or an id this build lacks) fails the run
 * before anything is applied, and so does a pending migration with a `run` program when
 * `programs` is `refuse` (the default on a server: see `MigrationPrograms`).
 */
export const applyMigrations = (
  ch: ClickHouseShape,
  migrations: ReadonlyArray<ClickHouseMigration>,
  programs: MigrationPrograms = ch.executor === "chdb" ? "run" : "refuse"
): Effect.Effect<ReadonlyArray<ClickHouseMigration>, ClickHouseError> =>
  Effect.gen(function* () {
    const ordered = [...migrations].sort((a, b) => a.id - b.id)
    const duplicate = ordered.find((m, i) => i > 0 && ordered[i - 1]?.id === m.id)
    if (duplicate !== undefined) {
      return yield* new ClickHouseError({ reason: "MigrationFailed", message: `duplicate migration id ${duplicate.id}` })
    }
    const tables = yield* ch.query<{ n: string }>(
      "SELECT toString(count()) AS n FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations'"
    ).pipe(Effect.mapError(migrationFailed("reading schema_migrations")))
    const applied = new Set<number>()
    if (Number(tables[0]?.n ?? "0") > 0) {
      const rows = yield* ch.query<{ migration_id: number | string; name: string }>(
        "SELECT DISTINCT migration_id, name FROM schema_migrations"
      ).pipe(Effect.mapError(migrationFailed("reading schema_migrations")))
      const recorded = rows.map((row) => ({ id: Number(row.migration_id), name: row.name }))
      const foreign = foreignMigration(recorded, ordered)
      if (foreign !== undefined) {
        return yield* new ClickHouseError({ reason: "MigrationFailed", message: `ClickHouse ${foreign}` })
      }
      for (const row of recorded) applied.add(row.id)
    }
    const pending = ordered.filter((m) => !applied.has(m.id))
    const program = programs === "refuse" ? pending.find((m) => m.run !== undefined) : undefined
    if (program !== undefined) {
      return yield* new ClickHouseError({ reason: "MigrationFailed", message: programRefusal(program) })
    }
    for (const migration of pending) {
      yield* Effect.forEach(migration.statements, (statement) => ch.command(statement), { discard: true }).pipe(
        Effect.zipRight(migration.run?.(ch) ?? Effect.void),
        Effect.zipRight(ch.insert("schema_migrations", [{ migration_id: migration.id, name: migration.name }])),
        Effect.mapError(migrationFailed(`migration ${migration.id}_${migration.name}`))
      )
      yield* Effect.logDebug(`ClickHouse migration ${migration.id}_${migration.name} applied`)
    }
    return pending
  }).pipe(Effect.withSpan("ClickHouse.applyMigrations"))

/** Why a start on a server refuses a pending migration program, and what to run instead. */
export const programRefusal = (migration: ClickHouseMigration): string =>
  `ClickHouse migration ${migration.id}_${migration.name} is pending and rebuilds a table, which a start on a ClickHouse server never runs ` +
  `(every engine starting against the server would run it at once, and rows would be lost). Nothing was applied. ` +
  `Stop every engine that uses this ClickHouse database, run \`${migrateCommand}\` once (same CLICKHOUSE_* settings), then start the engines.`

const migrationFailed =
  (what: string) =>
  (error: ClickHouseError): ClickHouseError =>
    new ClickHouseError({
      reason: "MigrationFailed",
      message: `ClickHouse ${what} failed: ${error.message}`,
      ...(error.clickhouseCode !== undefined ? { clickhouseCode: error.clickhouseCode } : {}),
      cause: error
    })
