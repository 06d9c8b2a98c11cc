/** The wallet provider's refusals and failures (`WalletProvider.ts`); mapped once by `WalletRefusal.ts`. */
import { Schema } from "effect"

export class WalletProviderError extends Schema.TaggedError<WalletProviderError>()("WalletProviderError", {
  reason: Schema.Literal(
    "not_embedded",
    "not_delegated",
    "delegation_revoked",
    "policy_denied",
    "not_a_signer",
    "not_found",
    "bad_transaction",
    "key_unavailable"
  ),
  message: Schema.String,
  /** Policy denials: which rule (`ceiling`, `denied_instruction`, `undecodable`, `default_deny`). */
  rule: Schema.optional(Schema.String),
  instruction: Schema.optional(Schema.String)
}) {}
