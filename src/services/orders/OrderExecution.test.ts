/**
 * A triggered order's execution through `step`:
 *
 *   triggered ─Executed(signature, amountOut)──▶ executed
 *   triggered ─Refused(reason)─────────────────▶ failed
 *   executed | failed | open | cancelled | expired ─any──▶ unchanged (nothing submitted)
 *
 * Transitions and the tests that cover them:
 * - triggered → executed: "an executed trade settles the order once with its signature and amount"
 * - triggered → failed: "a refusal ends the order failed with the rail's reason"
 * - settled and never-triggered orders: "only a triggered order moves or owes a submit"
 * - the rail's answers: "the rail's unsettled answers leave the order triggered; every other reason fails it"
 */
import { describe, expect, it } from "vitest"
import { SpendErrorReason } from "../spend/SpendError.js"
import { eventOfRefusal, eventOfSpendRefusal, eventOfTrade, type ExecutionEvent, owed, refused, step } from "./OrderExecution.js"
import { ORDER_STATUSES, type OrderRow } from "./OrderStore.js"
import { TradeErrorReasons } from "../trade/TradeError.js"

const triggered: OrderRow = {
  id: "ord_1",
  accountId: "acct",
  clientOrderId: "c1",
  keyId: "key",
  requestHash: "h",
  chain: "solana",
  mint: "Mint",
  side: "sell",
  trigger: "stop",
  amountRaw: 1000n,
  level: "0.5",
  trailBps: null,
  watermark: null,
  slippageBps: 100,
  payer: "main",
  expiresAtMs: null,
  afterPosition: "p",
  status: "triggered",
  createdAtMs: 1,
  updatedAtMs: 2,
  triggeredAtMs: 2,
  triggerPrice: "0.4",
  triggerPosition: "q",
  triggerWatermark: null,
  triggerStopPrice: null,
  failureReason: null,
  clientTradeId: "order:ord_1",
  tradeSignature: null,
  amountOutRaw: null,
  settledAtMs: null,
  failureMessage: null,
  rev: 1n
}

const executedEvent: ExecutionEvent = { _tag: "Executed", signature: "sig", amountOutRaw: 42n, atMs: 10 }
const refusedEvent = refused("insufficient_balance", "not enough", 10)

describe("order execution machine", () => {
  it("an executed trade settles the order once with its signature and amount", () => {
    const [next, outputs] = step(triggered, executedEvent)
    expect(next).toMatchObject({ status: "executed", tradeSignature: "sig", amountOutRaw: 42n, settledAtMs: 10, failureReason: null })
    expect(outputs).toEqual([{ _tag: "Settled", status: "executed" }])
    expect(owed(next!)).toEqual([])
    // Settled: a second answer moves nothing.
    const [again, more] = step(next, refusedEvent)
    expect(again).toBe(next)
    expect(more).toEqual([])
  })

  it("a refusal ends the order failed with the rail's reason", () => {
    const [next, outputs] = step(triggered, refusedEvent)
    expect(next).toMatchObject({ status: "failed", failureReason: "insufficient_balance", failureMessage: "not enough", settledAtMs: 10, tradeSignature: null })
    expect(outputs).toEqual([{ _tag: "Settled", status: "failed" }])
    const [again] = step(next, executedEvent)
    expect(again).toBe(next)
  })

  it("only a triggered order moves or owes a submit", () => {
    expect(owed(triggered)).toEqual([{ _tag: "Submit" }])
    expect(step(undefined, executedEvent)).toEqual([undefined, []])
    for (const status of ORDER_STATUSES.filter((s) => s !== "triggered")) {
      const row = { ...triggered, status }
      expect(owed(row)).toEqual([])
      for (const e of [executedEvent, refusedEvent]) {
        const [next, outputs] = step(row, e)
        expect(next).toBe(row)
        expect(outputs).toEqual([])
      }
    }
  })

  it("the rail's unsettled answers leave the order triggered; every other reason fails it", () => {
    const unsettled = new Set(["pending", "chain_unavailable", "storage"])
    for (const reason of TradeErrorReasons) {
      const e = eventOfRefusal({ reason, message: `m ${reason}`, details: { signature: "s9" } }, 5)
      if (unsettled.has(reason)) expect(e, reason).toBeUndefined()
      else expect(e, reason).toEqual({ _tag: "Refused", reason, message: `m ${reason}`, signature: "s9", atMs: 5 })
    }
    // A refusal the rail marks retryable for a caller still ends an order (a cap's window).
    expect(eventOfRefusal({ reason: "spend_policy_denied", message: "cap", details: {} }, 5)).toMatchObject({ _tag: "Refused", signature: null })
    expect(eventOfTrade({ status: "executed", signature: "s", amountOut: "7" }, 3)).toEqual({ _tag: "Executed", signature: "s", amountOutRaw: 7n, atMs: 3 })
    expect(eventOfTrade({ status: "sending", signature: "s", amountOut: null }, 3)).toBeUndefined()
  })

  it("the spend gate's cap and window refusals fail the order; a valuation or storage outage leaves it triggered", () => {
    for (const reason of SpendErrorReason.literals) {
      const e = eventOfSpendRefusal({ reason, message: `m ${reason}` }, 4)
      if (reason === "storage" || reason === "limit_unavailable") expect(e, reason).toBeUndefined()
      else expect(e, reason).toEqual({ _tag: "Refused", reason, message: `m ${reason}`, signature: null, atMs: 4 })
    }
  })
})
