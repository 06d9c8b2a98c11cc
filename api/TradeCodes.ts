/**
 * The trade rail's failure codes, owned by the API (beside `api/LaunchCodes.ts`, the same pattern).
 * The trade services and the chain speak reasons only: a failed trade row records the
 * `TradeFailureReason` it failed with (`agent_trades.error_code`), an atomic bundle's buy leg the
 * `BuyFailure` its own transaction failed with. This module turns them into the words on the wire:
 *
 * - `TradeFailureCode`: the trade row code each reason answers (spec 2.8, 7; `NEVER_LANDED` is this
 *   server's row code for a transaction that can no longer land, docs/decisions.md "Trade rail");
 * - `tradeFailureCode`: the `errorCode` of a trade read, of a failed trade's refusal `details`, and
 *   of a bundle record's buy legs, from what was recorded. Rows and bundle states written before
 *   the rail recorded reasons hold the code itself: a recorded value that is not a reason passes
 *   through unchanged (docs/decisions.md "Trade and bundle-leg failure codes decided in api/").
 *
 * No webhook event carries a trade's failure code (`trade.executed` is sent for executed trades
 * only), so unlike launches no code is injected into the services.
 */
import type { ErrorCode } from "../src/domain/ErrorCodes.js"
import type { BundleView } from "../src/services/launch/atomic/BundleViews.js"
import type { TradeFailureReason } from "../src/services/trade/TradeMachine.js"

/** The trade row code of each failure reason (a buy leg's `BuyFailure` is the same set but `never_landed`). */
export const TradeFailureCode: { readonly [R in TradeFailureReason]: ErrorCode | "NEVER_LANDED" } = {
  slippage_exceeded: "SLIPPAGE_EXCEEDED",
  reverted: "TRADE_REVERTED",
  never_landed: "NEVER_LANDED"
}

/**
 * The `errorCode` of a failed trade or buy leg, from what it recorded: its reason's code, or, for
 * a row an older version wrote (the code itself), the value as recorded.
 */
export const tradeFailureCode = (recorded: string): string => (Object.hasOwn(TradeFailureCode, recorded) ? TradeFailureCode[recorded as TradeFailureReason] : recorded)

/** `tradeFailureCode` over a nullable recorded value (null stays null). */
const codeOf = <T extends string | null>(recorded: T): T => (recorded === null ? recorded : (tradeFailureCode(recorded) as T))

/**
 * A trade answer as the routes write it: each trade's `errorCode` in the spec's words (a view, a
 * built view, a page of views; an answer without trades is unchanged).
 */
export const tradeAnswer = <A extends object>(answer: A): A => {
  if ("errorCode" in answer && (typeof answer.errorCode === "string" || answer.errorCode === null)) {
    return { ...answer, errorCode: codeOf(answer.errorCode) }
  }
  if ("trades" in answer && Array.isArray(answer.trades)) return { ...answer, trades: answer.trades.map((t: object) => tradeAnswer(t)) }
  return answer
}

/** A failed trade's refusal `details` (its recorded `errorCode` beside the signature) in the spec's words. */
export const tradeRefusalDetails = (details: { readonly [k: string]: unknown }): { readonly [k: string]: unknown } =>
  typeof details["errorCode"] === "string" ? { ...details, errorCode: tradeFailureCode(details["errorCode"]) } : details

/** The bundle record (launch spec 2.8) as the bundle route answers it: each buy leg's `errorCode` in the spec's words. */
export const bundleAnswer = (bundle: BundleView): BundleView => ({
  ...bundle,
  buys: bundle.buys.map((b) => ({ ...b, errorCode: codeOf(b.errorCode) })),
  chainOutcome:
    bundle.chainOutcome === null
      ? null
      : { ...bundle.chainOutcome, revertedLegs: bundle.chainOutcome.revertedLegs.map((l) => ({ ...l, errorCode: tradeFailureCode(l.errorCode) })) }
})
