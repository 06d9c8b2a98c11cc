/**
 * The limit-order service the routes call (issue 29): create (idempotent on the account's
 * clientOrderId), list, read, cancel, and the open orders a key placed (the access change's
 * effects). It decides the domain (Max only, the market and its price now, the account's bound,
 * the request's identity) and fails with one `OrderError`; `api/ErrorTable.ts` answers it.
 *
 * An order is placed at the market's state in the index now: it counts only trades after that
 * market position (`afterPosition`), and a trailing stop's watermark starts at the price now. The
 * actors' books pick the row up from `limit_orders` (`OrderTriggers.ts`); nothing here triggers.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { createHash, randomUUID } from "node:crypto"
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import { priceReserves } from "../../../actors/market/MarketRecord.js"
import { formatPrice, type OrderSide, priceOfReserves, type TriggerKind } from "../../../actors/orders/OrderBook.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import type { PlanId } from "../../domain/Plans.js"
import { type OrderError, orderError } from "./OrderError.js"
import { cancelOrder, createOrder, listOrders, type OrderRow, type OrderStatus, openOrdersOfKey, readOrder } from "./OrderStore.js"

/** Open orders one account may hold (a bound on every book and on the follow). */
export const OPEN_ORDERS_MAX = 100
/** The furthest `expiresAt` may be (30 days). */
export const ORDER_TTL_MAX_MS = 30 * 24 * 3600 * 1000
export const ORDER_PAGE_MAX = 100
export const ORDER_PAGE_DEFAULT = 50

export interface OrderCaller {
  readonly accountId: string
  readonly keyId: string
  readonly plan: PlanId
}

/** A create request, decoded (the route checks shapes; amounts are raw units). */
export interface OrderRequest {
  readonly clientOrderId: string
  readonly chain: ChainId
  readonly mint: string
  readonly side: OrderSide
  readonly type: TriggerKind
  /** Buy: quote raw to spend; sell: token raw to sell. */
  readonly amountRaw: bigint
  /** `limit`: the target; `stop`: the stop price (exact decimals). */
  readonly targetPrice: string | null
  readonly stopPrice: string | null
  readonly trailBps: number | null
  readonly slippageBps: number
  readonly payer: string
  readonly expiresAtMs: number | null
}

