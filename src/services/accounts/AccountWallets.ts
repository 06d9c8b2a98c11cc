/**
 * What the key and tier services need from the wallet side (the wallet provider owns wallets,
 * delegation and TEE bindings). A port, so keys do not depend on how wallets are stored; the
 * composition root provides the wallet provider's implementation.
 *
 * Every read is live (delegation is re-resolved on every use, spec 5.4). A failure means the
 * wallet side could not answer: issuance answers `KEY_ISSUANCE_FAILED` (503, retryable) and the
 * tier falls back to what the account row alone proves.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Chain } from "../../domain/Chain.js"

export class WalletLookupFailed extends Schema.TaggedError<WalletLookupFailed>()("WalletLookupFailed", {
  message: Schema.String
}) {}

export interface BoundTeeWallets {
  readonly count: number
  /** Up to 5 wallet addresses, for display. */
  readonly sample: ReadonlyArray<string>
  /** How many of them have a vault pinned (a transfer destination with `transfer:bound`); absent: none. */
  readonly withVault?: number
}

export interface AccountWalletsShape {
  /** Chains the account has delegated agent access on (empty: none). */
  readonly delegatedChains: (accountId: string) => Effect.Effect<ReadonlyArray<Chain>, WalletLookupFailed>
  /** True when the account has a linked Solana wallet (`POST /agent/enable` needs one). */
  readonly hasSolanaWallet: (accountId: string) => Effect.Effect<boolean, WalletLookupFailed>
  /**
   * The account's eligible Solana wallets for Pro by holding, in order (primary, embedded, then
   * active linked oldest first, TEE included), without wallets another account also claims, at
   * most 200.
   */
  readonly eligibleSolanaWallets: (accountId: string) => Effect.Effect<ReadonlyArray<string>, WalletLookupFailed>
  /**
   * Accounts with at least one Solana wallet (embedded, or an active linked one), by id, after
   * `afterAccountId`, at most `limit`: the accounts a Hood staking reward is split over.
   */
  readonly solanaAccounts: (afterAccountId: string, limit: number) => Effect.Effect<ReadonlyArray<string>, WalletLookupFailed>
  /** The EVM wallet the account's EVM-chain staking reward is owed to: embedded first, then active linked oldest first. */
  readonly rewardEvmWallet: (accountId: string) => Effect.Effect<string | undefined, WalletLookupFailed>
  /** TEE wallets bound to the key (advisory effects of an access change). */
  readonly boundTeeWallets: (keyId: string) => Effect.Effect<BoundTeeWallets, WalletLookupFailed>
  /** Sign claims the key holds that are not yet consumed or expired. */
  readonly openSignClaims: (keyId: string) => Effect.Effect<number, WalletLookupFailed>
}

export class AccountWallets extends Context.Tag("curvestream/AccountWallets")<AccountWallets, AccountWalletsShape>() {}

export interface FixedWallets {
  readonly delegatedChains?: ReadonlyArray<Chain>
  readonly solanaWallets?: ReadonlyArray<string>
  readonly evmWallet?: string
  readonly boundTee?: BoundTeeWallets
  readonly openSignClaims?: number
  /** The wallet side cannot be reached for this account: every lookup fails (tests of the 503 path). */
  readonly unavailable?: boolean
}

/** The same answer for every account, for tests. `perAccount` overrides by account id. */
export const layerTest = (
  defaults: FixedWallets,
  perAccount: (accountId: string) => FixedWallets | undefined = () => undefined
): Layer.Layer<AccountWallets> => {
  const pick = (accountId: string) => ({ ...defaults, ...perAccount(accountId) })
  const answer = <A>(accountId: string, f: (w: FixedWallets) => A): Effect.Effect<A, WalletLookupFailed> => {
    const w = pick(accountId)
    return w.unavailable === true ? Effect.fail(new WalletLookupFailed({ message: "the wallet provider is unreachable" })) : Effect.succeed(f(w))
  }
  return Layer.succeed(AccountWallets, {
    delegatedChains: (a) => answer(a, (w) => w.delegatedChains ?? []),
    hasSolanaWallet: (a) => answer(a, (w) => (w.solanaWallets ?? []).length > 0),
    eligibleSolanaWallets: (a) => answer(a, (w) => (w.solanaWallets ?? []).slice(0, 200)),
    // One account in fixed mode: the wallets are everyone's, so no account list to split over.
    solanaAccounts: () => Effect.succeed([]),
    rewardEvmWallet: (a) => answer(a, (w) => w.evmWallet),
    boundTeeWallets: () => Effect.succeed(defaults.boundTee ?? { count: 0, sample: [] }),
    openSignClaims: () => Effect.succeed(defaults.openSignClaims ?? 0)
  })
}
