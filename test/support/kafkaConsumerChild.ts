/**
 * The child process of `ingest/bus/KafkaBus.test.ts`'s crash test (not part of the engine): joins
 * group `argv[3]` on topic `argv[4]` through a `KafkaBus` on brokers `argv[2]`, with manual
 * commits, and commits each delivered batch only up to offset `argv[5]` (exclusive). It reports
 * on stdout, one line each, only what already happened:
 *
 *   B <p> <first> <last>    onBatch got offsets first..last of partition p
 *   C <p> <next>            the commit of next on partition p succeeded
 *
 * The parent kills it with SIGKILL: the group learns of it only when its session times out.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { KafkaBus } from "../../ingest/bus/KafkaBus.js"

const say = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

const program = Effect.gen(function* () {
  const [brokers, group, topic, commitUpTo] = process.argv.slice(2)
  if (brokers === undefined || group === undefined || topic === undefined || commitUpTo === undefined) {
    return yield* Effect.dieMessage("usage: kafkaConsumerChild <brokers> <group> <topic> <commitUpTo>")
  }
  const bus = yield* KafkaBus.make({ brokers: brokers.split(","), clientId: "crash-child", partitions: 1, idempotent: false, sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 6_000 })
  yield* bus.subscribe({ group, topic, fromBeginning: true, autoCommit: false }, (batch) =>
    Effect.gen(function* () {
      const first = batch.records[0]!.offset
      const last = batch.records[batch.records.length - 1]!.offset
      yield* say(`B ${batch.partition} ${first} ${last}`)
      const next = Math.min(last + 1, Number(commitUpTo))
      if (next > first) {
        yield* bus.commit(group, topic, batch.partition, next)
        yield* say(`C ${batch.partition} ${next}`)
      }
    })
  )
  return yield* Effect.never
})

NodeRuntime.runMain(Effect.scoped(program))
