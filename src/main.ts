/**
 * Composition root. Reads configuration, builds the storage and bus layers (embedded defaults
 * under the data directory, servers when their URLs are set), mounts the API and runs until
 * SIGINT or SIGTERM. Shutdown is the layers' scopes closing in reverse: the listen socket first,
 * then the bus (pending appends flushed, offsets written), ClickHouse and PostgreSQL.
 */
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { mkdirSync } from "node:fs"
import { ClickHouse } from "../clickhouse/ClickHouse.js"
import { Bus } from "../ingest/bus/Bus.js"
import { EmbeddedBus } from "../ingest/bus/EmbeddedBus.js"
import { healthRoutes } from "../api/routes/HealthRoutes.js"
import { launchConfigRoutes } from "../api/routes/LaunchConfigRoutes.js"
import { withOpenApi } from "../api/routes/OpenApiRoute.js"
import { planRoutes } from "../api/routes/PlanRoutes.js"
import { serve } from "../api/Server.js"
import { AppConfig, type AppConfigShape } from "./config/AppConfig.js"
import * as Database from "./db/Database.js"
import { resolvePlans } from "./domain/Plans.js"
import * as path from "node:path"

const storageLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => {
    mkdirSync(config.dataDir, { recursive: true })
    return Layer.mergeAll(
      Database.layer({
        url: config.databaseUrl === undefined ? undefined : Redacted.value(config.databaseUrl),
        dataDir: config.dataDir
      }),
      ClickHouse.layer({
        url: config.clickhouseUrl,
        dataDir: config.dataDir,
        database: config.clickhouseDatabase,
        ...(config.clickhouseUser !== undefined ? { username: config.clickhouseUser } : {}),
        ...(config.clickhousePassword !== undefined ? { password: config.clickhousePassword } : {})
      }),
      EmbeddedBus.layer({ dir: path.join(config.dataDir, "bus"), ...config.bus })
    )
  })
)

const api = (config: AppConfigShape) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const clickhouse = yield* ClickHouse
    const bus = yield* Bus
    const plans = resolvePlans(config.planOverrides, config.promoMaxDays)
    const routes = withOpenApi(
      [
        ...healthRoutes([
          { name: "postgres", check: Database.ping.pipe(Effect.provideService(SqlClient.SqlClient, sql)) },
          { name: "clickhouse", check: clickhouse.ping },
          { name: "bus", check: bus.ping }
        ]),
        ...launchConfigRoutes(config.devBuyCeilings),
        ...planRoutes(plans, config.promoMaxDays)
      ],
      {
        title: "curvestream",
        description: "Launch and market-data engine for bonding-curve tokens on Solana and Hood"
      }
    )
    return yield* serve({ name: "api", host: config.host, port: config.port, maxBodyBytes: config.maxBodyBytes, routes })
  })

const logLevels: Record<AppConfigShape["logLevel"], LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/** `--role <name>`: only `all` runs today; the cluster roles need the Kafka adapter (roadmap 8). */
const parseRole = (argv: ReadonlyArray<string>): Effect.Effect<"all", string> => {
  const i = argv.indexOf("--role")
  const role = i === -1 ? "all" : argv[i + 1]
  if (role === "all") return Effect.succeed("all")
  if (role === "ingest" || role === "actors" || role === "api") {
    return Effect.fail(`role '${role}' needs the Kafka adapter, which is not built yet; run --role all`)
  }
  return Effect.fail(`unknown role '${role ?? ""}'; expected all, ingest, actors or api`)
}

const program = Effect.gen(function* () {
  yield* parseRole(process.argv.slice(2))
  const config = yield* AppConfig
  const server = yield* api(config)
  yield* Effect.logInfo("curvestream ready").pipe(
    Effect.annotateLogs({ api: server.url, dataDir: config.dataDir, openapi: `${server.url}/api/v1/openapi.json` })
  )
  return yield* Effect.never
}).pipe(Effect.scoped)

const loggerLayer = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(
      config.logFormat === "json" ? Logger.json : config.logFormat === "pretty" ? Logger.pretty : Logger.logFmt,
      Logger.minimumLogLevel(logLevels[config.logLevel])
    )
  )
).pipe(Layer.provide(AppConfig.layer))

const MainLayer = storageLayer.pipe(Layer.provideMerge(AppConfig.layer))

program.pipe(
  Effect.provide(MainLayer),
  Effect.provide(loggerLayer),
  Effect.tapErrorCause((cause) => Effect.logError("curvestream stopped on an error", cause)),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
