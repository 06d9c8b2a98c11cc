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
 */
export type DestinationKind = "embedded" | "linked" | "imported" | "tee" | "withdrawal_address"

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
  | { readonly _tag: "Allowed"; readonly destinationClass: "approved"; readonly destinationKind: "withdrawal_address"; readonly walletId: null }
  | { readonly _tag: "Refused"; readonly reason: "same_wallet" | "destination_not_allowed" }

export const classifyDestination = (f: DestinationFacts): Destination => {
  if (f.destinationKey === f.sourceKey) return { _tag: "Refused", reason: "same_wallet" }
  const own = f.ownWallets.find((w) => w.addressKey === f.destinationKey)
  if (own !== undefined) return { _tag: "Allowed", destinationClass: "own", destinationKind: own.kind, walletId: own.walletId }
  if (f.approvedId !== null) return { _tag: "Allowed", destinationClass: "approved", destinationKind: "withdrawal_address", walletId: null }
  return { _tag: "Refused", reason: "destination_not_allowed" }
}
