/**
 * THE SPEND GATE on the trade rail (`src/services/spend`): a buy with a key is held under the key's
 * lock before it is signed (`reserve`, id `tradeReservationId`); the store books it with the
 * executed trade and releases it with the failed one; an attempt that ends before its trade was
 * recorded (a refusal after the hold, the signer failing) releases it here. A sell is never
 * refused; it books. The dry run asks the same decision and holds nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt, SpendDecision } from "../../spend/SpendGate.js"
import { check as checkSpend, checkKey, checkKeyNow, checkReadsWindow, holdAround } from "../../spend/SpendStore.js"
import type { TradeCaller, TradeRequest } from "../TradeInputs.js"
import { tradeReservationId } from "../TradeStore.js"
import type { TradeContext } from "./TradeContext.js"

const refusedOrVoid = (d: SpendDecision): Effect.Effect<void, SpendError> => (d._tag === "Refused" ? Effect.fail(d.error) : Effect.void)

export const makeTradeSpendGate = (ctx: TradeContext) => {
  const { store } = ctx
  const withSql = <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> => Effect.provideService(self, SqlClient.SqlClient, ctx.sql)

  /** The gate's input for this caller's trade; undefined for a sell (never refused) or a caller without a key. */
  const gated = (caller: TradeCaller, request: TradeRequest, spend: SpendAttempt) =>
    caller.keyPrefix === null || spend.side === "sell"
      ? undefined
      : { accountId: caller.accountId, keyPrefix: caller.keyPrefix, chain: request.chain, attempt: spend }

  /**
   * THE SPEND GATE, dry: the decision on the key and window as they are now; nothing held. The key
   * is the row the request authenticated with when the caller carries it (no key query), else read.
   */
  const spendChecked = (caller: TradeCaller, request: TradeRequest, spend: SpendAttempt): Effect.Effect<void, SpendError> => {
    const input = gated(caller, request, spend)
    if (input === undefined) return Effect.void
    const key = caller.spendKey
    const onKey = key !== undefined && key.prefix === input.keyPrefix
    // No window to read (a key without a txLimit): decided in place, with no SQL client provided.
    if (onKey && !checkReadsWindow(key, spend)) return Effect.flatMap(ctx.clock.currentTimeMillis, (nowMs) => refusedOrVoid(checkKeyNow(key, spend, nowMs)))
    return withSql(onKey ? checkKey(key, spend) : checkSpend(input)).pipe(Effect.flatMap(refusedOrVoid))
  }

  /**
   * THE SPEND GATE around `run` (either chain's sign and send): a buy's hold under the key's lock
   * before anything is signed, released when `run` ends before its trade was recorded.
   */
  const heldAround = <A, E>(caller: TradeCaller, request: TradeRequest, spend: SpendAttempt, run: Effect.Effect<A, E>): Effect.Effect<A, E | SpendError> => {
    const input = gated(caller, request, spend)
    if (input === undefined) return run
    return withSql(
      holdAround(
        {
          input: { ...input, reservationId: tradeReservationId({ accountId: caller.accountId, clientTradeId: request.clientTradeId }) },
          recorded: Effect.map(store.get(caller.accountId, request.clientTradeId), (row) => row !== undefined),
          what: "trade"
        },
        run
      )
    )
  }

  return { spendChecked, heldAround }
}
