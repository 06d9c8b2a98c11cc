/**
 * The sharded runtime's own guarantees, on the real embedded bus and PGlite: supervision (a step
 * that throws), the commit-after-checkpoint protocol (observed by holding a flush), the live-key
 * bound, and refusing to start on a corrupt checkpoint.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, ExecutionStrategy, Exit, Logger, Scope } from "effect"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { encodeFast } from "../../ingest/ChainEventCodec.js"
import { marketActorDefinition } from "../../actors/MarketActors.js"
import type { MarketOutput, MarketState } from "../../actors/market/MarketActor.js"
import { type CheckpointStore, pgCheckpointStore } from "../../actors/runtime/Checkpointer.js"
import { type ActorDefinition, make as makeRuntime, type RuntimeOptions } from "../../actors/runtime/ShardedRuntime.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { type BusShape, Topics } from "../../ingest/bus/Bus.js"
import * as EmbeddedBus from "../../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../../ingest/ChainEvent.js"
import * as Database from "../../src/db/Database.js"
import { eventuallyEffect } from "../support/eventually.js"

const SOL = 1_000_000_000n

const publish = (bus: BusShape, events: ReadonlyArray<ChainEvent>) =>
  bus.publish(
    Topics.chainEvents,
    events.map((e) => ({ key: busKey(e), value: encodeFast(e) }))
  )

const captureLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message, annotations }) => {
    const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
    lines.push(`${logLevel.label} ${text} ${JSON.stringify(Object.fromEntries(annotations))}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Starts a runtime in its own scope on a fresh in-memory bus; returns it with the bus and index. */
const start = (definition: ActorDefinition<MarketState, ChainEvent, MarketOutput>, options: Partial<RuntimeOptions> = {}, store?: CheckpointStore) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 4 }).pipe(Scope.extend(scope))
    const index = new MarketIndexStore()
    const checkpoints = store ?? (yield* pgCheckpointStore(500))
    const runtime = yield* makeRuntime(definition, { publish: (c) => index.publish(c), setWarming: (w) => index.setWarming(w) }, checkpoints, bus, options).pipe(
      Scope.extend(scope)
    )
    return { bus, index, runtime, close: Scope.close(scope, Exit.void) }
  })

