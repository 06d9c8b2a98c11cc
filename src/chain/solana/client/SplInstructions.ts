/**
 * Instruction builders for the System, SPL Token and Associated Token Account programs, with the
 * real layouts (System: u32 discriminator; Token: u8). Synchronous; the ATA address is passed in
 * (derive it with `findAssociatedTokenAddress`, memoized, or `findAssociatedTokenAddressSync` in
 * program/Pda.ts: the same derivation, pinned equal to kit's `getProgramDerivedAddress`).
 */
import type { Address, Instruction } from "@solana/kit"
import { ByteWriter } from "../program/internal/bytes.js"
import { findAssociatedTokenAddressSync } from "../program/Pda.js"
import { ASSOCIATED_TOKEN_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../program/ProgramIds.js"
import { readonly, type SignerInput, signerMeta, writable } from "./Accounts.js"

const ATA_CACHE_MAX = 10_000
const ataCache = new Map<string, Address>()

/** The ATA of `owner` for `mint`, derived synchronously (see program/Pda.ts) and memoized in a bounded map. Throws on a key that is not an address. */
export const associatedTokenAddressOf = (owner: Address, mint: Address): Address => {
  const key = `${owner}:${mint}`
  const hit = ataCache.get(key)
  if (hit !== undefined) return hit
  const found = findAssociatedTokenAddressSync(owner, mint).address
  if (ataCache.size >= ATA_CACHE_MAX) ataCache.clear()
  ataCache.set(key, found)
  return found
}

/** `associatedTokenAddressOf` as a promise (a failure rejects it). */
export const findAssociatedTokenAddress = (owner: Address, mint: Address): Promise<Address> =>
  new Promise<Address>((resolve) => resolve(associatedTokenAddressOf(owner, mint)))

// --- System ----------------------------------------------------------------------------------

export const getTransferSolInstruction = (i: { from: SignerInput; to: Address; lamports: bigint }): Instruction => ({
  programAddress: SYSTEM_PROGRAM_ID,
  accounts: [signerMeta(i.from, true), writable(i.to)],
  data: new ByteWriter(12).u32(2).u64(i.lamports).done()
})

export const getCreateAccountInstruction = (i: {
  payer: SignerInput
  newAccount: SignerInput
  lamports: bigint
  space: number
  owner: Address
}): Instruction => ({
  programAddress: SYSTEM_PROGRAM_ID,
  accounts: [signerMeta(i.payer, true), signerMeta(i.newAccount, true)],
  data: new ByteWriter(52).u32(0).u64(i.lamports).u64(BigInt(i.space)).address(i.owner).done()
})

// --- SPL Token -------------------------------------------------------------------------------

const amountData = (tag: number, amount: bigint, decimals?: number) => {
  const w = new ByteWriter(decimals === undefined ? 9 : 10).u8(tag).u64(amount)
  if (decimals !== undefined) w.u8(decimals)
  return w.done()
}

export const getInitializeMint2Instruction = (i: {
  mint: Address
  decimals: number
  mintAuthority: Address
  freezeAuthority?: Address
}): Instruction => {
  const w = new ByteWriter(i.freezeAuthority === undefined ? 35 : 67).u8(20).u8(i.decimals).address(i.mintAuthority)
  if (i.freezeAuthority === undefined) w.u8(0)
  else w.u8(1).address(i.freezeAuthority)
  return { programAddress: TOKEN_PROGRAM_ID, accounts: [writable(i.mint)], data: w.done() }
}

export const getInitializeAccount3Instruction = (i: { account: Address; mint: Address; owner: Address }): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.account), readonly(i.mint)],
  data: new ByteWriter(33).u8(18).address(i.owner).done()
})

export const getTokenTransferInstruction = (i: {
  source: Address
  destination: Address
  authority: SignerInput
  amount: bigint
}): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.source), writable(i.destination), signerMeta(i.authority, false)],
  data: amountData(3, i.amount)
})

export const getTokenTransferCheckedInstruction = (i: {
  source: Address
  mint: Address
  destination: Address
  authority: SignerInput
  amount: bigint
  decimals: number
}): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.source), readonly(i.mint), writable(i.destination), signerMeta(i.authority, false)],
  data: amountData(12, i.amount, i.decimals)
})

export const getMintToInstruction = (i: { mint: Address; destination: Address; authority: SignerInput; amount: bigint }): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.mint), writable(i.destination), signerMeta(i.authority, false)],
  data: amountData(7, i.amount)
})

export const getBurnInstruction = (i: { account: Address; mint: Address; authority: SignerInput; amount: bigint }): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.account), writable(i.mint), signerMeta(i.authority, false)],
  data: amountData(8, i.amount)
})

export const getCloseAccountInstruction = (i: { account: Address; destination: Address; authority: SignerInput }): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.account), writable(i.destination), signerMeta(i.authority, false)],
  data: Uint8Array.of(9)
})

export const getSyncNativeInstruction = (i: { account: Address }): Instruction => ({
  programAddress: TOKEN_PROGRAM_ID,
  accounts: [writable(i.account)],
  data: Uint8Array.of(17)
})

// --- Associated Token Account ----------------------------------------------------------------

export const getCreateAssociatedTokenInstruction = (i: {
  payer: SignerInput
  ata: Address
  owner: Address
  mint: Address
  idempotent?: boolean
}): Instruction => ({
  programAddress: ASSOCIATED_TOKEN_PROGRAM_ID,
  accounts: [
    signerMeta(i.payer, true),
    writable(i.ata),
    readonly(i.owner),
    readonly(i.mint),
    readonly(SYSTEM_PROGRAM_ID),
    readonly(TOKEN_PROGRAM_ID)
  ],
  data: Uint8Array.of(i.idempotent === false ? 0 : 1)
})
