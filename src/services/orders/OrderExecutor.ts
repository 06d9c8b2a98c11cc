/**
 * The limit orders' execution (issue 29): a `triggered` order is executed through the trade rail's
 * submit (payer main, as the key that placed it, the order's side, mint, amount and slippage) as the
 * trade `order:<id>`, and ends `executed` with the trade's signature and amount out, or `failed` with
 * the rail's reason. The pure machine is `OrderExecution.ts`; this is its store and ports on the one
 * attempt runner, the hand-off consumer and the recovery pass.
 *
 * Invariants:
 * - One driver per order: a lease of kind `limit_order` (`RowLease`) is taken before the submit,
 *   renewed while it runs, and the settling write (`markExecuted` / `markFailed`, conditional on
 *   `triggered`) is fenced by it in its transaction. Of processes racing on an order (the hand-off
 *   and a pass, two API replicas) one submits at a time and one settles it, once.
 * - Never two trades: the trade's `clientTradeId` is derived from the order, so a submit after a
 *   crash, a lost lease or a timeout is answered by the rail from the stored trade (its
 *   idempotency on (account, clientTradeId)) and never signs or sends again. The lease keeps a
 *   refusal and a later execution from racing; the rail's idempotency keeps the money once.
 * - Recovery: a process that died between the trigger commit and the hand-off, or mid-execution,
 *   leaves the row `triggered` and its lease ending; `recover` (every `recoverIntervalMs`) takes
 *   every `triggered` order no live process drives and executes it. A trade still in flight, or a
 *   rail that did not answer, leaves the order `triggered` (submitted again later).
 * - A cancelled or expired order is never `triggered`, so it is never submitted.
 * Bounds: the pass lists at most `passMax` orders; the hand-off holds `ORDER_HANDOFF_MAX` ids.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Option, Queue, type Schedule, type Scope } from "effect"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"
import { tierAtLeast } from "../accounts/Tier.js"
import { findAccount } from "../accounts/AccountRepository.js"
import type { TierServiceShape } from "../accounts/TierService.js"
import { makeAttemptRunner, type AttemptRunner } from "../attempt/AttemptRunner.js"
import { findKeyById, keyStatus } from "../keys/KeyRepository.js"
import type { TradeCaller, TradeRequest, TradeServiceShape } from "../trade/TradeService.js"
import { eventOfRefusal,
  eventOfSpendRefusal, eventOfTrade, type ExecutionEvent, type ExecutionOutput, inFlight, owed, refused, step } from "./OrderExecution.js"
import type { OrderHandoffShape } from "./OrderHandoff.js"
import { markExecuted, markFailed, orderById, type OrderRow, orderTradeId, triggeredIds } from "./OrderStore.js"

/** The lease kind of an order's execution; the key is the order id. */
export const ORDER_LEASE_KIND = "limit_order"

/** Who a triggered order trades as, or why it may not trade any more. */
export type OrderCallerResolution =
  | { readonly _tag: "Caller"; readonly caller: TradeCaller }
  | { readonly _tag: "Refused"; readonly reason: string; readonly message: string }

export interface OrderCallers {
  readonly callerOf: (order: OrderRow, nowMs: number) => Effect.Effect<OrderCallerResolution, SqlError>
}

/**
 * The order trades as the key that placed it, as that key would now: a revoked, expired or paused
 * key, or an account no longer on Max, refuses it (the order ends `failed`). The key's embedded
 * wallet permission and spend limits apply through the rail.
 */
