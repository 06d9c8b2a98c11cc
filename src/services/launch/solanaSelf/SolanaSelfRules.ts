/**
 * The pure answers of a Solana self-signed launch: the dry run's body (launch spec 2.6 with the
 * payer wallet). No I/O.
 */
import { MATRIX_VERSION } from "../../../domain/Economics.js"
import { type LaunchRequest, resolvedOf } from "../request/LaunchRequest.js"

/** Spec 2.6 for a self-signed payer: what a build would do, every check passed, nothing written. */
export const selfDryRunView = (
  request: LaunchRequest,
  payer: { readonly address: string; readonly id: string },
  banner: boolean,
  exclusive: true | undefined,
  size: { readonly txBytes: number; readonly limit: number; readonly maxNameBytes: number }
) => ({
    dryRun: true,
    launchWallet: payer.address,
    launchWalletId: payer.id,
    resolved: resolvedOf(request),
    checks: { image: "ok", ...(banner ? { banner: "ok" } : {}), ...(exclusive === true ? { exclusiveEligible: true } : {}) },
    matrixVersion: MATRIX_VERSION,
    size: { txBytes: size.txBytes, limit: size.limit, maxNameBytes: size.maxNameBytes, fits: true }
  })

export type SolanaSelfDryRunView = ReturnType<typeof selfDryRunView>
