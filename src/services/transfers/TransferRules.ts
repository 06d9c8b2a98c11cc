/**
 * Where a Withdraw key may send from the account's main (embedded) wallet (spec document 2, 2.1
 * "Only Withdraw moves funds ... between the account's own wallets, to an approved withdrawal
 * address"), pure: the destination's class from the account's wallets and approvals, read by the
 * caller. Addresses are compared in their comparison form (`addressKey`: lower-case on EVM).
 *
 * - The source itself is never a destination (`same_wallet`).
 * - One of the account's own active wallets (linked, imported or TEE, or its embedded wallet on
 *   the chain) is `own`, with its kind and id.
 * - Else an active approved withdrawal address of the chain is `approved`.
 * - Anything else is refused (`destination_not_allowed`): nothing is built or signed.
 *
 * Out of the bound TEE wallet (`classifyTeeDestination`; 2.1 "out of the bound TEE wallet to its
 * pinned vault or a wallet the owner linked while signed in or marked trusted"), narrower:
 * - the wallet's pinned vault is `approved`, kind `vault`;
 * - an active linked or imported wallet of the account that a signed-in session linked, or that
 *   the owner marked trusted, is `own`, with its kind and id;
 * - nothing else: not the embedded wallet, not another TEE wallet, not an approved withdrawal
 *   address, not a wallet an agent key linked and nobody trusted (`destination_not_allowed`).
 */
export type DestinationKind = "embedded" | "linked" | "imported" | "tee" | "withdrawal_address" | "vault"

export interface OwnWallet {
  readonly addressKey: string
  readonly kind: "embedded" | "linked" | "imported" | "tee"
  /** The wallet row's id; null for the embedded wallet. */
  readonly walletId: string | null
}

export interface DestinationFacts {
  readonly sourceKey: string
  readonly destinationKey: string
  readonly ownWallets: ReadonlyArray<OwnWallet>
  /** The approved withdrawal address's id when the destination is one (active, same chain). */
  readonly approvedId: string | null
}

export type Destination =
  | { readonly _tag: "Allowed"; readonly destinationClass: "own"; readonly destinationKind: OwnWallet["kind"]; readonly walletId: string | null }
  | { readonly _tag: "Allowed"; readonly destinationClass: "approved"; readonly destinationKind: "withdrawal_address" | "vault"; readonly walletId: null }
  | { readonly _tag: "Refused"; readonly reason: "same_wallet" | "destination_not_allowed" }

export const classifyDestination = (f: DestinationFacts): Destination => {
  if (f.destinationKey === f.sourceKey) return { _tag: "Refused", reason: "same_wallet" }
  const own = f.ownWallets.find((w) => w.addressKey === f.destinationKey)
  if (own !== undefined) return { _tag: "Allowed", destinationClass: "own", destinationKind: own.kind, walletId: own.walletId }
  if (f.approvedId !== null) return { _tag: "Allowed", destinationClass: "approved", destinationKind: "withdrawal_address", walletId: null }
  return { _tag: "Refused", reason: "destination_not_allowed" }
}

/** A linked or imported wallet of the account as a TEE source's destination. */
export interface TeeReachable {
  readonly addressKey: string
  readonly kind: "linked" | "imported"
  readonly walletId: string
  /** Linked by a signed-in session (`wallets.linked_by`). */
  readonly linkedBySession: boolean
  /** Marked trusted by the owner (`wallets.trusted_at`). */
  readonly trusted: boolean
}

export interface TeeDestinationFacts {
  readonly sourceKey: string
  readonly destinationKey: string
  /** The TEE wallet's pinned vault (comparison form); null when none is pinned. */
  readonly vaultKey: string | null
  /** The account's active linked and imported wallets on the chain. */
  readonly wallets: ReadonlyArray<TeeReachable>
}

export const classifyTeeDestination = (f: TeeDestinationFacts): Destination => {
  if (f.destinationKey === f.sourceKey) return { _tag: "Refused", reason: "same_wallet" }
  if (f.vaultKey !== null && f.vaultKey === f.destinationKey) return { _tag: "Allowed", destinationClass: "approved", destinationKind: "vault", walletId: null }
  const w = f.wallets.find((x) => x.addressKey === f.destinationKey)
  if (w !== undefined && (w.linkedBySession || w.trusted)) return { _tag: "Allowed", destinationClass: "own", destinationKind: w.kind, walletId: w.walletId }
  return { _tag: "Refused", reason: "destination_not_allowed" }
}
