/**
 * The one-shot ClickHouse migration: `npm run clickhouse:migrate`. Applies every pending ClickHouse
 * migration, including those with a `run` program (a table rebuilt by copy: 0006), which a start
 * against a ClickHouse server refuses (`MigrationPrograms`): several engines start against one
 * server, and two rebuilds at once lose rows. Run it once, with every engine that uses the
 * database stopped (a writer during the copy loses rows the copy's check cannot always see).
 *
 * Reads the engine's configuration (`CLICKHOUSE_URL`, `CLICKHOUSE_DATABASE`, `CLICKHOUSE_USER`,
 * `CLICKHOUSE_PASSWORD`; without `CLICKHOUSE_URL`, chDB under `CURVESTREAM_DATA_DIR`, which a start
 * migrates anyway). On a server each statement may run up to `migrateRequestTimeoutMs` (a day's
 * copy is one request). Logs the rebuild's progress at Info; prints one JSON object (the applied
 * migrations) and exits 0, or exits 1 with the failure on stderr.
 */
import { Effect, Logger, LogLevel } from "effect"
import * as path from "node:path"
import { AppConfig } from "./config/AppConfig.js"
import { unsupportedNode } from "./config/Runtime.js"
import { ClickHouse, migrateCommand } from "../clickhouse/ClickHouse.js"
import { migrations } from "../clickhouse/migrations/index.js"

/** How long one statement of the one-shot may run on a server (one day's copy, a fingerprint): 1 hour. */
export const migrateRequestTimeoutMs = 3_600_000

const program = Effect.gen(function* () {
  const config = yield* AppConfig
  const layer = ClickHouse.layer({
    url: config.clickhouseUrl,
    dataDir: config.dataDir,
    database: config.clickhouseDatabase,
    ...(config.clickhouseUser !== undefined ? { username: config.clickhouseUser } : {}),
    ...(config.clickhousePassword !== undefined ? { password: config.clickhousePassword } : {}),
    requestTimeoutMs: migrateRequestTimeoutMs,
    programs: "run"
  })
  // Opening the layer applies what is pending; read back what is recorded.
  const recorded = yield* Effect.provide(
    Effect.flatMap(ClickHouse, (ch) => ch.query<{ migration_id: number | string }>("SELECT DISTINCT migration_id FROM schema_migrations")),
    layer
  )
  const ids = new Set(recorded.map((r) => Number(r.migration_id)))
  return {
    command: migrateCommand,
    executor: config.clickhouseUrl === undefined ? "chdb" : "server",
    database: config.clickhouseDatabase,
    recorded: migrations.filter((m) => ids.has(m.id)).map((m) => `${m.id}_${m.name}`)
  }
}).pipe(Effect.provide(AppConfig.layer), Logger.withMinimumLogLevel(LogLevel.Info))

const main = async () => {
  const unsupported = unsupportedNode(process.version)
  if (unsupported !== undefined) {
    process.stderr.write(`${unsupported}\n`)
    process.exit(1)
  }
  try {
    const out = await Effect.runPromise(program)
    process.stdout.write(JSON.stringify(out, null, 2) + "\n")
    process.exit(0)
  } catch (e) {
    process.stderr.write(`clickhouse:migrate: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  }
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) void main()
