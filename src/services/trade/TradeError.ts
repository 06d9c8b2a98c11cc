/**
 * The one failure of the trade rail (issue 28): a reason and the domain facts beside it, in the
 * shape every service failure has (`src/domain/ServiceFailure.ts`). Which spec code, HTTP status,
 * field and `retryable` answer each reason is decided once, in `api/ErrorTable.ts` (`TradeRows`);
 * the choices the spec leaves open are in docs/decisions.md "Trade rail".
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const TradeErrorReasons = [
  // The request against the market.
  "zero_amount",
  "exceeds_curve_supply",
  "exceeds_pool_liquidity",
  /** A mint not launched on this service (no svc-curve market): `details.routing.reason` `external_token`. */
  "external_token",
  "market_not_tradable",
  /** A chain whose write side this server does not run yet. */
  "chain_unsupported",
  /** The quote at build already pays less than the caller's minimum (the market moved past it). */
  "slippage_exceeded",
  // The payer.
  "embedded_wallet_not_permitted",
  "agent_wallet_missing",
  "agent_wallet_not_delegated",
  "delegation_revoked",
  "spend_policy_denied",
  "insufficient_balance",
  // Idempotency and the trade's state.
  "idempotency_conflict",
  "pending",
  "trade_not_found",
  /** A submitted or confirmed transaction that is not the built one signed by its payer (linked, tee): nothing was sent. */
  "wrong_transaction",
  /** The chain refused the trade on its minimum out (svc-curve SlippageExceeded): nothing moved. */
  "trade_slippage",
  "trade_reverted",
  "never_landed",
  "invalid_cursor",
  "chain_unavailable",
  "storage"
] as const

export type TradeErrorReason = (typeof TradeErrorReasons)[number]

export class TradeError extends Schema.TaggedError<TradeError>()("TradeError", {
  reason: Schema.Literal(...TradeErrorReasons),
  ...failureFields
}) {}

export const tradeError = failureOf<TradeError, TradeErrorReason>(TradeError)
