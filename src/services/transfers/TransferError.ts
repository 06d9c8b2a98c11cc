/**
 * How the transfer subsystem refuses (spec document 2: 2.1 "Only Withdraw moves funds", section
 * 5 rule 7, "Transaction-limit rules"): withdrawal addresses, trusted linked wallets and the
 * transfer rail. The services decide what happened; `api/ErrorTable.ts` decides what the wire
 * says. A storage failure is decided once, at each service's edge (`storage`, logged).
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const TransferErrorReason = Schema.Literal(
  /** Adding a withdrawal address needs a signed-in session (an agent key or a device token asked). */
  "loosen_requires_session",
  /** The address is not an address of the chain (`field` names it). */
  "address_invalid",
  /** The account holds the maximum of active withdrawal addresses (`details.limit`). */
  "address_limit",
  /** No active withdrawal address with this id on the account. */
  "address_not_found",
  /** A trust batch names a wallet that is not an active linked wallet of the account (`details.walletId`). */
  "wallet_not_found",
  /** A trust batch outside 1 to `TRUST_BATCH_MAX` ids, or with a repeated id. */
  "batch_invalid",
  /** Transfer rail: the destination is neither one of the account's wallets nor an approved withdrawal address. */
  "destination_not_allowed",
  /** Transfer rail: the destination is the source wallet itself. */
  "same_wallet",
  /** Transfer rail: the key denies the embedded wallet. */
  "embedded_wallet_not_permitted",
  /** Transfer rail: the account has no embedded wallet on the chain, or agent access was never approved, or it was revoked. */
  "wallet_not_embedded",
  "wallet_not_delegated",
  "delegation_revoked",
  /** Transfer rail: the embedded wallet's signer refused (policy) or failed. */
  "signing_refused",
  /** Transfer rail: the asset is not a classic SPL mint on Solana, or neither ETH, USDG nor a launched token on Hood. */
  "asset_unsupported",
  /** Transfer rail: the source cannot cover the amount, the network fee and any account it creates (`details`). */
  "insufficient_balance",
  /** Transfer rail: the same `clientTransferId` with another body. */
  "idempotency_conflict",
  /** Transfer rail: the transfer under this id failed; a new id is needed (`details.error`). */
  "transfer_failed",
  /** Transfer rail: the chain could not be read; nothing was recorded. */
  "chain_unavailable",
  /** Transfer rail: this server does not serve the chain (no Hood node configured). */
  "chain_unsupported",
  /** Transfer rail, TEE payer: the key no longer holds a scope the transfer needs (`details.scope`: `transfer:bound`). */
  "scope_missing",
  /** Transfer rail, TEE payer: `linkedWalletId` is a wallet of the account but not a TEE wallet. */
  "payer_not_tee",
  /** Transfer rail: `/transfer/submit` of an id this key never built with a TEE payer. */
  "transfer_not_found",
  /** Transfer rail: the signed transaction is not exactly the built one with the TEE wallet's valid signature (nothing was sent), or the transfer was signed server-side. */
  "wrong_transaction",
  /** Storage failed; nothing the rules decided. */
  "storage"
)
export type TransferErrorReason = typeof TransferErrorReason.Type

export class TransferError extends Schema.TaggedError<TransferError>()("TransferError", { reason: TransferErrorReason, ...failureFields }) {}

export const transferError = failureOf<TransferError, TransferErrorReason>(TransferError)
