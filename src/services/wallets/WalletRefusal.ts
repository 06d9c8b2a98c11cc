/**
 * What a wallet provider's refusal means to a service that asked it to resolve a wallet or sign:
 * decided once, here, for every path and chain (headless and atomic launches on Solana and Hood,
 * the sign relay, the wiring's delegation read). A caller turns the refusal's `reason` into its
 * own error's reason with a total map, and takes `retryable` and `message` as they are, so the
 * same provider failure answers the same on every path.
 *
 * Invariants:
 * - The four wallet-access answers (`not_embedded`, `not_delegated`, `delegation_revoked`,
 *   `policy_denied`) pass through; everything else the provider can say (the key cannot be
 *   opened, the wallet is not the transaction's signer, the bytes do not decode, the provider
 *   wallet is gone) is `signing_failed`: nothing was signed, and trying again may work, because
 *   the engine built the transaction and a key outage passes.
 * - A `signing_failed` refusal keeps what the provider said (`cause`), for the sign relay, whose
 *   spec rows name it.
 */
import type { WalletProviderError } from "./WalletProvider.js"

export const WalletRefusalReasons = ["not_embedded", "not_delegated", "delegation_revoked", "policy_denied", "signing_failed"] as const
export type WalletRefusalReason = (typeof WalletRefusalReasons)[number]

/** What the provider said when it could not sign. */
export type SigningFailureCause = Exclude<WalletProviderError["reason"], WalletRefusalReason>

interface RefusalMembers {
  readonly message: string
  readonly retryable: boolean
  /** `policy_denied`: the rule that denied (`ceiling`, `denied_instruction`, `undecodable`, `default_deny`). */
  readonly rule?: string
  /** `policy_denied` by an instruction rule: the instruction. */
  readonly instruction?: string
}

export type WalletRefusal =
  | (RefusalMembers & { readonly reason: Exclude<WalletRefusalReason, "signing_failed"> })
  | (RefusalMembers & { readonly reason: "signing_failed"; readonly cause: SigningFailureCause })

/** Per reason: whether trying again may succeed (an owner can approve or restore access; an outage passes). */
export const WalletRefusalRetryable: { readonly [R in WalletRefusalReason]: boolean } = {
  not_embedded: false,
  not_delegated: true,
  delegation_revoked: true,
  policy_denied: false,
  signing_failed: true
}

/** The one reading of a provider's refusal. Pure. */
export const walletRefusal = (e: WalletProviderError): WalletRefusal => {
  const policy = {
    ...(e.rule !== undefined ? { rule: e.rule } : {}),
    ...(e.instruction !== undefined ? { instruction: e.instruction } : {})
  }
  switch (e.reason) {
    case "not_embedded":
    case "not_delegated":
    case "delegation_revoked":
    case "policy_denied":
      return { reason: e.reason, message: e.message, retryable: WalletRefusalRetryable[e.reason], ...policy }
    case "key_unavailable":
    case "not_a_signer":
    case "not_found":
    case "bad_transaction":
      return { reason: "signing_failed", cause: e.reason, message: `${e.reason}: ${e.message}`, retryable: WalletRefusalRetryable.signing_failed }
  }
}

/** The refusals that mean "no agent access on this chain" (not embedded, never delegated, revoked). */
export const isNoAgentAccess = (r: WalletRefusal): boolean =>
  r.reason === "not_embedded" || r.reason === "not_delegated" || r.reason === "delegation_revoked"
