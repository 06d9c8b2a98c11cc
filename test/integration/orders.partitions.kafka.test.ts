/**
 * Limit-order books held by partition on Kafka (issue 29, item 3: "a partition moving between
 * actors processes (Kafka) neither loses nor doubles a trigger"): `orders.partitions`'s property on
 * `KafkaBus` over librdkafka's mock cluster, two actors processes each with its own client (as
 * separate processes would be) sharing one PGlite. Kafka tells a member of a partition with its
 * first batch and of a partition taken after the join that took it, and chooses the split itself;
 * so this test waits on the runtime's counts and reads who owns what from the processes. The
 * crossing trades are published while a member joins and again while one leaves, so a trigger is
 * decided by the old owner, replayed by the new, or both: every order triggers and is handed off
 * exactly once, none lost, none doubled. Beside it, the old owner's trigger writer held (its test
 * seam, `TriggerWriterPause`) with triggers decided on every partition while a member joins: it writes
 * only the partitions it kept, the new owner re-decides the moved ones from the log.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, ExecutionStrategy, Exit, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import type { Price } from "../../actors/orders/OrderBook.js"
import { currentPrice } from "../../actors/orders/OrderBooks.js"
import { Bus, type BusError, type BusShape, partitionForKey } from "../../ingest/bus/Bus.js"
import { KafkaBus } from "../../ingest/bus/KafkaBus.js"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { createOrder, type NewOrder } from "../../src/services/orders/OrderStore.js"
import { type OrderExecution, type OrderHooks, orderTriggerHooks, TriggerWriterPause } from "../../src/services/orders/OrderTriggers.js"
import { eventuallyEffect } from "../support/eventually.js"
import { heldOrderIds, limitSellAbove } from "../support/orderFixtures.js"
import { noKafkaReason, skipKafka, startKafkaBroker } from "../support/kafkaBroker.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

const PARTITIONS = 4
const MARKETS = 8
const TOPICS = ["chain.events", "market.snapshots", "market.feed", "signals"]
const SOL = 1_000_000_000n


interface World {
  readonly openBus: Effect.Effect<BusShape, BusError, Scope.Scope>
  readonly database: Context.Context<SqlClient.SqlClient>
  readonly handed: Array<string>
  /** `process:orderId`, one per hand-off. */
  readonly handedBy: Array<string>
}

/** One actors process: its own Kafka client, runtime and books in a scope of its own (closing it is the process leaving). */
const openActors = (world: World, name = "", writerPause?: TriggerWriterPause["Type"]) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const bus = yield* world.openBus.pipe(Scope.extend(scope))
    const execution: OrderExecution = { execute: (row) => Effect.sync(() => void (world.handed.push(row.id), world.handedBy.push(`${name}:${row.id}`))) }
    let hooks: OrderHooks | undefined
    const orders = (sql: SqlClient.SqlClient, state: Parameters<ReturnType<typeof orderTriggerHooks>>[1], hurry: () => void) =>
      Effect.tap(orderTriggerHooks({ syncIntervalMs: 10, execution, partitioned: true })(sql, state, hurry), (h) => Effect.sync(() => (hooks = h))).pipe(
        writerPause === undefined ? (e) => e : Effect.provideService(TriggerWriterPause, writerPause)
      )
    const { actors } = yield* MarketActors.make({ shards: 2, orders, checkpointIntervalMs: 20, reloadOnAssign: true }).pipe(
      Effect.provideService(Bus, bus),
      Effect.provide(world.database),
      Scope.extend(scope),
      Effect.annotateLogs({ process: name }) // each process's assignments and revocations told apart in the log
    )
    return { bus, actors, hooks: hooks!, close: Scope.close(scope, Exit.void) }
  })
type Process = Effect.Effect.Success<ReturnType<typeof openActors>>

const OWNER = { accountId: "acct_orders_partitions_kafka", keyId: "key_partitions_kafka" }
const order = (id: string, mint: string, now: { readonly price: Price; readonly position: string }): NewOrder => limitSellAbove(id, mint, now, OWNER)

/** The ids of the orders a process holds in its books, sorted. */
const heldIds = (p: Process, markets: ReadonlyArray<SimMarket>): Array<string> => heldOrderIds(p.hooks.books, markets)

