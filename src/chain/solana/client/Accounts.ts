/**
 * Account metas for client builders: a signer slot takes either a kit `TransactionSigner` (the
 * meta carries it, so `signTransactionMessageWithSigners` signs) or a bare address (someone else
 * signs later, e.g. a wallet provider or the ledger's own faucet).
 */
import { AccountRole, type AccountMeta, type Address, type TransactionSigner } from "@solana/kit"

export type SignerInput = Address | TransactionSigner

export type AnyAccountMeta = AccountMeta | (AccountMeta & { readonly signer: TransactionSigner })

export const addressOf = (s: SignerInput): Address => (typeof s === "string" ? s : s.address)

/** A base58 address from text as kit's `address()` checks it (throws on a bad one), the check memoized (`program/internal/bytes.ts`). */
export { checkedAddress, isCheckedAddress } from "../program/internal/bytes.js"

export const signerMeta = (s: SignerInput, writable: boolean): AnyAccountMeta => {
  const role = writable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER
  return typeof s === "string" ? { address: s, role } : { address: s.address, role, signer: s }
}

export const writable = (a: Address): AccountMeta => ({ address: a, role: AccountRole.WRITABLE })
export const readonly = (a: Address): AccountMeta => ({ address: a, role: AccountRole.READONLY })
