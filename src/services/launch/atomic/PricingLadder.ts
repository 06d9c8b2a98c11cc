/**
 * The atomic launch's pricing ladder (launch spec 4, endpoint rule 8; document 2, 2.1 and 2.2):
 * the first buys of a bundle priced one after another with the program's own curve math. Leg 1
 * is quoted against the virgin curve, leg 2 against what leg 1 left, and so on, because the block
 * engine lands them in that order in one slot with nothing in between (the launch transaction
 * creates the curve). Pure: no clock, no I/O.
 *
 * Invariants (pinned by PricingLadder.test.ts, against sequential `quoteBuy` and against the
 * localnet's program executing the same buys in one bundle):
 * - `amountOutRaw` of leg i is `quoteBuy(params, stateAfter(i-1), amountRaw_i).amountOut`, to the
 *   unit; `minAmountOutRaw` is that fill less `LADDER_SLIPPAGE_BPS` (100), rounded down.
 * - A leg the curve refuses (complete after an earlier leg graduated it, a net of zero) or that
 *   fills zero tokens cannot be priced: the whole ladder is refused naming that leg's position in
 *   `firstBuys`, and nothing is priced.
 * - The platform fee is the plan's `feeBps` of `amountRaw`, rounded up, on top of the buy (the
 *   headless dev buy's rule); a referred account pays 10% less, applied to the fee amount before
 *   rounding: `ceil(amountRaw · feeBps · 90 / 1,000,000)`.
 * - A Solana curve fills a crossing buy in full (`full-fill-surplus`); the leg that crosses
 *   graduation is priced like any other and flagged, later legs are refused (`curve_complete`).
 */
import {
  BPS,
  ceilDiv,
  type CurveParams,
  type CurveState,
  initialState,
  minAmountOut,
  quoteBuy,
  type TradeRefusal
} from "../../../domain/CurveMath.js"

/** Each first buy's minimum is its ladder fill less this (spec 4 rule 8, section 8). */
export const LADDER_SLIPPAGE_BPS = 100n
/** First buys per bundle (spec 2.4 and 8: 1 launch plus up to 4 buys). */
export const FIRST_BUYS_MIN = 1
export const FIRST_BUYS_MAX = 4
/** A referred account's platform-fee discount, in percent (document 2, 2.1 `ref`). */
export const REFERRAL_DISCOUNT_PCT = 10n

export interface LadderInput {
  /** The launch's curve as created (Solana: `full-fill-surplus`). */
  readonly curveParams: CurveParams
  /** Each first buy's `amountRaw` in the quote asset, in requested order. */
  readonly amountsRaw: ReadonlyArray<bigint>
  /** The plan's agent trade fee (document 2, 2.2). */
  readonly platformFeeBps: bigint
  /** The account was referred: 10% off the platform fee. */
  readonly referred: boolean
}

export interface LadderLeg {
  /** The leg's index in the bundle: 1..N (0 is the launch). */
  readonly index: number
  readonly amountInRaw: bigint
  /** The program's fill for this leg on the curve the earlier legs left. */
  readonly amountOutRaw: bigint
  readonly minAmountOutRaw: bigint
  /** The curve's own fee, inside `amountInRaw`. */
  readonly curveFeeRaw: bigint
  /** The platform fee paid to the treasury beside the buy. */
  readonly platformFeeRaw: bigint
  readonly crossesGraduation: boolean
  /** The curve after this leg. */
  readonly after: CurveState
}

export type LadderRefusal = TradeRefusal | "zero_fill"

export type Ladder =
  | {
      readonly _tag: "Priced"
      readonly legs: ReadonlyArray<LadderLeg>
      /** The curve after the last leg. */
      readonly final: CurveState
      /** Some leg graduates the curve in the launch slot (spec rule 8: migration not armed). */
      readonly graduates: boolean
      /** The plan's fee bps the legs were priced with (the referral discount is in each `platformFeeRaw`). */
      readonly platformFeeBps: bigint
    }
  | {
      readonly _tag: "Unpriceable"
      /** Position in `firstBuys` (0-based), for the `firstBuys[i]` field. */
      readonly position: number
      readonly reason: LadderRefusal
    }

/** The platform fee on one buy: `bps` of it, rounded up, 10% less for a referred account. */
export const ladderPlatformFeeRaw = (amountRaw: bigint, feeBps: bigint, referred: boolean): bigint =>
  referred ? ceilDiv(amountRaw * feeBps * (100n - REFERRAL_DISCOUNT_PCT), BPS * 100n) : ceilDiv(amountRaw * feeBps, BPS)

export const priceLadder = (i: LadderInput): Ladder => {
  let state = initialState(i.curveParams)
  const legs: LadderLeg[] = []
  let graduates = false
  for (let position = 0; position < i.amountsRaw.length; position++) {
    const amountInRaw = i.amountsRaw[position]!
    const q = quoteBuy(i.curveParams, state, amountInRaw)
    if (q._tag === "Refused") return { _tag: "Unpriceable", position, reason: q.reason }
    if (q.amountOut === 0n) return { _tag: "Unpriceable", position, reason: "zero_fill" }
    legs.push({
      index: position + 1,
      amountInRaw,
      amountOutRaw: q.amountOut,
      minAmountOutRaw: minAmountOut(q.amountOut, LADDER_SLIPPAGE_BPS),
      curveFeeRaw: q.fee,
      platformFeeRaw: ladderPlatformFeeRaw(amountInRaw, i.platformFeeBps, i.referred),
      crossesGraduation: q.crossesGraduation,
      after: q.next
    })
    graduates ||= q.crossesGraduation
    state = q.next
  }
  return { _tag: "Priced", legs, final: state, graduates, platformFeeBps: i.platformFeeBps }
}
