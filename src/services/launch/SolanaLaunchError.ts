/**
 * Why a Solana headless launch did not produce a confirmed launch. One error, a `reason` union.
 * `definitive` tells the ledger what it may do: true means nothing was sent, or what was sent can
 * never create the curve (refused, reverted, blockhash expired), so the attempt may be failed and
 * its cap slot refunded; false (`confirmation_timeout` only) means the transaction may still land,
 * so the row stays in flight and keeps its slot (spec 3.1). No HTTP and no spec codes here:
 * `LaunchError.fromSolana` gives each reason its launch reason, which `api/LaunchCodes.ts` answers.
 */
import { Schema } from "effect"
import type { WalletProviderError } from "../wallets/WalletProvider.js"
import { type WalletRefusalReason, walletRefusal } from "../wallets/WalletRefusal.js"

export const SolanaLaunchFailureReason = Schema.Literal(
  /** The serialized launch is over 1,232 bytes; carries `txBytes`, `overBy`, `maxNameBytes`. */
  "transaction_too_large",
  /** The dev buy fills nothing on this curve (its amount after the curve fee is 0). */
  "dev_buy_unfillable",
  /** Simulation (or preflight): the payer cannot cover the fee, rent, dev buy and platform fee. */
  "insufficient_owner_balance",
  /** The wallet provider: no embedded Solana wallet on the account. */
  "wallet_not_embedded",
  /** The wallet provider: agent access never approved. */
  "wallet_not_delegated",
  /** The wallet provider: delegation revoked (re-resolved at signing). */
  "delegation_revoked",
  /** The wallet's policy refused to sign (`rule`, `instruction`). */
  "policy_denied",
  /** The wallet provider could not sign (the key, the wallet, or the payer is not its signer). */
  "signing_failed",
  /** Simulation or preflight failed for another reason (`chainError`); nothing was sent. */
  "simulation_failed",
  /** The node refused the transaction outright; nothing was sent. */
  "send_refused",
  /** Reading the chain failed before anything was sent. */
  "chain_unavailable",
  /** Building (blockhash, simulation, signing) passed its deadline; nothing was sent. */
  "build_timeout",
  /** The transaction landed and failed (`chainError`); no curve. */
  "reverted",
  /** The blockhash expired without the transaction landing; it never will. */
  "expired",
  /** Confirmation passed its deadline: the transaction may still land (not definitive). */
  "confirmation_timeout"
)
export type SolanaLaunchFailureReason = typeof SolanaLaunchFailureReason.Type

export class SolanaLaunchError extends Schema.TaggedError<SolanaLaunchError>()("SolanaLaunchError", {
  reason: SolanaLaunchFailureReason,
  message: Schema.String,
  retryable: Schema.Boolean,
  definitive: Schema.Boolean,
  txBytes: Schema.optional(Schema.Number),
  overBy: Schema.optional(Schema.Number),
  maxNameBytes: Schema.optional(Schema.Number),
  /** Set once the transaction was signed (everything after signing). */
  signature: Schema.optional(Schema.String),
  mint: Schema.optional(Schema.String),
  /** The chain's error, as Solana's JSON text. */
  chainError: Schema.optional(Schema.String),
  rule: Schema.optional(Schema.String),
  instruction: Schema.optional(Schema.String)
}) {}

/** Per reason: retryable (the spec's hint) and definitive (see the class comment). */
export const SolanaLaunchReasonTraits: { readonly [R in SolanaLaunchFailureReason]: { readonly retryable: boolean; readonly definitive: boolean } } = {
  transaction_too_large: { retryable: false, definitive: true },
  dev_buy_unfillable: { retryable: false, definitive: true },
  insufficient_owner_balance: { retryable: true, definitive: true },
  wallet_not_embedded: { retryable: false, definitive: true },
  wallet_not_delegated: { retryable: true, definitive: true },
  delegation_revoked: { retryable: true, definitive: true },
  policy_denied: { retryable: false, definitive: true },
  signing_failed: { retryable: true, definitive: true },
  simulation_failed: { retryable: true, definitive: true },
  send_refused: { retryable: true, definitive: true },
  chain_unavailable: { retryable: true, definitive: true },
  build_timeout: { retryable: true, definitive: true },
  reverted: { retryable: true, definitive: true },
  expired: { retryable: true, definitive: true },
  confirmation_timeout: { retryable: true, definitive: false }
}

export const launchError = (
  reason: SolanaLaunchFailureReason,
  message: string,
  more: Partial<Omit<ConstructorParameters<typeof SolanaLaunchError>[0], "reason" | "message" | "retryable" | "definitive">> = {}
): SolanaLaunchError => new SolanaLaunchError({ reason, message, ...SolanaLaunchReasonTraits[reason], ...more })

/** The wallet refusal's reason on this chain (`WalletRefusal` decides what the provider's failure means). */
const walletReasons: { readonly [R in WalletRefusalReason]: SolanaLaunchFailureReason } = {
  not_embedded: "wallet_not_embedded",
  not_delegated: "wallet_not_delegated",
  delegation_revoked: "delegation_revoked",
  policy_denied: "policy_denied",
  signing_failed: "signing_failed"
}

/** The wallet provider's refusal to resolve or sign, as this chain's failure. */
export const fromWalletProvider = (e: WalletProviderError): SolanaLaunchError => {
  const r = walletRefusal(e)
  return launchError(walletReasons[r.reason], r.message, {
    ...(r.rule !== undefined ? { rule: r.rule } : {}),
    ...(r.instruction !== undefined ? { instruction: r.instruction } : {})
  })
}
