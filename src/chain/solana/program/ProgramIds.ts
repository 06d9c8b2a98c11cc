/**
 * Every program and well-known address the Solana side of curvestream names. The builtin and SPL
 * ids are the real mainnet ids, so kit-built instructions and explorers read our transactions as
 * they would read mainnet's. `SVC_CURVE_PROGRAM_ID` is ours (a valid 32-byte address; see
 * docs/solana-program.md). Nothing here is derived at runtime: these are constants.
 */
import { address, type Address } from "@solana/kit"
import { STAKED_SVC_MINT, SVC_MINT, USDC_MINT, WSOL_MINT } from "../../../domain/QuotePairs.js"

export const SYSTEM_PROGRAM_ID: Address = address("11111111111111111111111111111111")
export const TOKEN_PROGRAM_ID: Address = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
export const ASSOCIATED_TOKEN_PROGRAM_ID: Address = address("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
export const COMPUTE_BUDGET_PROGRAM_ID: Address = address("ComputeBudget111111111111111111111111111111")
/** svc-curve: bonding curves, their migration, and the graduated venue (`dex-solana-v2`) pools. */
export const SVC_CURVE_PROGRAM_ID: Address = address("SVCcurve11111111111111111111111111111111111")
/** svc-stake: the platform token's staking pool, its withdrawals and the reward distributor. */
export const SVC_STAKE_PROGRAM_ID: Address = address("SVCstake11111111111111111111111111111111111")

/** Loaders that own program accounts, as on mainnet. */
export const NATIVE_LOADER_ID: Address = address("NativeLoader1111111111111111111111111111111")
export const BPF_LOADER_2_ID: Address = address("BPFLoader2111111111111111111111111111111111")
export const BPF_LOADER_UPGRADEABLE_ID: Address = address("BPFLoaderUpgradeab1e11111111111111111111111")

export const WSOL_MINT_ADDRESS: Address = address(WSOL_MINT)
export const USDC_MINT_ADDRESS: Address = address(USDC_MINT)
export const SVC_MINT_ADDRESS: Address = address(SVC_MINT)
export const STAKED_SVC_MINT_ADDRESS: Address = address(STAKED_SVC_MINT)

/** The all-zero address: an empty `Pubkey` field in our account layouts decodes to `null`. */
export const ZERO_ADDRESS: Address = SYSTEM_PROGRAM_ID
