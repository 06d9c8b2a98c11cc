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
 * - Exactly once: a trigger is written by the trigger writer (a fiber woken by the drain that
 *   decided it, no linger) on its own, not with its market's checkpoint: the triggers taken at
 *   once go in one statement (`markTriggeredAll`: the conditional `open → triggered` update and
 *   the outbox rows), fenced by the claim of the market's partition this process held when it
 *   took them (none while it has never been handed one: one process consumes everything). A
 *   trigger is never behind the checkpoint that passes its trade: a checkpoint flush waits
 *   (`beforeCheckpoint`) until every trigger decided before it took its states is written or
 *   fenced out. So a crash before the write replays the trade from a checkpoint before it and
 *   triggers again in memory; one after it finds the order no longer open (not in the books
 *   loaded at start, and the conditional update moves nothing). Expiries and raised trailing
 *   watermarks stay in the checkpoint flush's transaction (`checkpointWrite`), so a stored
 *   watermark never stands ahead of the stored state (a replay from the checkpoint meets the
 *   watermark the checkpoint saw).
 * - A partition handed over (`assigned`): its markets' books are reloaded from the stored open
 *   orders, dropping what this process held for them (it may have owned them before and decided
 *   things the replay will decide again). Only that partition's open orders are read, by the
 *   partition each row records (migration 0048), after every open row without one for the bus's
 *   partition count has it recorded (`repairPartitions`: the rows written before the column, by a
 *   create that did not know the count, or for another count). The follow is held off meanwhile,
 *   so every open order it had passed over (committed before the assignment began) is repaired
 *   and read; every later one the follow places.
 * - Execution: a trigger this process moved is handed to the `OrderExecution` port once the row
 *   is committed (the statement and the hand-off are one uninterruptible step, so a process
 *   stopping in between still hands it off) (`--role all`: the hand-off to this process's `OrderExecutor`; the actors role
 *   has none). Without a port, or when a process dies between the commit and the hand-off, the
 *   order stays `triggered` and the executor's recovery pass (`OrderExecutor.recover`, in the
 *   processes that run the trade rail) takes it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Option, type Scope } from "effect"
import type { MarketOutput, MarketState } from "../../../actors/market/MarketActor.js"
import type { BookOrder } from "../../../actors/orders/OrderBook.js"
import { OrderBooks } from "../../../actors/orders/OrderBooks.js"
import type { CheckpointWrite } from "../../../actors/runtime/Checkpointer.js"
import type { PartitionClaim, RuntimeHooks } from "../../../actors/runtime/ShardedRuntime.js"
import type { ChainEvent } from "../../../ingest/ChainEvent.js"
import { NamedStatements } from "../../db/Database.js"
import type { BusError } from "../../../ingest/bus/Bus.js"
import { makeOrderFollow } from "./internal/OrderFollow.js"
import { makeTriggerClaims } from "./internal/TriggerClaims.js"
import { makeTriggerWriter, TriggerWriterPause } from "./internal/TriggerWriter.js"
import {
  bookOrderOf,
  forgetPartitions,
  latestRev,
  loadOpen,
  loadOpenOfPartition,
  markExpired,
  marketKeyOf,
  type OrderRow,
  repairPartitions,
  saveWatermark
} from "./OrderStore.js"

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
  /**
   * The process consumes a share of the bus partitions (the actors role on Kafka, the runtime's
   * `reloadOnAssign`): no order is loaded at start, a partition's books are loaded when it is
   * assigned (`assigned`) and dropped when it is revoked (`revoked`), and the follow places only
   * orders of markets in partitions held here. Without it every open order is loaded at start
   * (one process consumes every partition); a first `assigned` then drops the books of the
   * partitions not claimed.
   */
  readonly partitioned?: boolean
}

export { TRIGGERS_PER_STATEMENT, TriggerWriterPause } from "./internal/TriggerWriter.js"

