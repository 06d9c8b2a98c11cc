/**
 * Solana's rent-exemption minimum: (128 + dataLen) · 3480 lamports/byte-year · 2 years
 * = (128 + dataLen) · 6960. Every account the ledger keeps with lamports > 0 is at or above it.
 */
export const ACCOUNT_STORAGE_OVERHEAD_BYTES = 128n
export const LAMPORTS_PER_BYTE_YEAR = 3_480n
export const EXEMPTION_THRESHOLD_YEARS = 2n

export const minimumBalanceForRentExemption = (dataLen: number): bigint =>
  (ACCOUNT_STORAGE_OVERHEAD_BYTES + BigInt(dataLen)) * LAMPORTS_PER_BYTE_YEAR * EXEMPTION_THRESHOLD_YEARS

export const LAMPORTS_PER_SOL = 1_000_000_000n
