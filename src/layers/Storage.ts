/**
 * Storage and the bus: PostgreSQL (embedded PGlite under the data directory unless `DATABASE_URL`
 * is set), ClickHouse (embedded chDB unless `CLICKHOUSE_URL`), and the bus (the embedded bus unless
 * `KAFKA_BROKERS`), whose consumers skip a replaced chain's events (`retiredRanges`, filled by the
 * identity gate in `Pipeline.ts`).
 */
import { Effect, Layer, Redacted } from "effect"
import * as path from "node:path"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import { Bus } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { KafkaBus } from "../../ingest/bus/KafkaBus.js"
import { RetiredRanges } from "../../ingest/bus/RetiredRanges.js"
import { AppConfig } from "../config/AppConfig.js"
import * as Database from "../db/Database.js"
import * as RowLease from "../db/RowLease.js"
import { ensureDir } from "../platform/Files.js"

/** The chains' retired block ranges: the bus consumers read it, the identity gate fills it. */
export const retiredRanges = new RetiredRanges()

/**
 * PostgreSQL, ClickHouse and the bus. Embedded PGlite admits one process: every lease in it
 * (keeper, launches, staking) was left by a run that is gone, and is cleared before any layer
 * above recovers what it leased.
 */
export const layerConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    yield* ensureDir(config.dataDir)
    const embeddedDatabase = config.databaseUrl === undefined
    return Layer.mergeAll(
      Database.layer({
        url: config.databaseUrl === undefined ? undefined : Redacted.value(config.databaseUrl),
        dataDir: config.dataDir
      }).pipe(Layer.tap((context) => (embeddedDatabase ? RowLease.clearAll.pipe(Effect.provide(context), Effect.orDie) : Effect.void))),
      ClickHouse.layer({
        url: config.clickhouseUrl,
        dataDir: config.dataDir,
        database: config.clickhouseDatabase,
        ...(config.clickhouseUser !== undefined ? { username: config.clickhouseUser } : {}),
        ...(config.clickhousePassword !== undefined ? { password: config.clickhousePassword } : {})
      }),
      Layer.effect(Bus, Effect.map(Bus, (bus) => retiredRanges.wrap(bus))).pipe(
        Layer.provide(
          config.kafka.brokers === undefined
            ? EmbeddedBus.layer({ dir: path.join(config.dataDir, "bus"), ...config.bus })
            : KafkaBus.layer({
                brokers: config.kafka.brokers,
                clientId: config.kafka.clientId,
                idempotent: config.kafka.idempotent,
                sessionTimeoutMs: config.kafka.sessionTimeoutMs,
                partitions: config.bus.partitions
              })
        )
      )
    )
  })
)
