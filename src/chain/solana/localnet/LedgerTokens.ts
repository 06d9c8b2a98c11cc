/**
 * Token reads on an in-process `Ledger`: a wallet's associated token account and an SPL token
 * account's balance (0 when the account does not exist). Production code on the localnet (the
 * local funding faucet, the simulated staking rewards) and the localnet tests read balances this way.
 */
import type { Address } from "@solana/kit"
import { decodeSplTokenAccount } from "../program/accounts/SplTokenAccount.js"
import { findAssociatedTokenAddressSync } from "../program/Pda.js"
import type { Ledger } from "./Ledger.js"

export const tokenBalance = (ledger: Ledger, tokenAccount: Address): bigint => {
  const a = ledger.getAccount(tokenAccount)
  return a === undefined ? 0n : (decodeSplTokenAccount(a.data)?.amount ?? 0n)
}

export const ataOf = (owner: Address, mint: Address): Address => findAssociatedTokenAddressSync(owner, mint).address
