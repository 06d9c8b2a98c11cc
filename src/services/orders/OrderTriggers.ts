/**
 * The limit orders' trigger runtime (issue 29): the actors process's `OrderBooks` kept in step with
 * `limit_orders`, and the writes of what the books decide. `MarketActors` takes it as its `orders`
 * option (the composition root passes `orderTriggerHooks(...)`), so the books are checked by the
 * market runtime in the drain that applies each trade.
 *
 * Invariants:
 * - Loaded before the market runtime starts consuming (`loadOpen`), then followed every
 *   `syncIntervalMs` from `rev` (creates and cancels, in commit order, at most `syncBatch` a
 *   tick). A tick reads the rows only when the `rev` sequence has handed out a value above the
 *   last one read (`revHandedOut`: one sequence read, no table access, while nothing changed).
 *   An order the API accepted after a trade this process already applied is caught up on the
 *   market's price now (`OrderBooks.place`).
 * - Expiry by the wall clock: every tick sweeps the books and writes `expired` (conditional, no
 *   event); an order a trade reaches after its time expires with that trade's flush.
 * - Exactly once: the triggers of a market are written in the transaction of the checkpoint flush
 *   that writes the market's state (`checkpointWrite`), each by `markTriggered`'s conditional
 *   update with its outbox row, and only while the ownership fence keeps the market's partition;
 *   a replay after a crash triggers in memory again and moves no row. Expiries and raised
 *   trailing watermarks are written the same way, so a stored watermark never stands ahead of
 *   the stored state (a replay from the checkpoint meets the watermark the checkpoint saw).
 * - A partition handed over (`assigned`): its markets' books are reloaded from the stored open
 *   orders, dropping what this process held for them (it may have owned them before and decided
 *   things the replay will decide again).
 * - Execution: a trigger this process moved is handed to the `OrderExecution` port once the row
 *   is committed (`--role all`: the hand-off to this process's `OrderExecutor`; the actors role
 *   has none). Without a port, or when a process dies between the commit and the hand-off, the
 *   order stays `triggered` and the executor's recovery pass (`OrderExecutor.recover`, in the
 *   processes that run the trade rail) takes it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, type Scope } from "effect"
import type { MarketOutput, MarketState } from "../../../actors/market/MarketActor.js"
import type { BookOrder } from "../../../actors/orders/OrderBook.js"
import { OrderBooks } from "../../../actors/orders/OrderBooks.js"
import type { CheckpointWrite } from "../../../actors/runtime/Checkpointer.js"
import type { RuntimeHooks } from "../../../actors/runtime/ShardedRuntime.js"
import type { ChainEvent } from "../../../ingest/ChainEvent.js"
import { bookOrderOf, changedSince, loadOpen, markExpired, markTriggered, marketKeyOf, type OrderRow, revHandedOut, saveWatermark } from "./OrderStore.js"

/** Where a triggered order goes to be executed (the trade rail's submit, payer main). */
export interface OrderExecution {
  /** Called once per order this process triggered, after its `triggered` row committed. */
  readonly execute: (order: OrderRow) => Effect.Effect<void>
}

export interface OrderTriggerOptions {
  /** Most open orders held in memory (default 1,000,000). */
  readonly maxOrders?: number
  /** How often new and cancelled orders are read (default 100 ms). */
  readonly syncIntervalMs?: number
  /** Rows per follow read (default 1,000). */
  readonly syncBatch?: number
  readonly execution?: OrderExecution
}

export type OrderHooks = Pick<RuntimeHooks<MarketState, MarketOutput, ChainEvent>, "applied" | "checkpointWrite" | "assigned"> & {
  readonly books: OrderBooks
  /** Reads what changed since the last read into the books now (the loop also does every interval). */
  readonly sync: Effect.Effect<void, SqlError>
  /** How many times the follow read `limit_orders` (the gate skips the read while nothing changed). */
  readonly followReads: () => number
}

/**
 * Loads the open orders and starts following them in the current scope; answers the hooks the
 * market runtime calls. `marketState` reads the runtime's state of a market key.
 */
