/**
 * The cluster keeper sees every market (docs/decisions.md, "Cluster roles"): two actors
 * "processes" (their own runtime and `TopicPublisher` each, sharing `chain.events` and one PGlite)
 * split the partitions, on the embedded bus and on `KafkaBus` over librdkafka's mock cluster (a
 * client each); only A runs the keeper, over `market.snapshots`
 * (`SnapshotCandidates` through `runKeeperAloneOver`, as `--role actors` wires it). Curves that
 * complete on B's partitions, which A's own index never holds, are migrated by A's keeper, and
 * its `MigrationProgress` events reach B's actors through `chain.events`. Beside them: a Solana
 * curve completed in its launch slot is left (rule 8), a trading curve is no candidate, and the
 * source holds only completed markets (a curve seen migrated leaves it). A second follower
 * started after the traffic catches up before it answers, so it starts with every completed curve.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, layer, type Vitest } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Fiber, Layer, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import * as TopicPublisher from "../../actors/replica/TopicPublisher.js"
import { Bus, type BusError, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { KafkaBus } from "../../ingest/bus/KafkaBus.js"
import { busKey, type ChainEvent } from "../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { makeRowLeases } from "../../src/db/RowLease.js"
import { DefaultKeeperPolicy } from "../../src/services/keeper/KeeperPolicy.js"
import { type MigrationExecutor, runKeeperAloneOver } from "../../src/services/keeper/MigrationKeeper.js"
import * as SnapshotCandidates from "../../src/services/keeper/SnapshotCandidates.js"
import { eventuallyEffect } from "../support/eventually.js"
import { noKafkaReason, skipKafka, startKafkaBroker } from "../support/kafkaBroker.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

const PARTITIONS = 4
const TOPICS = ["chain.events", "market.snapshots", "market.feed", "signals"]

/** One database, and a bus client per "process" (the embedded adapter: its one in-process bus). */
class Shared extends Context.Tag("test/Shared")<
  Shared,
  { readonly database: Context.Context<SqlClient.SqlClient>; readonly openBus: Effect.Effect<BusShape, BusError, Scope.Scope> }
>() {}

const embeddedLayer = Layer.scoped(
  Shared,
  Effect.map(memoryBusAndPglite(PARTITIONS, "curvestream-keeper-all-"), ({ bus, database }) => ({ database, openBus: Effect.succeed(bus) }))
)

const kafkaLayer = Layer.scoped(
  Shared,
  Effect.gen(function* () {
    const { database } = yield* memoryBusAndPglite(1, "curvestream-keeper-all-kafka-")
    const broker = yield* Effect.acquireRelease(
      Effect.promise(() => startKafkaBroker({ topics: TOPICS.map((name) => ({ name, partitions: PARTITIONS })) })),
      (b) => Effect.promise(() => b.stop())
    )
    // The mock cannot serve an idempotent producer (docs/decisions.md, "Kafka in development and CI").
    const openBus = KafkaBus.make({ brokers: broker.brokers, clientId: "keeper-all", partitions: PARTITIONS, idempotent: false, sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 6_000 })
    return { database, openBus }
  })
)

/** One actors "process": its bus client, runtime and publisher in a scope of its own. */
const openActors = Effect.gen(function* () {
  const { database, openBus } = yield* Shared
  const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const bus = yield* openBus.pipe(Scope.extend(scope))
  const publisher = yield* TopicPublisher.make(bus).pipe(Scope.extend(scope))
  const { index, actors } = yield* MarketActors.make({ publisher, reloadOnAssign: true, shards: 2 }).pipe(
    Effect.provideService(Bus, bus),
    Effect.provide(database),
    Scope.extend(scope)
  )
  return { bus, index, actors, close: Scope.close(scope, Exit.void) }
})

/** Positions stay in the creation's slot: a curve bought past graduation there completes in its launch slot. */
class LaunchSlotClock extends ChainClock {
  private started = false
  override next(): string {
    const position = super.next(this.started)
    this.started = true
    return position
  }
}

const mint = (i: number, tag: string) => `${tag}${String(i).padStart(4, "0")}`.padEnd(43, "1")

/** Completed curves: enough that both processes own some. */
const completedCurves = (count: number) =>
  Array.from({ length: count }, (_, i) => new SimMarket(new ChainClock("solana"), { mint: mint(i, "KeepAll") }))

const policy = { ...DefaultKeeperPolicy, sweepIntervalMs: 50, backoffBaseMs: 60_000, maxAttempts: 5 }

