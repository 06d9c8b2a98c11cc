/**
 * A trigger in flight when its partition moves (issue 29, item 3): the old owner's trigger writer
 * has taken a trigger (held before it reads the fences, `taken`; or with its fence read and the
 * statement about to run, `fenced`) when a second actors process joins, the bus revokes the
 * partition from the first and the second claims it, reloads its books and replays the crossing
 * trade from the committed offset (the first's checkpoint waits for its writer, so its offset
 * never passed the trade). Held by the writer's test seam (`TriggerWriterPause`) in the real component,
 * so the interleaving is fixed: the old owner's write counts for nothing (fenced in memory at
 * `taken`, by the statement's epoch check at `fenced`), the new owner re-decides the trigger from
 * the log and its write is the one that counts; the order is triggered and handed off once, by the
 * new owner. A trigger of a partition the old owner keeps, taken in the same batch, is written by
 * it as usual. docs/decisions.md, "A trigger in flight when its partition moves".
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, ExecutionStrategy, Exit, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import type { Price } from "../../actors/orders/OrderBook.js"
import { currentPrice } from "../../actors/orders/OrderBooks.js"
import { Bus, type BusShape, partitionForKey } from "../../ingest/bus/Bus.js"
import { createOrder, type NewOrder } from "../../src/services/orders/OrderStore.js"
import { type OrderExecution, type OrderHooks, orderTriggerHooks, TriggerWriterPause } from "../../src/services/orders/OrderTriggers.js"
import { eventuallyEffect } from "../support/eventually.js"
import { limitSellAbove } from "../support/orderFixtures.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

const PARTITIONS = 4
const SOL = 1_000_000_000n


interface World {
  readonly bus: BusShape
  readonly database: Context.Context<SqlClient.SqlClient>
  /** `process:orderId`, one per hand-off. */
  readonly handed: Array<string>
}

/** One actors process in a scope of its own, its trigger writer held by `writerPause` (the `TriggerWriterPause` seam). */
const openActors = (world: World, name: string, writerPause: TriggerWriterPause["Type"]) =>
  Effect.gen(function* () {
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const execution: OrderExecution = { execute: (row) => Effect.sync(() => void world.handed.push(`${name}:${row.id}`)) }
    let hooks: OrderHooks | undefined
    const orders = (sql: SqlClient.SqlClient, state: Parameters<ReturnType<typeof orderTriggerHooks>>[1], hurry: () => void) =>
      Effect.tap(orderTriggerHooks({ syncIntervalMs: 10, execution, partitioned: true })(sql, state, hurry), (h) => Effect.sync(() => (hooks = h))).pipe(
        Effect.provideService(TriggerWriterPause, writerPause)
      )
    const { actors } = yield* MarketActors.make({ shards: 2, orders, checkpointIntervalMs: 20, reloadOnAssign: true }).pipe(
      Effect.provideService(Bus, world.bus),
      Effect.provide(world.database),
      Scope.extend(scope)
    )
    return { actors, hooks: hooks!, close: Scope.close(scope, Exit.void) }
  })

/** Holds the writer the first time it reaches `point` with `id` among its triggers, until released. */
const holdOnce = (point: "taken" | "fenced", id: string) =>
  Effect.gen(function* () {
    const held = yield* Deferred.make<ReadonlyArray<string>>()
    const release = yield* Deferred.make<void>()
    let done = false
    const pause = (at: "taken" | "fenced", ids: ReadonlyArray<string>): Effect.Effect<void> => {
      if (done || at !== point || !ids.includes(id)) return Effect.void
      done = true
      return Effect.zipRight(Deferred.succeed(held, ids), Deferred.await(release))
    }
    return { held, release, pause }
  })

const OWNER = { accountId: "acct_orders_revoke", keyId: "key_revoke" }
const order = (id: string, mint: string, now: { readonly price: Price; readonly position: string }): NewOrder => limitSellAbove(id, mint, now, OWNER)

/** The first mint `So1Revoke<tag><i>` whose market key lands on a partition `wanted` accepts. */
const mintOn = (tag: string, wanted: (p: number) => boolean): string => {
  for (let i = 0; ; i++) {
    const mint = `So1Revoke${tag}${i}`
    if (wanted(partitionForKey(`solana:${mint}`, PARTITIONS))) return mint
  }
}

