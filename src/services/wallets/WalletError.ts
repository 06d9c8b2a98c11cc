/**
 * How the wallet service refuses (spec document 2: 2.3, the rebind rules of 4.1; the payer rules
 * of launch document 2.3), as tagged errors with a `reason`, one per part of the service so a
 * caller branches on what it called: `WalletError` (the account's rows: link, revoke, update,
 * import, TEE creation), `PayerError` (whether a wallet may pay a self-signed build),
 * `SignClaimError` (build claims and the sign relay) and `RebindError`. The service decides what
 * happened; `api/ErrorTable.ts` decides what the wire says. A storage failure anywhere in the
 * service is decided once, at the service's edge: `WalletError` with reason `storage` (logged).
 */
import { Schema } from "effect"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"

export const WalletErrorReason = Schema.Literal(
  /** The plan does not include linked, imported or TEE wallets (`details.requiredPlans`). */
  "plan_required",
  /** The address has an active row, on this or another account (`details.chain`, `details.address`). */
  "already_linked",
  /** The account holds its plan's maximum of active wallets (`details.limit`). */
  "limit_reached",
  /** No such wallet (or no active one) on this account. */
  "not_found",
  /** The link signature does not prove control of the address (`details.challenge`). */
  "ownership_unproven",
  /** `allowLaunch` was sent for a wallet that is not a TEE wallet. */
  "allow_launch_not_tee",
  /** Import submit: no open init (none, expired, or already submitted). */
  "no_open_import",
  /** Import submit: the ciphertext opens under no open init's key. */
  "import_not_opened",
  /** Import submit: the plaintext is not a key of the init's chain. */
  "import_not_a_key",
  /** Import submit: the key does not control the address given at init. */
  "import_address_mismatch",
  /** TEE creation: the key to bind is unknown, revoked, expired, a test key or lacks swap:write. */
  "key_not_found",
  "key_revoked",
  "key_expired",
  "key_test",
  "key_missing_scope",
  /** Storage failed (any method); nothing the rules decided. */
  "storage"
)
export type WalletErrorReason = typeof WalletErrorReason.Type

export class WalletError extends Schema.TaggedError<WalletError>()("WalletError", { reason: WalletErrorReason, ...failureFields }) {}

export const walletError = failureOf<WalletError, WalletErrorReason>(WalletError)

/** Why a wallet cannot pay a self-signed build (the `linkedWalletId` of the build). */
export const PayerErrorReason = Schema.Literal("not_found", "revoked", "wallet_not_signable", "chain_mismatch", "key_not_bound", "launch_not_allowed")
export type PayerErrorReason = typeof PayerErrorReason.Type

export class PayerError extends Schema.TaggedError<PayerError>()("PayerError", { reason: PayerErrorReason, ...failureFields }) {}

export const payerError = failureOf<PayerError, PayerErrorReason>(PayerError)

export const SignClaimErrorReason = Schema.Literal(
  /** recordBuilt: the built transaction does not decode. */
  "build_undecodable",
  /** Sign relay: no active wallet with this id on the account. */
  "wallet_not_found",
  /** An attribution-only link cannot sign. */
  "wallet_not_signable",
  /** The TEE wallet is bound to another key. */
  "key_not_bound",
  /** The transaction does not decode. */
  "undecodable",
  /** No open claim matches (unknown, expired, used, altered, or lost a race). */
  "no_matching_claim",
  /** An imported wallet's authorizationSignature is missing or not by its signer key. */
  "signer_authorization_failed",
  /** The key no longer holds a scope the build requires (`details.scope`). */
  "scope_missing",
  /** The provider refused to sign: the wallet's policy (`details.reason`: the rule, `details.instruction`). */
  "policy_denied",
  "not_embedded",
  "not_delegated",
  "delegation_revoked",
  "not_a_signer",
  "bad_transaction",
  "provider_wallet_not_found",
  /** The provider could not reach the wallet's key. */
  "key_unavailable"
)
export type SignClaimErrorReason = typeof SignClaimErrorReason.Type

export class SignClaimError extends Schema.TaggedError<SignClaimError>()("SignClaimError", { reason: SignClaimErrorReason, ...failureFields }) {}

export const signClaimError = failureOf<SignClaimError, SignClaimErrorReason>(SignClaimError)

export const RebindErrorReason = Schema.Literal(
  /** Outside 1 to 200 wallets (`details.max`, `details.count`). */
  "too_many",
  /** The target key is unknown on this account, revoked, expired, a test key or lacks swap:write. */
  "target_not_found",
  "target_revoked",
  "target_expired",
  "target_test_key",
  "target_missing_scope",
  /** A selected wallet cannot move (`details.walletId`, `details.selector`; `details.matches` when ambiguous). */
  "wallet_not_found",
  "wallet_not_tee",
  "wallet_inactive",
  "wallet_authority_not_verified",
  "wallet_ambiguous",
  /** A binding changed since the preview (`details.walletIds`, `details.current`). */
  "stale",
  /** A build is inside its claim window (`details.walletIds`, `details.retryAfter`); retryable after it. */
  "build_open",
  /** A forwarded Solana sign is not yet settled or provably expired (`details.walletIds`). */
  "forward_pending",
  /** A forwarded Hood sign is not yet settled; it never provably expires (`details.walletIds`). */
  "forward_unexpirable",
  /** The selected-scope target would pass its assignment bound (`details.max`). */
  "scope_full",
  /** A chain read for a forwarded sign failed; nothing changed; retryable. */
  "reconcile_incomplete"
)
export type RebindErrorReason = typeof RebindErrorReason.Type

export class RebindError extends Schema.TaggedError<RebindError>()("RebindError", { reason: RebindErrorReason, ...failureFields }) {}

export const rebindError = failureOf<RebindError, RebindErrorReason>(RebindError)
