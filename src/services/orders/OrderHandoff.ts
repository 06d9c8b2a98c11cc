/**
 * The hand-off of triggered orders from the market actors to the order executor in the same
 * process (issue 29): the actors' trigger runtime offers each order it moved to `triggered`
 * (`handoffExecution`, its `OrderExecution` port) and `OrderExecutor.run` takes them. The
 * composition root provides it where one process runs both (`--role all`); the actors role has none
 * and leaves its triggers to the API processes' recovery pass over `triggered` rows.
 *
 * Bounded (`ORDER_HANDOFF_MAX` ids); an offer to a full queue is dropped: the order is committed
 * `triggered` already and the executor's periodic pass picks it up.
 */
import { Context, Effect, Layer, Queue } from "effect"
import type { OrderExecution } from "./OrderTriggers.js"

export const ORDER_HANDOFF_MAX = 10_000

export interface OrderHandoffShape {
  readonly queue: Queue.Queue<string>
}

export class OrderHandoff extends Context.Tag("curvestream/OrderHandoff")<OrderHandoff, OrderHandoffShape>() {}

export const layer = (capacity = ORDER_HANDOFF_MAX): Layer.Layer<OrderHandoff> => Layer.effect(OrderHandoff, Effect.map(Queue.dropping<string>(capacity), (queue) => ({ queue })))

/** The actors' execution port over the hand-off. */
export const handoffExecution = (handoff: OrderHandoffShape): OrderExecution => ({
  execute: (row) =>
    Effect.flatMap(Queue.offer(handoff.queue, row.id), (taken) =>
      taken ? Effect.void : Effect.logWarning(`orders: the execution hand-off is full; order ${row.id} waits for the executor's pass`)
    )
})

/** The real hand-off with its default capacity (`ORDER_HANDOFF_MAX`). */
export const layerTest: Layer.Layer<OrderHandoff> = layer()
