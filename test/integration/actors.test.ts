/**
 * The market actors through the REAL runtime: the embedded bus on a temp directory, PGlite on the
 * same directory, `MarketActors.layer`. Events are published to `chain.events` exactly as the
 * ingesters will; the test reads what the API will read (`MarketIndex`). Kill-and-restart closes
 * the layer's scope mid-stream and reopens on the same directories; the final states must equal a
 * pure in-order fold of the same events (no trade applied twice, none missed).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Fiber, Layer, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { MarketActors, type MarketActorsOptions, type MarketActorsShape, layer as marketActorsLayer } from "../../actors/MarketActors.js"
import { MarketIndex, type MarketIndexShape } from "../../actors/MarketIndex.js"
import { encodeFast } from "../../ingest/ChainEventCodec.js"
import { type MarketState, unkeep } from "../../actors/market/MarketActor.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { foldStates, publishEvents, workload } from "../support/marketWorkload.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import * as EmbeddedBus from "../../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent } from "../../ingest/ChainEvent.js"
import * as Database from "../../src/db/Database.js"
import { eventuallyEffect } from "../support/eventually.js"

const SOL = 1_000_000_000n
const ETH = 10n ** 18n

const tempDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "curvestream-actors-"))),
  (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
)

interface Engine {
  readonly index: MarketIndexShape
  readonly actors: MarketActorsShape
  readonly bus: BusShape
  readonly sql: SqlClient.SqlClient
  readonly close: Effect.Effect<void>
}

const infraLayer = (dir: string, busPartitions = 4) =>
  Layer.merge(EmbeddedBus.layer({ dir: path.join(dir, "bus"), partitions: busPartitions, fsync: false }), Database.layer({ url: undefined, dataDir: dir }))

/**
 * Opens bus + PGlite + market actors on `dir` in a scope of its own (so a test can kill and reopen
 * it), forked from the test's scope so a failing test still closes it.
 */
const openEngine = (dir: string, options: MarketActorsOptions = {}, busPartitions = 4) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const all = marketActorsLayer(options).pipe(Layer.provideMerge(infraLayer(dir, busPartitions)))
    const context = yield* Layer.buildWithScope(all, scope)
    const engine: Engine = {
      index: Context.get(context, MarketIndex),
      actors: Context.get(context, MarketActors),
      bus: Context.get(context, Bus),
      sql: Context.get(context, SqlClient.SqlClient),
      close: Scope.close(scope, Exit.void)
    }
    return engine
  })

/** Opens only the bus on `dir` (to publish before the engine runs). */
const withBus = <A, E>(dir: string, use: (bus: BusShape) => Effect.Effect<A, E>, busPartitions = 4) =>
  Effect.scoped(Effect.flatMap(EmbeddedBus.make({ dir: path.join(dir, "bus"), partitions: busPartitions, fsync: false }), use))

const publish = publishEvents

/** The states a pure in-order fold of `events` reaches, per key. */
const fold = (events: ReadonlyArray<ChainEvent>, options: MarketActorsOptions = {}) => foldStates(events, options.retractHistory)

const expectStatesEqual = (engine: Engine, expected: Map<string, MarketState>) => {
  for (const [key, state] of expected) {
    const [chain, mint] = key.split(":") as ["solana" | "hood", string]
    expect(engine.actors.state(chain, mint), key).toEqual(state)
  }
}

/** Waits until the group's committed offsets reach the end of every partition: everything applied is checkpointed. */
const committedToEnd = (engine: Engine, timeoutMs = 30_000) =>
  Effect.gen(function* () {
    const ends = yield* engine.bus.endOffsets(Topics.chainEvents)
    yield* eventuallyEffect(
      Effect.map(engine.bus.committed("actors", Topics.chainEvents), (committed) => [...ends].every(([p, end]) => (committed.get(p) ?? 0) >= end)),
      { what: "the commits to reach the end of every partition", deadlineMs: timeoutMs, intervalMs: 5 }
    )
  })

