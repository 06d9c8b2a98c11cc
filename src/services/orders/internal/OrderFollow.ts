/**
 * The follow of `limit_orders` for `OrderTriggers`: the creates and cancels committed since the
 * last `rev` read, in commit order, at most `syncBatch` rows a read, into the books; then the
 * wall-clock expiry sweep. A read happens only when the `rev` sequence has handed out a value
 * above the last one read (`revHandedOut`). An order of a market whose partition is not held here
 * is left to its owner; one the market has moved past is caught up on its price now
 * (`OrderBooks.place`), and what that decides is reported (`decided`).
 *
 * The caller runs `follow` exclusive of a partition's reload (the reload replaces books with a
 * paged read of the table; the follow then replays every change after the `rev` it had read).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import type { MarketState } from "../../../../actors/market/MarketActor.js"
import type { OrderBooks } from "../../../../actors/orders/OrderBooks.js"
import { bookOrderOf, changedSince, markExpired, marketKeyOf, type OrderRow, revHandedOut, type TriggerFence } from "../OrderStore.js"

export interface OrderFollowDeps {
  readonly books: OrderBooks
  readonly withSql: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly syncBatch: number
  /** The bound the books were made with (for the log line of a refused order). */
  readonly maxOrders: number
  readonly fenceOf: (marketKey: string) => TriggerFence | null | undefined
  readonly marketState: (key: string) => MarketState | undefined
  /** Outputs were decided: answers whether an expiry waits for the next checkpoint flush. */
  readonly decided: () => boolean
  readonly hurryCheckpoint: () => void
}

/** `rev`: the last `rev` the start read (the load, or the latest when partitioned). */
export const makeOrderFollow = ({ books, withSql, syncBatch, maxOrders, fenceOf, marketState, decided, hurryCheckpoint }: OrderFollowDeps, rev: bigint) => {
  let followReads = 0
  const placeRow = (r: OrderRow) => {
    const key = marketKeyOf(r)
    if (fenceOf(key) === undefined) return Effect.void // its partition is not held here: its owner places it
    if (!books.place(key, bookOrderOf(r), marketState(key))) {
      // Over the bound: the order stays open in the table and is not watched here.
      return Effect.logError(`orders: ${maxOrders} open orders held; order ${r.id} is not watched`)
    }
    return Effect.void
  }
  const follow: Effect.Effect<void, SqlError> = Effect.gen(function* () {
    const handedOut = yield* withSql(revHandedOut)
    while (handedOut > rev) {
      followReads++
      const rows = yield* withSql(changedSince(rev, syncBatch))
      const pending = books.pendingCount()
      for (const r of rows) {
        rev = r.rev
        if (r.status === "open") yield* placeRow(r)
        else books.cancel(r.id, marketKeyOf(r))
      }
      // An order caught up on the price now (it was crossed before this process learnt of it):
      // a trigger is written now; an expiry by the next flush, now.
      if (books.pendingCount() > pending && decided()) hurryCheckpoint()
      if (rows.length < syncBatch) break
    }
    const nowMs = yield* Clock.currentTimeMillis
    const expired = books.sweep(nowMs)
    if (expired.length > 0) yield* withSql(Effect.forEach(expired, (o) => markExpired(o.id, nowMs), { discard: true }))
  })
  return { follow, followReads: () => followReads }
}