/** A mock broker, a Kafka client per process, one PGlite, and two markets on every partition. */
const kafkaWorld = (tag: string) =>
  Effect.gen(function* () {
    const { database } = yield* memoryBusAndPglite(1, `curvestream-orders-kafka-${tag}-`)
    const broker = yield* Effect.acquireRelease(
      Effect.promise(() => startKafkaBroker({ topics: TOPICS.map((name) => ({ name, partitions: PARTITIONS })) })),
      (b) => Effect.promise(() => b.stop())
    )
    // The mock cannot serve an idempotent producer (docs/decisions.md, "Kafka in development and CI").
    const openBus = KafkaBus.make({ brokers: broker.brokers, clientId: "orders-partitions", partitions: PARTITIONS, idempotent: false, sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 6_000 })
    const world: World = { openBus, database, handed: [], handedBy: [] }
    const publisher = yield* openBus
    const clock = new ChainClock("solana")
    // Two markets on every partition (Kafka tells a member of a partition with its first batch).
    const mints: Array<string> = []
    for (let i = 0; mints.length < MARKETS; i++) {
      const mint = `So1OrdersKafka${tag}${i}`
      const p = partitionForKey(`solana:${mint}`, PARTITIONS)
      if (mints.filter((x) => partitionForKey(`solana:${x}`, PARTITIONS) === p).length < MARKETS / PARTITIONS) mints.push(mint)
    }
    const markets = mints.map((mint) => new SimMarket(clock, { mint }))
    expect(new Set(markets.map((m) => publisher.partitionFor("chain.events", `solana:${m.mint}`))).size).toBe(PARTITIONS)
    const last = new Map<string, string>()
    const publish = (events: ReadonlyArray<ChainEvent>) => {
      for (const e of events) last.set(e.mint, e.position)
      return publishEvents(publisher, events)
    }
    // A small buy on every market: traffic on every partition, far from any order's level.
    const nudge = () => publish(markets.flatMap((m) => m.buy("small", 1_000n)))
    /** The process that applied a market's newest event (a process a partition left keeps its stale states). */
    const applier = (processes: ReadonlyArray<Process>, m: SimMarket) => processes.find((p) => p.actors.state("solana", m.mint)?.core?.lastPosition === last.get(m.mint))
    const applied = (processes: ReadonlyArray<Process>, what: string) =>
      eventuallyEffect(
        Effect.sync(() => markets.every((m) => applier(processes, m) !== undefined)),
        { what, deadlineMs: 60_000, intervalMs: 20 }
      )
    const priceNow = (processes: ReadonlyArray<Process>, m: SimMarket) => currentPrice(applier(processes, m)!.actors.state("solana", m.mint))!
    return { world, database, publisher, markets, last, publish, nudge, applier, applied, priceNow }
  })

