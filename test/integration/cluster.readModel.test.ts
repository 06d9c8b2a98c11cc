/**
 * The cluster read model through the real pieces on the embedded bus and PGlite: market actors
 * publishing through the `TopicPublisher` (the actors role), and `MarketReplica`s following
 * `market.snapshots` and `market.feed` (the API role). A replica started before the traffic and
 * one started after it both end equal to the actors' own index, down to every record's JSON and
 * every feed bucket's sequence numbers and deltas; a Hood retraction (whose state has an older
 * position) reaches the replica; a market only the snapshot topic still has (the feed's head
 * trimmed) is taken from it. Offsets
 * commit only once the read-model records are published.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { BUCKETS } from "../../actors/feeds/FeedBuckets.js"
import * as MarketActors from "../../actors/MarketActors.js"
import type { MarketIndexStore } from "../../actors/MarketIndex.js"
import { encodeSnapshot } from "../../actors/replica/ReadModelCodec.js"
import * as MarketReplica from "../../actors/replica/MarketReplica.js"
import * as TopicPublisher from "../../actors/replica/TopicPublisher.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { eventuallyEffect } from "../support/eventually.js"
import { foldStates, memoryBusAndPglite, publishEvents, workload, workloadMarkets, workloadRounds } from "../support/marketWorkload.js"

const PARTITIONS = 4

class Cluster extends Context.Tag("test/Cluster")<
  Cluster,
  { readonly bus: BusShape; readonly index: MarketIndexStore; readonly actors: MarketActors.MarketActorsShape; readonly publisher: TopicPublisher.TopicPublisher }
>() {}

const clusterLayer = Layer.scoped(
  Cluster,
  Effect.gen(function* () {
    const { bus, database } = yield* memoryBusAndPglite(PARTITIONS, "curvestream-cluster-")
    const publisher = yield* TopicPublisher.make(bus)
    const { index, actors } = yield* MarketActors.make({ publisher, reloadOnAssign: true, shards: 4 }).pipe(Effect.provideService(Bus, bus), Effect.provide(database))
    return { bus, index, actors, publisher }
  })
)

/** Waits until the actors committed every `chain.events` partition to its end (so the read model is published). */
const committedToEnd = (bus: BusShape, detail?: () => string) =>
  Effect.gen(function* () {
    const ends = yield* bus.endOffsets(Topics.chainEvents)
    yield* eventuallyEffect(
      Effect.map(bus.committed(MarketActors.MARKET_ACTORS_GROUP, Topics.chainEvents), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) >= end)),
      { what: "the actors' commits to reach the end of chain.events", deadlineMs: 30_000, intervalMs: 10, ...(detail === undefined ? {} : { detail }) }
    )
  })

const ready = (replica: MarketReplica.MarketReplica) =>
  eventuallyEffect(Effect.sync(() => replica.ready()), { what: "the replica to catch up", deadlineMs: 30_000, intervalMs: 10 })

/** Every record's JSON and every bucket's whole list and delta, as a reader sees them. */
const view = (index: MarketIndexStore) => {
  const records: Record<string, string | undefined> = {}
  for (const core of index.markets()) records[`${core.chain}:${core.mint}`] = index.get(core.chain, core.mint)?.json
  const feeds = BUCKETS.flatMap((bucket) => {
    const whole = index.feed(bucket, undefined, undefined)
    const delta = index.feed(bucket, undefined, Math.max(0, whole.seq - 5))
    return [
      { bucket, seq: whole.seq, tokens: whole.tokensJson },
      { bucket, since: whole.seq - 5, reset: delta.reset, tokens: delta.tokensJson, removed: delta.removed }
    ]
  })
  return { size: index.size(), records, feeds }
}

