/**
 * A `wallets` row built in memory for the wallet rules' unit tests: an active, verified-active
 * Solana TEE wallet bound to `kid-1`, with every column overridable.
 */
import type { WalletRow } from "../../src/services/wallets/internal/WalletRows.js"

export const WALLET_ROW_ADDRESS = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"

export const walletRow = (id: string, more: Partial<WalletRow> = {}): WalletRow => ({
  id,
  account_id: "acct",
  chain: "solana",
  address: WALLET_ROW_ADDRESS,
  address_key: WALLET_ROW_ADDRESS,
  kind: "tee",
  label: null,
  allow_launch: false,
  bound_key_id: "kid-1",
  bound_key_prefix: "prefix01",
  provider_wallet_id: `pw-${id}`,
  policy_id: `pol-${id}`,
  policy_neutralized: null,
  vault_destination: null,
  authority_status: "verified_active",
  created_at: new Date(0),
  revoked_at: null,
  ...more
})
