/**
 * One look at a sent transaction that needs its status and, once landed, the transaction itself
 * (the fill, the executed amount). The status decides; the transaction is only read for a landed
 * one. When the ingest stream has already delivered the transaction (`delivered`, from
 * `ChainArrivals`), it is on chain, so its read goes out beside the status: one round trip to the
 * node instead of two (issue 28 item 6).
 *
 * - Not delivered: the status alone (no fiber, no read); `transaction` reads when asked.
 * - Delivered: both at once. `transaction` answers that read's transaction, or reads again when it
 *   failed or the node did not hold the transaction yet (`null`: it answered before the status).
 *   A failed status read fails the look and interrupts the read beside it.
 */
import { Effect, Either } from "effect"

export interface Looked<S, T, TE> {
  readonly status: S
  /** The transaction (null: the node does not hold it), read beside the status when that read gave one, else now. */
  readonly transaction: Effect.Effect<T | null, TE>
}

export const statusBeside = <S, E, T, TE>(
  status: Effect.Effect<S, E>,
  read: Effect.Effect<T | null, TE>,
  delivered: boolean
): Effect.Effect<Looked<S, T, TE>, E> =>
  delivered
    ? Effect.map(Effect.all([status, Effect.either(read)], { concurrency: "unbounded" }), ([s, early]) => ({
        status: s,
        transaction: Either.isRight(early) && early.right !== null ? Effect.succeed(early.right) : read
      }))
    : Effect.map(status, (s) => ({ status: s, transaction: read }))
