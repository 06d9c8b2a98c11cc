/**
 * The market actors' before-checkpoint hooks (the webhook outbox's notices, the orders' trigger
 * wait) are called when a flush takes its states, once per flush: a flush that fails and is
 * retried retries the write that call answered. The webhook outbox empties its pending notices
 * into that write when called, so calling it again on a retry would answer a write without them,
 * and the checkpoint would pass transitions whose events were never recorded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Layer, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import { Bus, type BusShape } from "../../ingest/bus/Bus.js"
import { eventuallyEffect } from "../support/eventually.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

class Shared extends Context.Tag("test/BeforeCheckpointShared")<Shared, { readonly bus: BusShape; readonly database: Context.Context<SqlClient.SqlClient> }>() {}
const sharedLayer = Layer.scoped(Shared, memoryBusAndPglite(2, "curvestream-before-checkpoint-"))

layer(sharedLayer, { timeout: 120_000, excludeTestServices: true })("the market actors' before-checkpoint hooks", (it) => {
  it.scoped("are called once per flush; a failed flush retries the write its call answered", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      let calls = 0
      const attempts: Array<number> = [] // which call's write ran, in order
      const announcements = () => ({
        beforeCheckpoint: () => {
          const call = ++calls
          return Effect.suspend(() => {
            attempts.push(call)
            return attempts.length === 1 ? Effect.fail(new Error("a transient write failure")) : Effect.void
          })
        }
      })
      const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
      const { actors } = yield* MarketActors.make({ shards: 2, announcements, checkpointIntervalMs: 20, checkpointLingerMs: 1 }).pipe(
        Effect.provideService(Bus, bus),
        Effect.provide(database),
        Scope.extend(scope)
      )
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1BeforeCheckpoint" })
      yield* publishEvents(bus, [m.created(), ...m.buy("a", 1_000_000_000n)])
      yield* eventuallyEffect(Effect.sync(() => actors.stats().checkpoint.flushes >= 1 && attempts.length >= 2), {
        what: "a flush that failed once and was retried",
        deadlineMs: 30_000,
        intervalMs: 10,
        detail: () => `attempts ${JSON.stringify(attempts)}, flushes ${actors.stats().checkpoint.flushes}`
      })
      // The retry ran the first call's write again; a second call came only with a later flush.
      expect(attempts.slice(0, 2)).toEqual([1, 1])
      yield* Scope.close(scope, Exit.void)
    })
  )
})
