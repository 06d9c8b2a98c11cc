/**
 * The account's outgoing events (spec document 2, section 6) as a port: the webhook outbox
 * implements it. `enqueue` runs on the caller's `SqlClient`, so it joins the caller's
 * transaction: the event is durable exactly when the state change that caused it commits, and
 * a rolled-back change leaves no event. There is deliberately no no-op default: production
 * wiring must provide the outbox.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Ref } from "effect"

/** Event names this subsystem emits. */
export type AccountEventName =
  | "key.access_widened"
  | "key.access_narrowed"
  | "withdrawal_address.added"
  | "withdrawal_address.revoked"
  | "linked_wallet.trusted"
  | "linked_wallet.untrusted"
  | "transfer.executed"

export interface AccountEventsShape {
  readonly enqueue: (accountId: string, event: AccountEventName, data: Record<string, unknown>) => Effect.Effect<void, SqlError, SqlClient.SqlClient>
}

export class AccountEvents extends Context.Tag("curvestream/AccountEvents")<AccountEvents, AccountEventsShape>() {}

export interface RecordedEvent {
  readonly accountId: string
  readonly event: AccountEventName
  readonly data: Record<string, unknown>
}

/**
 * For tests: records every enqueued event in memory. Not transactional; tests that need the
 * rollback guarantee use the real outbox.
 */
export const layerTest = (ref: Ref.Ref<ReadonlyArray<RecordedEvent>>): Layer.Layer<AccountEvents> =>
  Layer.succeed(AccountEvents, {
    enqueue: (accountId, event, data) => Ref.update(ref, (list) => [...list, { accountId, event, data }])
  })
