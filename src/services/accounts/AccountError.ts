/**
 * Every way the accounts subsystem refuses or fails (the admin Max grant, turning agent features
 * on, device authorization and device management; spec document 2, sections 2.2, 5.3), as one
 * tagged error with a `reason`. The device-flow poll refusals are RFC 8628's error names, which
 * the spec's `reason` member carries on the wire. `api/ErrorTable.ts` maps each reason.
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const AccountErrorReason = Schema.Literal(
  /** The admin grant names an account that does not exist. */
  "account_not_found",
  /** Agent features cannot be turned off through the API. */
  "disable_refused",
  /** Agent features need a linked Solana wallet first. */
  "solana_wallet_missing",
  /** The wallet side could not answer; nothing changed. */
  "wallets_unreachable",
  /** No live device request with that user code. */
  "user_code_not_found",
  /** The device request is no longer pending. */
  "already_decided",
  /** No device with that prefix on this account. */
  "device_not_found",
  /** Unknown or already exchanged device code. */
  "invalid_grant",
  /** The person denied the request. */
  "access_denied",
  /** The device code expired. */
  "expired_token",
  /** Not approved yet; poll again. */
  "authorization_pending",
  /** Polled faster than the interval. */
  "slow_down",
  "storage"
)
export type AccountErrorReason = typeof AccountErrorReason.Type

export class AccountError extends Schema.TaggedError<AccountError>()("AccountError", { reason: AccountErrorReason, ...failureFields }) {}

export const accountError = failureOf<AccountError, AccountErrorReason>(AccountError)
