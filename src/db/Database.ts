/**
 * PostgreSQL for the engine: one `SqlClient` (and `PgClient`) from `@effect/sql-pg`, over a
 * real server when `DATABASE_URL` is set, otherwise over an embedded PGlite persisted under
 * `<dataDir>/pg` (in memory when `dataDir` is undefined) and reached through a loopback
 * socket (see `internal/embeddedPostgres.ts`). Callers cannot tell the two apart: the same
 * client, SQL and migrations run on both, and CI runs the suite on both.
 *
 * Invariants:
 * - The layer is ready only after every migration in `migrations/` has been applied (in id
 *   order, in one transaction, recorded in `schema_migrations`); starting again applies
 *   nothing.
 * - Embedded: exactly one client connection (PGlite is a single session). A transaction
 *   (`sql.withTransaction`) holds it, so other queries wait for the transaction to end.
 *   `PgClient.listen` dials a second connection of its own: do not use it on the embedded
 *   database (see `internal/embeddedPostgres.ts`).
 * - Every failure, including a failed migration, is a `SqlError`; nothing throws.
 * - Scoped: closing the layer's scope ends the client pool, then stops the socket server,
 *   then closes PGlite (flushing it to disk).
 * - `NamedStatements` runs on the same pool as the `SqlClient` (the embedded database's one
 *   connection included), on a connection of its own: never inside a transaction (a caller in
 *   one must use the `SqlClient`, whose connection is the transaction's).
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, type Scope } from "effect"
import { Client, Pool, type PoolConfig } from "pg"
import { foreignMigration } from "../platform/MigrationRecord.js"
import { startEmbeddedPostgres } from "./internal/embeddedPostgres.js"
import { StatementNames } from "./internal/StatementNames.js"
import { migrations } from "./migrations/index.js"

export interface DatabaseOptions {
  /** `DATABASE_URL`. Set: connect to that server. Unset: embedded PGlite. */
  readonly url: string | undefined
  /**
   * The engine's data directory; PGlite persists under `<dataDir>/pg`. Undefined: an
   * in-memory PGlite (tests). Ignored when `url` is set.
   */
  readonly dataDir: string | undefined
  /** Pool size against a server (default `serverConnectionsMax`). Embedded is always 1. */
  readonly maxConnections?: number | undefined
  /**
   * The bound on each connection's dial: TCP, TLS and the server's startup up to ready for
   * queries (default `connectTimeoutMsDefault`). A wait for a free connection of the pool is not
   * bounded by it (a busy pool is not a dead server).
   */
  readonly connectTimeoutMs?: number | undefined
}

/** Default bound on a connection's dial (`DatabaseOptions.connectTimeoutMs`). */
export const connectTimeoutMsDefault = 10_000

/** Default pool size against a real server. */
export const serverConnectionsMax = 10

/** Where applied migrations are recorded (the `@effect/sql` Migrator's table layout). */
export const migrationsTable = "schema_migrations"

const applicationName = "curvestream"

/**
 * Named statements on the engine's pool (node-postgres's named queries): a statement's text is
 * parsed and planned once per connection under its name, then each call only binds and executes
 * it (PGlite plans a statement of several CTEs in milliseconds; the hot writes pay it once). The
 * driver re-parses on a new connection by itself. A name always goes with the same text.
 */
