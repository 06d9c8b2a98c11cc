/**
 * Token metadata (PDA ["metadata", mint], owned by svc-curve, written once by `create_curve`):
 * name ≤ 32, symbol ≤ 10, uri ≤ 200 UTF-8 bytes, each stored as `u8 length` + a zero-padded
 * fixed field so the account has one size. `decodeMetadata` never throws.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"
import { ACCOUNT_LAYOUT_VERSION, AccountDiscriminator } from "./Common.js"

export const NAME_BYTES_MAX = 32
export const SYMBOL_BYTES_MAX = 10
export const URI_BYTES_MAX = 200

export interface MetadataAccount {
  readonly bump: number
  readonly mint: Address
  /** The launch's creator; metadata is immutable, this records who wrote it. */
  readonly creator: Address
  readonly name: string
  readonly symbol: string
  readonly uri: string
}

export const METADATA_ACCOUNT_SIZE = 3 + 32 * 2 + (1 + NAME_BYTES_MAX) + (1 + SYMBOL_BYTES_MAX) + (1 + URI_BYTES_MAX) // 312

export const encodeMetadata = (m: MetadataAccount): Uint8Array =>
  new ByteWriter(METADATA_ACCOUNT_SIZE)
    .u8(AccountDiscriminator.Metadata)
    .u8(ACCOUNT_LAYOUT_VERSION)
    .u8(m.bump)
    .address(m.mint)
    .address(m.creator)
    .fixedUtf8(m.name, NAME_BYTES_MAX)
    .fixedUtf8(m.symbol, SYMBOL_BYTES_MAX)
    .fixedUtf8(m.uri, URI_BYTES_MAX)
    .done()

export const decodeMetadata = (data: Uint8Array): MetadataAccount | undefined => {
  if (data.length !== METADATA_ACCOUNT_SIZE || data[0] !== AccountDiscriminator.Metadata) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data, 1)
    if (r.u8() !== ACCOUNT_LAYOUT_VERSION) throw new RangeError("version")
    const m: MetadataAccount = {
      bump: r.u8(),
      mint: r.address(),
      creator: r.address(),
      name: r.fixedUtf8(NAME_BYTES_MAX),
      symbol: r.fixedUtf8(SYMBOL_BYTES_MAX),
      uri: r.fixedUtf8(URI_BYTES_MAX)
    }
    r.end()
    return m
  })
}
