import * as net from "node:net"
import { Kafka, logLevel } from "kafkajs"
import { describe, expect, it } from "vitest"
import { skipKafka, noKafkaReason, startKafkaBroker } from "./kafkaBroker.js"

const connects = (address: string): Promise<boolean> =>
  new Promise((resolve) => {
    const [host, port] = address.split(":")
    const socket = net.connect({ host: host!, port: Number(port) })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

describe.skipIf(skipKafka())(`the Kafka mock broker${skipKafka() ? ` (${noKafkaReason})` : ""}`, () => {
  it("starts on a loopback port with the topics asked for, answers a missing topic as unknown, and stops", async () => {
    const broker = await startKafkaBroker({ topics: [{ name: "made", partitions: 3 }], missingTopics: ["absent"] })
    try {
      expect(broker.brokers).toHaveLength(1)
      expect(broker.brokers[0]).toMatch(/^127\.0\.0\.1:\d+$/)
      const admin = new Kafka({ brokers: [...broker.brokers], clientId: "broker-test", logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin()
      await admin.connect()
      try {
        const made = await admin.fetchTopicMetadata({ topics: ["made"] })
        expect(made.topics[0]!.partitions).toHaveLength(3)
        await expect(admin.fetchTopicMetadata({ topics: ["absent"] })).rejects.toMatchObject({ type: "UNKNOWN_TOPIC_OR_PARTITION" })
      } finally {
        await admin.disconnect()
      }
    } finally {
      await broker.stop()
    }
    expect(await connects(broker.brokers[0]!)).toBe(false)
  })
})