export class NamedStatements extends Context.Tag("curvestream/Database/NamedStatements")<
  NamedStatements,
  {
    readonly execute: (name: string, text: string, values: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError>
  }
>() {}

export type DatabaseServices = PgClient.PgClient | SqlClient.SqlClient | NamedStatements

/**
 * Provides `SqlClient`, `PgClient` and `NamedStatements`, migrated. Fails with `SqlError` when
 * the database cannot be opened or reached, or a migration fails.
 */
export const layer = (options: DatabaseOptions): Layer.Layer<DatabaseServices, SqlError> =>
  Layer.provideMerge(migrationsLayer, clientLayer(options))

/**
 * Where `layerTest` puts its database: unset (the default), a throwaway in-memory PGlite; a suite on
 * the PostgreSQL server provides the URL of a fresh database it created (`Layer.succeed(TestDatabaseUrl, url)`).
 */
export class TestDatabaseUrl extends Context.Reference<TestDatabaseUrl>()("curvestream/Database/TestDatabaseUrl", {
  defaultValue: (): string | undefined => undefined
}) {}

/**
 * The database of tests: a throwaway in-memory PGlite (or the server database `TestDatabaseUrl`
 * names), every migration applied. One value, so every `layerTest` built together shares one
 * database (Effect builds a layer once per build, by reference); closing the build's scope drops it.
 */
export const layerTest: Layer.Layer<DatabaseServices, SqlError> = Layer.unwrapEffect(
  Effect.map(TestDatabaseUrl, (url) => layer({ url, dataDir: undefined }))
)

const clientLayer = (options: DatabaseOptions): Layer.Layer<DatabaseServices, SqlError> =>
  options.url !== undefined
    ? poolLayer(
        { connectionString: options.url, max: options.maxConnections ?? serverConnectionsMax, application_name: applicationName },
        options.connectTimeoutMs ?? connectTimeoutMsDefault
      )
    : Layer.unwrapScoped(
        // The embedded server is acquired in the layer's scope before the client, so the
        // client's pool is released first on close.
        Effect.map(startEmbeddedPostgres(options.dataDir), (address) =>
          poolLayer({
            host: address.host,
            port: address.port,
            user: address.username,
            database: address.database,
            max: 1,
            // Keep the single connection for the layer's lifetime (zero disables the idle
            // timeout; the pool would otherwise drop and redial it every 10 s).
            idleTimeoutMillis: 0,
            application_name: applicationName
          }, options.connectTimeoutMs ?? connectTimeoutMsDefault)
        )
      )

/** Every connection's own suffix of the statement names it parses (see `connectionStatementName`). */
const connectionIds = new WeakMap<object, number>()
let connectionsSeen = 0

/**
 * `name` as `connection` parses it: suffixed by the connection, so a connection never meets a
 * statement of that name it did not parse. The embedded database is one session under every
 * socket: a statement a dropped connection (or another pool in this process: a test's second
 * engine) parsed is still there, and parsing the same name again would fail.
 */
const connectionStatementName = (connection: object, name: string): string => {
  let id = connectionIds.get(connection)
  if (id === undefined) connectionIds.set(connection, (id = ++connectionsSeen))
  return `${name}_${id}`
}

/**
 * The `pg` pool under the engine's `PgClient` and `NamedStatements`, ended with the scope (as
 * `PgClient.make` ends its own). Built here, not by `PgClient.make`, because a named statement
 * needs a connection of the pool to itself and `PgClient` offers none through its types: it does
 * not expose its pool, and its connections (`reserve`) take SQL text only and hide the driver's
 * connection a statement name is kept per (docs/decisions.md, "The pool `Database` builds for its
 * named statements"). Around the pool:
 * - every connection's dial is bounded (`connectTimeoutMs`, the driver's own timeout, set on the
 *   connection rather than the pool so that a wait for a free connection is not cut);
 * - one `SELECT 1` before the layer is ready, so that an unreachable server or a malformed URL
 *   (which the driver throws from inside its connect) fails the layer with a `SqlError`, not a
 *   defect and not a hang (as `PgClient.make` probes its own pool);
 * - the idle connections' `error` listened to (unlistened, an idle connection the server drops
 *   would be an uncaught exception) and the end on close.
 */
const acquirePool = (config: PoolConfig, connectTimeoutMs: number): Effect.Effect<Pool, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => new Pool({ ...config, Client: dialBounded(connectTimeoutMs, new StatementNames()) }).on("error", () => {})),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  ).pipe(
    Effect.tap((pool) =>
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      })
    )
  )

/**
 * The driver's connection with its dial bounded (`connectionTimeoutMillis` on the connection
 * only), and every repeated statement with parameters run as a named statement (`names`, one per
 * pool: `internal/StatementNames.ts`) under this connection's own suffix
 * (`connectionStatementName`). `@effect/sql-pg` sends each statement as `query(text, values,
 * callback)`; that call becomes `query({ name, text, values }, callback)`, which the driver
 * parses once per connection. Every other form (a config object, a cursor, no values) is passed
 * on as it came.
 */
const dialBounded = (connectTimeoutMs: number, names: StatementNames): typeof Client =>
  class extends Client {
    constructor(config: PoolConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs })
      type Query = (...args: Array<unknown>) => unknown
      const self = this as unknown as { query: Query }
      const query = self.query.bind(this)
      self.query = (...args) => {
        const [text, values, callback] = args
        if (typeof text === "string" && Array.isArray(values)) {
          const name = names.nameOf(text, values.length)
          if (name !== undefined) {
            const named = { name: connectionStatementName(this, name), text, values }
            return callback === undefined ? query(named) : query(named, callback)
          }
        }
        return query(...args)
      }
    }
  }

