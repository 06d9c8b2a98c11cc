/**
 * The trigger writer of `OrderTriggers`: what the drains decided, written at once (one statement
 * for what was taken together, at most {@link TRIGGERS_PER_STATEMENT} triggers a statement),
 * fenced by the claim held when taken; then handed to the execution.
 *
 * Invariants:
 * - A trigger is written only once the trades that crossed are durable on the bus (`routedDurable`).
 * - The statement and the hand-off of what it moved are one uninterruptible step.
 * - `writtenThrough` never passes a trigger taken and not yet written (`inFlightMin`) nor one still
 *   pending in the books; a checkpoint flush's wait (`beforeCheckpoint`) is released from it.
 * - A `notify` while the writer is busy is kept (`Wakeup`), so no trigger waits for a later one.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Effect } from "effect"
import type { OrderBooks, PendingOutput } from "../../../../actors/orders/OrderBooks.js"
import { flushRetrySchedule } from "../../../../actors/runtime/Checkpointer.js"
import { Waiters, Wakeup } from "../../../../actors/runtime/internal/Wakeup.js"
import type { BusError } from "../../../../ingest/bus/Bus.js"
import { markTriggeredAll, type OrderRow, type TriggerFence } from "../OrderStore.js"
import type { OrderExecution } from "../OrderTriggers.js"

/** Most triggers one statement writes (`markTriggeredAll`); more taken at once go in several. */
export const TRIGGERS_PER_STATEMENT = 500

/** The write of a trigger the books decided, with its fence (null: not fenced). */
const writeOf = (p: PendingOutput, fence: TriggerFence | null) => {
  const o = p.output as Extract<PendingOutput["output"], { _tag: "Triggered" }>
  const write = { id: o.order.id, price: o.price, position: o.position, atMs: o.atMs, watermark: o.watermark, stopPrice: o.stopPrice }
  return fence === null ? write : { ...write, fence }
}

/**
 * A test seam, never provided by a production layer: when the Effect that builds the trigger
 * hooks (`orderTriggerHooks`) has it in its context, the writer waits on it with the ids it took,
 * at `taken` (before the crossing trades' durability wait and the fences are read) and at `fenced`
 * (the fences read, before the statement), so a test can hold a decided trigger across a
 * revocation and a claim by another process (`orders.revokeInFlight`, `orders.partitions.kafka`).
 * Absent (production), the writer has no pause point at all.
 */
export class TriggerWriterPause extends Context.Tag("curvestream/orders/TriggerWriterPause")<
  TriggerWriterPause,
  (at: "taken" | "fenced", ids: ReadonlyArray<string>) => Effect.Effect<void>
>() {}

export interface TriggerWriterDeps {
  readonly books: OrderBooks
  readonly withSql: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  /** The fence of a market's writes: null when not fenced, undefined when its partition is not held here. */
  readonly fenceOf: (marketKey: string) => TriggerFence | null | undefined
  readonly routedDurable: () => Effect.Effect<void, BusError>
  /** Handed each order a statement moved (forked, not awaited); undefined: no execution here. */
  readonly execution: OrderExecution | undefined
  /** The test seam `TriggerWriterPause`, when the hooks were built with it; undefined in production. */
  readonly pause: TriggerWriterPause["Type"] | undefined
}

export const makeTriggerWriter = ({ books, withSql, fenceOf, routedDurable, execution, pause }: TriggerWriterDeps) => {
  const wake = new Wakeup()
  const written = new Waiters()
  let inFlightMin = Number.POSITIVE_INFINITY
  let statements = 0
  let fencedOut = 0
  /** Every output up to this `seq` is no trigger waiting to be written. */
  const writtenThrough = (): number => {
    const low = Math.min(books.oldestPendingTrigger(), inFlightMin)
    return low === Number.POSITIVE_INFINITY ? books.outputsCount() : low - 1
  }
  const handOff = (rows: ReadonlyArray<OrderRow>): Effect.Effect<void> =>
    execution === undefined ? Effect.void : Effect.forEach(rows, (row) => Effect.forkDaemon(execution.execute(row)), { discard: true })

  /** One statement of `chunk` and the hand-off of what it moved: one step a stop does not cut in two, retried. */
  const writeChunk = (chunk: ReadonlyArray<ReturnType<typeof writeOf>>): Effect.Effect<void> => {
    const attempt = Effect.uninterruptible(
      Effect.flatMap(Effect.flatMap(Clock.currentTimeMillis, (nowMs) => withSql(markTriggeredAll(chunk, nowMs))), (rows) =>
        Effect.sync(() => {
          statements++
          fencedOut += chunk.length - rows.length
        }).pipe(Effect.zipRight(handOff(rows)))
      )
    )
    return attempt.pipe(
      Effect.tapError((e) => Effect.logWarning(`orders: writing ${chunk.length} triggers failed; retrying`, e)),
      Effect.retry(flushRetrySchedule),
      Effect.orDie
    )
  }

  /** The writer loop (forked in the service's scope). */
  const run: Effect.Effect<never> = Effect.gen(function* () {
    while (true) {
      const taken = books.takeTriggers()
      if (taken.length === 0) {
        yield* wake.wait
        continue
      }
      inFlightMin = taken[0]!.seq
      if (pause !== undefined) yield* pause("taken", taken.map((p) => writeOf(p, null).id))
      // The trades that crossed are durable on the bus first (the embedded bus delivers records
      // before their fsync): a trigger, and the money its execution moves, never stands on a
      // record a crash could lose (the runtime's rule for everything derived from events).
      yield* routedDurable().pipe(
        Effect.tapError((e) => Effect.logWarning("orders: waiting for the crossing trades to be durable failed; retrying", e)),
        Effect.retry(flushRetrySchedule),
        Effect.orDie
      )
      const writes: Array<ReturnType<typeof writeOf>> = []
      for (const p of taken) {
        const fence = fenceOf(p.marketKey)
        if (fence === undefined) fencedOut++ // the partition is no longer this process's: its new owner replays the trade
        else writes.push(writeOf(p, fence))
      }
      if (pause !== undefined) yield* pause("fenced", writes.map((w) => w.id))
      for (let i = 0; i < writes.length; i += TRIGGERS_PER_STATEMENT) yield* writeChunk(writes.slice(i, i + TRIGGERS_PER_STATEMENT))
      inFlightMin = Number.POSITIVE_INFINITY
      written.release(writtenThrough())
    }
  })

  return {
    run,
    /** A trigger is pending in the books: the writer takes it now. */
    notify: (): void => wake.notify(),
    /** Releases the checkpoint waits the books' pending triggers no longer hold (after a reload dropped some). */
    release: (): void => written.release(writtenThrough()),
    /** A checkpoint flush that takes states waits for the triggers decided before it. */
    beforeCheckpoint: (): Effect.Effect<void> => {
      const target = books.outputsCount()
      return written.await(target, writtenThrough)
    },
    counts: () => ({ statements, fencedOut })
  }
}
