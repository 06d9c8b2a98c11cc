/**
 * A Hood TEE self-signed launch's dev buy through the spend gate (`src/services/spend`; launch spec
 * 3.1's self-signed row: "reserved against the bound key's USD spend window before signing";
 * document 2, 4.1): the buy plus its platform fee on the `tee` rail, held in the build's ledger
 * transaction under the key's lock (a refusal rolls the attempt back: nothing recorded), booked
 * when the dev-buy leg lands and released when it reverted or the launch's `createCurve` did. A
 * hold whose outcome is never reported is left to the spend sweep (30 minutes), as the Solana
 * self-signed build's. The dry run does not check the USD window (launch spec endpoint rule 4).
 *
 * A linked (imported) wallet's Hood dev buy is not built by the service (the agent sends its own
 * buy), so nothing is held for it here.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import { bookIn, releaseIn, reserveIn } from "../../spend/SpendStore.js"
import type { WalletView } from "../../wallets/WalletService.js"
import { devBuyAttempt, devBuyBooking, devBuyReservationId } from "../internal/LaunchSpend.js"
import type { Also, AttemptRef } from "../LaunchLedger.js"
import type { LaunchError } from "../LaunchError.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfContext, Stored } from "./HoodSelfContext.js"

export type HoodSelfSpend = ReturnType<typeof makeHoodSelfSpend>

/** The reservation id of one attempt's dev-buy hold (the self-signed path's, as on Solana). */
export const hoodSelfHoldOf = (ref: AttemptRef): string => devBuyReservationId("self", ref)

export const makeHoodSelfSpend = (ctx: HoodSelfContext) => {
  const { deps, withSql } = ctx

  /** The TEE dev buy (plus its platform fee) as the gate sees it, on the `tee` rail; undefined for a linked payer or without a buy. */
  const devBuySpend = (caller: SelfCaller, request: LaunchRequest, payer: WalletView): Effect.Effect<SpendAttempt | undefined> =>
    payer.walletKind !== "tee" ? Effect.succeed(undefined) : devBuyAttempt(deps.prices, "tee", request, caller.plan.feeBps)

  /** The hold, inside the ledger's accepting transaction (the key locked; a refusal fails the transaction). A replayed id answers the first hold. */
  const holdIn = (caller: SelfCaller, ref: AttemptRef, spend: SpendAttempt | undefined): Effect.Effect<void, SpendError | SqlError, SqlClient.SqlClient> =>
    spend === undefined
      ? Effect.void
      : Effect.asVoid(reserveIn({ reservationId: hoodSelfHoldOf(ref), accountId: caller.accountId, keyPrefix: caller.keyPrefix, chain: "hood", attempt: spend }))

  /**
   * At the launch's record (its confirming transaction): a landed dev buy books the hold (once: a
   * second booking meters nothing); a reverted one, or a TEE build with no dev buy bound, releases
   * it; a buy still pending leaves it to the sweep. A linked build holds nothing: no-op.
   */
  const settledIn = (stored: Stored, outcome: string | undefined): Also => () => {
    const row = stored.row
    if (row.walletKind !== "tee" || row.request.buyAmountRaw === 0n) return Effect.void
    const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
    if (outcome === "landed") {
      return Effect.asVoid(
        bookIn(
          devBuyBooking(
            hoodSelfHoldOf(ref),
            { accountId: row.accountId, keyId: row.keyId },
            "tee",
            { chain: "hood", quoteAsset: row.request.quoteAsset, buyAmountRaw: row.request.buyAmountRaw },
            stored.build.fee?.bps ?? 0
          )
        )
      )
    }
    return outcome === "pending" ? Effect.void : Effect.asVoid(releaseIn(hoodSelfHoldOf(ref)))
  }

  /** The attempt's `createCurve` reverted: its dev buy can never be bought, the hold is released (a no-op without one). */
  const releaseFailed = (stored: Stored): Effect.Effect<void, LaunchError> =>
    stored.row.walletKind !== "tee"
      ? Effect.void
      : withSql(releaseIn(hoodSelfHoldOf({ accountId: stored.row.accountId, clientLaunchId: stored.row.clientLaunchId, attempt: stored.row.attempt }))).pipe(
          Effect.asVoid,
          // The sweep releases it when this write fails.
          Effect.catchAll((e) => Effect.logWarning("Hood self-signed: the failed launch's dev-buy hold was not released; the spend sweep releases it", e))
        )

  return { devBuySpend, holdIn, settledIn, releaseFailed }
}