/** `PgClient` over the pool (`PgClient.fromPool`) and `NamedStatements` on the same pool. */
const poolLayer = (config: PoolConfig, connectTimeoutMs: number): Layer.Layer<DatabaseServices, SqlError> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const pool = yield* acquirePool(config, connectTimeoutMs)
      const client = yield* PgClient.fromPool({ acquire: Effect.succeed(pool), applicationName })
      const named: NamedStatements["Type"] = {
        execute: (name, text, values) =>
          Effect.async((resume) => {
            pool.connect((error, connection, release) => {
              if (error !== undefined && error !== null) return resume(Effect.fail(new SqlError({ cause: error, message: "Failed to acquire connection" })))
              // While lent out the pool no longer listens for the connection's errors: a socket that
              // ends mid-statement emits `error`, which with no listener is the process's uncaught
              // exception. Listened to here (as `PgClient` does while it holds a connection), the
              // failure reaches the query's callback as a `SqlError`.
              const dropped = () => {}
              connection.once("error", dropped)
              connection.query({ name: connectionStatementName(connection, name), text, values }, (error, result) => {
                connection.removeListener("error", dropped)
                // A statement the server refused leaves the connection usable (as `PgClient` keeps it);
                // any other failure (the socket) drops it, and the pool dials a new one.
                release(error !== undefined && error !== null && !("severity" in error) ? error : undefined)
                resume(error === undefined || error === null ? Effect.succeed(result.rows) : Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" })))
              })
            })
          })
      }
      return Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client), Context.add(NamedStatements, named))
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * Applies, in one transaction, the migrations of `record` (keyed `<id>_<name>`) not yet in
 * `schema_migrations`, and returns them. A migration that fails (a defect inside the
 * `@effect/sql` Migrator) becomes a `SqlError` and nothing of the run is kept. `layer` runs
 * it with `migrations/`.
 */
export const runMigrations = (
  record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, SqlError, SqlClient.SqlClient> =>
  Effect.zipRight(
    recordedAreOurs(record),
    Migrator.make({})({ loader: Migrator.fromRecord(record), table: migrationsTable })
  ).pipe(
    Effect.catchAllDefect((defect) =>
      defect instanceof Migrator.MigrationError ? Effect.fail(defect) : Effect.die(defect)
    ),
    Effect.catchTag("MigrationError", (error) =>
      Effect.fail(
        new SqlError({
          cause: error.cause ?? error,
          message: `Migration failed (${error.reason}): ${error.message}${causeMessage(error.cause)}`
        })
      )
    )
  )

/**
 * Fails when `schema_migrations` records a migration that is not this build's (the Migrator
 * compares ids only and would skip this build's own migration of that id). Read before the
 * Migrator's transaction; nothing recorded yet (no table) passes.
 */
const recordedAreOurs = (
  record: Record<string, unknown>
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [table] = yield* sql<{ present: boolean }>`SELECT to_regclass(${migrationsTable}) IS NOT NULL AS present`
    if (table?.present !== true) return
    const rows = yield* sql<{ id: number; name: string }>`SELECT migration_id AS id, name FROM ${sql(migrationsTable)}`
    const shipped: Array<{ id: number; name: string }> = []
    for (const key of Object.keys(record)) {
      const parts = /^(\d+)_(.+)$/.exec(key)
      if (parts !== null) shipped.push({ id: Number(parts[1]), name: parts[2]! })
    }
    const foreign = foreignMigration(rows, shipped)
    if (foreign !== undefined) return yield* new SqlError({ message: `PostgreSQL ${foreign}`, cause: undefined })
  })

/** The messages down a cause chain (`SqlError` -> driver error), e.g. `: Failed to execute statement: column "x" does not exist`. */
const causeMessage = (cause: unknown): string => {
  let text = ""
  for (let depth = 0; depth < 4 && typeof cause === "object" && cause !== null; depth++) {
    if ("message" in cause && typeof cause.message === "string" && cause.message !== "") text += `: ${cause.message}`
    cause = "cause" in cause ? cause.cause : undefined
  }
  return text
}

const migrationsLayer: Layer.Layer<never, SqlError, SqlClient.SqlClient> = Layer.effectDiscard(runMigrations(migrations))

/** Readiness probe: `SELECT 1` on the pool. */
export const ping: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`SELECT 1`
).pipe(Effect.asVoid, Effect.withSpan("Database.ping"))
