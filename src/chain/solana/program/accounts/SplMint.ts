/**
 * The SPL Token `Mint` account (82 bytes), the real layout:
 * mintAuthority COption<Pubkey> (u32 tag + 32) · supply u64 · decimals u8 · isInitialized bool ·
 * freezeAuthority COption<Pubkey> (u32 tag + 32). `decodeSplMint` returns undefined for data of
 * another size or an uninitialized mint, never throws.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"

export const SPL_MINT_SIZE = 82

export interface SplMint {
  readonly mintAuthority: Address | null
  readonly supply: bigint
  readonly decimals: number
  readonly freezeAuthority: Address | null
}

const readCOption = (r: ByteReader): Address | null => {
  const tag = r.u32()
  if (tag > 1) throw new RangeError("COption tag")
  const a = r.address()
  return tag === 1 ? a : null
}

export const writeCOption = (w: ByteWriter, a: Address | null): void => {
  w.u32(a === null ? 0 : 1)
  w.address(a)
}

export const encodeSplMint = (m: SplMint): Uint8Array => {
  const w = new ByteWriter(SPL_MINT_SIZE)
  writeCOption(w, m.mintAuthority)
  w.u64(m.supply).u8(m.decimals).bool(true)
  writeCOption(w, m.freezeAuthority)
  return w.done()
}

export const decodeSplMint = (data: Uint8Array): SplMint | undefined => {
  if (data.length !== SPL_MINT_SIZE) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data)
    const mintAuthority = readCOption(r)
    const supply = r.u64()
    const decimals = r.u8()
    if (!r.bool()) throw new RangeError("uninitialized")
    const freezeAuthority = readCOption(r)
    return { mintAuthority, supply, decimals, freezeAuthority }
  })
}

export { readCOption }
