/**
 * The svc-curve global `Config` account (PDA ["config"]), written at genesis on the localnet (a
 * deployment writes it once; there is no instruction to change it yet): the keeper allowed to
 * migrate, the protocol treasury, the curve fee, the creator's share of it, and the pool base fee.
 * `create_curve` copies the fee figures into the curve, so a later change never re-prices a live
 * market. `decodeConfig` never throws.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"
import { ACCOUNT_LAYOUT_VERSION, AccountDiscriminator } from "./Common.js"

export interface ConfigAccount {
  readonly bump: number
  readonly keeper: Address
  readonly treasury: Address
  readonly curveFeeBps: number
  /** Creator's share of every curve fee, in bps of the fee. */
  readonly creatorShareBps: number
  readonly poolBaseFeeBps: number
}

export const CONFIG_ACCOUNT_SIZE = 3 + 32 * 2 + 2 * 3 // 73

export const encodeConfig = (c: ConfigAccount): Uint8Array =>
  new ByteWriter(CONFIG_ACCOUNT_SIZE)
    .u8(AccountDiscriminator.Config)
    .u8(ACCOUNT_LAYOUT_VERSION)
    .u8(c.bump)
    .address(c.keeper)
    .address(c.treasury)
    .u16(c.curveFeeBps)
    .u16(c.creatorShareBps)
    .u16(c.poolBaseFeeBps)
    .done()

export const decodeConfig = (data: Uint8Array): ConfigAccount | undefined => {
  if (data.length !== CONFIG_ACCOUNT_SIZE || data[0] !== AccountDiscriminator.Config) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data, 1)
    if (r.u8() !== ACCOUNT_LAYOUT_VERSION) throw new RangeError("version")
    const c: ConfigAccount = {
      bump: r.u8(),
      keeper: r.address(),
      treasury: r.address(),
      curveFeeBps: r.u16(),
      creatorShareBps: r.u16(),
      poolBaseFeeBps: r.u16()
    }
    r.end()
    return c
  })
}

/** The fee figures the localnet's genesis config carries (docs/solana-program.md, "Fees"). */
export const DEFAULT_CURVE_FEE_BPS = 100
export const DEFAULT_CREATOR_SHARE_BPS = 3_000
export const DEFAULT_POOL_BASE_FEE_BPS = 50