layer(clusterLayer, { timeout: 120_000, excludeTestServices: true })("the cluster read model", (it) => {
  it.scoped("replicas started before and after the traffic equal the actors' index, records and feed deltas alike", () =>
    Effect.gen(function* () {
      const { bus, index, actors, publisher } = yield* Cluster
      const early = yield* MarketReplica.make(bus, { groupPrefix: "early" })
      yield* ready(early)
      const events = workload(8, 24)
      yield* publishEvents(bus, events.slice(0, 400))
      yield* publishEvents(bus, events.slice(400))
      yield* committedToEnd(bus, () => JSON.stringify({ actors: actors.stats(), publisher: publisher.stats() }))
      // Offsets commit only after the publisher's barrier: everything the actors applied is out.
      expect(publisher.stats().pending).toBe(0)
      const late = yield* MarketReplica.make(bus, { groupPrefix: "late" })
      // Not ready (and the feed warming) until it has read what was there at its start.
      expect(late.ready()).toBe(false)
      expect(late.index.warming()).toBe(true)
      yield* ready(late)
      expect(late.index.warming()).toBe(false)
      const expected = view(index)
      expect(expected.size).toBe(16)
      for (const [key, state] of foldStates(events)) {
        const [chain, mint] = key.split(":") as ["solana" | "hood", string]
        expect(actors.state(chain, mint)?.core, key).toEqual(state.core)
      }
      yield* eventuallyEffect(
        Effect.sync(() => JSON.stringify(view(early.index)) === JSON.stringify(expected)),
        { what: "the early replica to equal the actors' index", deadlineMs: 10_000, intervalMs: 10 }
      )
      expect(view(early.index)).toEqual(expected)
      expect(view(late.index)).toEqual(expected)
      expect(late.stats()).toMatchObject({ ready: true, decodeFailures: 0, fromSnapshotOnly: 0 })
    })
  )

  it.scoped("a Hood retraction, which moves a market's position back, reaches the replica; a market only the snapshot topic has is taken from it", () =>
    Effect.gen(function* () {
      const { bus, index } = yield* Cluster
      const w = workloadMarkets(1, "Reorg")
      // Past the first test's Hood blocks (its clock starts at the same block): with its partition's
      // head more than the reorg window ahead, this market's events would be final as they arrive,
      // and the history sweep (every second) would trim them before the retraction, which then no
      // longer applies. That was this test's flake under load: the blocks, not the time, must move.
      w.hood.skipBlocks(100_000)
      w.hood.advance(3_600_000)
      const hood = w.sims[1]!
      const key = `hood:${hood.mint}`
      const created = [hood.created(), ...hood.buy("a", 10n ** 16n)]
      const before = hood.snapshot()
      const reorged = hood.buy("b", 10n ** 17n)
      hood.restore(before)
      yield* publishEvents(bus, created)
      yield* committedToEnd(bus)
      const replica = yield* MarketReplica.make(bus, { groupPrefix: "reorg" })
      yield* ready(replica)
      yield* publishEvents(bus, reorged)
      yield* committedToEnd(bus)
      yield* eventuallyEffect(Effect.sync(() => replica.index.market("hood", hood.mint)?.stats.tradesTotal === 2), { what: "the reorged trade on the replica", deadlineMs: 10_000, intervalMs: 10 })
      const retraction = hood.retracted(reorged.map((e) => e.id))
      yield* publishEvents(bus, [retraction])
      yield* committedToEnd(bus)
      const expected = foldStates([...created, ...reorged, retraction]).get(key)!.core!
      expect(expected.stats.tradesTotal).toBe(1)
      yield* eventuallyEffect(Effect.sync(() => replica.index.market("hood", hood.mint)?.stats.tradesTotal === 1), {
        what: "the retraction on the replica",
        deadlineMs: 10_000,
        intervalMs: 10,
        detail: () => JSON.stringify({ replica: replica.index.market("hood", hood.mint)?.stats.tradesTotal, actors: index.market("hood", hood.mint)?.stats.tradesTotal, stats: replica.stats() })
      })
      expect(replica.index.market("hood", hood.mint)).toEqual(expected)
      expect(replica.index.get("hood", hood.mint)!.json).toBe(index.get("hood", hood.mint)!.json)

      // A market whose feed records retention removed: only `market.snapshots` still has it.
      const only = workloadMarkets(1, "SnapOnly")
      const onlyEvents = workloadRounds(only, 2, true)
      const onlyKey = `solana:${only.sims[0]!.mint}`
      yield* bus.publish(Topics.marketSnapshots, [{ key: onlyKey, value: encodeSnapshot(foldStates(onlyEvents).get(onlyKey)) }])
      const fresh = yield* MarketReplica.make(bus, { groupPrefix: "fresh" })
      yield* ready(fresh)
      expect(fresh.stats().fromSnapshotOnly).toBe(1)
      expect(fresh.index.market("solana", only.sims[0]!.mint)).toEqual(foldStates(onlyEvents).get(onlyKey)!.core)
      expect(replica.index.market("solana", only.sims[0]!.mint)).toBeUndefined()
    })
  )

  it.scoped("a drain or a partition's reload with more states than one bus record holds goes out as several feed records, in order, and a replica gets every market", () =>
    Effect.gen(function* () {
      const { bus } = yield* Cluster
      // 300 markets a chain, 2 to 9 KB of state each: a few MiB in one change list, as a partition's
      // reload of its checkpoints hands the publisher (the buses refuse a record over 1 MiB).
      const states = foldStates(workloadRounds(workloadMarkets(300, "Big"), 3, true))
      const changes = [...states].map(([key, state]) => [key, state] as const)
      const feedBefore = yield* bus.endOffsets(Topics.marketFeed)
      const publisher = yield* TopicPublisher.make(bus)
      MarketActors.publishReadModel(publisher, changes)
      yield* publisher.barrier.pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error(`the read model was not published: ${JSON.stringify(publisher.stats())}`) })
      )
      expect(publisher.stats().failures).toBe(0)
      const feedAfter = yield* bus.endOffsets(Topics.marketFeed)
      const records = [...feedAfter].reduce((n, [p, end]) => n + end - (feedBefore.get(p) ?? 0), 0)
      expect(records).toBeGreaterThan(1)
      const replica = yield* MarketReplica.make(bus, { groupPrefix: "big" })
      yield* ready(replica)
      expect(replica.stats().decodeFailures).toBe(0)
      for (const [key, state] of states) {
        const [chain, mint] = key.split(":") as ["solana" | "hood", string]
        expect(replica.index.market(chain, mint), key).toEqual(state.core)
      }
    })
  )
})
