/**
 * The agent trade fee (document 2, 2.2: Free 1 %, Pro 0.5 %, Max 0.25 % from the live plan table)
 * and the referral discount (2.1 `ref`: a referred account pays 10 % less platform fee on trades).
 * One rule for every rail that charges it: `bps` of the amount, the discount applied to the fee
 * before rounding, rounded up (toward the platform, as every fee here):
 *   ceil(amount·bps/10000), or ceil(amount·bps·90/1,000,000) for a referred account.
 * The atomic ladder's buy legs charge the same (`ladderPlatformFeeRaw`, pinned equal by
 * PlatformFee.test.ts); launch dev buys are not discounted (2.1).
 */
import { BPS, ceilDiv } from "./CurveMath.js"

/** A referred account's platform-fee discount, in percent. */
export const REFERRAL_DISCOUNT_PCT = 10n

export const platformFeeRaw = (amountRaw: bigint, feeBps: bigint, referred: boolean): bigint =>
  referred ? ceilDiv(amountRaw * feeBps * (100n - REFERRAL_DISCOUNT_PCT), BPS * 100n) : ceilDiv(amountRaw * feeBps, BPS)
