/**
 * A staking operation as an attempt of the one runner (`src/services/attempt/AttemptRunner.ts`):
 * the pure `StakingMachine` over the stored row, the row store (`staking_operations`, leases of
 * kind `staking_operation`) and the ports (send the signed bytes, wait for the chain's verdict,
 * settle the sign claim). The runner saves each state before any of these acts on it.
 *
 * The machine's `Broadcast` becomes `Send` (the signed bytes travel with the event that asked for
 * them: they are never stored, so a crash after `sending` is saved never resends) and `Await`; a
 * stored `sending` or `submitted` row owes only `Await`: it is settled from the chain.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import type { RowLeases } from "../../../db/RowLease.js"
import { type AttemptMachine, type AttemptPorts, type AttemptRunner, type AttemptStore, makeAttemptRunner } from "../../attempt/AttemptRunner.js"
import { awaitVerdict as awaitChainVerdict } from "../../../platform/AwaitUntil.js"
import type { WalletServiceShape } from "../../wallets/WalletService.js"
import type { Observed, StakingChain } from "../StakingChain.js"
import { type OperationEvent, type OperationState, type Output, step } from "../StakingMachine.js"
import { type OperationRow, stateOf, type StakingStore } from "../StakingStore.js"

/** The lease kind of staking operation rows; the key is the row's (account, clientStakeId). */
export const STAKING_LEASE_KIND = "staking_operation"

export interface OperationKey {
  readonly accountId: string
  readonly clientStakeId: string
}

export const stakingLeaseKey = (row: OperationKey): string => JSON.stringify([row.accountId, row.clientStakeId])

/** An event of the machine, with the new row a `Built` records and the signed bytes a `Broadcast` sends. */
export interface OperationInput {
  readonly event: OperationEvent
  /** The row `Built` inserts (its state is the machine's). */
  readonly insert?: OperationRow
  /** The signed transaction (base64) to send if the step asks to broadcast. */
  readonly wire?: string
}

export type OperationOutput = Output | { readonly _tag: "Send"; readonly wire: string } | { readonly _tag: "Await" }

const inFlight = (row: OperationRow): boolean => row.state === "sending" || row.state === "submitted"

/** The row after the machine moved it to `next`. Pure. */
const rowAfter = (row: OperationRow, next: OperationState): OperationRow => ({
  ...row,
  state: next._tag,
  ...("signature" in next && next.signature !== null ? { signature: next.signature } : {}),
  ...(next._tag === "failed" ? { error: next.error } : {})
})

/** `StakingMachine.step` over stored rows. Pure; the same row when nothing changes. */
export const operationMachine: AttemptMachine<OperationRow, OperationInput, OperationOutput> = {
  step: (row, input) => {
    const state = row === undefined ? undefined : stateOf(row)
    const [next, outputs] = step(state, input.event)
    const mapped = outputs.flatMap((o): ReadonlyArray<OperationOutput> =>
      o._tag === "Broadcast" ? (input.wire === undefined ? [{ _tag: "Await" }] : [{ _tag: "Send", wire: input.wire }, { _tag: "Await" }]) : [o]
    )
    if (next === state || next === undefined) return [row, mapped]
    const base = row ?? input.insert
    if (base === undefined) return [row, mapped]
    return [rowAfter(base, next), mapped]
  },
  inFlight,
  owed: (row) => (inFlight(row) ? [{ _tag: "Await" }] : [])
}

export const operationStore = (store: StakingStore): AttemptStore<OperationKey, OperationRow, OperationOutput> => ({
  kind: STAKING_LEASE_KIND,
  leaseKey: stakingLeaseKey,
  load: (key) => store.get(key.accountId, key.clientStakeId),
  save: (key, prev, next) =>
    prev === undefined
      ? store.insert(next)
      : store.transition(key.accountId, key.clientStakeId, [prev.state], next.state, {
          ...(next.signature !== null ? { signature: next.signature } : {}),
          ...(next.error !== null ? { error: next.error } : {})
        }),
  inFlight: Effect.map(store.inFlight, (rows) => rows.map((r) => ({ accountId: r.accountId, clientStakeId: r.clientStakeId })))
})

export interface OperationPortsContext {
  readonly chain: StakingChain
  readonly wallets: WalletServiceShape
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
}

/** The chain's verdict on a sent operation within the deadline; `None`: still pending. */
export const awaitVerdict = (ctx: OperationPortsContext, row: OperationRow): Effect.Effect<Option.Option<Observed>> =>
  awaitChainVerdict(ctx.chain.observe(row.signature ?? "", row.lastValidBlockHeight ?? 0n), (seen) => seen.outcome !== "pending", {
    what: "the staking transaction's verdict",
    intervalMs: ctx.pollIntervalMs,
    timeoutMs: ctx.confirmTimeoutMs
  })

export const observedEvent = (seen: Observed): OperationInput => ({
  event: { _tag: "Observed", outcome: seen.outcome, ...(seen.error !== undefined ? { error: seen.error } : {}) }
})

export const operationPorts = (ctx: OperationPortsContext): AttemptPorts<OperationKey, OperationRow, OperationInput, OperationOutput, never> => ({
  perform: (_key, row, output) => {
    switch (output._tag) {
      case "Send":
        return Effect.map(Effect.either(ctx.chain.send(output.wire)), (sent) =>
          sent._tag === "Left" ? { event: { _tag: "Observed", outcome: "reverted", error: `the node refused the transaction: ${sent.left.message}` } } : undefined
        )
      case "Await":
        // A send the node refused settled the row already: nothing left to wait for.
        return inFlight(row) ? Effect.map(awaitVerdict(ctx, row), Option.match({ onNone: () => undefined, onSome: observedEvent })) : Effect.succeed(undefined)
      case "RecordConfirmed":
        return Effect.gen(function* () {
          if (row.claimId !== null) yield* ctx.wallets.settleClaim(row.claimId, "confirmed").pipe(Effect.ignore)
          yield* Effect.logInfo("staking operation confirmed").pipe(
            Effect.annotateLogs({ accountId: row.accountId, clientStakeId: row.clientStakeId, action: row.action, signature: output.signature })
          )
          return undefined
        })
      default:
        // Answers (`Refuse`, `Replay`) are the caller's; `Broadcast` became `Send` and `Await`.
        return Effect.succeed(undefined)
    }
  }
})

export type OperationRunner = AttemptRunner<OperationKey, OperationRow, OperationInput, OperationOutput, never>

export const makeOperationRunner = (
  ctx: OperationPortsContext & { readonly sql: SqlClient.SqlClient; readonly leases: RowLeases; readonly store: StakingStore }
): OperationRunner => makeAttemptRunner({ machine: operationMachine, store: operationStore(ctx.store), ports: operationPorts(ctx), leases: ctx.leases, sql: ctx.sql })