export type OrderHooks = Pick<RuntimeHooks<MarketState, MarketOutput, ChainEvent>, "applied" | "checkpointWrite" | "assigned" | "revoked" | "beforeCheckpoint"> & {
  readonly books: OrderBooks
  /** Reads what changed since the last read into the books now (the loop also does every interval). */
  readonly sync: Effect.Effect<void, SqlError>
  /** How many times the follow read `limit_orders` (the gate skips the read while nothing changed). */
  readonly followReads: () => number
  /**
   * Rows the assignments read from `limit_orders` (`loadOpenOfPartition`: only the assigned
   * partition's open orders) and rows whose partition they recorded first (`repairPartitions`).
   */
  readonly assignedRows: () => { readonly read: number; readonly repaired: number }
  /** Trigger statements written (`markTriggeredAll`), and triggers the fence left out. */
  readonly triggerWrites: () => { readonly statements: number; readonly fencedOut: number }
}

/**
 * Loads the open orders and starts following them in the current scope; answers the hooks the
 * market runtime calls. `marketState` reads the runtime's state of a market key.
 *
 * The hooks are a table over three parts: the partition claims and the fences they give
 * (`internal/TriggerClaims`), the trigger writer (`internal/TriggerWriter`) and the follow of
 * `limit_orders` (`internal/OrderFollow`); the checkpoint write and a partition's reload or drop
 * stay here, where the parts meet.
 */
