/**
 * The one failure of the limit-order service (issue 29), in the shape every service failure has;
 * `api/ErrorTable.ts` (`OrderRows`) answers each reason with its spec code.
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const OrderErrorReason = Schema.Literal(
  /** The account's plan has no limit orders (Max only, document 2, 2.2). */
  "plan_required",
  /** No market with this mint on this chain. */
  "market_not_found",
  /** The market cannot take an order now (no price yet, or in recovery). */
  "market_not_tradable",
  /** The account has `OPEN_ORDERS_MAX` open orders. */
  "open_order_limit",
  /** `expiresAt` is not in the future, or more than 30 days ahead. */
  "invalid_expiry",
  /** The clientOrderId names another request of this account. */
  "idempotency_conflict",
  "order_not_found",
  /** Cancel of an order no longer open (`details.status`). */
  "order_not_open",
  "invalid_cursor",
  "storage"
)
export type OrderErrorReason = typeof OrderErrorReason.Type

export class OrderError extends Schema.TaggedError<OrderError>()("OrderError", {
  reason: OrderErrorReason,
  ...failureFields
}) {}

export const orderError = failureOf<OrderError, OrderErrorReason>(OrderError)
