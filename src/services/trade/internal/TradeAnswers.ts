/**
 * What a stored trade answers (issue 28): executed (its view), failed (its refusal, the same on
 * every replay) or still in flight (`pending`, awaited first while its driver settles it); and the
 * refusals the rail maps from the signer and the venue. A repeated id with a changed body is refused.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import type { WalletProviderError } from "../../wallets/WalletProvider.js"
import { type TradeError, tradeError } from "../TradeError.js"
import { type TradeCaller, type TradeRequest, tradeBodyHash } from "../TradeInputs.js"
import { failureReasonOf } from "../TradeMachine.js"
import type { TradeRow } from "../TradeStore.js"
import { type TradeView, tradeView } from "../TradeViews.js"
import type { VenueRefusal } from "../VenueQuote.js"
import type { TradeContext } from "./TradeContext.js"

export const tradeJobUrl = (clientTradeId: string): string => `/api/v1/trade/agent/trades/${encodeURIComponent(clientTradeId)}`

export const fromProvider = (e: WalletProviderError): TradeError => {
  switch (e.reason) {
    case "not_embedded":
      return tradeError("agent_wallet_missing", e.message)
    case "not_delegated":
      return tradeError("agent_wallet_not_delegated", e.message)
    case "delegation_revoked":
      return tradeError("delegation_revoked", e.message)
    case "policy_denied":
      return tradeError("spend_policy_denied", e.message, { details: e.rule === undefined ? {} : { reason: e.rule } })
    default:
      return tradeError("chain_unavailable", `the signer is unavailable: ${e.reason}: ${e.message}`, { retryable: true })
  }
}

export const refusedQuote = (reason: VenueRefusal): TradeError => {
  switch (reason) {
    case "zero_amount":
      return tradeError("zero_amount", "amountIn buys nothing after the venue fee", { field: "amountIn" })
    case "exceeds_curve_supply":
      return tradeError("exceeds_curve_supply", "amountIn exceeds the tokens the curve has sold", { field: "amountIn" })
    case "exceeds_pool_liquidity":
      return tradeError("exceeds_pool_liquidity", "amountIn is more than the pool can fill", { field: "amountIn" })
    case "curve_complete":
      return tradeError("market_not_tradable", "The curve is complete; trading continues on its pool once migrated", { details: { reason: "solana_graduating" } })
  }
}

/** The refusal a failed trade answers, now and on every replay. */
export const failedAnswer = (row: TradeRow): TradeError => {
  const details = { clientTradeId: row.clientTradeId, signature: row.signature, errorCode: row.errorCode, minAmountOut: row.minAmountOutRaw.toString() }
  // What the row recorded (its reason, or an older version's code) goes out as recorded: the API words it.
  switch (failureReasonOf(row.errorCode)) {
    case "slippage_exceeded":
      return tradeError("trade_slippage", `The market moved past minAmountOut ${row.minAmountOutRaw}; the chain refused the trade and nothing moved. Quote again and use a new clientTradeId`, { details })
    case "never_landed":
      return tradeError("never_landed", `The trade's transaction never landed (${row.chain === "hood" ? "its nonce went to another transaction" : "its blockhash expired"}); nothing moved. Use a new clientTradeId`, { details })
    case "reverted":
      return tradeError("trade_reverted", `The trade failed on chain: ${row.error ?? "reverted"}. Use a new clientTradeId`, { details })
  }
}

export type TradeAnswers = ReturnType<typeof makeTradeAnswers>

export const makeTradeAnswers = (ctx: TradeContext) => {
  const { store } = ctx
  const pending = (row: TradeRow) =>
    tradeError("pending", `Trade ${row.clientTradeId} is in flight (signature ${row.signature}); retry the same clientTradeId to read its outcome`, {
      retryable: true,
      details: { reason: "prior_attempt_in_flight", signature: row.signature, jobUrl: tradeJobUrl(row.clientTradeId) }
    })

  /** The answer of a row: executed, failed (its refusal) or still in flight (pending). */
  const answerOf = (row: TradeRow, replay: boolean): Effect.Effect<TradeView, TradeError> =>
    row.state === "executed"
      ? Effect.succeed(tradeView(row, replay))
      : row.state === "failed"
        ? Effect.fail(failedAnswer(row))
        : row.state === "built"
          ? Effect.fail(
              tradeError("pending", `Trade ${row.clientTradeId} is built for payer ${row.payer} and waits for its signed transaction (/submit) or its signature (/confirm)`, {
                retryable: true,
                details: { reason: "not_sent", jobUrl: tradeJobUrl(row.clientTradeId) }
              })
            )
          : Effect.fail(pending(row))

  /** A row in flight awaited until its driver settles it (or the confirmation deadline passes: then as it stood). */
  const awaitSettled = (row: TradeRow): Effect.Effect<TradeRow, SqlError> =>
    row.state !== "sending"
      ? Effect.succeed(row)
      : awaitUntil(store.get(row.accountId, row.clientTradeId), (r) => r === undefined || r.state !== "sending", {
          what: "the trade's outcome",
          intervalMs: ctx.pollIntervalMs,
          timeoutMs: ctx.confirmTimeoutMs
        }).pipe(
          Effect.map((r) => r ?? row),
          Effect.catchTag("AwaitTimedOut", () => Effect.succeed(row))
        )

  /** A stored id: its outcome; a `sending` row is awaited (its driver settles it), never resent. */
  const replayOf = (caller: TradeCaller, request: TradeRequest): Effect.Effect<TradeView, TradeError | SqlError> =>
    Effect.gen(function* () {
      const row = yield* store.get(caller.accountId, request.clientTradeId)
      if (row === undefined) return yield* tradeError("trade_not_found", `No trade ${request.clientTradeId}`, { field: "clientTradeId" })
      if (row.bodyHash !== tradeBodyHash(request)) {
        return yield* tradeError("idempotency_conflict", "This clientTradeId was used with a different body", { details: { state: row.state } })
      }
      return yield* answerOf(yield* awaitSettled(row), true)
    })

  return { answerOf, awaitSettled, replayOf }
}