describe.skipIf(skipKafka())(`limit-order books held by partition: KafkaBus on librdkafka's mock cluster${skipKafka() ? ` (${noKafkaReason})` : ""}`, () => {
  it.scopedLive(
    "a member joining and one leaving move partitions while crossing trades are in flight: every order triggers and is handed off exactly once",
    () =>
      Effect.gen(function* () {
        const { world, database, publisher, markets, last, publish, nudge, applied, priceNow } = yield* kafkaWorld("moves")
        yield* publish(markets.flatMap((m) => [m.created(), ...m.buy("early", SOL)]))

        const a = yield* openActors(world, "a")
        yield* applied([a], "the openings applied")
        expect(a.actors.stats().reloads).toBe(PARTITIONS)
        const first = markets.map((m, i) => order(`ord_a${i}`, m.mint, priceNow([a], m)))
        for (const o of first) yield* createOrder(o, Date.now()).pipe(Effect.provide(database))
        yield* eventuallyEffect(Effect.sync(() => a.hooks.books.size() === MARKETS), { what: "the only process to hold every order", deadlineMs: 10_000, intervalMs: 10 })

        // B joins and the crossing buys go out at once: each is applied by A before the move, by
        // B after it (replayed from the committed offset), or by both.
        const b = yield* openActors(world, "b")
        yield* publish(markets.flatMap((m) => m.buy("whale", 2n * SOL)))
        yield* eventuallyEffect(
          Effect.suspend(() =>
            b.actors.stats().reloads >= PARTITIONS / 2 && a.actors.stats().revocations >= PARTITIONS / 2 ? Effect.succeed(true) : Effect.as(nudge(), false)
          ),
          { what: "B to be given half the partitions and A told", deadlineMs: 90_000, intervalMs: 500 }
        )
        yield* applied([a, b], "the crossing buys and the nudges applied")
        yield* eventuallyEffect(Effect.sync(() => first.every((o) => world.handed.includes(o.id))), { what: "every first order handed off", deadlineMs: 20_000, intervalMs: 10 })
        expect(a.hooks.books.size() + b.hooks.books.size()).toBe(0)

        // Orders created now are held by their market's owner only, and both own some, once the
        // group has settled. The wait above sees the first generation that split the partitions;
        // the mock broker may rebalance again (a member slow to rejoin under load is left out of a
        // generation), and a partition in flight is held by neither: its old owner dropped it at
        // the revocation, its new owner loads it at its first batch (`onAssigned`), which the
        // nudges bring. So: every order held exactly once, once the moves stop (a partition whose
        // orders were never loaded by its owner fails here at the deadline).
        const second = markets.map((m, i) => order(`ord_b${i}`, m.mint, priceNow([a, b], m)))
        for (const o of second) yield* createOrder(o, Date.now()).pipe(Effect.provide(database))
        const secondIds = second.map((o) => o.id).sort()
        const holds = () => ({ a: heldIds(a, markets), b: heldIds(b, markets) })
        const { b: heldByB } = yield* eventuallyEffect(
          Effect.gen(function* () {
            yield* a.hooks.sync
            yield* b.hooks.sync
            const held = holds()
            const settled = held.a.length > 0 && held.b.length > 0 && JSON.stringify([...held.a, ...held.b].sort()) === JSON.stringify(secondIds)
            if (!settled) yield* nudge()
            return settled && held
          }),
          {
            what: "every second order held by exactly one process, both holding some",
            deadlineMs: 60_000,
            intervalMs: 200,
            detail: () => `held now: ${JSON.stringify(holds())}; A ${JSON.stringify(a.actors.stats())}; B ${JSON.stringify(b.actors.stats())}`
          }
        )
        yield* applied([a, b], "the nudges applied")
        const bMarkets = markets.filter((_, i) => heldByB.includes(`ord_b${i}`))
        for (const m of bMarkets) expect(b.actors.state("solana", m.mint)?.core?.lastPosition).toBe(last.get(m.mint))
        const bPartitions = new Set(bMarkets.map((m) => publisher.partitionFor("chain.events", `solana:${m.mint}`)))

        // B leaves and the crossing buys go out at once: B's partitions' trades are applied by A
        // once it takes them back, whatever B decided before it stopped.
        const aReloads = a.actors.stats().reloads
        yield* b.close
        yield* publish(markets.flatMap((m) => m.buy("whale", 2n * SOL)))
        yield* eventuallyEffect(
          Effect.suspend(() => (a.actors.stats().reloads >= aReloads + bPartitions.size ? Effect.succeed(true) : Effect.as(nudge(), false))),
          { what: "A to take B's partitions back", deadlineMs: 90_000, intervalMs: 500 }
        )
        yield* applied([a], "A to apply every market")
        yield* eventuallyEffect(Effect.sync(() => second.every((o) => world.handed.includes(o.id))), { what: "every second order handed off", deadlineMs: 20_000, intervalMs: 10 })
        expect(a.hooks.books.size()).toBe(0)

        const sql = Context.get(database, SqlClient.SqlClient)
        const rows = yield* sql<{ id: string; status: string }>`SELECT id, status FROM limit_orders ORDER BY id`
        expect(rows.map((r) => [r.id, r.status])).toEqual([...first, ...second].map((o) => [o.id, "triggered"]).sort())
        // Handed off once each across both moves: none lost, none doubled.
        expect(world.handed.slice().sort()).toEqual([...first, ...second].map((o) => o.id).sort())
        const writes = a.hooks.triggerWrites()
        yield* Effect.logInfo(`orders.partitions.kafka: A wrote ${writes.statements} trigger statements, ${writes.fencedOut} fenced out; B ${JSON.stringify(b.hooks.triggerWrites())}`)
        yield* a.close
      }),
    300_000
  )

  it.scopedLive(
    "triggers decided on every partition and held unwritten while a member joins: the old owner writes only its kept partitions', the new owner re-decides the rest from the log; each once",
    () =>
      Effect.gen(function* () {
        // The split is asserted on a trial in which B's join moved exactly half the partitions from
        // A to B and the group held still after it. The mock broker sometimes rebalances again on
        // its own (kafkajs restarts a member after a SyncGroup protocol error under load) and moves
        // a further partition, or one away from A and back; such a trial still proves every
        // trigger written exactly once, and another trial is run for the split.
        const voided: Array<string> = []
        for (let trial = 1; trial <= HELD_TRIALS; trial++) {
          const verdict = yield* Effect.scoped(heldTrial(`held${trial}`))
          if (verdict.still) return
          voided.push(`trial ${trial}: ${verdict.moved}`)
          yield* Effect.logWarning(`orders.partitions.kafka: the join was not one move, or the group moved again, during trial ${trial} (${verdict.moved}); its exactly-once checks held, the split is not judged on it`)
        }
        expect.fail(`no trial of ${HELD_TRIALS} had a join that was one move and a group still after it: ${voided.join("; ")}`)
      }),
    420_000
  )
})

