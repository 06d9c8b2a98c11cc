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
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Duration, Effect, Layer, Redacted } from "effect"
import { startEmbeddedPostgres } from "./internal/embeddedPostgres.js"
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
}

/** Default pool size against a real server. */
export const serverConnectionsMax = 10

/** Where applied migrations are recorded (the `@effect/sql` Migrator's table layout). */
export const migrationsTable = "schema_migrations"

const applicationName = "curvestream"

/**
 * Provides `SqlClient` and `PgClient`, migrated. Fails with `SqlError` when the database
 * cannot be opened or reached, or a migration fails.
 */
export const layer = (options: DatabaseOptions): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
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
export const layerTest: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> = Layer.unwrapEffect(
  Effect.map(TestDatabaseUrl, (url) => layer({ url, dataDir: undefined }))
)

const clientLayer = (options: DatabaseOptions): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  options.url !== undefined
    ? PgClient.layer({
        url: Redacted.make(options.url),
        maxConnections: options.maxConnections ?? serverConnectionsMax,
        applicationName
      })
    : Layer.unwrapScoped(
        // The embedded server is acquired in the layer's scope before the client, so the
        // client's pool is released first on close.
        Effect.map(startEmbeddedPostgres(options.dataDir), (address) =>
          PgClient.layer({
            host: address.host,
            port: address.port,
            username: address.username,
            database: address.database,
            maxConnections: 1,
            // Keep the single connection for the layer's lifetime (zero disables the idle
            // timeout; the pool would otherwise drop and redial it every 10 s).
            idleTimeout: Duration.zero,
            applicationName
          })
        )
      )

/**
 * Applies, in one transaction, the migrations of `record` (keyed `<id>_<name>`) not yet in
 * `schema_migrations`, and returns them. A migration that fails (a defect inside the
 * `@effect/sql` Migrator) becomes a `SqlError` and nothing of the run is kept. `layer` runs
 * it with `migrations/`.
 */
export const runMigrations = (
  record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, SqlError, SqlClient.SqlClient> =>
  Migrator.make({})({ loader: Migrator.fromRecord(record), table: migrationsTable }).pipe(
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