export const orderTriggerHooks =
  (options: OrderTriggerOptions = {}) =>
  (sql: SqlClient.SqlClient, marketState: (key: string) => MarketState | undefined, hurryCheckpoint: () => void = () => {}): Effect.Effect<OrderHooks, SqlError, Scope.Scope> =>
    Effect.gen(function* () {
      const books = new OrderBooks(options.maxOrders ?? 1_000_000)
      const syncBatch = options.syncBatch ?? 1000
      const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(e, SqlClient.SqlClient, sql)
      const placeRow = (r: OrderRow) => {
        const key = marketKeyOf(r)
        if (!books.place(key, bookOrderOf(r), marketState(key))) {
          // Over the bound: the order stays open in the table and is not watched here.
          return Effect.logError(`orders: ${options.maxOrders ?? 1_000_000} open orders held; order ${r.id} is not watched`)
        }
        return Effect.void
      }
      let rev = yield* withSql(
        loadOpen(syncBatch, (rows) => {
          for (const r of rows) books.place(marketKeyOf(r), bookOrderOf(r), undefined)
        })
      )
      yield* Effect.logInfo(`orders: loaded ${books.size()} open limit orders`)

      let followReads = 0
      // The follow and a partition's reload never interleave: the reload replaces books with a
      // paged read of the table, and the follow must then replay every change after the `rev` it
      // had read (a create or cancel committed during the pages), never one it applied before.
      const exclusive = yield* Effect.makeSemaphore(1)
      const follow: Effect.Effect<void, SqlError> = Effect.gen(function* () {
        const handedOut = yield* withSql(revHandedOut)
        while (handedOut > rev) {
          followReads++
          const rows = yield* withSql(changedSince(rev, syncBatch))
          const pending = books.pendingCount()
          for (const r of rows) {
            rev = r.rev
            if (r.status === "open") yield* placeRow(r)
            else books.cancel(r.id, marketKeyOf(r))
          }
          // An order caught up on the price now (it was crossed before this process learnt of it): written by the next flush, now.
          if (books.pendingCount() > pending) hurryCheckpoint()
          if (rows.length < syncBatch) break
        }
        const nowMs = yield* Clock.currentTimeMillis
        const expired = books.sweep(nowMs)
        if (expired.length > 0) yield* withSql(Effect.forEach(expired, (o) => markExpired(o.id, nowMs), { discard: true }))
      })
      const sync = exclusive.withPermits(1)(follow)
      yield* Effect.forkScoped(
        sync.pipe(
          Effect.catchAll((e) => Effect.logWarning("orders: reading new orders failed; retrying", e)),
          Effect.zipRight(Effect.sleep(Duration.millis(options.syncIntervalMs ?? 100))),
          Effect.forever
        )
      )

      // With each checkpoint flush, in its transaction: the triggers and raised watermarks of the
      // markets whose states it writes (or were durable already: a catch-up on a market that
      // has not moved since) and this process still owns; the executions once it committed.
      const checkpointWrite = (covered: (key: string) => boolean): CheckpointWrite | undefined => {
        const taken = books.take(covered)
        if (taken.outputs.length === 0 && taken.watermarks.size === 0) return undefined
        let triggered: Array<OrderRow> = []
        const write = (kept: (key: string) => boolean): Effect.Effect<void, SqlError> =>
          withSql(
            Effect.gen(function* () {
              triggered = []
              const nowMs = yield* Clock.currentTimeMillis
              for (const [id, watermark] of taken.watermarks) {
                const marketKey = taken.watermarkMarkets.get(id)
                if (marketKey === undefined || kept(marketKey)) yield* saveWatermark(id, watermark)
              }
              for (const { marketKey, output } of taken.outputs) {
                if (!kept(marketKey)) continue
                if (output._tag === "Expired") {
                  yield* markExpired(output.order.id, nowMs)
                  continue
                }
                const row = yield* markTriggered(
                  { id: output.order.id, price: output.price, position: output.position, atMs: output.atMs, watermark: output.watermark, stopPrice: output.stopPrice },
                  nowMs
                )
                if (row !== undefined) triggered.push(row)
              }
            })
          )
        const committed = Effect.suspend(() =>
          options.execution === undefined ? Effect.void : Effect.forEach(triggered, (row) => Effect.forkDaemon(options.execution!.execute(row)), { discard: true })
        )
        return { write, committed }
      }
      // A partition handed over: its markets' books are reloaded from the stored open orders (the
      // watermarks their last checkpoint wrote), since the partition is replayed from there.
      const assigned = (holds: (key: string) => boolean): Effect.Effect<void, SqlError> =>
        exclusive.withPermits(1)(Effect.gen(function* () {
          const stored: Array<readonly [string, BookOrder]> = []
          yield* withSql(
            loadOpen(syncBatch, (rows) => {
              for (const r of rows) {
                const key = marketKeyOf(r)
                if (holds(key)) stored.push([key, bookOrderOf(r)])
              }
            })
          )
          books.reload(holds, stored)
        }))
      return { books, applied: books.applied, checkpointWrite, assigned, sync, followReads: () => followReads }
    })