const HELD_TRIALS = 3

/**
 * One trial of the held writer: A decides every trigger with its writer held, B joins and takes
 * half the partitions, A's writer goes on, then B's. Every order is written exactly once whatever
 * the broker does; the split (A writes its kept partitions' triggers and fences out the moved
 * ones', which stay open until B re-decides them) is asserted when the join was one move (A gave
 * exactly half the partitions to B and was given none) and the group held still from the split's
 * reading to the end (`still`).
 */
const heldTrial = (tag: string) =>
  Effect.gen(function* () {
    const { world, database, publisher, markets, last, publish, nudge, applied, priceNow } = yield* kafkaWorld(tag)
    const partitionOf = (m: SimMarket) => publisher.partitionFor("chain.events", `solana:${m.mint}`)
    yield* publish(markets.flatMap((m) => [m.created(), ...m.buy("early", SOL)]))
    // A's trigger writer waits at `taken` (before it reads any fence) until released; B's too.
    const releaseA = yield* Deferred.make<void>()
    const releaseB = yield* Deferred.make<void>()
    const heldA: Array<string> = []
    const a = yield* openActors(world, "a", (at, ids) => (at === "taken" ? Effect.zipRight(Effect.sync(() => heldA.push(...ids)), Deferred.await(releaseA)) : Effect.void))
    yield* applied([a], "the openings applied")
    const orders = markets.map((m, i) => order(`ord_h${i}`, m.mint, priceNow([a], m)))
    const ids = orders.map((o) => o.id)
    for (const o of orders) yield* createOrder(o, Date.now()).pipe(Effect.provide(database))
    yield* eventuallyEffect(Effect.sync(() => a.hooks.books.size() === MARKETS), { what: "A to hold every order", deadlineMs: 10_000, intervalMs: 10 })
    // Every order crosses: A decides all of them; none is written (its writer is held).
    yield* publish(markets.flatMap((m) => m.buy("whale", 2n * SOL)))
    yield* applied([a], "the crossing buys applied")
    yield* eventuallyEffect(Effect.sync(() => a.hooks.books.size() === 0 && heldA.length > 0), { what: "A to decide every trigger", deadlineMs: 10_000, intervalMs: 10 })
    expect(world.handed).toEqual([])

    // B joins and is given half the partitions (Kafka tells A after the join): it claims them,
    // loads their orders (all still open) and replays the crossing buys from A's committed
    // offsets (A's checkpoints wait for its writer, so they never passed them).
    // A's counts before the join: the split is judged only when the join moved exactly half the
    // partitions from A to B and nothing else (a partition that left A and came back before the
    // reading below would be A's again, but its triggers taken before were taken under A's old
    // ownership and are fenced out like the moved ones').
    const aBefore = a.actors.stats()
    const b = yield* openActors(world, "b", (at) => (at === "taken" ? Deferred.await(releaseB) : Effect.void))
    yield* eventuallyEffect(
      Effect.suspend(() =>
        b.actors.stats().reloads >= PARTITIONS / 2 && a.actors.stats().revocations >= aBefore.revocations + PARTITIONS / 2 ? Effect.succeed(true) : Effect.as(nudge(), false)
      ),
      { what: "B to be given half the partitions and A told", deadlineMs: 90_000, intervalMs: 500 }
    )
    // Every move after this point shows in the counts of assignments and revocations; a nudge
    // after it is applied on each partition by its owner of now.
    const groupNow = () => JSON.stringify([a.actors.stats(), b.actors.stats()].map((s) => [s.reloads, s.revocations]))
    const group = groupNow()
    const oneMove = group === JSON.stringify([[aBefore.reloads, aBefore.revocations + PARTITIONS / 2], [PARTITIONS / 2, 0]])
    yield* nudge()
    yield* applied([a, b], "the nudges applied")
    // B's markets: those whose newest nudge B applied (a process loads every checkpoint at start, so holding a state says nothing).
    const bPartitions = new Set(markets.filter((m) => b.actors.state("solana", m.mint)?.core?.lastPosition === last.get(m.mint)).map(partitionOf))
    const onB = orders.filter((_, i) => bPartitions.has(partitionOf(markets[i]!))).map((o) => o.id)
    const onA = ids.filter((id) => !onB.includes(id))
    expect(world.handed).toEqual([])

    // A's writer goes on: each trigger it took is written or fenced out.
    const sql = Context.get(database, SqlClient.SqlClient)
    const statusOf = (of: ReadonlyArray<string>) => Effect.map(sql<{ id: string; status: string }>`SELECT id, status FROM limit_orders WHERE id IN ${sql.in(of)} ORDER BY id`, (rows) => rows.map((r) => r.status))
    const writtenBy = (name: string) => world.handedBy.filter((h) => h.startsWith(`${name}:`)).map((h) => h.slice(name.length + 1)).sort()
    yield* Deferred.succeed(releaseA, undefined)
    yield* eventuallyEffect(Effect.sync(() => writtenBy("a").length + a.hooks.triggerWrites().fencedOut === heldA.length), {
      what: "A's writer to write or fence out every trigger it took",
      deadlineMs: 20_000,
      intervalMs: 10,
      detail: () => `took ${JSON.stringify(heldA)}, wrote ${JSON.stringify(writtenBy("a"))}, ${JSON.stringify(a.hooks.triggerWrites())}`
    })
    const afterA = { wrote: writtenBy("a"), fencedOut: a.hooks.triggerWrites().fencedOut, moved: onB.length === 0 ? [] : yield* statusOf(onB) }

    // B's writer goes on: the moved partitions' triggers are B's, re-decided from the log.
    yield* Deferred.succeed(releaseB, undefined)
    yield* eventuallyEffect(
      Effect.suspend(() => (ids.every((id) => world.handed.includes(id)) ? Effect.succeed(true) : Effect.as(nudge(), false))),
      { what: "every order written", deadlineMs: 60_000, intervalMs: 200, detail: () => `handed ${JSON.stringify(world.handedBy)}` }
    )
    expect(yield* statusOf(ids)).toEqual(ids.map(() => "triggered"))
    yield* nudge()
    yield* applied([a, b], "a last nudge applied")
    // Each once, whoever held which partition when: none lost, none doubled.
    expect(world.handed.slice().sort()).toEqual(ids.slice().sort())
    const still = oneMove && groupNow() === group
    if (still) {
      expect(bPartitions.size).toBe(PARTITIONS / 2)
      expect(onB.length).toBe(MARKETS / 2)
      // A wrote only the partitions it kept; the moved ones stayed open after it, their taken triggers fenced out (the rest were dropped with the revocation).
      expect(afterA.wrote).toEqual(onA.slice().sort())
      expect(afterA.moved).toEqual(onB.map(() => "open"))
      expect(afterA.fencedOut).toBe(onB.filter((id) => heldA.includes(id)).length)
      expect(world.handedBy.slice().sort()).toEqual([...onA.map((id) => `a:${id}`), ...onB.map((id) => `b:${id}`)].sort())
    }
    yield* Effect.logInfo(`orders.partitions.kafka: A held ${heldA.length} triggers at taken; A ${JSON.stringify(a.hooks.triggerWrites())}, B ${JSON.stringify(b.hooks.triggerWrites())}`)
    yield* b.close
    yield* a.close
    return { still, moved: `assignments and revocations [A, B] ${JSON.stringify([aBefore.reloads, aBefore.revocations])} before the join, ${group} at the split's reading, ${groupNow()} at the end` }
  })
