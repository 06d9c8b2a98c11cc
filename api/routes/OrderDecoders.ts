/**
 * Request decoding for the limit-order routes (issue 29): the create body into `OrderRequest`, or
 * `VALIDATION_FAILED` naming the field. Members not named here are ignored.
 *
 * Rules: `type` `limit` takes `targetPrice` (buy triggers at or below it, sell at or above);
 * `stop` sells and takes `stopPrice`; `trailing_stop` sells and takes `trailBps` (1..9,999). Prices
 * are exact decimal strings in the market's quote units per whole token (at most 30 integer and
 * 18 fractional digits, above zero): never JSON numbers. `amount` is raw units (buy: quote to
 * spend; sell: tokens to sell). `payer` is `main` (the account's embedded wallet, the trade rail's
 * payer). `expiresAt` is an ISO 8601 time (the service checks it is ahead).
 */
import { Schema } from "effect"
import { validationFailed } from "../../src/domain/ApiError.js"
import { parsePriceE18 } from "../../actors/orders/OrderBook.js"
import type { OrderRequest } from "../../src/services/orders/OrderService.js"
import { parseExactAddress } from "../QueryParams.js"
import { isObject } from "./KeyDecoders.js"
import type { Decoded } from "./ServiceCall.js"

export const CLIENT_ORDER_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/
const AMOUNT_PATTERN = /^[1-9][0-9]{0,39}$/
export const SLIPPAGE_BPS_MAX = 5_000
export const SLIPPAGE_BPS_DEFAULT = 100

const price = (v: unknown): string | undefined => {
  if (typeof v !== "string") return undefined
  const e18 = parsePriceE18(v)
  return e18 === undefined || e18 <= 0n ? undefined : v
}

const absent = (v: unknown): boolean => v === undefined || v === null

export const decodeOrderBody = (body: unknown): Decoded<OrderRequest> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const { clientOrderId, chain, mint, side, type, amount, targetPrice, stopPrice, trailBps, slippageBps, payer, expiresAt } = body
  if (typeof clientOrderId !== "string" || !CLIENT_ORDER_ID_PATTERN.test(clientOrderId)) {
    return validationFailed("clientOrderId", "clientOrderId must be 1 to 64 of A-Z a-z 0-9 . _ : -")
  }
  if (chain !== "solana" && chain !== "hood") return validationFailed("chain", "chain must be solana or hood")
  // The chain's address form, normalized as the market reads are (a Hood address in any case finds its market).
  // Solana: 32 bytes too, as the trade rail that executes the order requires.
  const token = parseExactAddress(chain, typeof mint === "string" ? mint : undefined, "mint", "mint must be a base58 address of 32 bytes")
  if (typeof token !== "string") return token
  if (side !== "buy" && side !== "sell") return validationFailed("side", "side must be buy or sell")
  if (type !== "limit" && type !== "stop" && type !== "trailing_stop") return validationFailed("type", "type must be limit, stop or trailing_stop")
  if (typeof amount !== "string" || !AMOUNT_PATTERN.test(amount)) return validationFailed("amount", "amount must match ^[1-9][0-9]*$ (raw units: quote to spend on a buy, tokens to sell on a sell)")
  if (type !== "limit" && side !== "sell") return validationFailed("side", `a ${type} order sells`)
  let target: string | null = null
  let stop: string | null = null
  let trail: number | null = null
  if (type === "limit") {
    target = price(targetPrice) ?? null
    if (target === null) return validationFailed("targetPrice", "a limit order needs targetPrice, an exact decimal string above 0 (at most 18 fractional digits)")
  } else if (!absent(targetPrice)) return validationFailed("targetPrice", "targetPrice is for limit orders")
  if (type === "stop") {
    stop = price(stopPrice) ?? null
    if (stop === null) return validationFailed("stopPrice", "a stop order needs stopPrice, an exact decimal string above 0 (at most 18 fractional digits)")
  } else if (!absent(stopPrice)) return validationFailed("stopPrice", "stopPrice is for stop orders")
  if (type === "trailing_stop") {
    if (typeof trailBps !== "number" || !Number.isInteger(trailBps) || trailBps < 1 || trailBps > 9_999) {
      return validationFailed("trailBps", "a trailing stop needs trailBps, an integer from 1 to 9999")
    }
    trail = trailBps
  } else if (!absent(trailBps)) return validationFailed("trailBps", "trailBps is for trailing stops")
  let slippage = SLIPPAGE_BPS_DEFAULT
  if (!absent(slippageBps)) {
    if (typeof slippageBps !== "number" || !Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > SLIPPAGE_BPS_MAX) {
      return validationFailed("slippageBps", `slippageBps must be an integer from 0 to ${SLIPPAGE_BPS_MAX}`)
    }
    slippage = slippageBps
  }
  if (payer !== undefined && payer !== "main") return validationFailed("payer", "payer must be main (the account's embedded wallet)")
  let expiresAtMs: number | null = null
  if (!absent(expiresAt)) {
    const ms = typeof expiresAt === "string" && /^\d{4}-\d{2}-\d{2}T/.test(expiresAt) ? Date.parse(expiresAt) : Number.NaN
    if (!Number.isFinite(ms)) return validationFailed("expiresAt", "expiresAt must be an ISO 8601 time")
    expiresAtMs = ms
  }
  return {
    clientOrderId,
    chain,
    mint: token,
    side,
    type,
    amountRaw: BigInt(amount),
    targetPrice: target,
    stopPrice: stop,
    trailBps: trail,
    slippageBps: slippage,
    payer: "main",
    expiresAtMs
  }
}

