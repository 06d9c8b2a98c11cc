/**
 * The trade rail's failure codes, pinned: every `TradeFailureReason`'s row code, what the chain's
 * classifiers' reasons answer, and what a row or a bundle state an older version stored (the code
 * itself) answers: unchanged, the same bytes a new row's reason answers.
 */
import { describe, expect, it } from "vitest"
import { type BundleEvent, type BundleState, initialBundle, step } from "../actors/bundle/BundleActor.js"
import { buyLegFailure } from "../src/chain/solana/launch/BuyLegTransaction.js"
import { ErrorCodes } from "../src/domain/ErrorCodes.js"
import { bundleRecord } from "../src/services/launch/atomic/BundleViews.js"
import { failedAnswer } from "../src/services/trade/internal/TradeAnswers.js"
import { failureReasonOf, TradeFailureReasons } from "../src/services/trade/TradeMachine.js"
import { stateOf, type TradeRow } from "../src/services/trade/TradeStore.js"
import { tradeView } from "../src/services/trade/TradeViews.js"
import { toApiError } from "./ErrorTable.js"
import { bundleAnswer, TradeFailureCode, tradeAnswer, tradeFailureCode } from "./TradeCodes.js"
import { tradeRow } from "../test/support/tradeRows.js"

/** What an older version recorded for each reason (its `TradeFailureCode`, the codes the routes answered). */
const before = { slippage_exceeded: "SLIPPAGE_EXCEEDED", reverted: "TRADE_REVERTED", never_landed: "NEVER_LANDED" } as const

const failedRow = (errorCode: string | null): TradeRow =>
  tradeRow("acct-codes", "t-1", { state: "failed", signature: "Sig1", errorCode, error: "custom 6000", createdAtMs: Date.UTC(2026, 10, 29) })

/** The refusal a failed row answers, as the wire says it. */
const wire = (row: TradeRow) => {
  const e = toApiError(failedAnswer(row))
  return { code: e.code, status: e.status, field: e.field, retryable: e.retryable, message: e.message, extra: e.extra }
}

describe("trade failure codes", () => {
  it("pins every reason's row code (the spec's codes are in ErrorCodes; NEVER_LANDED is this server's row code)", () => {
    expect(Object.fromEntries(TradeFailureReasons.map((r) => [r, TradeFailureCode[r]]))).toEqual(before)
    for (const r of TradeFailureReasons) expect(tradeFailureCode(r)).toBe(before[r])
    for (const code of ["SLIPPAGE_EXCEEDED", "TRADE_REVERTED"]) expect(Object.hasOwn(ErrorCodes, code), code).toBe(true)
  })

  it("the chain's reasons answer the codes the classifiers answered before", () => {
    expect(tradeFailureCode(buyLegFailure({ InstructionError: [1, { Custom: 6000n }] }))).toBe("SLIPPAGE_EXCEEDED")
    expect(tradeFailureCode(buyLegFailure({ InstructionError: [1, { Custom: 6001 }] }))).toBe("TRADE_REVERTED")
    expect(tradeFailureCode(buyLegFailure("InsufficientFundsForFee"))).toBe("TRADE_REVERTED")
  })

  it("a row an older version failed holds the code itself: it reads back unchanged, and means the same reason", () => {
    for (const r of TradeFailureReasons) {
      expect(tradeFailureCode(before[r])).toBe(before[r])
      expect(failureReasonOf(before[r])).toBe(r)
      expect(failureReasonOf(r)).toBe(r)
      // The machine's view of the old row keeps what it recorded (nothing is rewritten on read).
      expect(stateOf(failedRow(before[r]))).toMatchObject({ _tag: "failed", reason: before[r] })
    }
    // Nothing recorded is lost: an unknown value passes through, and is read as a revert.
    expect(tradeFailureCode("SOMETHING_ELSE")).toBe("SOMETHING_ELSE")
    expect(tradeFailureCode("constructor")).toBe("constructor")
    expect(failureReasonOf(null)).toBe("reverted")
  })

  it("the trade read answers an old row and a new row with the same bytes", () => {
    for (const r of TradeFailureReasons) {
      const old = tradeAnswer(tradeView(failedRow(before[r]), true))
      const now = tradeAnswer(tradeView(failedRow(r), true))
      expect(old.errorCode).toBe(before[r])
      expect(JSON.stringify(now)).toBe(JSON.stringify(old))
    }
    const page = tradeAnswer({ trades: [tradeView(failedRow("never_landed"), false), tradeView({ ...failedRow(null), state: "executed", amountOutRaw: 42n }, false)], nextCursor: null })
    expect(page.trades.map((t) => t.errorCode)).toEqual(["NEVER_LANDED", null])
    const accepted = { accepted: true, clientTradeId: "t-1", status: "sending", jobUrl: "/x" } as const
    expect(tradeAnswer(accepted)).toBe(accepted)
  })

  it("a failed trade's refusal answers the same code, status and details for an old row and a new row", () => {
    const codes = { slippage_exceeded: "SLIPPAGE_EXCEEDED", reverted: "TRADE_REVERTED", never_landed: "SWAP_FAILED" } as const
    for (const r of TradeFailureReasons) {
      const old = wire(failedRow(before[r]))
      expect(old.code).toBe(codes[r])
      expect(old.extra).toMatchObject({ errorCode: before[r], signature: "Sig1", clientTradeId: "t-1", minAmountOut: "40" })
      expect(wire(failedRow(r))).toEqual(old)
    }
  })

  it("the bundle record answers a leg's reason as its code, and a state an older version stored unchanged", () => {
    const sent: BundleEvent[] = [
      { _tag: "SubmitBegun", atMs: 1 },
      { _tag: "Signing", atMs: 1 },
      { _tag: "Sent", launchSignature: "L", buySignatures: ["B1", "B2", "B3"], atMs: 1 },
      { _tag: "EngineLanded", slot: 42n, legErrors: [null, "slippage_exceeded", "reverted"], atMs: 2 }
    ]
    const buys = ["t1", "t2", "t3"].map((clientTradeId) => ({ clientTradeId, amountInRaw: 5n, expectedOutRaw: 9n, minAmountOutRaw: 8n }))
    const now = sent.reduce((s, e) => step(s, e)[0], initialBundle("b1", 600_000, buys))
    const old: BundleState = { ...now, buys: now.buys.map((b) => (b.errorCode === null ? b : { ...b, errorCode: b.errorCode === "reverted" ? "TRADE_REVERTED" : "SLIPPAGE_EXCEEDED" })) }
    const id = { bundleId: "b1", clientLaunchId: "c1", mint: "M1", keyPrefix: "abcd1234" }
    const answered = bundleAnswer(bundleRecord(id, now))
    expect(answered.buys.map((b) => b.errorCode)).toEqual([null, "SLIPPAGE_EXCEEDED", "TRADE_REVERTED"])
    expect(answered.chainOutcome?.revertedLegs.map((l) => l.errorCode)).toEqual(["SLIPPAGE_EXCEEDED", "TRADE_REVERTED"])
    expect(JSON.stringify(bundleAnswer(bundleRecord(id, old)))).toBe(JSON.stringify(answered))
  })
})