export interface OrderView {
  readonly orderId: string
  readonly clientOrderId: string
  readonly status: OrderStatus
  readonly chain: ChainId
  readonly mint: string
  readonly side: OrderSide
  readonly type: TriggerKind
  readonly amountRaw: string
  readonly targetPrice: string | null
  readonly stopPrice: string | null
  readonly trailBps: number | null
  readonly trailWatermark: string | null
  readonly slippageBps: number
  readonly payer: string
  readonly expiresAt: string | null
  readonly createdAt: string
  readonly triggeredAt: string | null
  readonly triggerPrice: string | null
  readonly failureReason: string | null
  readonly failureMessage: string | null
  readonly clientTradeId: string | null
  readonly tradeSignature: string | null
  readonly amountOut: string | null
  readonly settledAt: string | null
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/** An open order past its expiry reads `expired` before the actors' sweep writes it. */
export const viewOf = (r: OrderRow, nowMs: number): OrderView => ({
  orderId: r.id,
  clientOrderId: r.clientOrderId,
  status: r.status === "open" && r.expiresAtMs !== null && r.expiresAtMs <= nowMs ? "expired" : r.status,
  chain: r.chain,
  mint: r.mint,
  side: r.side,
  type: r.trigger,
  amountRaw: r.amountRaw.toString(),
  targetPrice: r.trigger === "limit" ? r.level : null,
  stopPrice: r.trigger === "stop" ? r.level : r.triggerStopPrice,
  trailBps: r.trailBps,
  trailWatermark: r.watermark === null ? null : formatPrice(r.watermark),
  slippageBps: r.slippageBps,
  payer: r.payer,
  expiresAt: iso(r.expiresAtMs),
  createdAt: new Date(r.createdAtMs).toISOString(),
  triggeredAt: iso(r.triggeredAtMs),
  triggerPrice: r.triggerPrice,
  failureReason: r.failureReason,
  failureMessage: r.failureMessage,
  clientTradeId: r.clientTradeId,
  tradeSignature: r.tradeSignature,
  amountOut: r.amountOutRaw === null ? null : r.amountOutRaw.toString(),
  settledAt: iso(r.settledAtMs)
})

/** The request's identity: a repeat with the same clientOrderId must carry the same request. */
export const requestHash = (r: OrderRequest): string =>
  createHash("sha256")
    .update(
      JSON.stringify([r.chain, r.mint, r.side, r.type, r.amountRaw.toString(), r.targetPrice, r.stopPrice, r.trailBps, r.slippageBps, r.payer, r.expiresAtMs])
    )
    .digest("hex")

const encodeCursor = (r: OrderRow): string => Buffer.from(`${r.createdAtMs}:${r.id}`, "utf8").toString("base64url")
const decodeCursor = (c: string): { readonly createdAtMs: number; readonly id: string } | undefined => {
  const m = /^(\d{1,15}):(ord_[A-Za-z0-9-]{1,64})$/.exec(Buffer.from(c, "base64url").toString("utf8"))
  return m === null ? undefined : { createdAtMs: Number(m[1]), id: m[2]! }
}

export interface OrderPage {
  readonly orders: ReadonlyArray<OrderView>
  readonly continueCursor: string | null
  readonly isDone: boolean
}

export interface OrderListQuery {
  readonly status: OrderStatus | null
  /** Only this chain's orders; with `mint`, one market's (`mint` normalized for its chain). */
  readonly chain?: "solana" | "hood" | null
  readonly mint?: string | null
  readonly cursor: string | null
  readonly limit: number
}

export interface OrderServiceShape {
  readonly create: (caller: OrderCaller, req: OrderRequest) => Effect.Effect<{ readonly order: OrderView; readonly replayed: boolean }, OrderError>
  readonly list: (caller: Pick<OrderCaller, "accountId">, q: OrderListQuery) => Effect.Effect<OrderPage, OrderError>
  readonly read: (caller: Pick<OrderCaller, "accountId">, orderId: string) => Effect.Effect<OrderView, OrderError>
  readonly cancel: (caller: Pick<OrderCaller, "accountId">, orderId: string) => Effect.Effect<OrderView, OrderError>
  /** Open orders placed through a key (the access change's `effects`). */
  readonly openOfKey: (keyId: string) => Effect.Effect<number, SqlError>
}

const storage = (e: SqlError) => orderError("storage", "The order store is unavailable; nothing changed", { retryable: true, details: { cause: e.message } })

/**
 * `busPartitions`: the bus's partition count (`BUS_PARTITIONS`), so a created order records its
 * market's bus partition (migration 0048); without it the actors record it before they read by
 * partition.
 */
export const make = (
  index: Pick<MarketIndexShape, "market">,
  options: { readonly busPartitions?: number } = {}
): Effect.Effect<OrderServiceShape, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const run = <A>(e: Effect.Effect<A, SqlError, SqlClient.SqlClient>): Effect.Effect<A, OrderError> =>
      Effect.provideService(e, SqlClient.SqlClient, sql).pipe(Effect.mapError(storage))

