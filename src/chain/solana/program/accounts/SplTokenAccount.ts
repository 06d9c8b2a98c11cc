/**
 * The SPL Token `Account` (165 bytes), the real layout:
 * mint 32 · owner 32 · amount u64 · delegate COption<Pubkey> (36) · state u8 (0 uninitialized,
 * 1 initialized, 2 frozen) · isNative COption<u64> (u32 tag + u64: the rent-exempt reserve of a
 * wrapped-SOL account) · delegatedAmount u64 · closeAuthority COption<Pubkey> (36).
 * `decodeSplTokenAccount` returns undefined for another size or an uninitialized account.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"
import { readCOption, writeCOption } from "./SplMint.js"

export const SPL_TOKEN_ACCOUNT_SIZE = 165
/** Offset of the `state` byte; 0 means the account is not initialized. */
export const SPL_TOKEN_ACCOUNT_STATE_OFFSET = 108

export type SplTokenAccountState = "initialized" | "frozen"

export interface SplTokenAccount {
  readonly mint: Address
  readonly owner: Address
  readonly amount: bigint
  readonly delegate: Address | null
  readonly state: SplTokenAccountState
  /** Wrapped SOL: the rent-exempt reserve kept out of `amount`; null for every other mint. */
  readonly isNative: bigint | null
  readonly delegatedAmount: bigint
  readonly closeAuthority: Address | null
}

export const encodeSplTokenAccount = (a: SplTokenAccount): Uint8Array => {
  const w = new ByteWriter(SPL_TOKEN_ACCOUNT_SIZE)
  w.address(a.mint).address(a.owner).u64(a.amount)
  writeCOption(w, a.delegate)
  w.u8(a.state === "initialized" ? 1 : 2)
  w.u32(a.isNative === null ? 0 : 1).u64(a.isNative ?? 0n)
  w.u64(a.delegatedAmount)
  writeCOption(w, a.closeAuthority)
  return w.done()
}

export const decodeSplTokenAccount = (data: Uint8Array): SplTokenAccount | undefined => {
  if (data.length !== SPL_TOKEN_ACCOUNT_SIZE) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data)
    const mint = r.address()
    const owner = r.address()
    const amount = r.u64()
    const delegate = readCOption(r)
    const stateByte = r.u8()
    if (stateByte !== 1 && stateByte !== 2) throw new RangeError("state")
    const nativeTag = r.u32()
    const nativeReserve = r.u64()
    if (nativeTag > 1) throw new RangeError("isNative tag")
    const delegatedAmount = r.u64()
    const closeAuthority = readCOption(r)
    return {
      mint,
      owner,
      amount,
      delegate,
      state: stateByte === 1 ? ("initialized" as const) : ("frozen" as const),
      isNative: nativeTag === 1 ? nativeReserve : null,
      delegatedAmount,
      closeAuthority
    }
  })
}
