/**
 * The svc-curve `Curve` account (PDA ["curve", mint]): a bonding curve's parameters, reserves,
 * lifecycle, vault addresses and counters. Fixed size (`CURVE_ACCOUNT_SIZE`), little-endian, first
 * byte `AccountDiscriminator.Curve`; the table is in docs/solana-program.md.
 *
 * Invariants kept by the program: `virtualQuoteReserveRaw − realQuoteRaw = virtualQuoteRaw` (V);
 * while trading or completed the token vault holds `virtualTokenReserveRaw` and the quote vault
 * `realQuoteRaw` above its rent reserve (more only if someone donated to a vault: donations are
 * never counted); lifecycle moves trading → completed
 * (the buy that reaches G) → migrated (keeper), never back. After migration the reserve fields
 * keep their graduation values and `pool` names the venue pool. `decodeCurve` never throws.
 */
import type { Address } from "@solana/kit"
import type { CurveParams, CurveState } from "../../../../domain/CurveMath.js"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"
import {
  ACCOUNT_LAYOUT_VERSION,
  AccountDiscriminator,
  codeOf,
  type CurveMode,
  CurveModes,
  type Lifecycle,
  Lifecycles,
  type QuoteKind,
  QuoteKinds,
  valueOf
} from "./Common.js"

export interface CurveAccount {
  readonly bump: number
  readonly lifecycle: Lifecycle
  readonly mode: CurveMode
  readonly quoteKind: QuoteKind
  readonly stakerAllocationBps: number
  /** The curve fee (100 by default), read from the config at create. */
  readonly feeBps: number
  /** exp-* only: the extra creator fee the graduated pool charges (0, 100 or 200). */
  readonly creatorFeeBps: number
  /** Creator's share of the curve fee, in bps of the fee (config at create). */
  readonly creatorShareBps: number
  readonly tokenDecimals: number
  readonly quoteDecimals: number
  readonly mint: Address
  readonly creator: Address
  readonly quoteMint: Address
  readonly tokenVault: Address
  readonly stakerVault: Address
  readonly quoteVault: Address
  readonly feeVault: Address
  readonly pool: Address | null
  readonly virtualQuoteRaw: bigint // V
  readonly thresholdRaw: bigint // G
  readonly supplyRaw: bigint
  readonly tokenReserveRaw: bigint // X
  readonly virtualQuoteReserveRaw: bigint
  readonly virtualTokenReserveRaw: bigint
  readonly realQuoteRaw: bigint
  readonly buyCount: bigint
  readonly sellCount: bigint
  /** Gross quote traded on the curve (buys' amountIn plus sells' grossOut). */
  readonly volumeQuoteRaw: bigint
  readonly createdSlot: bigint
  readonly completedSlot: bigint | null
  readonly migratedSlot: bigint | null
}

export const CURVE_ACCOUNT_SIZE = 1 + 1 + 1 + 1 + 1 + 1 + 2 * 4 + 1 + 1 + 32 * 8 + 8 * 13 // 376

export const encodeCurve = (c: CurveAccount): Uint8Array =>
  new ByteWriter(CURVE_ACCOUNT_SIZE)
    .u8(AccountDiscriminator.Curve)
    .u8(ACCOUNT_LAYOUT_VERSION)
    .u8(c.bump)
    .u8(codeOf(Lifecycles, c.lifecycle))
    .u8(codeOf(CurveModes, c.mode))
    .u8(codeOf(QuoteKinds, c.quoteKind))
    .u16(c.stakerAllocationBps)
    .u16(c.feeBps)
    .u16(c.creatorFeeBps)
    .u16(c.creatorShareBps)
    .u8(c.tokenDecimals)
    .u8(c.quoteDecimals)
    .address(c.mint)
    .address(c.creator)
    .address(c.quoteMint)
    .address(c.tokenVault)
    .address(c.stakerVault)
    .address(c.quoteVault)
    .address(c.feeVault)
    .address(c.pool)
    .u64(c.virtualQuoteRaw)
    .u64(c.thresholdRaw)
    .u64(c.supplyRaw)
    .u64(c.tokenReserveRaw)
    .u64(c.virtualQuoteReserveRaw)
    .u64(c.virtualTokenReserveRaw)
    .u64(c.realQuoteRaw)
    .u64(c.buyCount)
    .u64(c.sellCount)
    .u64(c.volumeQuoteRaw)
    .u64(c.createdSlot)
    .u64(c.completedSlot ?? 0n)
    .u64(c.migratedSlot ?? 0n)
    .done()

export const decodeCurve = (data: Uint8Array): CurveAccount | undefined => {
  if (data.length !== CURVE_ACCOUNT_SIZE || data[0] !== AccountDiscriminator.Curve) return undefined
  return tryDecode(() => {
    const r = new ByteReader(data, 1)
    if (r.u8() !== ACCOUNT_LAYOUT_VERSION) throw new RangeError("version")
    const bump = r.u8()
    const lifecycle = valueOf(Lifecycles, r.u8())
    const mode = valueOf(CurveModes, r.u8())
    const quoteKind = valueOf(QuoteKinds, r.u8())
    const stakerAllocationBps = r.u16()
    const feeBps = r.u16()
    const creatorFeeBps = r.u16()
    const creatorShareBps = r.u16()
    const tokenDecimals = r.u8()
    const quoteDecimals = r.u8()
    const mint = r.address()
    const creator = r.address()
    const quoteMint = r.address()
    const tokenVault = r.address()
    const stakerVault = r.address()
    const quoteVault = r.address()
    const feeVault = r.address()
    const pool = r.optionalAddress()
    const virtualQuoteRaw = r.u64()
    const thresholdRaw = r.u64()
    const supplyRaw = r.u64()
    const tokenReserveRaw = r.u64()
    const virtualQuoteReserveRaw = r.u64()
    const virtualTokenReserveRaw = r.u64()
    const realQuoteRaw = r.u64()
    const buyCount = r.u64()
    const sellCount = r.u64()
    const volumeQuoteRaw = r.u64()
    const createdSlot = r.u64()
    const completed = r.u64()
    const migrated = r.u64()
    r.end()
    return {
      bump, lifecycle, mode, quoteKind, stakerAllocationBps, feeBps, creatorFeeBps, creatorShareBps,
      tokenDecimals, quoteDecimals, mint, creator, quoteMint, tokenVault, stakerVault, quoteVault, feeVault, pool,
      virtualQuoteRaw, thresholdRaw, supplyRaw, tokenReserveRaw, virtualQuoteReserveRaw, virtualTokenReserveRaw,
      realQuoteRaw, buyCount, sellCount, volumeQuoteRaw, createdSlot,
      completedSlot: completed === 0n ? null : completed,
      migratedSlot: migrated === 0n ? null : migrated
    }
  })
}

/** The CurveMath parameters this account trades on (Solana: full fill, surplus stays). */
export const curveParamsOf = (c: CurveAccount): CurveParams => ({
  virtualQuoteRaw: c.virtualQuoteRaw,
  thresholdRaw: c.thresholdRaw,
  tokenReserveRaw: c.tokenReserveRaw,
  feeBps: BigInt(c.feeBps),
  crossingModel: "full-fill-surplus"
})

export const curveStateOf = (c: CurveAccount): CurveState => ({
  virtualQuoteRaw: c.virtualQuoteReserveRaw,
  virtualTokenRaw: c.virtualTokenReserveRaw,
  realQuoteRaw: c.realQuoteRaw,
  complete: c.lifecycle !== "trading"
})
