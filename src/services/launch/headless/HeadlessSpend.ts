/**
 * A headless launch's dev buy through the spend gate (`src/services/spend`): the embedded wallet's
 * buy plus its platform fee, signed by the service, checked before anything is stored (the launch
 * and its dry run), held in the ledger's accepting transaction (`holdIn`; a refusal rolls the
 * acceptance back), booked with its USD value at confirm and released when the attempt failed.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import { bookIn, check as checkSpend, checkKey, releaseIn, reserveIn } from "../../spend/SpendStore.js"
import type { HeadlessCaller } from "../HeadlessLaunch.js"
import { devBuyAttempt, devBuyBooking, devBuyReservationId } from "../internal/LaunchSpend.js"
import { storedDevBuy } from "../internal/LaunchRecords.js"
import type { Also, AttemptRef, LaunchRecord } from "../LaunchLedger.js"
import { fromSpend, type LaunchError } from "../LaunchError.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { Attempt, HeadlessContext } from "./HeadlessContext.js"

export type HeadlessSpend = ReturnType<typeof makeHeadlessSpend>

export const makeHeadlessSpend = (ctx: HeadlessContext) => {
  const { deps, withSql } = ctx

  /** The dev buy (plus its platform fee) as the spend gate sees it: the embedded wallet, signed by the service. */
  const devBuySpend = (caller: HeadlessCaller, request: LaunchRequest) => devBuyAttempt(deps.prices, "main", request, caller.plan.feeBps)

  /** The spend gate's decision now, nothing held (the dry run, and the launch before it stores anything). */
  const spendAllowed = (caller: HeadlessCaller, request: LaunchRequest, spend: SpendAttempt | undefined): Effect.Effect<void, LaunchError> =>
    spend === undefined
      ? Effect.void
      : withSql(checkSpend({ accountId: caller.accountId, keyPrefix: caller.keyPrefix, chain: request.chain, attempt: spend })).pipe(
          Effect.flatMap((d) => (d._tag === "Refused" ? Effect.fail(d.error) : Effect.void)),
          Effect.catchTag("SpendError", (e) => Effect.fail(fromSpend(e)))
        )

  /**
   * The dry run's decision: as `spendAllowed`, on the key row the request authenticated with when
   * the caller carries it (no key query: `checkKey`, the trade's dry run's), else read by prefix.
   */
  const spendChecked = (caller: HeadlessCaller, request: LaunchRequest, spend: SpendAttempt | undefined): Effect.Effect<void, LaunchError> => {
    const key = caller.spendKey
    if (spend === undefined || key === undefined || key.prefix !== caller.keyPrefix) return spendAllowed(caller, request, spend)
    return withSql(checkKey(key, spend)).pipe(Effect.flatMap((d) => (d._tag === "Refused" ? Effect.fail(fromSpend(d.error)) : Effect.void)))
  }

  /** The dev buy's hold of one attempt; its booking when it landed and its release when it did not (no-ops without one). */
  const holdOf = (ref: AttemptRef) => devBuyReservationId("headless", ref)

  /** The hold, taken inside the ledger's accepting transaction under the key's lock. */
  const holdIn = (caller: HeadlessCaller, request: LaunchRequest, ref: AttemptRef, spend: SpendAttempt | undefined): Effect.Effect<void, SqlError | SpendError, SqlClient.SqlClient> =>
    spend === undefined
      ? Effect.void
      : Effect.asVoid(reserveIn({ reservationId: holdOf(ref), accountId: caller.accountId, keyPrefix: caller.keyPrefix, chain: request.chain, attempt: spend }))

  const bookDevBuy = (a: Attempt): Also => () =>
    a.request.buyAmountRaw === 0n
      ? Effect.void
      : Effect.asVoid(bookIn(devBuyBooking(holdOf(a.ref), { accountId: a.ref.accountId, keyId: a.resolved.keyId }, "main", a.request, Number(a.resolved.platformFeeBps))))

  const releaseDevBuy = (ref: AttemptRef): Also => () => Effect.asVoid(releaseIn(holdOf(ref)))

  /**
   * A confirmed Hood launch's dev buy (its own transaction after the launch): landed, it books;
   * reverted or never sent, its hold is released; still unknown (`pending`, `unknown`, `lapsed`),
   * the hold stays on the window until the sweep releases it.
   */
  const hoodDevBuySettled = (a: Attempt, record: LaunchRecord) => {
    const outcome = storedDevBuy(record.result)?.outcome
    return outcome === "landed" ? bookDevBuy(a)(record) : outcome === "reverted" || outcome === undefined || outcome === null ? releaseDevBuy(a.ref)(record) : Effect.void
  }

  return { devBuySpend, spendAllowed, spendChecked, holdIn, bookDevBuy, releaseDevBuy, hoodDevBuySettled }
}
