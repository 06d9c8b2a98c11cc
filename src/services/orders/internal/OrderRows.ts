/**
 * A `limit_orders` row (migration 0025) as the store answers it: the row's type, the decoding of
 * what the database returns (timestamps to epoch ms, amounts to bigint, a stored `num/den` price
 * to a `Price`), and the pure views of a row the other parts and the books need. No SQL runs here.
 */
import type { BookOrder, OrderSide, Price, TriggerKind } from "../../../../actors/orders/OrderBook.js"
import { formatPriceE18, parsePriceE18 } from "../../../../actors/orders/OrderBook.js"

export type OrderStatus = "open" | "triggered" | "executed" | "cancelled" | "expired" | "failed"
export const ORDER_STATUSES: ReadonlyArray<OrderStatus> = ["open", "triggered", "executed", "cancelled", "expired", "failed"]

export interface OrderRow {
  readonly id: string
  readonly accountId: string
  readonly clientOrderId: string
  readonly keyId: string
  readonly requestHash: string
  readonly chain: "solana" | "hood"
  readonly mint: string
  readonly side: OrderSide
  readonly trigger: TriggerKind
  readonly amountRaw: bigint
  /** `limit`: the target; `stop`: the stop price; exact decimal. Null for a trailing stop. */
  readonly level: string | null
  readonly trailBps: number | null
  /** A trailing stop's highest price seen, `num/den`. */
  readonly watermark: Price | null
  readonly slippageBps: number
  readonly payer: string
  readonly expiresAtMs: number | null
  readonly afterPosition: string
  readonly status: OrderStatus
  readonly createdAtMs: number
  readonly updatedAtMs: number
  readonly triggeredAtMs: number | null
  readonly triggerPrice: string | null
  readonly triggerPosition: string | null
  readonly triggerWatermark: string | null
  readonly triggerStopPrice: string | null
  readonly failureReason: string | null
  /** The trade the order executes as (`order:<id>`), set when it triggers. */
  readonly clientTradeId: string | null
  /** The executed trade's signature and amount out (executed orders). */
  readonly tradeSignature: string | null
  readonly amountOutRaw: bigint | null
  /** When it ended `executed` or `failed`. */
  readonly settledAtMs: number | null
  readonly failureMessage: string | null
  readonly rev: bigint
}

export type NewOrder = Omit<
  OrderRow,
  | "status"
  | "createdAtMs"
  | "updatedAtMs"
  | "triggeredAtMs"
  | "triggerPrice"
  | "triggerPosition"
  | "triggerWatermark"
  | "triggerStopPrice"
  | "failureReason"
  | "clientTradeId"
  | "tradeSignature"
  | "amountOutRaw"
  | "settledAtMs"
  | "failureMessage"
  | "rev"
>

/** A row as the database returns it (`SELECT *`), before `toRow`. */
export interface Raw {
  readonly id: string
  readonly account_id: string
  readonly client_order_id: string
  readonly key_id: string
  readonly request_hash: string
  readonly chain: string
  readonly mint: string
  readonly side: string
  readonly trigger: string
  readonly amount_raw: string
  readonly level: string | null
  readonly trail_bps: number | null
  readonly watermark: string | null
  readonly slippage_bps: number
  readonly payer: string
  readonly expires_at: Date | string | null
  readonly after_position: string
  readonly status: string
  readonly created_at: Date | string
  readonly updated_at: Date | string
  readonly triggered_at: Date | string | null
  readonly trigger_price: string | null
  readonly trigger_position: string | null
  readonly trigger_watermark: string | null
  readonly trigger_stop_price: string | null
  readonly failure_reason: string | null
  readonly client_trade_id: string | null
  readonly trade_signature: string | null
  readonly amount_out_raw: string | null
  readonly settled_at: Date | string | null
  readonly failure_message: string | null
  readonly rev: string | number | bigint
}

const ms = (d: Date | string): number => (d instanceof Date ? d.getTime() : new Date(d).getTime())
const msOrNull = (d: Date | string | null): number | null => (d === null ? null : ms(d))

export const encodePrice = (p: Price): string => `${p.num}/${p.den}`
export const decodePrice = (text: string): Price => {
  const [num, den] = text.split("/")
  return { num: BigInt(num!), den: BigInt(den!) }
}

export const toRow = (r: Raw): OrderRow => ({
  id: r.id,
  accountId: r.account_id,
  clientOrderId: r.client_order_id,
  keyId: r.key_id,
  requestHash: r.request_hash,
  chain: r.chain as OrderRow["chain"],
  mint: r.mint,
  side: r.side as OrderSide,
  trigger: r.trigger as TriggerKind,
  amountRaw: BigInt(r.amount_raw),
  level: r.level,
  trailBps: r.trail_bps,
  watermark: r.watermark === null ? null : decodePrice(r.watermark),
  slippageBps: r.slippage_bps,
  payer: r.payer,
  expiresAtMs: msOrNull(r.expires_at),
  afterPosition: r.after_position,
  status: r.status as OrderStatus,
  createdAtMs: ms(r.created_at),
  updatedAtMs: ms(r.updated_at),
  triggeredAtMs: msOrNull(r.triggered_at),
  triggerPrice: r.trigger_price,
  triggerPosition: r.trigger_position,
  triggerWatermark: r.trigger_watermark,
  triggerStopPrice: r.trigger_stop_price,
  failureReason: r.failure_reason,
  clientTradeId: r.client_trade_id,
  tradeSignature: r.trade_signature,
  amountOutRaw: r.amount_out_raw === null ? null : BigInt(r.amount_out_raw),
  settledAtMs: msOrNull(r.settled_at),
  failureMessage: r.failure_message,
  rev: BigInt(r.rev)
})

/** What the book keeps of an open order row. */
export const bookOrderOf = (r: OrderRow): BookOrder => ({
  id: r.id,
  side: r.side,
  trigger: r.trigger,
  levelE18: r.level === null ? 0n : parsePriceE18(r.level)!,
  trailBps: r.trailBps,
  watermark: r.watermark,
  expiresAtMs: r.expiresAtMs,
  afterPosition: r.afterPosition
})

/** The book's market key of a row (the market actor's key). */
export const marketKeyOf = (r: Pick<OrderRow, "chain" | "mint">): string => `${r.chain}:${r.mint}`

/** The `clientTradeId` an order executes as: one per order, so the trade rail executes it once. */
export const orderTradeId = (orderId: string): string => `order:${orderId}`

/** The levels as the API writes them. */
export const levelText = (levelE18: bigint): string => formatPriceE18(levelE18)