const Decimal = Schema.String.annotations({ description: "Exact decimal, quote units per whole token (never a JSON number)", examples: ["0.000000031"] })

/** The create body on the wire (documented; `decodeOrderBody` decodes it). */
export const OrderCreateWire = Schema.Struct({
  clientOrderId: Schema.String.annotations({ description: "Idempotency key of the account: a repeat answers the stored order; another request with it is IDEMPOTENCY_CONFLICT" }),
  chain: Schema.Literal("solana", "hood"),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  type: Schema.Literal("limit", "stop", "trailing_stop"),
  amount: Schema.String.annotations({ description: "Raw units: quote to spend (buy) or tokens to sell (sell)" }),
  targetPrice: Schema.optional(Decimal.annotations({ description: "limit: buy at or below, sell at or above" })),
  stopPrice: Schema.optional(Decimal.annotations({ description: "stop: sells at or below" })),
  trailBps: Schema.optional(Schema.Int.annotations({ description: "trailing_stop: sells at or below the highest price since placing less trailBps" })),
  slippageBps: Schema.optional(Schema.Int.annotations({ description: `0 to ${SLIPPAGE_BPS_MAX}, default ${SLIPPAGE_BPS_DEFAULT}: the execution's slippage bound` })),
  payer: Schema.optional(Schema.Literal("main")),
  expiresAt: Schema.optional(Schema.String.annotations({ description: "ISO 8601; at most 30 days ahead; an expired order fires nothing" }))
}).annotations({ identifier: "LimitOrderCreate" })

export const OrderWire = Schema.Struct({
  orderId: Schema.String,
  clientOrderId: Schema.String,
  status: Schema.Literal("open", "triggered", "executed", "cancelled", "expired", "failed"),
  chain: Schema.Literal("solana", "hood"),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  type: Schema.Literal("limit", "stop", "trailing_stop"),
  amountRaw: Schema.String,
  targetPrice: Schema.NullOr(Decimal),
  stopPrice: Schema.NullOr(Decimal).annotations({ description: "stop: the stop price; trailing_stop: the stop price when it triggered" }),
  trailBps: Schema.NullOr(Schema.Int),
  trailWatermark: Schema.NullOr(Decimal),
  slippageBps: Schema.Int,
  payer: Schema.String,
  expiresAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  triggeredAt: Schema.NullOr(Schema.String),
  triggerPrice: Schema.NullOr(Decimal).annotations({ description: "The price the crossing trade left" }),
  failureReason: Schema.NullOr(Schema.String).annotations({ description: "failed: the trade rail's reason (insufficient_balance, spend_policy_denied, ...) or key_revoked, key_expired, key_paused, tier_required" }),
  failureMessage: Schema.NullOr(Schema.String),
  clientTradeId: Schema.NullOr(Schema.String).annotations({ description: "The trade the order executes as (order:<orderId>), set when it triggers; read it on the trade routes" }),
  tradeSignature: Schema.NullOr(Schema.String).annotations({ description: "executed: the trade's signature (failed on chain: the failed transaction's)" }),
  amountOut: Schema.NullOr(Schema.String).annotations({ description: "executed: what the trade executed, raw units" }),
  settledAt: Schema.NullOr(Schema.String).annotations({ description: "When it ended executed or failed" })
}).annotations({ identifier: "LimitOrder" })

export const OrderResponse = Schema.Struct({ success: Schema.Literal(true), replayed: Schema.optional(Schema.Boolean), order: OrderWire }).annotations({
  identifier: "LimitOrderResponse"
})

export const OrderListResponse = Schema.Struct({
  success: Schema.Literal(true),
  orders: Schema.Array(OrderWire),
  continueCursor: Schema.NullOr(Schema.String),
  isDone: Schema.Boolean
}).annotations({ identifier: "LimitOrderList" })
