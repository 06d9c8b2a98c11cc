/**
 * The self-signed dry run's body on both chains (launch spec 2.6 with the payer wallet and its id;
 * Solana's with the transaction's size). No I/O.
 */
import { MATRIX_VERSION } from "../../../domain/Economics.js"
import { type LaunchRequest, resolvedOf } from "../request/LaunchRequest.js"

/** Spec 2.6 for a self-signed payer: what a build would do, every check passed, nothing written. */
export const selfDryRunView = (
  request: LaunchRequest,
  payer: { readonly address: string; readonly id: string },
  banner: boolean,
  exclusive: true | undefined,
  size: { readonly txBytes: number; readonly limit: number; readonly maxNameBytes: number } | undefined
) => ({
    dryRun: true,
    launchWallet: payer.address,
    launchWalletId: payer.id,
    resolved: resolvedOf(request),
    checks: { image: "ok", ...(banner ? { banner: "ok" } : {}), ...(exclusive === true ? { exclusiveEligible: true } : {}) },
    matrixVersion: MATRIX_VERSION,
    ...(size !== undefined ? { size: { txBytes: size.txBytes, limit: size.limit, maxNameBytes: size.maxNameBytes, fits: true } } : {})
  })

export type SelfDryRunView = ReturnType<typeof selfDryRunView>