export const orderTriggerHooks =
  (options: OrderTriggerOptions = {}) =>
  (
    sql: SqlClient.SqlClient,
    marketState: (key: string) => MarketState | undefined,
    hurryCheckpoint: () => void = () => {},
    routedDurable: () => Effect.Effect<void, BusError> = () => Effect.void
  ): Effect.Effect<OrderHooks, SqlError, Scope.Scope> =>
    Effect.gen(function* () {
      const maxOrders = options.maxOrders ?? 1_000_000
      const books = new OrderBooks(maxOrders)
      const syncBatch = options.syncBatch ?? 1000
      // The database layer's named statements (the trigger statement planned once per connection),
      // read from the context this is built in; absent, the same statements run through the `SqlClient`.
      const named = yield* Effect.serviceOption(NamedStatements)
      const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) =>
        Effect.provideService(
          Option.isSome(named) ? Effect.provideService(e, NamedStatements, named.value) : e,
          SqlClient.SqlClient,
          sql
        )
      const claims = makeTriggerClaims(options.partitioned === true)
      const { fenceOf } = claims
      // A test's seam (`TriggerWriterPause`), read from the context this is built in; no production layer provides it.
      const pause = Option.getOrUndefined(yield* Effect.serviceOption(TriggerWriterPause))
      const writer = makeTriggerWriter({ books, withSql, fenceOf, routedDurable, execution: options.execution, pause })
      yield* Effect.forkScoped(writer.run)
      /**
       * A drain (or a catch-up) decided outputs: the triggers are written now; answers whether an
       * expiry waits, which the next checkpoint flush writes (the caller hurries it).
       */
      const decided = (): boolean => {
        if (books.oldestPendingTrigger() !== Number.POSITIVE_INFINITY) writer.notify()
        return books.hasPendingExpiry()
      }
      const applied = (key: string, event: ChainEvent, state: MarketState | undefined): boolean => books.applied(key, event, state) && decided()

      const rev = options.partitioned === true
        ? yield* withSql(latestRev) // the books come with the partitions (`assigned`)
        : yield* withSql(
            loadOpen(syncBatch, (rows) => {
              for (const r of rows) books.place(marketKeyOf(r), bookOrderOf(r), undefined)
            })
          )
      yield* Effect.logInfo(`orders: loaded ${books.size()} open limit orders`)

      // The follow and a partition's reload never interleave: the reload replaces books with a
      // paged read of the table, and the follow must then replay every change after the `rev` it
      // had read (a create or cancel committed during the pages), never one it applied before.
      const exclusive = yield* Effect.makeSemaphore(1)
      const assignedRows = { read: 0, repaired: 0 }
      const { follow, followReads } = makeOrderFollow({ books, withSql, syncBatch, maxOrders, fenceOf, marketState, decided, hurryCheckpoint }, rev)
      const sync = exclusive.withPermits(1)(follow)
      yield* Effect.forkScoped(
        sync.pipe(
          Effect.catchAll((e) => Effect.logWarning("orders: reading new orders failed; retrying", e)),
          Effect.zipRight(Effect.sleep(Duration.millis(options.syncIntervalMs ?? 100))),
          Effect.forever
        )
      )

      // With each checkpoint flush, in its transaction: the expiries and raised watermarks of the
      // markets whose states it writes (or were durable already: a catch-up on a market that
      // has not moved since) and this process still owns.
      const checkpointWrite = (covered: (key: string) => boolean): CheckpointWrite | undefined => {
        const taken = books.take(covered, false)
        if (taken.outputs.length === 0 && taken.watermarks.size === 0) return undefined
        const write = (kept: (key: string) => boolean): Effect.Effect<void, SqlError> =>
          withSql(
            Effect.gen(function* () {
              const nowMs = yield* Clock.currentTimeMillis
              for (const [id, watermark] of taken.watermarks) {
                const marketKey = taken.watermarkMarkets.get(id)
                if (marketKey === undefined || kept(marketKey)) yield* saveWatermark(id, watermark)
              }
              for (const { marketKey, output } of taken.outputs) {
                if (kept(marketKey) && output._tag === "Expired") yield* markExpired(output.order.id, nowMs)
              }
            })
          )
        return { write, committed: Effect.void }
      }
      // A partition handed over: its markets' books are reloaded from the stored open orders (the
      // watermarks their last checkpoint wrote), since the partition is replayed from there.
      const assigned = (holds: (key: string) => boolean, claim: PartitionClaim): Effect.Effect<void, SqlError> =>
        exclusive.withPermits(1)(Effect.gen(function* () {
          // Handed a partition though loaded whole at start: from now only claimed partitions are held.
          const unclaimed = claims.claim(claim)
          if (unclaimed !== undefined) books.reload(unclaimed, [])
          // Only the partition's open orders are read (migration 0048), once every open row records
          // its partition for the bus's count: rows written before the column, without the count
          // or for another count are recomputed first (docs/decisions.md, "Open orders by bus partition").
          const repaired = yield* withSql(repairPartitions(claim.partitions, syncBatch))
          const stored: Array<readonly [string, BookOrder]> = []
          const strays: Array<string> = []
          let read = 0
          yield* withSql(
            loadOpenOfPartition(claim.partitions, claim.partition, syncBatch, (rows) => {
              read += rows.length
              for (const r of rows) {
                const key = marketKeyOf(r)
                if (holds(key)) stored.push([key, bookOrderOf(r)])
                else strays.push(r.id)
              }
            })
          )
          // Recorded for this partition but of another: forgotten, so the next repair records them right.
          yield* withSql(forgetPartitions(strays))
          assignedRows.repaired += repaired
          assignedRows.read += read
          books.reload(holds, stored)
          writer.release() // the partition's triggers not yet taken were dropped
          if (read !== stored.length) yield* Effect.logError(`orders: partition ${claim.partition}: ${read - stored.length} rows recorded for it are of other partitions`)
          yield* Effect.logInfo(
            `orders: partition ${claim.partition} assigned; ${stored.length} open orders loaded (${repaired} rows' partitions recorded first), ${books.size()} held`
          )
        }))
      // A partition taken from this process: its books and undecided outputs are dropped (its new
      // owner loads them and replays from the checkpoints); a trigger of it in flight is fenced.
      const revoked = (holds: (key: string) => boolean, partition: number): Effect.Effect<void> =>
        exclusive.withPermits(1)(
          Effect.suspend(() => {
            claims.revoke(partition)
            const before = books.size()
            books.reload(holds, [])
            writer.release()
            return Effect.logInfo(`orders: partition ${partition} revoked; ${before - books.size()} open orders dropped, ${books.size()} held`)
          })
        )
      return {
        books,
        applied,
        checkpointWrite,
        // A checkpoint flush that takes states waits for the triggers decided before it: a trigger is never behind the checkpoint that passes its trade.
        beforeCheckpoint: writer.beforeCheckpoint,
        assigned,
        revoked,
        sync,
        followReads,
        triggerWrites: writer.counts,
        assignedRows: () => ({ ...assignedRows })
      }
    })
