/**
 * Limit-order books held by partition (issue 29): with several actors processes on one bus (the
 * embedded bus's group, as Kafka's), each loads only the open orders of the markets in the
 * partitions it owns, places only those the follow brings for them, drops a partition's books
 * when a rebalance takes it and loads them when one gives it; every order crossed triggers once,
 * and is handed to the execution once, across the moves.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import type { Price } from "../../actors/orders/OrderBook.js"
import { currentPrice } from "../../actors/orders/OrderBooks.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { createOrder, type NewOrder } from "../../src/services/orders/OrderStore.js"
import { type OrderExecution, type OrderHooks, orderTriggerHooks } from "../../src/services/orders/OrderTriggers.js"
import { eventuallyEffect } from "../support/eventually.js"
import { heldOrderIds, limitSellAbove } from "../support/orderFixtures.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

const PARTITIONS = 4
const MARKETS = 8
const SOL = 1_000_000_000n


interface World {
  readonly bus: BusShape
  readonly database: Context.Context<SqlClient.SqlClient>
  readonly handed: Array<string>
}

/** One actors process of the cluster in a scope of its own (closing it is the process dying). */
const openActors = (world: World) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const execution: OrderExecution = { execute: (row) => Effect.sync(() => void world.handed.push(row.id)) }
    let hooks: OrderHooks | undefined
    const orders = (sql: SqlClient.SqlClient, state: Parameters<ReturnType<typeof orderTriggerHooks>>[1], hurry: () => void) =>
      Effect.tap(orderTriggerHooks({ syncIntervalMs: 10, execution, partitioned: true })(sql, state, hurry), (h) => Effect.sync(() => (hooks = h)))
    const { actors } = yield* MarketActors.make({ shards: 2, orders, checkpointIntervalMs: 20, reloadOnAssign: true }).pipe(
      Effect.provideService(Bus, world.bus),
      Effect.provide(world.database),
      Scope.extend(scope)
    )
    return { actors, hooks: hooks!, close: Scope.close(scope, Exit.void) }
  })
type Process = Effect.Effect.Success<ReturnType<typeof openActors>>

const OWNER = { accountId: "acct_orders_partitions", keyId: "key_partitions" }
const order = (id: string, mint: string, now: { readonly price: Price; readonly position: string }): NewOrder => limitSellAbove(id, mint, now, OWNER)

/** The ids of the orders a process holds in its books, sorted. */
const heldIds = (p: Process, markets: ReadonlyArray<SimMarket>): Array<string> => heldOrderIds(p.hooks.books, markets)

