/**
 * Every way the key subsystem refuses or fails (spec document 2, sections 2.1, 3.1, 3.2, 4.1),
 * as one tagged error with a `reason`. The service decides what happened; `api/ErrorTable.ts`
 * decides what the wire says. A storage failure is decided here too: issuance reads it as
 * `issuance_storage` (the spec's retryable issuance failure), an access commit as
 * `access_unavailable`, everything else as `storage`.
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const KeyErrorReason = Schema.Literal(
  /** The credential's account row is gone. */
  "account_gone",
  /** Agent features are off for the account. */
  "agent_features_off",
  /** No chain has delegated agent access. */
  "not_delegated",
  /** The wallet side could not say which chains are delegated; nothing was issued. */
  "wallets_unreachable",
  /** Storage failed while issuing; nothing was issued. */
  "issuance_storage",
  /** The account already holds the maximum of active keys. */
  "active_key_limit",
  /** No key with that prefix on this account. */
  "not_found",
  "revoked",
  "expired",
  /** A partner key cannot change its access level. */
  "partner_key",
  /** The scopes changed since the preview (`details.currentScopes`). */
  "access_stale",
  /** An agent key tried to widen its access or loosen a cap. */
  "loosen_requires_session",
  /** An access change could not be verified or recorded; nothing changed. */
  "access_unavailable",
  /** Amount plus fee over the key's per-asset cap (`details.spendLimit`). */
  "spend_limit_exceeded",
  /** The key's txLimit would be exceeded (`retryable` when the window resets). */
  "tx_limit_reached",
  /** The key is paused by its owner and this route is one a paused key may not use (docs/decisions.md). */
  "paused",
  /** Storage failed outside issuance and access changes. */
  "storage"
)
export type KeyErrorReason = typeof KeyErrorReason.Type

export class KeyError extends Schema.TaggedError<KeyError>()("KeyError", { reason: KeyErrorReason, ...failureFields }) {}

export const keyError = failureOf<KeyError, KeyErrorReason>(KeyError)
