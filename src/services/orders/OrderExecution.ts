/**
 * A triggered limit order's execution as a pure machine (issue 29), driven by the one attempt
 * runner (`OrderExecutor.ts`). The state is the stored order row: `triggered` is in flight (it owes
 * one `Submit`: the trade rail's submit as the trade `order:<id>`), `executed` and `failed` are
 * settled and never move again. What the rail answered becomes an event here (`eventOfTrade`,
 * `eventOfRefusal`): an executed trade, a refusal that ends the order, or nothing (the rail is
 * unavailable or the trade is still in flight: the order stays `triggered` and is submitted again,
 * which the rail answers from the stored trade without sending anything twice).
 */
import type { SpendErrorReason } from "../spend/SpendError.js"
import type { TradeErrorReason } from "../trade/TradeError.js"
import type { OrderRow } from "./OrderStore.js"

export type ExecutionEvent =
  | { readonly _tag: "Executed"; readonly signature: string; readonly amountOutRaw: bigint; readonly atMs: number }
  | { readonly _tag: "Refused"; readonly reason: string; readonly message: string; readonly signature: string | null; readonly atMs: number }

export type ExecutionOutput =
  /** Submit the order's trade through the trade rail (payer main, `clientTradeId` `order:<id>`). */
  | { readonly _tag: "Submit" }
  | { readonly _tag: "Settled"; readonly status: "executed" | "failed" }

export const inFlight = (row: OrderRow): boolean => row.status === "triggered"

/** What a stored order still owes: a triggered order its submit. */
export const owed = (row: OrderRow): ReadonlyArray<ExecutionOutput> => (inFlight(row) ? [{ _tag: "Submit" }] : [])

/** Pure. The SAME row when the event changes nothing (a settled order, or no order). */
export const step = (row: OrderRow | undefined, event: ExecutionEvent): readonly [OrderRow | undefined, ReadonlyArray<ExecutionOutput>] => {
  if (row === undefined || !inFlight(row)) return [row, []]
  switch (event._tag) {
    case "Executed":
      return [
        { ...row, status: "executed", tradeSignature: event.signature, amountOutRaw: event.amountOutRaw, settledAtMs: event.atMs, updatedAtMs: event.atMs },
        [{ _tag: "Settled", status: "executed" }]
      ]
    case "Refused":
      return [
        {
          ...row,
          status: "failed",
          failureReason: event.reason,
          failureMessage: event.message,
          tradeSignature: event.signature,
          settledAtMs: event.atMs,
          updatedAtMs: event.atMs
        },
        [{ _tag: "Settled", status: "failed" }]
      ]
  }
}

/**
 * The trade rail's reasons that say nothing about the order's fate: the trade is in flight (its own
 * recovery settles it), or the chain, the signer or the database did not answer. The order stays
 * `triggered` and its submit is made again. Every other reason ends the order `failed`, including
 * one the rail marks retryable for a caller who may try later (a spend cap's window): an order is
 * one decision at its trigger, not a standing retry.
 */
const UNSETTLED: ReadonlySet<TradeErrorReason> = new Set<TradeErrorReason>(["pending", "chain_unavailable", "storage"])

/** A refusal of the trade rail as the order's event; undefined when it does not settle the order. */
export const eventOfRefusal = (
  e: { readonly reason: TradeErrorReason; readonly message: string; readonly details?: unknown },
  atMs: number
): ExecutionEvent | undefined => {
  if (UNSETTLED.has(e.reason)) return undefined
  const details = e.details as { readonly signature?: unknown } | undefined
  const signature = typeof details?.signature === "string" ? details.signature : null
  return { _tag: "Refused", reason: e.reason, message: e.message, signature, atMs }
}

/**
 * The spend gate's refusal of the order's trade: the cap or the window fail the order, once (like
 * any refusal of the rail); a valuation or storage outage settles nothing (the order stays
 * `triggered` and is submitted again).
 */
export const eventOfSpendRefusal = (e: { readonly reason: SpendErrorReason; readonly message: string }, atMs: number): ExecutionEvent | undefined =>
  e.reason === "storage" || e.reason === "limit_unavailable" ? undefined : refused(e.reason, e.message, atMs)

/** A refusal decided before the rail is called (the key or the plan no longer allow the trade). */
export const refused = (reason: string, message: string, atMs: number): ExecutionEvent => ({ _tag: "Refused", reason, message, signature: null, atMs })

/** The rail's answer of an executed trade. */
export const eventOfTrade = (view: { readonly status: string; readonly signature: string; readonly amountOut: string | null }, atMs: number): ExecutionEvent | undefined =>
  view.status === "executed" && view.amountOut !== null ? { _tag: "Executed", signature: view.signature, amountOutRaw: BigInt(view.amountOut), atMs } : undefined
