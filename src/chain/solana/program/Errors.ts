/**
 * svc-curve's custom program errors: `{InstructionError: [i, {Custom: code}]}` on the wire, codes
 * from 6000 (Anchor's convention, so explorers and bots that special-case < 6000 for builtin errors
 * read them right). A code is never repurposed. `curveErrorName` reverses the table.
 */
import type { TradeRefusal } from "../../../domain/CurveMath.js"

export const SvcCurveError = {
  SlippageExceeded: 6000,
  CurveComplete: 6001,
  CurveNotComplete: 6002,
  AlreadyMigrated: 6003,
  NotKeeper: 6004,
  NotCreator: 6005,
  ZeroAmount: 6006,
  ExceedsCurveSupply: 6007,
  InvalidCurveParams: 6008,
  InvalidMetadata: 6009,
  InvalidAccount: 6010,
  QuoteMintMismatch: 6011,
  NotMigrated: 6012,
  NothingToClaim: 6013,
  MathOverflow: 6014,
  InvalidInstruction: 6015
} as const

export type SvcCurveErrorName = keyof typeof SvcCurveError

export const curveErrorName = (code: number): SvcCurveErrorName | undefined =>
  (Object.keys(SvcCurveError) as SvcCurveErrorName[]).find((k) => SvcCurveError[k] === code)

/** CurveMath's refusals as program errors. */
export const refusalError = (reason: TradeRefusal): number => {
  switch (reason) {
    case "curve_complete":
      return SvcCurveError.CurveComplete
    case "zero_amount":
      return SvcCurveError.ZeroAmount
    case "exceeds_curve_supply":
      return SvcCurveError.ExceedsCurveSupply
  }
}
