/**
 * The graduated pool's constant-product arithmetic (bigint, never floats), shared by the localnet
 * program and any quote of a migrated market, so a quote equals the executed swap to the unit.
 * Fees are always taken in the quote asset, rounded toward the pool:
 * - buy (quote in): fee = ceil(in·feeBps/10000); net = in − fee; out = floor(T·net/(Q+net));
 * - sell (tokens in): gross = floor(Q·t/(T+t)); fee = ceil(gross·feeBps/10000); out = gross − fee.
 * The creator part of the fee is floor(fee·creatorFeeBps/feeBps) and leaves the pool for the fee
 * vault; the base part stays in the pool's quote reserve (it accrues to the pool). So Q·T never
 * decreases. Refusals: `zero_amount` (amount ≤ 0, or a buy whose net is 0); a fill of 0 is allowed
 * (minAmountOut is the trader's guard), as in CurveMath.
 */
import { BPS, ceilDiv } from "../../../domain/CurveMath.js"

export interface PoolReserves {
  readonly quoteReserveRaw: bigint
  readonly tokenReserveRaw: bigint
}

export interface PoolFees {
  readonly feeBps: bigint
  readonly creatorFeeBps: bigint
}

export interface PoolFill {
  readonly _tag: "Filled"
  readonly amountOut: bigint
  readonly fee: bigint
  /** Part of `fee` owed to the creator (moved to the fee vault). */
  readonly creatorFee: bigint
  /** Quote entering the pool's vault (buy) or leaving it (sell), creator fee excluded. */
  readonly quoteVaultDelta: bigint
  readonly next: PoolReserves
}

export interface PoolRefused {
  readonly _tag: "Refused"
  readonly reason: "zero_amount"
}

export type PoolSwapResult = PoolFill | PoolRefused

const creatorPart = (fee: bigint, f: PoolFees): bigint => (f.feeBps === 0n ? 0n : (fee * f.creatorFeeBps) / f.feeBps)

export const quotePoolBuy = (r: PoolReserves, f: PoolFees, quoteInRaw: bigint): PoolSwapResult => {
  if (quoteInRaw <= 0n) return { _tag: "Refused", reason: "zero_amount" }
  const fee = ceilDiv(quoteInRaw * f.feeBps, BPS)
  const net = quoteInRaw - fee
  if (net <= 0n) return { _tag: "Refused", reason: "zero_amount" }
  const amountOut = (r.tokenReserveRaw * net) / (r.quoteReserveRaw + net)
  const creatorFee = creatorPart(fee, f)
  const quoteVaultDelta = quoteInRaw - creatorFee
  return {
    _tag: "Filled",
    amountOut,
    fee,
    creatorFee,
    quoteVaultDelta,
    next: { quoteReserveRaw: r.quoteReserveRaw + quoteVaultDelta, tokenReserveRaw: r.tokenReserveRaw - amountOut }
  }
}

export const quotePoolSell = (r: PoolReserves, f: PoolFees, tokensInRaw: bigint): PoolSwapResult => {
  if (tokensInRaw <= 0n) return { _tag: "Refused", reason: "zero_amount" }
  const gross = (r.quoteReserveRaw * tokensInRaw) / (r.tokenReserveRaw + tokensInRaw)
  const fee = ceilDiv(gross * f.feeBps, BPS)
  const amountOut = gross - fee
  const creatorFee = creatorPart(fee, f)
  const quoteVaultDelta = amountOut + creatorFee
  return {
    _tag: "Filled",
    amountOut,
    fee,
    creatorFee,
    quoteVaultDelta,
    next: { quoteReserveRaw: r.quoteReserveRaw - quoteVaultDelta, tokenReserveRaw: r.tokenReserveRaw + tokensInRaw }
  }
}
