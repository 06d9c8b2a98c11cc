/**
 * The per-chain signal detectors with several actors processes on one bus (issue 14): two
 * "processes" start the per-chain runtime through `chainDetectors` with `chainAlone` (a lease in
 * PostgreSQL), on one embedded bus of 4 partitions and one PGlite. Only the lease holder runs it:
 * as the `signals-chain` group's only member it reads every partition, so each chain's state knows
 * every token of the chain (split between two members, each would know only its partitions'). When
 * the holder stops, the other takes over, loads the checkpoints and replays from the group's
 * offsets, and its state again holds every token, the new ones included.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Layer, Scope } from "effect"
import type { ChainSignalState } from "../../actors/signals/ChainSignals.js"
import { defaultSignalConfig } from "../../actors/signals/SignalConfig.js"
import { chainSignalsDefinition } from "../../actors/signals/SignalDetectors.js"
import { pgCheckpointStore } from "../../actors/runtime/Checkpointer.js"
import { make as makeRuntime, type ShardedRuntime } from "../../actors/runtime/ShardedRuntime.js"
import { type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { makeRowLeases } from "../../src/db/RowLease.js"
import { chainDetectors } from "../../src/services/signals/SignalWiring.js"
import { eventuallyEffect } from "../support/eventually.js"
import { memoryBusAndPglite, publishEvents, workloadMarkets, workloadRounds } from "../support/marketWorkload.js"

const PARTITIONS = 4

class Shared extends Context.Tag("test/Shared")<Shared, { readonly bus: BusShape; readonly database: Context.Context<SqlClient.SqlClient> }>() {}

const sharedLayer = Layer.scoped(Shared, memoryBusAndPglite(PARTITIONS, "curvestream-chain-alone-"))

const inputs = { usdPrice: () => null, trackedWallet: () => undefined, kolByHandle: () => undefined }

/** One actors "process": the per-chain detectors behind the lease, in a scope of its own (closing it is the process stopping). */
const openProcess = Effect.gen(function* () {
  const { bus, database } = yield* Shared
  const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const sql = Context.get(database, SqlClient.SqlClient)
  const store = yield* pgCheckpointStore(500).pipe(Effect.provide(database))
  const hooks = { publish: () => undefined, outputs: () => undefined, setWarming: () => undefined }
  const chain = yield* chainDetectors(
    makeRuntime(chainSignalsDefinition(inputs, defaultSignalConfig), hooks, store, bus, {
      shards: 1,
      topic: Topics.chainEvents,
      group: "signals-chain",
      reloadOnAssign: true,
      checkpointIntervalMs: 50
    }).pipe(Effect.provide(database)),
    { leases: makeRowLeases(sql, { leaseMs: 600 }), standbyMs: 50 }
  ).pipe(Scope.extend(scope))
  return { chain, close: Scope.close(scope, Exit.void) }
})

/** The solana mints the running process's chain state knows. */
const solanaMints = (runtime: ShardedRuntime<ChainSignalState> | undefined): number => runtime?.state("solana")?.mints.size ?? 0

layer(sharedLayer, { excludeTestServices: true })("per-chain detectors, one process at a time", (it) => {
  it.scoped(
    "only the lease holder runs them and it knows every token of the chain; when it stops, the other takes over and knows every token too",
    () =>
      Effect.gen(function* () {
        const { bus } = yield* Shared
        const a = yield* openProcess
        const b = yield* openProcess
        const w = workloadMarkets(8, "alone")
        yield* publishEvents(bus, workloadRounds(w, 2, true))
        const active = yield* eventuallyEffect(
          Effect.sync(() => {
            const [holder, standby] = a.chain.current() !== undefined ? [a, b] : [b, a]
            return solanaMints(holder.chain.current()) === 8 ? { holder, standby } : undefined
          }),
          { what: "the holder's chain state to know all 8 solana tokens (every partition)", deadlineMs: 20_000 }
        )
        expect(active.standby.chain.current()).toBeUndefined()
        expect(active.standby.chain.stats()).toBeUndefined()

        yield* active.holder.close
        const more = workloadMarkets(4, "later")
        yield* publishEvents(bus, workloadRounds(more, 1, true))
        yield* eventuallyEffect(Effect.sync(() => (solanaMints(active.standby.chain.current()) === 12 ? true : undefined)), {
          what: "the other process to take over and know all 12 solana tokens",
          deadlineMs: 20_000
        })
        yield* active.standby.close
      }),
    60_000
  )
})
