/**
 * The pure answers of the headless route: the dry run's body (spec 2.6) and a Hood job's
 * `devBuy` (2.7). No I/O.
 */
import { MATRIX_VERSION } from "../../../domain/Economics.js"
import { curveTermsOf, type StoredDevBuy } from "../internal/LaunchRecords.js"
import { type LaunchRequest, resolvedOf } from "../request/LaunchRequest.js"

/** The Solana launch transaction's size, as the dry run reports it. */
export interface DryRunSize {
  readonly txBytes: number
  readonly limit: number
  readonly maxNameBytes: number
}

/** Spec 2.6: what a launch would do, every check passed, nothing written. */
export const headlessDryRunView = (request: LaunchRequest, launchWallet: string, banner: boolean, exclusive: true | undefined, size: DryRunSize | undefined) => ({
    dryRun: true,
    launchWallet,
    resolved: resolvedOf(request),
    checks: {
      image: "ok",
      ...(banner ? { banner: "ok" } : {}),
      ...(exclusive === true ? { exclusiveEligible: true } : {})
    },
    matrixVersion: MATRIX_VERSION,
    ...(size !== undefined ? { size: { txBytes: size.txBytes, limit: size.limit, maxNameBytes: size.maxNameBytes, fits: true } } : {}),
    ...curveTermsOf(request)
  })

export type HeadlessDryRunView = ReturnType<typeof headlessDryRunView>

/** 2.7's `devBuy` on a Hood job: outcome, pending signature, fee outcome (of the live report or the stored result). */
export const devBuyFields = (v: Pick<StoredDevBuy, "outcome" | "pendingSignature" | "feeOutcome">) => ({
  outcome: v.outcome ?? null,
  pendingSignature: v.pendingSignature ?? null,
  feeOutcome: v.feeOutcome ?? null
})
