/**
 * Two market-actor processes sharing `chain.events` (the actors role), through the real runtime
 * on one embedded bus and one PGlite: A runs alone, B joins (the bus moves half the partitions to
 * B, which reloads their checkpoints), both apply more traffic, B leaves (its partitions return to
 * A, whose states for them are stale: it reloads B's checkpoints), and after more traffic every
 * market A holds equals the in-order fold of all the events. Without the reload on assignment A
 * would apply the last round onto the states it held before B joined and miss B's round.
 * Beside it, the checkpoint store's ownership fence: once a partition is claimed again, the
 * previous owner's flushes write nothing of it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Layer, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import { pgCheckpointStore } from "../../actors/runtime/Checkpointer.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { eventuallyEffect } from "../support/eventually.js"
import { foldStates, memoryBusAndPglite, publishEvents, workloadMarkets, workloadRounds } from "../support/marketWorkload.js"

const PARTITIONS = 4

class Shared extends Context.Tag("test/Shared")<Shared, { readonly bus: BusShape; readonly database: Context.Context<SqlClient.SqlClient> }>() {}

const sharedLayer = Layer.scoped(Shared, memoryBusAndPglite(PARTITIONS, "curvestream-rebalance-"))

/** One actors "process": its own runtime in a scope of its own (closing it is the process leaving the group). */
const openActors = Effect.gen(function* () {
  const { bus, database } = yield* Shared
  const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const { actors } = yield* MarketActors.make({ reloadOnAssign: true, shards: 2 }).pipe(
    Effect.provideService(Bus, bus),
    Effect.provide(database),
    Scope.extend(scope)
  )
  return { actors, close: Scope.close(scope, Exit.void) }
})

const committedToEnd = (bus: BusShape) =>
  Effect.gen(function* () {
    const ends = yield* bus.endOffsets(Topics.chainEvents)
    yield* eventuallyEffect(
      Effect.map(bus.committed(MarketActors.MARKET_ACTORS_GROUP, Topics.chainEvents), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) >= end)),
      { what: "the commits to reach the end of chain.events", deadlineMs: 30_000, intervalMs: 10 }
    )
  })

layer(sharedLayer, { timeout: 120_000, excludeTestServices: true })("market actors sharing chain.events", (it) => {
  it.scoped("a partition handed over reloads its checkpoints: the survivor ends in the uninterrupted state", () =>
    Effect.gen(function* () {
      const { bus } = yield* Shared
      const w = workloadMarkets(6)
      const round1 = workloadRounds(w, 8, true)
      const round2 = workloadRounds(w, 8, false)
      const round3 = workloadRounds(w, 8, false)
      const a = yield* openActors
      yield* publishEvents(bus, round1)
      yield* committedToEnd(bus)

      const b = yield* openActors
      // B was given half the partitions and reloaded them before its first batch.
      yield* eventuallyEffect(Effect.sync(() => b.actors.stats().reloads >= PARTITIONS / 2), { what: "B to reload its partitions", deadlineMs: 10_000, intervalMs: 10 })
      yield* publishEvents(bus, round2)
      yield* committedToEnd(bus)
      expect(b.actors.stats().applied).toBeGreaterThan(0)
      const aReloadsBefore = a.actors.stats().reloads

      yield* b.close
      yield* eventuallyEffect(Effect.sync(() => a.actors.stats().reloads >= aReloadsBefore + PARTITIONS / 2), {
        what: "A to reload the partitions B left",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      yield* publishEvents(bus, round3)
      yield* committedToEnd(bus)

      const expected = foldStates([...round1, ...round2, ...round3])
      expect(expected.size).toBe(12)
      for (const [key, state] of expected) {
        const [chain, mint] = key.split(":") as ["solana" | "hood", string]
        expect(a.actors.state(chain, mint)?.core, key).toEqual(state.core)
      }
      yield* a.close
    })
  )

  it.scoped("the ownership fence: once a partition is claimed again, its previous owner's flushes write nothing of it", () =>
    Effect.gen(function* () {
      const { database } = yield* Shared
      const sql = Context.get(database, SqlClient.SqlClient)
      const store = yield* pgCheckpointStore(10).pipe(Effect.provide(database))
      const read = (key: string) => Effect.map(sql<{ state: string }>`SELECT state::text AS state FROM checkpoints WHERE owner = 'fence-test' AND key = ${key}`, (rows) => rows[0]?.state)
      const partitionOf = (key: string) => (key.startsWith("p0") ? 0 : 1)
      const first = yield* store.claim("fence-test", 0)
      const other = yield* store.claim("fence-test", 1)
      const a = { partitionOf, epochs: new Map([[0, first], [1, other]]) }
      expect(yield* store.save("fence-test", [{ key: "p0-k", position: "1", state: JSON.stringify({ by: "a" }) }, { key: "p1-k", position: "1", state: JSON.stringify({ by: "a" }) }], a)).toBe(0)
      // Partition 0 moves to B, which claims it: A's next flush writes partition 1's row only.
      const second = yield* store.claim("fence-test", 0)
      expect(second).toBe(first + 1)
      const b = { partitionOf, epochs: new Map([[0, second]]) }
      expect(yield* store.save("fence-test", [{ key: "p0-k", position: "2", state: JSON.stringify({ by: "b" }) }], b)).toBe(0)
      expect(yield* store.save("fence-test", [{ key: "p0-k", position: "1", state: JSON.stringify({ by: "a, stale" }) }, { key: "p1-k", position: "2", state: JSON.stringify({ by: "a, again" }) }], a)).toBe(1)
      expect(JSON.parse((yield* read("p0-k"))!)).toEqual({ by: "b" })
      expect(JSON.parse((yield* read("p1-k"))!)).toEqual({ by: "a, again" })
      // A row of a partition this process never claimed is not written either; no fence writes it as before.
      expect(yield* store.save("fence-test", [{ key: "p1-new", position: "1", state: "{}" }], b)).toBe(1)
      expect(yield* read("p1-new")).toBeUndefined()
      expect(yield* store.save("fence-test", [{ key: "p1-new", position: "1", state: "{}" }])).toBe(0)
      expect(yield* read("p1-new")).toBe("{}")
    })
  )
})