const suite = (it: Vitest.MethodsNonLive<Shared, true>) => {
  it.scoped("migrates completed curves of the partitions its own process does not own, and leaves rule 8's", () =>
    Effect.gen(function* () {
      const { database } = yield* Shared
      const sql = Context.get(database, SqlClient.SqlClient)
      const a = yield* openActors
      const b = yield* openActors
      const bus = a.bus
      // Fresh markets now and then until B was given its half (KafkaBus tells a member of a
      // partition with the partition's first batch; the embedded bus at the join).
      let fillers = 0
      const filler = () => new SimMarket(new ChainClock("solana"), { mint: mint(fillers++, "Filler") }).created()
      yield* eventuallyEffect(
        Effect.suspend(() =>
          b.actors.stats().reloads >= PARTITIONS / 2 ? Effect.succeed(true) : Effect.as(publishEvents(bus, Array.from({ length: 8 }, filler)), undefined)
        ),
        { what: "B to be given half the partitions", deadlineMs: 90_000, intervalMs: 200, detail: () => JSON.stringify({ fillers, a: a.actors.stats(), b: b.actors.stats() }) }
      )

      const curves = completedCurves(8)
      const inLaunchSlot = new SimMarket(new LaunchSlotClock("solana"), { mint: mint(0, "SameSlot") })
      const trading = new SimMarket(new ChainClock("solana"), { mint: mint(0, "Trading") })
      const events: Array<ChainEvent> = [
        ...curves.flatMap((m) => [m.created(), ...m.buy("whale", m.params.thresholdRaw * 2n)]),
        inLaunchSlot.created(),
        ...inLaunchSlot.buy("bundle", inLaunchSlot.params.thresholdRaw * 2n),
        trading.created(),
        ...trading.buy("small", 1_000_000n)
      ]
      yield* publishEvents(bus, events)
      // Both processes applied their share; B owns completed curves A's index has never held.
      yield* eventuallyEffect(
        Effect.sync(() => curves.every((m) => (a.index.market("solana", m.mint) ?? b.index.market("solana", m.mint))?.lifecycle === "completed")),
        { what: "the curves to complete on their owners", deadlineMs: 10_000, intervalMs: 10 }
      )
      const ownedByB = curves.filter((m) => b.index.market("solana", m.mint) !== undefined)
      expect(ownedByB.length).toBeGreaterThan(0)
      expect(ownedByB.length).toBeLessThan(curves.length)
      for (const m of ownedByB) expect(a.index.market("solana", m.mint)).toBeUndefined()
      const slotCore = (a.index.market("solana", inLaunchSlot.mint) ?? b.index.market("solana", inLaunchSlot.mint))!
      expect(slotCore.lifecycle).toBe("completed")
      expect(slotCore.completedPosition!.slice(0, 22)).toBe(slotCore.identity.createdPosition.slice(0, 22))

      // A's keeper (the only one: B runs none), reading every partition's markets from market.snapshots.
      const sent: Array<string> = []
      const executor: MigrationExecutor = {
        chain: "solana",
        progressPosition: (n, core) => Effect.succeed(`${core.lastPosition.slice(0, 22)}:999999:${String(n).padStart(4, "0")}`),
        migrate: (core) => Effect.sync(() => (sent.push(core.mint), `sig-${core.mint}`))
      }
      let source: SnapshotCandidates.SnapshotCandidates | undefined
      const keeper = yield* Effect.fork(
        runKeeperAloneOver(
          makeRowLeases(sql, { leaseMs: 3_000 }),
          Effect.map(SnapshotCandidates.follow(bus, { groupPrefix: "keeper-test" }), (s) => ((source = s), s.candidates)),
          { executors: [executor], publish: (ps) => Effect.asVoid(bus.publish(Topics.chainEvents, ps.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) })))), policy },
          { standbyMs: 50 }
        )
      )
      yield* eventuallyEffect(Effect.sync(() => curves.every((m) => sent.includes(m.mint))), {
        what: "A's keeper to migrate every completed curve, B's too",
        deadlineMs: 20_000,
        intervalMs: 10,
        detail: () => JSON.stringify({ sent, stats: source?.stats() })
      })
      // Each once (the backoff is a minute), the launch-slot curve and the trading one never.
      expect([...sent].sort()).toEqual(curves.map((m) => m.mint).sort())
      // The progress of B's curves went through chain.events to B's actors, which own them.
      yield* eventuallyEffect(Effect.sync(() => ownedByB.every((m) => b.index.market("solana", m.mint)?.migration.status === "in_progress")), {
        what: "B's actors to apply the keeper's progress",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      // Bounded by the completed markets: the launch-slot curve is held (the keeper filters it), the trading one is not.
      yield* eventuallyEffect(Effect.sync(() => source!.stats().completed === curves.length + 1), { what: "the source to hold the completed curves", deadlineMs: 10_000, intervalMs: 10 })

      // A migration that lands on B's partition removes the curve from the source.
      const landed = ownedByB[0]!
      yield* publishEvents(bus, [landed.migrated()])
      yield* eventuallyEffect(Effect.sync(() => b.index.market("solana", landed.mint)?.lifecycle === "migrated"), { what: "B to apply the migration", deadlineMs: 10_000, intervalMs: 10 })
      yield* eventuallyEffect(Effect.sync(() => source!.stats().completed === curves.length), { what: "the migrated curve to leave the source", deadlineMs: 10_000, intervalMs: 10 })
      yield* Fiber.interrupt(keeper)

      // A follower started now answers only once caught up: every completed curve at once.
      const late = yield* SnapshotCandidates.follow(bus, { groupPrefix: "keeper-late" })
      expect([...late.candidates()].map((c) => c.mint).sort()).toEqual([...curves.filter((m) => m !== landed).map((m) => m.mint), inLaunchSlot.mint].sort())
      yield* a.close
      yield* b.close
    }),
    150_000
  )
}

layer(embeddedLayer, { timeout: 120_000, excludeTestServices: true })("the cluster keeper over market.snapshots: embedded bus", suite)

describe.skipIf(skipKafka())(`the cluster keeper over market.snapshots: KafkaBus on librdkafka's mock cluster${skipKafka() ? ` (${noKafkaReason})` : ""}`, () => {
  layer(kafkaLayer, { timeout: 180_000, excludeTestServices: true })("two actors processes, each its own client", suite)
})