layer(Database.layerTest, { timeout: 60_000, excludeTestServices: true })("sharded runtime", (it) => {
  it.scoped("a step that throws is logged with the event id; that event is skipped for that mint; the shard goes on", () =>
    Effect.gen(function* () {
      const a = new SimMarket(new ChainClock("solana"), { mint: "So1Faulty" })
      const b = new SimMarket(new ChainClock("solana"), { mint: "So1Healthy" })
      const events = [a.created(), b.created(), ...a.buy("x", SOL)]
      const faulty = a.buy("y", SOL)[0]!
      events.push(faulty, ...b.buy("z", SOL), ...a.buy("w", SOL))
      const base = marketActorDefinition()
      const definition: ActorDefinition<MarketState, ChainEvent, MarketOutput> = {
        ...base,
        owner: "test-defect",
        step: (state, event) => {
          if (event.id === faulty.id) throw new Error("boom")
          return base.step(state, event)
        }
      }
      const logs = captureLogs()
      const { bus, index, runtime } = yield* start(definition, { shards: 1 }).pipe(Effect.provide(logs.layer))
      yield* publish(bus, events)
      yield* eventuallyEffect(Effect.sync(() => runtime.stats().applied + runtime.stats().skipped + runtime.stats().defects === events.length), { what: "every event", deadlineMs: 20_000, intervalMs: 5 })
      expect(runtime.stats().defects).toBe(1)
      expect(index.market("solana", "So1Faulty")?.stats.tradesTotal).toBe(2) // the two around the faulty one
      expect(index.market("solana", "So1Healthy")?.stats.tradesTotal).toBe(1)
      const line = logs.lines.find((l) => l.includes("step failed"))
      expect(line).toContain(faulty.id)
      expect(line).toContain("solana:So1Faulty")
    })
  )

  it.scoped("the bus offset is committed only after the states covering it are checkpointed", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const real = yield* pgCheckpointStore(500)
      const gate = yield* Deferred.make<void>()
      let saves = 0
      const held: CheckpointStore = {
        load: real.load,
        claim: real.claim,
        save: (owner, rows) =>
          Effect.suspend(() => {
            saves++
            return Effect.zipRight(Deferred.await(gate), real.save(owner, rows))
          })
      }
      const definition = { ...marketActorDefinition(), owner: "test-commit" }
      const { bus, index, runtime } = yield* start(definition, {}, held)
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1Commit" })
      const events = [m.created(), ...m.buy("a", SOL), ...m.buy("b", SOL)]
      yield* publish(bus, events)
      // Applied and visible at once...
      yield* eventuallyEffect(Effect.sync(() => index.market("solana", "So1Commit")?.stats.tradesTotal === 2), { what: "the index", deadlineMs: 20_000, intervalMs: 5 })
      yield* eventuallyEffect(Effect.sync(() => saves > 0), { what: "a flush to start", deadlineMs: 20_000, intervalMs: 5 })
      // ...but nothing committed while the flush is held, though the committer got as far as it
      // can: it is parked on the flush (the receipt), past applying the batch.
      yield* eventuallyEffect(Effect.sync(() => runtime.stats().checkpoint.flushWaiters > 0), { what: "the committer to wait for the flush", intervalMs: 5 })
      const committedWhileHeld = yield* bus.committed("actors", Topics.chainEvents)
      const ends = yield* bus.endOffsets(Topics.chainEvents)
      const partition = bus.partitionFor(Topics.chainEvents, busKey(events[0]!))
      expect(committedWhileHeld.get(partition) ?? 0).toBe(0)
      expect(ends.get(partition)).toBe(events.length)
      expect(runtime.stats().checkpoint.inFlight).toBe(1)
      const rows = yield* sql`SELECT 1 FROM checkpoints WHERE owner = 'test-commit'`
      expect(rows).toHaveLength(0)
      // Release: the state lands in PostgreSQL, then the offset is committed.
      yield* Deferred.succeed(gate, undefined)
      yield* eventuallyEffect(Effect.map(bus.committed("actors", Topics.chainEvents), (c) => (c.get(partition) ?? 0) === events.length), {
        what: "the offset commit after the release",
        deadlineMs: 10_000,
        intervalMs: 5
      })
      const [row] = yield* sql<{ position: string }>`SELECT position FROM checkpoints WHERE owner = 'test-commit' AND key = 'solana:So1Commit'`
      expect(row?.position).toBe(events[events.length - 1]!.position)
    })
  )

  it.scoped("at the live-key bound a new market is refused, counted and logged; existing ones go on", () =>
    Effect.gen(function* () {
      const logs = captureLogs()
      const definition = { ...marketActorDefinition(), owner: "test-bound" }
      const { bus, index, runtime } = yield* start(definition, { maxKeys: 2, shards: 1 }).pipe(Effect.provide(logs.layer))
      const clock = new ChainClock("solana")
      const markets = ["So1A", "So1B", "So1C"].map((mint) => new SimMarket(clock, { mint }))
      const events = [...markets.map((m) => m.created()), ...markets[0]!.buy("x", SOL)]
      yield* publish(bus, events)
      yield* eventuallyEffect(Effect.sync(() => runtime.stats().received === events.length && runtime.stats().refused === 1), { what: "the refusal", deadlineMs: 20_000, intervalMs: 5 })
      expect(index.size()).toBe(2)
      expect(index.market("solana", "So1C")).toBeUndefined()
      yield* eventuallyEffect(Effect.sync(() => index.market("solana", "So1A")?.stats.tradesTotal === 1), { what: "the existing market", deadlineMs: 20_000, intervalMs: 5 })
      expect(logs.lines.some((l) => l.includes("live keys reached") && l.includes("solana:So1C"))).toBe(true)
    })
  )

  it.scoped("a corrupt checkpoint row stops the start, naming the key", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO checkpoints (owner, key, position, state) VALUES ('test-corrupt', 'solana:Bad', 's:1', '{"v":99}'::jsonb)`
      const exit = yield* Effect.exit(start({ ...marketActorDefinition(), owner: "test-corrupt" }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("test-corrupt/solana:Bad")
    })
  )
})
