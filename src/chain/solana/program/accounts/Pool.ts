/**
 * The graduated-venue pool account (`dex-solana-v2` in our naming; PDA ["pool", mint], owned by
 * svc-curve): a constant-product pool seeded by `migrate` with the curve's real quote and its
 * remaining tokens. `feeBps` = `baseFeeBps` (50) + `creatorFeeBps` (0, 100 or 200 for exp-* launches
 * that chose an extra creator fee). Invariants: the token vault holds `tokenReserveRaw` and the
 * quote vault `quoteReserveRaw` above its rent reserve (plus any donation, never counted);
 * `quoteReserveRaw · tokenReserveRaw` never decreases. `decodePool` never throws.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"
import { ACCOUNT_LAYOUT_VERSION, AccountDiscriminator, codeOf, type QuoteKind, QuoteKinds, valueOf } from "./Common.js"

export interface PoolAccount {
  readonly bump: number
  readonly quoteKind: QuoteKind
  readonly feeBps: number
  readonly baseFeeBps: number
  readonly creatorFeeBps: number
  readonly mint: Address
  readonly quoteMint: Address
  readonly curve: Address
  readonly creator: Address
  readonly tokenVault: Address
  readonly quoteVault: Address
  /** The curve's fee vault: the creator part of every swap fee is owed there. */
  readonly feeVault: Address
  readonly quoteReserveRaw: bigint
  readonly tokenReserveRaw: bigint
  readonly swapCount: bigint
  readonly volumeQuoteRaw: bigint
  readonly createdSlot: bigint
}

export const POOL_ACCOUNT_SIZE = 1 + 1 + 1 + 1 + 2 * 3 + 32 * 7 + 8 * 5 // 274

export const encodePool = (p: PoolAccount): Uint8Array =>
  new ByteWriter(POOL_ACCOUNT_SIZE)
    .u8(AccountDiscriminator.Pool)
    .u8(ACCOUNT_LAYOUT_VERSION)
    .u8(p.bump)
    .u8(codeOf(QuoteKinds, p.quoteKind))
    .u16(p.feeBps)
    .u16(p.baseFeeBps)
    .u16(p.creatorFeeBps)
    .address(p.mint)
    .address(p.quoteMint)
    .address(p.curve)
    .address(p.creator)
    .address(p.tokenVault)
    .address(p.quoteVault)
    .address(p.feeVault)
    .u64(p.quoteReserveRaw)
    .u64(p.tokenReserveRaw)
    .u64(p.swapCount)
    .u64(p.volumeQuoteRaw)
    .u64(p.createdSlot)
    .done()

export const decodePool = (data: Uint8Array): PoolAccount | undefined => {
  if (data.length !== POOL_ACCOUNT_SIZE || data[0] !== AccountDiscriminator.Pool) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data, 1)
    if (r.u8() !== ACCOUNT_LAYOUT_VERSION) throw new RangeError("version")
    const p: PoolAccount = {
      bump: r.u8(),
      quoteKind: valueOf(QuoteKinds, r.u8()),
      feeBps: r.u16(),
      baseFeeBps: r.u16(),
      creatorFeeBps: r.u16(),
      mint: r.address(),
      quoteMint: r.address(),
      curve: r.address(),
      creator: r.address(),
      tokenVault: r.address(),
      quoteVault: r.address(),
      feeVault: r.address(),
      quoteReserveRaw: r.u64(),
      tokenReserveRaw: r.u64(),
      swapCount: r.u64(),
      volumeQuoteRaw: r.u64(),
      createdSlot: r.u64()
    }
    r.end()
    return p
  })
}
