/**
 * The child process of `test/integration/bus.restart.test.ts` (not part of the engine): opens an
 * embedded bus on `argv[2]`, publishes numbered records forever and consumes them in group `g`,
 * reporting on stdout, one line each, only what already happened:
 *
 *   ready                          the bus is open
 *   A <seq> <p>:<o>,<p>:<o>,...    records seq, seq+1, ... were acknowledged at those positions
 *   B <p> <first> <last>           onBatch got offsets first..last of partition p (commit follows)
 *   closed                         the bus's scope closed (clean shutdown only)
 *
 * stdout is a pipe, and pipe writes are synchronous on Linux, so a line is out before the next
 * step runs: a SIGKILL can lose nothing that was reported. SIGTERM interrupts the main fiber
 * (NodeRuntime.runMain), which closes the bus through its scope.
 */
import { pathToFileURL } from "node:url"
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { make } from "../../ingest/bus/EmbeddedBus.js"

export const RESTART_TOPIC = "t"
export const RESTART_GROUP = "g"
export const RESTART_PARTITIONS = 4
export const restartKey = (seq: number): string => `k${seq % 37}`
export const restartValue = (seq: number): string => `v${seq}`.padEnd(24, ".")

const say = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

const program = Effect.gen(function* () {
  const dir = process.argv[2]
  if (dir === undefined) return yield* Effect.dieMessage("usage: restartChild <dir>")
  yield* Effect.addFinalizer(() => say("closed"))
  const bus = yield* make({ dir, partitions: RESTART_PARTITIONS, flushIntervalMs: 2, fsync: true })
  const encoder = new TextEncoder()
  yield* bus.subscribe({ group: RESTART_GROUP, topic: RESTART_TOPIC, fromBeginning: true, maxBatch: 50 }, (batch) =>
    say(`B ${batch.partition} ${batch.records[0]!.offset} ${batch.records[batch.records.length - 1]!.offset}`)
  )
  yield* say("ready")
  let seq = 0
  while (true) {
    const first = seq
    const messages = Array.from({ length: 20 }, (_, i) => ({ key: restartKey(first + i), value: encoder.encode(restartValue(first + i)) }))
    seq += messages.length
    const acks = yield* bus.publish(RESTART_TOPIC, messages)
    yield* say(`A ${first} ${acks.map((a) => `${a.partition}:${a.offset}`).join(",")}`)
  }
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  NodeRuntime.runMain(Effect.scoped(program))
}
