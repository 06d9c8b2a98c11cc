/**
 * Limit orders (issue 29; document 2, 2.2 "Limit orders ... Max"): create, list, read, cancel.
 * HTTP only: key auth with its scope (`swap:write` to create and cancel: any such key of the
 * account may cancel any of its orders, also one placed by a key since narrowed; `account:read`
 * or `swap:write` to read), the body and query decoding, then one call to `OrderService`; failures
 * go through the error table (`TIER_REQUIRED` below Max).
 */
import { Effect } from "effect"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { ORDER_PAGE_DEFAULT, ORDER_PAGE_MAX, type OrderCaller, type OrderServiceShape } from "../../src/services/orders/OrderService.js"
import { ORDER_STATUSES } from "../../src/services/orders/OrderStore.js"
import { AGENT_AUTH_HEADERS, type AgentAuth } from "../auth/AgentKeyAuth.js"
import { mapFailure } from "../ErrorTable.js"
import { answer, refusal } from "../OpenApi.js"
import { json } from "../Http.js"
import { chainParam, enumParam, intParam, isApiError, parseAddress, stringParam } from "../QueryParams.js"
import { apiError } from "../../src/domain/ApiError.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { decodeOrderBody, OrderCreateWire, OrderListResponse, OrderResponse } from "./OrderDecoders.js"

export const ORDER_BODY_BYTES_MAX = 4 * 1024

export interface OrderRoutesOptions {
  readonly agentAuth: AgentAuth
  readonly orders: OrderServiceShape
}

const callerOf = (p: AgentPrincipal): OrderCaller => ({ accountId: p.accountId, keyId: p.key.id, plan: p.tier })

const orderIdParam = stringParam("The order's id (orderId)", { required: true, maxLength: 80, pattern: /^ord_[A-Za-z0-9-]{1,64}$/ })

export const orderRoutes = (options: OrderRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, orders } = options
  const writer = (req: { readonly headers: Readonly<Record<string, string>> }) => agentAuth.authenticate(req.headers, { scopes: ["swap:write"] })
  const reader = (req: { readonly headers: Readonly<Record<string, string>> }) => agentAuth.authenticate(req.headers, { anyScope: ["account:read", "swap:write"] })

  const create = route({
    method: "POST",
    path: "/api/v1/agent/orders",
    operationId: "createLimitOrder",
    summary: "Place a limit, stop or trailing-stop order; it triggers on the first trade after placing that crosses its price (Max)",
    tags: ["orders"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: decodedBody({ schema: OrderCreateWire, maxBytes: ORDER_BODY_BYTES_MAX, decode: decodeOrderBody }),
    responses: {
      200: answer("The order (replayed: true when the clientOrderId was already placed with this request)", OrderResponse),
      400: refusal(["VALIDATION_FAILED"], "naming the field"),
      403: refusal(["SCOPE_MISSING", "TIER_REQUIRED", "VALIDATION_FAILED"], "swap:write; Max only; a paused key (reason key_paused)"),
      404: refusal(["MARKET_NOT_FOUND"]),
      409: refusal(["IDEMPOTENCY_CONFLICT", "MARKET_NOT_TRADABLE", "VALIDATION_FAILED"], "clientOrderId names another request; the market does not trade; reason open_orders_limit (100 open orders)")
    },
    authenticate: writer,
    handler: (_req, { body }, principal) =>
      mapFailure(orders.create(callerOf(principal), body)).pipe(Effect.map(({ order, replayed }) => json(200, { success: true, replayed, order })))
  })

  const list = route({
    method: "GET",
    path: "/api/v1/agent/orders",
    operationId: "listLimitOrders",
    summary: "The account's limit orders, newest first",
    tags: ["orders"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    query: {
      status: enumParam("Only orders with this status", ORDER_STATUSES),
      chain: chainParam("Only orders on this chain (required with mint)"),
      mint: stringParam("Only orders on this market (its mint or token address)", { maxLength: 64 }),
      limit: intParam(`Page size, 1 to ${ORDER_PAGE_MAX}`, { min: 1, max: ORDER_PAGE_MAX, default: ORDER_PAGE_DEFAULT }),
      cursor: stringParam("continueCursor of the previous page", { maxLength: 200 })
    },
    responses: {
      200: answer("A page of orders", OrderListResponse),
      400: refusal(["VALIDATION_FAILED"], "a filter or the cursor"),
      403: refusal(["SCOPE_MISSING", "VALIDATION_FAILED"], "account:read or swap:write; a paused key (reason key_paused)")
    },
    authenticate: reader,
    handler: (_req, { status, chain, mint, limit, cursor }, principal) => {
      if (mint !== undefined && chain === undefined) return Effect.fail(apiError("VALIDATION_FAILED", "chain is required with mint", { field: "chain" }))
      const market = mint === undefined || chain === undefined ? null : parseAddress(chain, mint, "mint")
      if (isApiError(market)) return Effect.fail(market)
      return mapFailure(orders.list(callerOf(principal), { status: status ?? null, chain: chain ?? null, mint: market, cursor: cursor ?? null, limit })).pipe(
        Effect.map((page) => json(200, { success: true, ...page }))
      )
    }
  })

  const read = route({
    method: "GET",
    path: "/api/v1/agent/orders/{orderId}",
    operationId: "readLimitOrder",
    summary: "One limit order of the account",
    tags: ["orders"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { orderId: orderIdParam },
    responses: {
      200: answer("The order", OrderResponse),
      403: refusal(["SCOPE_MISSING", "VALIDATION_FAILED"], "account:read or swap:write; a paused key (reason key_paused)"),
      404: refusal(["VALIDATION_FAILED"], "no such order on this account")
    },
    authenticate: reader,
    handler: (_req, { orderId }, principal) => mapFailure(orders.read(callerOf(principal), orderId)).pipe(Effect.map((order) => json(200, { success: true, order })))
  })

  const cancel = route({
    method: "POST",
    path: "/api/v1/agent/orders/{orderId}/cancel",
    operationId: "cancelLimitOrder",
    summary: "Cancel an open order (any swap:write key of the account); a cancelled order never triggers",
    tags: ["orders"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { orderId: orderIdParam },
    responses: {
      200: answer("The cancelled order", OrderResponse),
      403: refusal(["SCOPE_MISSING", "VALIDATION_FAILED"], "swap:write; a paused key (reason key_paused)"),
      404: refusal(["VALIDATION_FAILED"], "no such order on this account"),
      409: refusal(["VALIDATION_FAILED"], "reason not_open, details.status: the order already triggered, expired or was cancelled")
    },
    authenticate: writer,
    handler: (_req, { orderId }, principal) => mapFailure(orders.cancel(callerOf(principal), orderId)).pipe(Effect.map((order) => json(200, { success: true, order })))
  })

  return [create, list, read, cancel]
}