const checkpointRows = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM checkpoints WHERE owner = 'market'`, (rows) => rows[0]!.n)

/** One engine shared by the tests that need no restart (opening PGlite costs seconds). */
class SharedEngine extends Context.Tag("test/SharedEngine")<SharedEngine, Engine>() {}

const sharedEngineLayer = Layer.scoped(
  SharedEngine,
  Effect.flatMap(tempDir, (dir) => openEngine(dir))
)

layer(sharedEngineLayer, { timeout: 60_000, excludeTestServices: true })("market actors on one engine", (it) => {
  it.effect("published events show in the MarketIndex within a deadline", () =>
    Effect.gen(function* () {
      const engine = yield* SharedEngine
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1Visible" })
      const h = new SimMarket(new ChainClock("hood"), { mint: "0xvisible" })
      const events = [m.created(), ...m.buy("alice", SOL), h.created(), ...h.buy("bob", 10n * ETH), h.migrated(30)]
      yield* publish(engine.bus, events)
      yield* eventuallyEffect(Effect.sync(() => engine.index.market("hood", "0xvisible")?.lifecycle === "migrated" && engine.index.market("solana", "So1Visible")?.stats.tradesTotal === 1), { what: "the index", deadlineMs: 20_000, intervalMs: 5 })
      // The latency itself is measured by bench/pipeline.ts (event to visible), not here.
      const record = JSON.parse(engine.index.get("solana", "So1Visible")!.json)
      expect(record).toMatchObject({
        chain: "solana",
        mint: "So1Visible",
        lifecycle: "trading",
        buysOpen: true,
        sellsOpen: true,
        poolAddress: null,
        feeBps: 100,
        graduationVenue: "dex-solana-v2",
        crossingModel: "full-fill-surplus",
        candleLaunched: true,
        launchpad: "curvestream",
        venue: "svc-curve",
        trade: { routable: true },
        tradesTotal: 1
      })
      expect(record.migration).toEqual({ status: "not_started", reserveRaw: m.curve.realQuoteRaw.toString(), thresholdRaw: "85000000000", progressBps: 116 })
      const hood = JSON.parse(engine.index.get("hood", "0xvisible")!.json)
      expect(hood).toMatchObject({ lifecycle: "migrated", poolAddress: null, venue: "hood-dex", feeBps: 30, graduationVenue: "dex-evm-v4" })
      expect(engine.index.find("0xvisible")).toEqual(["hood"])
      expect(engine.index.get("solana", "0xvisible")).toBeUndefined()
      // Serialized once per version: the same string object until the market changes.
      expect(engine.index.get("solana", "So1Visible")).toBe(engine.index.get("solana", "So1Visible"))
      yield* committedToEnd(engine)
      const rows = yield* engine.sql<{ key: string; position: string }>`
        SELECT key, position FROM checkpoints WHERE owner = 'market' AND key IN ('solana:So1Visible', 'hood:0xvisible') ORDER BY key`
      expect(rows).toEqual([
        { key: "hood:0xvisible", position: events[events.length - 1]!.position },
        { key: "solana:So1Visible", position: events[1]!.position }
      ])
    })
  )

  it.effect("a record that is not an event is logged and skipped; the rest applies", () =>
    Effect.gen(function* () {
      const engine = yield* SharedEngine
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1Garbage" })
      const good = [m.created(), ...m.buy("a", SOL)]
      yield* engine.bus.publish(Topics.chainEvents, [
        { key: busKey(good[0]!), value: encodeFast(good[0]!) },
        { key: busKey(good[0]!), value: new TextEncoder().encode("{not json") },
        { key: busKey(good[0]!), value: new TextEncoder().encode(JSON.stringify({ _tag: "Trade", id: 1 })) },
        { key: busKey(good[1]!), value: encodeFast(good[1]!) }
      ])
      yield* eventuallyEffect(Effect.sync(() => engine.index.market("solana", "So1Garbage")?.stats.tradesTotal === 1), { what: "the good events", deadlineMs: 20_000, intervalMs: 5 })
      expect(engine.actors.stats().decodeFailures).toBe(2)
    })
  )

})

describe("market actors through the runtime", () => {
  it.scopedLive("kill and restart mid-stream (also after apply, before a checkpoint flush) ends in the uninterrupted state", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const events = workload(20, 40)
      const cut1 = Math.floor(events.length / 3)
      const cut2 = Math.floor((2 * events.length) / 3)

      // Run 1: applied and visible, but the checkpoint never flushes (huge linger/interval), so the
      // bus offsets stay uncommitted; then killed.
      const first = yield* openEngine(dir, { checkpointLingerMs: 3_600_000, checkpointIntervalMs: 3_600_000, busMaxBatch: 200 })
      yield* publish(first.bus, events.slice(0, cut1))
      yield* eventuallyEffect(Effect.sync(() => first.actors.stats().applied + first.actors.stats().skipped >= cut1 - 5), { what: "run 1 to apply", deadlineMs: 20_000, intervalMs: 5 })
      expect(first.actors.stats().checkpoint.flushes).toBe(0)
      expect(first.index.size()).toBeGreaterThan(0)
      expect((yield* first.bus.committed("actors", Topics.chainEvents)).size === 0 || [...(yield* first.bus.committed("actors", Topics.chainEvents)).values()].every((o) => o === 0)).toBe(true)
      yield* first.close

      // Run 2: normal checkpoints; the rest of the stream is already on the bus; killed mid-consumption.
      yield* withBus(dir, (bus) => publish(bus, events.slice(cut1)))
      const second = yield* openEngine(dir, { busMaxBatch: 50, mailboxCapacity: 64, drainMax: 16 })
      expect(yield* checkpointRows(second.sql)).toBe(0) // run 1 never checkpointed: everything replays
      yield* eventuallyEffect(Effect.sync(() => second.actors.stats().applied >= cut2 - cut1), { what: "run 2 to make progress", deadlineMs: 20_000, intervalMs: 5 })
      const appliedBeforeKill = second.actors.stats().received
      yield* second.close
      expect(appliedBeforeKill).toBeLessThan(events.length + cut1)

      // Run 3: to the end.
      const third = yield* openEngine(dir)
      const expected = fold(events)
      const lastKey = `${events[events.length - 1]!.chain}:${events[events.length - 1]!.mint}`
      yield* eventuallyEffect(Effect.sync(() => {
        for (const [key, state] of expected) {
          const [chain, mint] = key.split(":") as ["solana" | "hood", string]
          if (third.actors.state(chain, mint)?.core?.lastPosition !== state.core?.lastPosition) return false
        }
        return true
      }), { what: `every market to reach its last position (last: ${lastKey})`, deadlineMs: 20_000, intervalMs: 5 })
      expectStatesEqual(third, expected)
      // The index shows the same: trades counted once.
      for (const [key, state] of expected) {
        const [chain, mint] = key.split(":") as ["solana" | "hood", string]
        expect(third.index.market(chain, mint)?.stats.tradesTotal).toBe(state.core!.stats.tradesTotal)
      }
      expect(third.index.warming()).toBe(false)
      // The checkpoints hold the same states.
      yield* committedToEnd(third)
      yield* third.close
      const fourth = yield* openEngine(dir)
      expectStatesEqual(fourth, expected)
      yield* fourth.close
    })
  )

  it.scopedLive("a full mailbox applies backpressure without dropping anything", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const events = workload(10, 30)
      yield* withBus(dir, (bus) => publish(bus, events))
      const engine = yield* openEngine(dir, { shards: 2, mailboxCapacity: 4, drainMax: 2, busMaxBatch: 500 })
      const expected = fold(events)
      yield* committedToEnd(engine)
      const stats = engine.actors.stats()
      expect(stats.mailboxFullWaits).toBeGreaterThan(0)
      expect(stats.mailboxHighWater).toBeLessThanOrEqual(4)
      expect(stats.applied + stats.skipped).toBe(events.length)
      expectStatesEqual(engine, expected)
      yield* engine.close
    })
  )

  it.scopedLive("the history sweep trims an idle Hood market's retract window once its partition is retractDepthBlocks ahead, and not a block sooner", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const depth = 10
      const clock = new ChainClock("hood")
      const idle = new SimMarket(clock, { mint: "0xidle" })
      const edge = new SimMarket(clock, { mint: "0xedge" })
      const busy = new SimMarket(clock, { mint: "0xbusy" })
      const events: Array<ChainEvent> = [idle.created(), ...idle.buy("a", ETH / 100n), ...idle.buy("b", ETH / 100n), edge.created(), ...edge.buy("c", ETH / 100n)]
      events.push(busy.created())
      // The busy market's events move the partition's head; the last one lands exactly `depth`
      // blocks after the idle market's last event and `depth - 1` after the edge market's.
      const edgeBlock = Number(events[events.length - 2]!.position.slice(2, 22))
      while (Number(events[events.length - 1]!.position.slice(2, 22)) < edgeBlock + depth - 1) events.push(...busy.buy("d", ETH / 1000n))
      yield* withBus(dir, (bus) => publish(bus, events), 1)
      const engine = yield* openEngine(dir, { retractDepthBlocks: depth, historySweepMs: 10 }, 1)
      yield* eventuallyEffect(Effect.sync(() => engine.actors.state("hood", busy.mint)?.core?.lastPosition === events[events.length - 1]!.position), {
        what: "every event applied",
        deadlineMs: 20_000,
        intervalMs: 5
      })
      yield* eventuallyEffect(Effect.sync(() => engine.actors.state("hood", idle.mint)?.window?.events.length === 0), { what: "the idle market trimmed", deadlineMs: 20_000, intervalMs: 5 })
      const trimmed = engine.actors.state("hood", idle.mint)!
      expect(trimmed.window!.base).toBe(trimmed.core)
      expect(engine.actors.stats().historyTrims).toBeGreaterThanOrEqual(1)
      // The edge market's last event is one block short of final: the sweep leaves its window whole.
      engine.actors.sweepHistory()
      expect(engine.actors.state("hood", edge.mint)!.window!.events.map((e) => unkeep(e).id)).toEqual([events[3]!.id, events[4]!.id])
      // What the sweep trimmed is what a pure fold reaches for the market's core; the checkpoint keeps it.
      expect(trimmed.core).toEqual(fold(events).get(`hood:${idle.mint}`)!.core)
      yield* committedToEnd(engine)
      yield* eventuallyEffect(Effect.sync(() => engine.actors.stats().checkpoint.dirty === 0 && engine.actors.stats().checkpoint.inFlight === 0), { what: "the trim checkpointed", deadlineMs: 20_000, intervalMs: 5 })
      yield* engine.close
      const again = yield* openEngine(dir, { retractDepthBlocks: depth, historySweepMs: 60_000 }, 1)
      const reloaded = again.actors.state("hood", idle.mint)!
      expect(reloaded.window!.events).toEqual([])
      expect(reloaded.window!.base).toBe(reloaded.core)
      yield* again.close
    })
  )

  it.scopedLive("a trade shows before its publish is durable, but no checkpoint or offset covers it until it is", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
      // The bus lingers 300 ms before each group commit: records sit appended-but-not-durable.
      const infra = Layer.merge(EmbeddedBus.layer({ dir: path.join(dir, "bus"), partitions: 1, fsync: false, flushIntervalMs: 300 }), Database.layer({ url: undefined, dataDir: dir }))
      const context = yield* Layer.buildWithScope(marketActorsLayer({ checkpointIntervalMs: 5, checkpointLingerMs: 0 }).pipe(Layer.provideMerge(infra)), scope)
      const index = Context.get(context, MarketIndex)
      const bus = Context.get(context, Bus)
      const sql = Context.get(context, SqlClient.SqlClient)
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1Early" })
      yield* publish(bus, [m.created()])
      const checkpointed = Effect.map(
        sql<{ position: string }>`SELECT position FROM checkpoints WHERE owner = 'market' AND key = ${`solana:${m.mint}`}`,
        (rows) => rows[0]?.position ?? ""
      )
      yield* eventuallyEffect(Effect.map(checkpointed, (p) => p !== ""), { what: "the market checkpointed", deadlineMs: 20_000, intervalMs: 5 })
      for (let round = 0; round < 3; round++) {
        const trade = m.buy(`t${round}`, SOL / 10n)
        const position = trade[trade.length - 1]!.position
        const publishing = yield* Effect.fork(publish(bus, trade))
        // Until the publish resolves (its records durable), the checkpoint and the committed offset stay behind it.
        while (publishing.unsafePoll() === null) {
          const durableEnd = (yield* bus.endOffsets(Topics.chainEvents)).get(0)!
          expect(yield* checkpointed).not.toBe(position)
          expect((yield* bus.committed("actors", Topics.chainEvents)).get(0) ?? 0).toBeLessThanOrEqual(durableEnd)
          yield* Effect.sleep("2 millis")
        }
        yield* Fiber.join(publishing)
        yield* eventuallyEffect(Effect.sync(() => index.market("solana", m.mint)?.lastPosition === position), { what: "the trade visible", deadlineMs: 20_000, intervalMs: 5 })
        yield* eventuallyEffect(Effect.map(checkpointed, (p) => p === position), { what: "the trade checkpointed once durable", deadlineMs: 20_000, intervalMs: 5 })
      }
      yield* Scope.close(scope, Exit.void)
    })
  )

  it.scopedLive("warming is true until the runtime has caught up with the bus at start", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const events = workload(50, 40)
      yield* withBus(dir, (bus) => publish(bus, events))
      const engine = yield* openEngine(dir)
      expect(engine.index.warming()).toBe(true)
      expect(engine.index.feed("new", undefined, undefined).warming).toBe(true)
      yield* eventuallyEffect(Effect.sync(() => !engine.index.warming()), { what: "warm", deadlineMs: 20_000, intervalMs: 5 })
      expect(engine.actors.stats().received).toBeGreaterThanOrEqual(events.length - 2000)
      yield* engine.close
    })
  )
})
