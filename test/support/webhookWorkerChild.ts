/**
 * Test support: the delivery worker alone in a process, for the kill-mid-delivery test
 * (`test/integration/webhooks.restart.test.ts`). Argument: JSON
 * `{dataDir, databaseUrl?, masterKeyHex?, leaseMs, requestTimeoutMs, batchSize, concurrency}`.
 * Opens the database (PGlite under `<dataDir>/pg`, or the server at `databaseUrl`), applies the
 * migrations with the webhooks one, runs the worker with the loopback test flag on, prints
 * `READY`, and runs until signalled.
 */
import { Cause, Effect, Fiber, Layer } from "effect"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import webhooksMigration from "../../src/db/migrations/0004_webhooks.js"
import * as DeliveryWorker from "../../src/services/webhooks/DeliveryWorker.js"
import { resolveMasterKey } from "../../src/services/webhooks/SecretBox.js"

interface ChildConfig {
  readonly dataDir: string
  readonly databaseUrl?: string
  readonly masterKeyHex?: string
  readonly leaseMs: number
  readonly requestTimeoutMs: number
  readonly batchSize: number
  readonly concurrency: number
}

const config = JSON.parse(process.argv[2] ?? "{}") as ChildConfig

const database = Layer.effectDiscard(Database.runMigrations({ ...migrations, "0004_webhooks": webhooksMigration })).pipe(
  Layer.provideMerge(Database.layer({ url: config.databaseUrl, dataDir: config.databaseUrl === undefined ? config.dataDir : undefined }))
)

const worker = Layer.unwrapEffect(
  Effect.map(resolveMasterKey({ configured: config.masterKeyHex, dataDir: config.dataDir }), (masterKey) =>
    DeliveryWorker.layer({
      masterKey,
      allowLoopbackForTests: true,
      leaseMs: config.leaseMs,
      requestTimeoutMs: config.requestTimeoutMs,
      resolveTimeoutMs: 500,
      batchSize: config.batchSize,
      concurrency: config.concurrency,
      pollIntervalMs: 50
    })
  )
)

const main = Layer.launch(
  Layer.merge(worker, Layer.effectDiscard(Effect.sync(() => process.stdout.write("READY\n")))).pipe(Layer.provide(database))
)

const fiber = Effect.runFork(main)
process.on("SIGTERM", () => {
  Effect.runFork(Fiber.interrupt(fiber))
})
fiber.addObserver((exit) => {
  if (exit._tag === "Failure" && !Cause.isInterruptedOnly(exit.cause)) {
    process.stderr.write(`worker child failed: ${Cause.pretty(exit.cause)}\n`)
    process.exit(1)
  }
  process.exit(0)
})