export const orderCallers = (sql: SqlClient.SqlClient, tiers: Pick<TierServiceShape, "tierOf" | "plan">): OrderCallers => ({
  callerOf: (order, nowMs) =>
    Effect.gen(function* () {
      const key = yield* findKeyById(order.keyId)
      if (key === undefined || key.accountId !== order.accountId) return { _tag: "Refused", reason: "key_revoked", message: "The key that placed this order no longer exists" } as const
      const status = keyStatus(key, nowMs)
      if (status !== "active") return { _tag: "Refused", reason: `key_${status}`, message: `The key that placed this order is ${status}` } as const
      if (key.paused) return { _tag: "Refused", reason: "key_paused", message: "The key that placed this order is paused by its owner" } as const
      const account = yield* findAccount(order.accountId)
      if (account === undefined) return { _tag: "Refused", reason: "account_not_found", message: "The order's account no longer exists" } as const
      const tier = yield* tiers.tierOf(account, nowMs)
      if (!tierAtLeast(tier, "max")) return { _tag: "Refused", reason: "tier_required", message: `Limit orders execute on Max; the account is on ${tier}` } as const
      const caller: TradeCaller = {
        accountId: order.accountId,
        keyId: key.id,
        keyPrefix: key.prefix,
        embeddedWallet: key.embeddedWallet,
        planFeeBps: BigInt(tiers.plan(tier).feeBps),
        referred: account.referredBy !== null
      }
      return { _tag: "Caller", caller } as const
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
})

/** The trade an order executes as. */
export const tradeRequestOf = (order: OrderRow): TradeRequest => ({
  clientTradeId: order.clientTradeId ?? orderTradeId(order.id),
  chain: order.chain,
  mint: order.mint,
  side: order.side,
  amountInRaw: order.amountRaw,
  slippageBps: order.slippageBps,
  payer: "main"
})

export interface OrderExecutorDeps {
  readonly sql: SqlClient.SqlClient
  readonly trades: Pick<TradeServiceShape, "submit">
  readonly callers: OrderCallers
  /** Who drives an order's execution (default: leases over `sql`). */
  readonly leases?: RowLeases
}

export interface OrderExecutorOptions {
  /** How often the recovery pass looks for `triggered` orders no live process drives (default 1 s). */
  readonly recoverIntervalMs?: number
  /** Orders one pass lists at most (default 1,000). */
  readonly passMax?: number
  /** Between the submits of an order the rail left unsettled (default the runner's: every 2 s, 60 times). */
  readonly retrySchedule?: Schedule.Schedule<unknown, unknown>
}

export interface OrderExecutorShape {
  /** Executes a triggered order in the background unless a live process drives it; whether this process took it. */
  readonly execute: (orderId: string) => Effect.Effect<boolean, SqlError>
  /** One recovery pass: every `triggered` order no live process drives, taken; how many. */
  readonly recover: Effect.Effect<number, SqlError>
  /** The hand-off consumer (when this process runs the actors) and the periodic recovery pass, for the scope's lifetime. */
  readonly run: (handoff: Option.Option<OrderHandoffShape>) => Effect.Effect<void, never, Scope.Scope>
}

export const makeOrderExecutor = (deps: OrderExecutorDeps, options: OrderExecutorOptions = {}): OrderExecutorShape => {
  const { sql, trades, callers } = deps
  const leases = deps.leases ?? makeRowLeases(sql)
  const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(e, SqlClient.SqlClient, sql)

  const submit = (order: OrderRow): Effect.Effect<ExecutionEvent | undefined, SqlError> =>
    Effect.gen(function* () {
      const atMs = yield* Clock.currentTimeMillis
      if (order.payer !== "main") return refused("payer_unsupported", `payer ${order.payer} cannot execute an order; only main`, atMs)
      const who = yield* callers.callerOf(order, atMs)
      if (who._tag === "Refused") return refused(who.reason, who.message, atMs)
      return yield* trades.submit(who.caller, tradeRequestOf(order), false).pipe(
        Effect.map((answer) => ("accepted" in answer ? undefined : eventOfTrade(answer, atMs))),
        Effect.catchTags({
          TradeError: (e) => Effect.succeed(eventOfRefusal(e, atMs)),
          SpendError: (e) => Effect.succeed(eventOfSpendRefusal(e, atMs))
        })
      )
    })

  const runner: AttemptRunner<string, OrderRow, ExecutionEvent, ExecutionOutput, SqlError> = makeAttemptRunner({
    machine: { step, inFlight, owed },
    store: {
      kind: ORDER_LEASE_KIND,
      leaseKey: (id) => id,
      load: (id) => withSql(orderById(id)),
      save: (id, _prev, next) => {
        if (next.status === "executed" && next.tradeSignature !== null && next.amountOutRaw !== null) {
          return markExecuted(id, { signature: next.tradeSignature, amountOutRaw: next.amountOutRaw }, next.settledAtMs ?? next.updatedAtMs)
        }
        if (next.status === "failed") {
          return markFailed(id, { reason: next.failureReason ?? "refused", message: next.failureMessage ?? "", signature: next.tradeSignature }, next.settledAtMs ?? next.updatedAtMs)
        }
        return Effect.succeed(false)
      },
      inFlight: withSql(triggeredIds(options.passMax ?? 1000))
    },
    ports: {
      perform: (_id, order, output) => {
        switch (output._tag) {
          case "Submit":
            return submit(order)
          case "Settled":
            return Effect.as(
              Effect.logInfo(`limit order ${output.status}`).pipe(
                Effect.annotateLogs({ orderId: order.id, accountId: order.accountId, clientTradeId: order.clientTradeId, reason: order.failureReason ?? "" })
              ),
              undefined
            )
        }
      }
    },
    leases,
    sql,
    ...(options.retrySchedule !== undefined ? { recoverySchedule: options.retrySchedule } : {})
  })

  const logged = <A>(what: string, e: Effect.Effect<A, SqlError>) => e.pipe(Effect.catchAllCause((cause) => Effect.logWarning(`orders: ${what} failed; the next pass retries`, cause)))

  const run = (handoff: Option.Option<OrderHandoffShape>): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function* () {
      if (Option.isSome(handoff)) {
        yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(handoff.value.queue), (id) => logged(`executing order ${id}`, runner.takeOver(id)))))
      }
      const pass = logged("the triggered orders' pass", runner.recover).pipe(
        Effect.tap((n) => (typeof n === "number" && n > 0 ? Effect.logInfo(`orders: executing ${n} triggered orders no live process drove`) : Effect.void))
      )
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(pass, Effect.sleep(Duration.millis(options.recoverIntervalMs ?? 1000)))))
    })

  return { execute: runner.takeOver, recover: runner.recover, run }
}