describe("limit-order books held by partition", () => {
  it.scopedLive(
    "two actors processes each hold only their partitions' orders; a partition that moves is dropped by the old owner and loaded by the new; every order triggers and is handed off once",
    () =>
      Effect.gen(function* () {
        const { bus, database } = yield* memoryBusAndPglite(PARTITIONS, "curvestream-orders-partitions-")
        const world: World = { bus, database, handed: [] }
        const clock = new ChainClock("solana")
        const markets = Array.from({ length: MARKETS }, (_, i) => new SimMarket(clock, { mint: `So1OrdersPartition${i}` }))
        const partitionOf = (m: SimMarket) => bus.partitionFor(Topics.chainEvents, `solana:${m.mint}`)
        // The embedded group gives partition p to members[p % 2]: the first process p even, the second p odd.
        const even = markets.filter((m) => partitionOf(m) % 2 === 0)
        const odd = markets.filter((m) => partitionOf(m) % 2 === 1)
        expect(even.length).toBeGreaterThan(0)
        expect(odd.length).toBeGreaterThan(0)
        // The newest event published per market, and the publish that records it.
        const last = new Map<string, string>()
        const publish = (events: ReadonlyArray<ChainEvent>) => {
          for (const e of events) last.set(e.mint, e.position)
          return publishEvents(bus, events)
        }
        yield* publish(markets.flatMap((m) => [m.created(), ...m.buy("early", SOL)]))

        const a = yield* openActors(world)
        const applied = (processes: ReadonlyArray<Process>, what: string) =>
          eventuallyEffect(
            Effect.sync(() => markets.every((m) => processes.some((p) => p.actors.state("solana", m.mint)?.core?.lastPosition === last.get(m.mint)))),
            { what, deadlineMs: 30_000, intervalMs: 10 }
          )
        yield* applied([a], "the openings applied")
        const priceNow = (p: Process, m: SimMarket) => currentPrice(p.actors.state("solana", m.mint))!
        const first = markets.map((m, i) => order(`ord_a${i}`, m.mint, priceNow(a, m)))
        for (const o of first) yield* createOrder(o, Date.now()).pipe(Effect.provide(database))
        yield* eventuallyEffect(Effect.sync(() => a.hooks.books.size() === MARKETS), { what: "the only process to hold every order", deadlineMs: 10_000, intervalMs: 10 })

        // A second process joins: the odd partitions move to it, with their books.
        const b = yield* openActors(world)
        yield* eventuallyEffect(Effect.sync(() => b.actors.stats().reloads === 2 && a.actors.stats().revocations === 2), {
          what: "the odd partitions to move",
          deadlineMs: 30_000,
          intervalMs: 10
        })
        const ids = (ms: ReadonlyArray<SimMarket>, prefix: string) => ms.map((m) => `${prefix}${markets.indexOf(m)}`).sort()
        expect(heldIds(a, markets)).toEqual(ids(even, "ord_a"))
        expect(heldIds(b, markets)).toEqual(ids(odd, "ord_a"))
        expect(a.hooks.books.size() + b.hooks.books.size()).toBe(MARKETS)

        // Orders created now reach only their market's owner through the follow.
        const owner = (m: SimMarket) => (partitionOf(m) % 2 === 0 ? a : b)
        const pumps = markets.map((m) => m.buy("whale", 2n * SOL))
        yield* publish(pumps.flat())
        yield* applied([a, b], "the crossing buys applied")
        yield* eventuallyEffect(Effect.sync(() => first.every((o) => world.handed.includes(o.id))), { what: "every first order handed off", deadlineMs: 10_000, intervalMs: 10 })
        const second = markets.map((m, i) => order(`ord_b${i}`, m.mint, priceNow(owner(m), m)))
        for (const o of second) yield* createOrder(o, Date.now()).pipe(Effect.provide(database))
        yield* a.hooks.sync
        yield* b.hooks.sync
        expect(heldIds(a, markets)).toEqual(ids(even, "ord_b"))
        expect(heldIds(b, markets)).toEqual(ids(odd, "ord_b"))

        // The second process dies: the first takes the odd partitions back and loads their books.
        yield* b.close
        yield* eventuallyEffect(Effect.sync(() => a.actors.stats().reloads === PARTITIONS + 2), { what: "the odd partitions back", deadlineMs: 30_000, intervalMs: 10 })
        yield* applied([a], "the odd partitions replayed")
        expect(heldIds(a, markets)).toEqual(ids(markets, "ord_b"))
        yield* publish(markets.flatMap((m) => m.buy("whale", 2n * SOL)))
        yield* applied([a], "the second crossing buys applied")
        yield* eventuallyEffect(Effect.sync(() => second.every((o) => world.handed.includes(o.id))), { what: "every second order handed off", deadlineMs: 10_000, intervalMs: 10 })
        expect(a.hooks.books.size()).toBe(0)

        const sql = Context.get(database, SqlClient.SqlClient)
        const rows = yield* sql<{ id: string; status: string }>`SELECT id, status FROM limit_orders ORDER BY id`
        expect(rows.map((r) => r.status)).toEqual(rows.map(() => "triggered"))
        // Handed off once each, across the moves and the replay of the odd partitions.
        expect(world.handed.slice().sort()).toEqual([...first, ...second].map((o) => o.id).sort())
        yield* a.close
      }),
    240_000
  )
})
