/**
 * A Kafka-protocol broker for tests: librdkafka's mock cluster, run as its own process by
 * `scripts/kafka-dev.sh` (which compiles `scripts/kafka-mock/mock_broker.c` once into
 * node_modules/.cache). It listens on ephemeral loopback ports the OS picks, so runs never
 * collide; `startKafkaBroker` waits (with a deadline) for the line naming them.
 *
 * The broker reads its stdin and exits when it closes, so it never outlives the test process,
 * even one killed with -9. `stop` sends SIGTERM and waits for the exit (SIGKILL past a deadline).
 *
 * Without Debian's librdkafka-dev (a developer machine), `kafkaBrokerAvailable` is false and
 * the Kafka tests skip saying so; under `CURVESTREAM_REQUIRE_SERVERS=1` (CI, whose `.ci/run`
 * installs it) starting one fails instead.
 */
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"

const execFileAsync = promisify(execFile)
const root = path.resolve(import.meta.dirname, "../..")
const script = path.join(root, "scripts/kafka-dev.sh")

export interface KafkaBrokerOptions {
  /** Topics created up front (the mock has no CreateTopics). */
  readonly topics?: ReadonlyArray<{ readonly name: string; readonly partitions: number }>
  /** Topics whose metadata answers UNKNOWN_TOPIC_OR_PARTITION, as with auto-creation off. */
  readonly missingTopics?: ReadonlyArray<string>
  /** Give up waiting for the broker's address after this long (default 15 s). */
  readonly startDeadlineMs?: number
}

export interface KafkaBroker {
  /** `127.0.0.1:<port>` (one broker). */
  readonly brokers: ReadonlyArray<string>
  readonly pid: number
  readonly stop: () => Promise<void>
}

/** As `servers.ts`'s (not imported: that module needs vitest's context, and benches use this one). */
const requireServers = process.env.CURVESTREAM_REQUIRE_SERVERS === "1"

export const kafkaBrokerAvailable: boolean = fs.existsSync("/usr/include/librdkafka/rdkafka_mock.h")

export const noKafkaReason =
  "skipped: librdkafka-dev is not installed here (CI sets CURVESTREAM_REQUIRE_SERVERS=1 and .ci/run installs it)"

/** Whether this run must skip the Kafka tests; throws when CI requires them but they cannot run. */
export const skipKafka = (): boolean => {
  if (kafkaBrokerAvailable) return false
  if (requireServers) throw new Error("CURVESTREAM_REQUIRE_SERVERS=1 but librdkafka-dev is not installed (see .ci/run)")
  return true
}

let built: Promise<string> | undefined

/** Compiles the mock broker once per test process (the script skips an up-to-date binary). */
const brokerBinary = (): Promise<string> => {
  built ??= execFileAsync(script, ["--build-only"], { encoding: "utf8" }).then(({ stdout }) => stdout.trim())
  return built
}

export const startKafkaBroker = async (options: KafkaBrokerOptions = {}): Promise<KafkaBroker> => {
  const binary = await brokerBinary()
  const args = ["--exit-on-stdin-eof"]
  for (const topic of options.topics ?? []) args.push("--topic", `${topic.name}:${topic.partitions}`)
  for (const name of options.missingTopics ?? []) args.push("--missing-topic", name)
  const child = spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"] })
  let output = ""
  child.stderr.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const deadlineMs = options.startDeadlineMs ?? 15_000
  const brokers = await new Promise<ReadonlyArray<string>>((resolve, reject) => {
    let stdout = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the Kafka mock broker did not print its address within ${deadlineMs} ms\n${output}`))
    }, deadlineMs)
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const line = /^KAFKA_BROKERS=(.+)$/m.exec(stdout)
      if (line !== null) {
        clearTimeout(timer)
        resolve(line[1]!.trim().split(","))
      }
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the Kafka mock broker exited (${code ?? signal}) before listening\n${output}`))
    })
  })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    await exited
    clearTimeout(killer)
  }
  return { brokers, pid: child.pid!, stop }
}