    const create = Effect.fn("OrderService.create")(function* (caller: OrderCaller, req: OrderRequest) {
      if (caller.plan !== "max") return yield* Effect.fail(orderError("plan_required", "Limit orders are a Max feature"))
      const nowMs = yield* Clock.currentTimeMillis
      if (req.expiresAtMs !== null && (req.expiresAtMs <= nowMs || req.expiresAtMs > nowMs + ORDER_TTL_MAX_MS)) {
        return yield* Effect.fail(orderError("invalid_expiry", "expiresAt must be in the future and at most 30 days ahead", { field: "expiresAt" }))
      }
      const core = index.market(req.chain, req.mint)
      if (core === undefined) return yield* Effect.fail(orderError("market_not_found", `No ${req.chain} market for ${req.mint}`, { field: "mint" }))
      if (core.lifecycle === "recovery") return yield* Effect.fail(orderError("market_not_tradable", "The market is in recovery: claims only", { details: { reason: "recovery" } }))
      const { quoteRaw, tokenRaw } = priceReserves(core)
      const price = priceOfReserves(quoteRaw, tokenRaw, core.identity.decimals, core.identity.quoteDecimals)
      if (price === null) return yield* Effect.fail(orderError("market_not_tradable", "The market has no price yet", { details: { reason: "no_price" } }))
      const hash = requestHash(req)
      const result = yield* run(
        createOrder(
          {
            id: `ord_${randomUUID()}`,
            accountId: caller.accountId,
            clientOrderId: req.clientOrderId,
            keyId: caller.keyId,
            requestHash: hash,
            chain: req.chain,
            mint: core.mint,
            side: req.side,
            trigger: req.type,
            amountRaw: req.amountRaw,
            level: req.type === "limit" ? req.targetPrice : req.type === "stop" ? req.stopPrice : null,
            trailBps: req.type === "trailing_stop" ? req.trailBps : null,
            watermark: req.type === "trailing_stop" ? price : null,
            slippageBps: req.slippageBps,
            payer: req.payer,
            expiresAtMs: req.expiresAtMs,
            afterPosition: core.lastPosition
          },
          nowMs,
          OPEN_ORDERS_MAX,
          options.busPartitions
        )
      )
      switch (result._tag) {
        case "Full":
          return yield* Effect.fail(orderError("open_order_limit", `The account has ${OPEN_ORDERS_MAX} open orders; cancel one first`, { details: { limit: OPEN_ORDERS_MAX } }))
        case "Existing":
          if (result.row.requestHash !== hash) {
            return yield* Effect.fail(orderError("idempotency_conflict", "This clientOrderId names another order", { field: "clientOrderId", details: { orderId: result.row.id } }))
          }
          return { order: viewOf(result.row, nowMs), replayed: true }
        case "Created":
          return { order: viewOf(result.row, nowMs), replayed: false }
      }
    })

    const list = Effect.fn("OrderService.list")(function* (
      caller: Pick<OrderCaller, "accountId">,
      q: OrderListQuery
    ) {
      const after = q.cursor === null ? null : decodeCursor(q.cursor)
      if (after === undefined) return yield* Effect.fail(orderError("invalid_cursor", "cursor is not a continueCursor of this list", { field: "cursor" }))
      const nowMs = yield* Clock.currentTimeMillis
      const limit = Math.min(Math.max(q.limit, 1), ORDER_PAGE_MAX)
      const rows = yield* run(listOrders(caller.accountId, { status: q.status, chain: q.chain ?? null, mint: q.mint ?? null }, after, limit + 1))
      const page = rows.slice(0, limit)
      const isDone = rows.length <= limit
      return { orders: page.map((r) => viewOf(r, nowMs)), continueCursor: isDone ? null : encodeCursor(page[page.length - 1]!), isDone }
    })

    const read = Effect.fn("OrderService.read")(function* (caller: Pick<OrderCaller, "accountId">, orderId: string) {
      const row = yield* run(readOrder(caller.accountId, orderId))
      if (row === undefined) return yield* Effect.fail(orderError("order_not_found", `No order ${orderId} on this account`, { field: "orderId" }))
      return viewOf(row, yield* Clock.currentTimeMillis)
    })

    const cancel = Effect.fn("OrderService.cancel")(function* (caller: Pick<OrderCaller, "accountId">, orderId: string) {
      const nowMs = yield* Clock.currentTimeMillis
      const result = yield* run(cancelOrder(caller.accountId, orderId, nowMs))
      switch (result._tag) {
        case "NotFound":
          return yield* Effect.fail(orderError("order_not_found", `No order ${orderId} on this account`, { field: "orderId" }))
        case "NotOpen":
          return yield* Effect.fail(orderError("order_not_open", `The order is ${result.row.status}; only an open order can be cancelled`, { details: { status: result.row.status } }))
        case "Cancelled":
          return viewOf(result.row, nowMs)
      }
    })

    return { create, list, read, cancel, openOfKey: (keyId) => Effect.provideService(openOrdersOfKey(keyId), SqlClient.SqlClient, sql) }
  })
