/**
 * The svc-curve `FeeVault` account (PDA ["fee_vault", curve]): the accounting of one market's
 * fees. The funds themselves sit in `quoteHolder` (PDA ["fee_vault_quote", feeVault]): lamports on a
 * zero-data program-owned account for the WSOL pair, an SPL token account (authority = the fee
 * vault PDA) otherwise. Invariant: quoteHolder's balance above rent = protocolAccruedRaw +
 * creatorOwedRaw (plus any donation, never counted). Curve fees split by `creatorShareBps` (creator part rounded down, the protocol
 * gets the rest); the pool's extra creator fee is owed to the creator in full. `decodeFeeVault`
 * never throws.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"
import { ACCOUNT_LAYOUT_VERSION, AccountDiscriminator, codeOf, type QuoteKind, QuoteKinds, valueOf } from "./Common.js"

export interface FeeVaultAccount {
  readonly bump: number
  readonly quoteKind: QuoteKind
  readonly creatorShareBps: number
  readonly curve: Address
  readonly mint: Address
  readonly creator: Address
  readonly quoteMint: Address
  readonly quoteHolder: Address
  /** Protocol's part of curve fees, accrued (a protocol claim is not part of this program yet). */
  readonly protocolAccruedRaw: bigint
  /** What `claim_creator_fee` pays now. */
  readonly creatorOwedRaw: bigint
  readonly creatorClaimedRaw: bigint
  /** Every curve fee collected (both parts). */
  readonly curveFeesRaw: bigint
  /** Creator fees collected by the graduated pool. */
  readonly poolCreatorFeesRaw: bigint
}

export const FEE_VAULT_ACCOUNT_SIZE = 1 + 1 + 1 + 1 + 2 + 32 * 5 + 8 * 5 // 206

export const encodeFeeVault = (f: FeeVaultAccount): Uint8Array =>
  new ByteWriter(FEE_VAULT_ACCOUNT_SIZE)
    .u8(AccountDiscriminator.FeeVault)
    .u8(ACCOUNT_LAYOUT_VERSION)
    .u8(f.bump)
    .u8(codeOf(QuoteKinds, f.quoteKind))
    .u16(f.creatorShareBps)
    .address(f.curve)
    .address(f.mint)
    .address(f.creator)
    .address(f.quoteMint)
    .address(f.quoteHolder)
    .u64(f.protocolAccruedRaw)
    .u64(f.creatorOwedRaw)
    .u64(f.creatorClaimedRaw)
    .u64(f.curveFeesRaw)
    .u64(f.poolCreatorFeesRaw)
    .done()

export const decodeFeeVault = (data: Uint8Array): FeeVaultAccount | undefined => {
  if (data.length !== FEE_VAULT_ACCOUNT_SIZE || data[0] !== AccountDiscriminator.FeeVault) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data, 1)
    if (r.u8() !== ACCOUNT_LAYOUT_VERSION) throw new RangeError("version")
    const f: FeeVaultAccount = {
      bump: r.u8(),
      quoteKind: valueOf(QuoteKinds, r.u8()),
      creatorShareBps: r.u16(),
      curve: r.address(),
      mint: r.address(),
      creator: r.address(),
      quoteMint: r.address(),
      quoteHolder: r.address(),
      protocolAccruedRaw: r.u64(),
      creatorOwedRaw: r.u64(),
      creatorClaimedRaw: r.u64(),
      curveFeesRaw: r.u64(),
      poolCreatorFeesRaw: r.u64()
    }
    r.end()
    return f
  })
}
