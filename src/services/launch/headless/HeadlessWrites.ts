/**
 * The writes around a settled headless attempt (spec 3.1 "Also"): the attribution in the `sent`
 * transaction (before the transaction leaves), the confirmed and failed writes, and a definitive
 * failure recorded on the ledger behind the row's lease (releasing the dev buy's spend hold).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Effect } from "effect"
import { attribute, confirmedWrites, failedWrites } from "../internal/LaunchRecords.js"
import { launchStorage } from "../internal/LaunchGates.js"
import type { Also, AttemptRef } from "../LaunchLedger.js"
import type { LaunchError } from "../LaunchError.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { HeadlessContext } from "./HeadlessContext.js"
import type { HeadlessSpend } from "./HeadlessSpend.js"

const storage = launchStorage

export type HeadlessWrites = ReturnType<typeof makeHeadlessWrites>

export const makeHeadlessWrites = (ctx: HeadlessContext, spend: HeadlessSpend) => {
  const { config, deps, fence } = ctx
  const { ledger } = deps

  const links = { baseUrl: config.baseUrl, solanaExplorerUrl: config.solanaExplorerUrl }

  /** Written in the `sent` transaction: the attribution, before the transaction leaves (`riding`: a write in the same statement). */
  const attributed = (
    caller: { accountId: string; keyId: string },
    request: LaunchRequest,
    mint: string,
    riding?: (sql: SqlClient.SqlClient) => Statement.Fragment
  ): Also => attribute({ ...caller, path: "headless", chain: request.chain, mint, visibility: request.visibility }, deps.agentLaunches, riding)

  /** Written in the `confirm` transaction. */
  const confirmedAlso = (keyId: string, fee: { readonly quoteAsset: string; readonly feeRaw: bigint } | null, devBuy: unknown): Also =>
    confirmedWrites({ keyId, fee, devBuy })

  /** `launch.failed` with the row's recorded failure. */
  const failedAlso = failedWrites(ledger.failureCode)

  const settleFailure = (ref: AttemptRef, error: LaunchError) => {
    // The attempt failed: its dev buy's hold is released with the failure.
    return ledger.fail(ref, error.reason, { also: (record) => Effect.zipRight(spend.releaseDevBuy(ref)(record), failedAlso(record)), fence: fence(ref) }).pipe(
      Effect.catchTag("LaunchLedgerError", () => Effect.void),
      storage("recording the failure"),
      Effect.zipRight(Effect.fail(error))
    )
  }

  return { links, attributed, confirmedAlso, failedAlso, settleFailure }
}
