/**
 * The `limit_orders` rows (migration 0025): create (idempotent on account and clientOrderId),
 * cancel, reads, what the actors' books load and follow, and the trigger writes. This module is
 * their table, one part per responsibility in `internal/`: `OrderRows` (the row and its decoding),
 * `OrderPlacement` (create, cancel), `OrderReads`, `OpenOrders` (the books' load and `rev`
 * follow), `PartitionRepair` (the recorded bus partition), `TriggerStatement` (the fenced trigger
 * with its outbox rows) and `OrderOutcomes` (executed, failed, expired, the watermark). Each is a
 * function over the caller's `SqlClient`, the time of a write passed in by the caller.
 *
 * Invariants:
 * - Creates and cancels take one advisory lock and bump `rev` from a sequence inside it, so rows
 *   become visible in `rev` order and `changedSince` never skips one.
 * - A status leaves `open` only by a conditional update (`WHERE status = 'open'`): of any number
 *   of processes or replays trying to trigger, expire or cancel an order, exactly one moves it.
 * - `order.triggered` is written to the outbox in the transaction that flips the status, keyed by
 *   the order id, so it is recorded once per order and endpoint.
 * - `bus_partition`/`bus_partitions` (migration 0048) are a cache of the bus's mapping of the
 *   market key, never the truth: a read by partition (`loadOpenOfPartition`) is preceded by
 *   `repairPartitions` for the bus's count, which rewrites every open row computed for no count or
 *   another one. Written at create when the caller knows the count (the API's `BUS_PARTITIONS`).
 */
export {
  bookOrderOf,
  decodePrice,
  encodePrice,
  levelText,
  marketKeyOf,
  type NewOrder,
  ORDER_STATUSES,
  type OrderRow,
  type OrderStatus,
  orderTradeId
} from "./internal/OrderRows.js"
export { cancelOrder, type CancelResult, createOrder, type CreateResult } from "./internal/OrderPlacement.js"
export { listOrders, openOrdersOfKey, orderById, readOrder, triggeredIds } from "./internal/OrderReads.js"
export { changedSince, latestRev, loadOpen, loadOpenOfPartition, openOfPartitionPage, revHandedOut } from "./internal/OpenOrders.js"
export { forgetPartitions, repairPartitions, STALE_RANGES, stalePartitionPage } from "./internal/PartitionRepair.js"
export { markTriggeredAll, triggeredData, type TriggerFence, type TriggerWrite, TRIGGER_STATEMENT, TRIGGER_STATEMENT_NAME, triggerValues } from "./internal/TriggerStatement.js"
export { type ExecutedWrite, markExecuted, markExpired, markFailed, saveWatermark } from "./internal/OrderOutcomes.js"
