/**
 * The started engine (`--role all`) on Kafka: `KAFKA_BROKERS` selects the Kafka bus, here
 * librdkafka's mock cluster with the engine's topic created up front. It gets ready, the
 * simulated traders' markets reach the feed through Kafka, and it exits cleanly on SIGTERM. A
 * broker without the topic is refused at start, naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { type KafkaBroker, noKafkaReason, skipKafka, startKafkaBroker } from "../support/kafkaBroker.js"
import { engineClient } from "../../clients/typescript/index.js"

const skip = skipKafka()
// The mock cannot serve an idempotent producer (docs/decisions.md, "Kafka in development and CI").
const kafkaEnv = (broker: KafkaBroker) => ({ KAFKA_BROKERS: broker.brokers.join(","), KAFKA_IDEMPOTENT: "false" })

describe.skipIf(skip)(`the engine on Kafka${skip ? ` (${noKafkaReason})` : ""}`, () => {
  let broker: KafkaBroker
  let engine: Engine
  beforeAll(async () => {
    broker = await startKafkaBroker({ topics: [{ name: "chain.events", partitions: 16 }] })
    engine = await startEngine({ env: kafkaEnv(broker), readyTimeoutMs: 90_000 })
  }, 120_000)
  afterAll(async () => {
    await engine?.stop()
    engine?.cleanup()
    await broker?.stop()
  }, 60_000)

  it("is ready with the bus check on Kafka, and the simulated markets reach the feed through it", async () => {
    const ready = (await engineClient({ baseUrl: engine.url }).GET("/readyz")).data
    expect(ready).toMatchObject({ ready: true, checks: { bus: "ok" } })
    const tokens = await eventually(
      async () => {
        const { data } = await engineClient({ baseUrl: engine.url }).GET("/api/v1/markets/feed", { params: { query: { bucket: "new", limit: 5 } } })
        return (data?.tokens.length ?? 0) > 0 ? data?.tokens : undefined
      },
      { what: "markets in the feed", deadlineMs: 60_000, intervalMs: 200, detail: () => engine.output().slice(-3000) }
    )
    expect(tokens.length).toBeGreaterThan(0)
  })

  it("exits 0 on SIGTERM", async () => {
    expect(await engine.stop()).toEqual({ code: 0, signal: null })
  })
})

describe.skipIf(skip)(`the engine on a Kafka without its topic${skip ? ` (${noKafkaReason})` : ""}`, () => {
  it("refuses to start, naming the missing topic", async () => {
    const bare = await startKafkaBroker({ missingTopics: ["chain.events"] })
    try {
      const error = await startEngine({ env: kafkaEnv(bare), readyTimeoutMs: 90_000 }).then(
        (engine) => {
          void engine.stop("SIGKILL")
          return undefined
        },
        (e: unknown) => String(e)
      )
      expect(error).toBeDefined()
      expect(error).toContain("topic chain.events does not exist")
    } finally {
      await bare.stop()
    }
  }, 120_000)
})