describe("a trigger in flight when its partition moves to another actors process", () => {
  for (const point of ["taken", "fenced"] as const) {
    it.scopedLive(
      `held at ${point}: the old owner's write counts for nothing, the new owner re-decides it from the log; triggered and handed off once`,
      () =>
        Effect.gen(function* () {
          const { bus, database } = yield* memoryBusAndPglite(PARTITIONS, `curvestream-orders-revoke-${point}-`)
          const sql = Context.get(database, SqlClient.SqlClient)
          const world: World = { bus, database, handed: [] }
          const clock = new ChainClock("solana")
          // The embedded group gives partition p to members[p % 2]: `moving` goes to the joining process, `staying` stays.
          const moving = new SimMarket(clock, { mint: mintOn(point, (p) => p % 2 === 1) })
          const staying = new SimMarket(clock, { mint: mintOn(point, (p) => p % 2 === 0) })
          const markets = [moving, staying]
          yield* publishEvents(bus, markets.flatMap((m) => [m.created(), ...m.buy("early", SOL)]))

          const movingId = `ord_${point}_moving`
          const stayingId = `ord_${point}_staying`
          const oldHold = yield* holdOnce(point, movingId)
          const a = yield* openActors(world, "a", oldHold.pause)
          yield* eventuallyEffect(
            Effect.sync(() => markets.every((m) => a.actors.state("solana", m.mint)?.core !== undefined)),
            { what: "the openings applied", deadlineMs: 30_000, intervalMs: 10 }
          )
          const priceNow = (m: SimMarket) => currentPrice(a.actors.state("solana", m.mint))!
          yield* createOrder(order(movingId, moving.mint, priceNow(moving)), Date.now()).pipe(Effect.provide(database))
          yield* createOrder(order(stayingId, staying.mint, priceNow(staying)), Date.now()).pipe(Effect.provide(database))
          yield* eventuallyEffect(Effect.sync(() => a.hooks.books.size() === 2), { what: "A to hold both orders", deadlineMs: 10_000, intervalMs: 10 })

          // The crossing buy on the moving market first: A decides its trigger and its writer is held.
          const crossing = moving.buy("whale", 2n * SOL)
          yield* publishEvents(bus, crossing)
          const heldIds = yield* Deferred.await(oldHold.held)
          expect(heldIds).toContain(movingId)
          const crossingPosition = crossing[crossing.length - 1]!.position
          // The staying market crosses too; A's writer takes it after the held batch.
          yield* publishEvents(bus, staying.buy("whale", 2n * SOL))
          const before = a.hooks.triggerWrites()

          // B joins: the bus revokes the odd partitions from A (its claims and books go), B claims
          // them (the epoch moves on), loads the moving order (still open) and replays the crossing
          // buy from A's committed offset: B's writer takes the same trigger, and is held too.
          const newHold = yield* holdOnce("taken", movingId)
          const b = yield* openActors(world, "b", newHold.pause)
          yield* Deferred.await(newHold.held)
          expect(b.actors.stats().reloads).toBe(2)
          expect(a.actors.stats().revocations).toBe(2)
          // B's claim moved the moving partition's epoch past the one A's held trigger carries.
          const epochOf = (m: SimMarket) =>
            Effect.map(
              sql<{ epoch: string }>`SELECT epoch::text AS epoch FROM partition_owners WHERE owner = 'market' AND partition = ${partitionForKey(`solana:${m.mint}`, PARTITIONS)}`,
              (r) => Number(r[0]!.epoch)
            )
          expect(yield* epochOf(moving)).toBe((yield* epochOf(staying)) + 1)

          // A's writer goes on: its trigger of the moving order counts for nothing.
          yield* Deferred.succeed(oldHold.release, undefined)
          yield* eventuallyEffect(Effect.sync(() => world.handed.includes(`a:${stayingId}`)), { what: "A to write the staying order's trigger", deadlineMs: 10_000, intervalMs: 10 })
          const after = a.hooks.triggerWrites()
          expect(after.fencedOut - before.fencedOut).toBe(1)
          // At `taken` A learnt of the revocation before reading the fence: no statement carries it.
          // At `fenced` the statement ran with the old epoch and moved nothing of it.
          const status = yield* sql<{ status: string }>`SELECT status FROM limit_orders WHERE id = ${movingId}`
          expect(status[0]!.status).toBe("open")

          // B's writer goes on: its write is the one that counts, on the same crossing trade.
          yield* Deferred.succeed(newHold.release, undefined)
          yield* eventuallyEffect(Effect.sync(() => world.handed.includes(`b:${movingId}`)), { what: "B to write and hand off the moving order", deadlineMs: 10_000, intervalMs: 10 })
          const rows = yield* sql<{ id: string; status: string; trigger_position: string }>`SELECT id, status, trigger_position FROM limit_orders ORDER BY id`
          expect(rows.map((r) => [r.id, r.status])).toEqual([
            [movingId, "triggered"],
            [stayingId, "triggered"]
          ])
          expect(rows.find((r) => r.id === movingId)!.trigger_position).toBe(crossingPosition)
          expect(b.hooks.triggerWrites().fencedOut).toBe(0)

          // Nothing more comes: A's checkpoint (no longer waiting) and B's do not bring a second.
          const late = markets.map((m) => m.buy("late", SOL / 10n))
          yield* publishEvents(bus, late.flat())
          yield* eventuallyEffect(
            Effect.sync(() => markets.every((m, i) => [a, b].some((p) => p.actors.state("solana", m.mint)?.core?.lastPosition === late[i]!.at(-1)!.position))),
            { what: "the late buys applied", deadlineMs: 10_000, intervalMs: 10 }
          )
          expect(world.handed.slice().sort()).toEqual([`a:${stayingId}`, `b:${movingId}`])
          yield* b.close
          yield* a.close
        }),
      120_000
    )
  }
})
