/**
 * A transfer as an attempt of the one runner (`src/services/attempt/AttemptRunner.ts`): the pure
 * `TransferMachine` over the stored row, the row store (`transfers`, leases of kind `transfer`)
 * and the ports (send the signed bytes, wait for the chain's verdict). The machine's `Broadcast`
 * becomes `Send` (the signed bytes travel with the event that asked for them; the runner never
 * sends them again, so a crash after `sending` is saved never resends: only a TEE row keeps them,
 * for the Hood port's rebroadcast of the same bytes) and `Await`; a stored `sending` row
 * owes only `Await`. `Executed` is the store's: `transfer.executed` commits with `confirmed`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import type { RowLeases } from "../../db/RowLease.js"
import { awaitVerdict } from "../../platform/AwaitUntil.js"
import { type AttemptMachine, type AttemptPorts, type AttemptRunner, type AttemptStore, makeAttemptRunner } from "../attempt/AttemptRunner.js"
import { step, type TransferEvent, type TransferOutput, type TransferState } from "./TransferMachine.js"
import type { TransferRow, TransferStore } from "./TransferStore.js"

export const TRANSFER_LEASE_KIND = "transfer"

export interface TransferKey {
  readonly accountId: string
  readonly clientTransferId: string
}

export const transferLeaseKey = (k: TransferKey): string => JSON.stringify([k.accountId, k.clientTransferId])

export interface TransferInput {
  readonly event: TransferEvent
  /** The row `Built` or `Recorded` inserts. */
  readonly insert?: TransferRow
  /** The signed transaction to send if the step asks to broadcast. */
  readonly wire?: string
}

export type AttemptOutput = TransferOutput | { readonly _tag: "Send"; readonly wire: string } | { readonly _tag: "Await" }

export const stateOf = (r: TransferRow): TransferState =>
  r.state === "built"
    ? { _tag: "built", requestHash: r.requestHash }
    : r.state === "failed"
      ? { _tag: "failed", requestHash: r.requestHash, signature: r.signature, error: r.error ?? "" }
      : { _tag: r.state, requestHash: r.requestHash, signature: r.signature }

const inFlight = (r: TransferRow): boolean => r.state === "sending"

export const transferMachine: AttemptMachine<TransferRow, TransferInput, AttemptOutput> = {
  step: (row, input) => {
    const state = row === undefined ? undefined : stateOf(row)
    const [next, outputs] = step(state, input.event)
    const mapped = outputs.flatMap((o): ReadonlyArray<AttemptOutput> =>
      o._tag === "Broadcast" ? (input.wire === undefined ? [{ _tag: "Await" }] : [{ _tag: "Send", wire: input.wire }, { _tag: "Await" }]) : [o]
    )
    if (next === state || next === undefined) return [row, mapped]
    const base = row ?? input.insert
    if (base === undefined) return [row, mapped]
    // A TEE row entering `sending` keeps the signed bytes it is sent with (the relay's signature the server cannot make again).
    const keeps = next._tag === "sending" && base.payer === "tee" && input.wire !== undefined ? { signedTransaction: input.wire } : {}
    return [{ ...base, state: next._tag, signature: next._tag === "built" ? base.signature : next.signature, error: next._tag === "failed" ? next.error : null, ...keeps }, mapped]
  },
  inFlight,
  owed: (r) => (inFlight(r) ? [{ _tag: "Await" }] : [])
}

export const transferStore = (store: TransferStore): AttemptStore<TransferKey, TransferRow, AttemptOutput> => ({
  kind: TRANSFER_LEASE_KIND,
  leaseKey: transferLeaseKey,
  load: (k) => store.get(k.accountId, k.clientTransferId),
  save: (_k, prev, next) => store.save(prev, next),
  inFlight: Effect.map(store.inFlight, (rows) => rows.map((r) => ({ accountId: r.accountId, clientTransferId: r.clientTransferId })))
})

/** What a chain side offers the rail: send signed bytes once, and one look at a sent transfer. */
/** The node refused a transfer's bytes: why, and whether they can never land (an unknown blockhash). */
export interface TransferSendRefused {
  readonly message: string
  readonly final: boolean
}

/**
 * Whether the signed bytes left this server: a TEE row's transaction was handed to its caller by
 * the sign relay. The node refusing them now (a preflight failure, a balance short now; on Hood
 * "already known" or "nonce too low") does not stop the caller broadcasting the same bytes while
 * they can still land, so such a refusal decides nothing and the verdict by chain settles the row
 * (on Solana `never_lands` once the blockhash expired; on Hood a receipt or the wallet's mined
 * nonce passing the row's). The embedded wallet's (`main`) bytes are the server's alone: a refusal
 * fails the row. The trade rail's rule is the same (`TradeAttempt.ts`).
 */
const callerHoldsBytes = (row: TransferRow): boolean => row.payer === "tee"

export interface TransferChainPort {
  /** A failure is the node's refusal; what it decides is the rail's (`transferPorts`, `callerHoldsBytes`). */
  readonly send: (wire: string) => Effect.Effect<void, TransferSendRefused>
  readonly observe: (row: TransferRow) => Effect.Effect<{ readonly outcome: "landed" | "reverted" | "never_lands" | "pending"; readonly error?: string }, unknown>
}

export interface TransferPortsContext {
  readonly chainOf: (chain: TransferRow["chain"]) => TransferChainPort
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
  /** Records what became of a TEE build's sign claim (only one the relay signed); absent: claims only expire. */
  readonly settleClaim?: ((claimId: string, outcome: "confirmed" | "failed") => Effect.Effect<void, unknown>) | undefined
}

export const transferPorts = (ctx: TransferPortsContext): AttemptPorts<TransferKey, TransferRow, TransferInput, AttemptOutput, never> => ({
  perform: (_key, row, output) => {
    switch (output._tag) {
      case "Send":
        return ctx.chainOf(row.chain).send(output.wire).pipe(
          Effect.as(undefined),
          Effect.catchAll((refused) =>
            callerHoldsBytes(row) && !refused.final
              ? Effect.as(
                  Effect.logInfo("a TEE transfer the node refused may still land (its caller holds the bytes): the chain decides").pipe(
                    Effect.annotateLogs({ chain: row.chain, signature: row.signature ?? "", refusal: refused.message })
                  ),
                  undefined
                )
              : Effect.succeed<TransferInput>({ event: { _tag: "Observed", outcome: "reverted", error: `the node refused the transaction: ${refused.message}` } })
          )
        )
      case "Await":
        if (!inFlight(row)) return Effect.succeed(undefined)
        return Effect.map(
          awaitVerdict(ctx.chainOf(row.chain).observe(row), (seen) => seen.outcome !== "pending", {
            what: "the transfer's verdict",
            intervalMs: ctx.pollIntervalMs,
            timeoutMs: ctx.confirmTimeoutMs
          }),
          Option.match({
            onNone: () => undefined,
            onSome: (seen): TransferInput => ({ event: { _tag: "Observed", outcome: seen.outcome, ...(seen.error !== undefined ? { error: seen.error } : {}) } })
          })
        )
      case "Executed":
        return Effect.as(
          Effect.logInfo("transfer executed").pipe(Effect.annotateLogs({ accountId: row.accountId, clientTransferId: row.clientTransferId, signature: output.signature })),
          undefined
        )
      case "SettleClaim": {
        // Best effort: a claim left unsettled only expires (its bytes' fate is the transfer's, settled already).
        const claimId = row.claimId
        if (claimId === null || ctx.settleClaim === undefined) return Effect.succeed(undefined)
        return Effect.as(
          ctx.settleClaim(claimId, output.outcome).pipe(Effect.catchAll((e) => Effect.logWarning("a transfer's sign claim was not settled; it expires", e))),
          undefined
        )
      }
      default:
        // Answers (`Refuse`, `Replay`, `Pending`) are the caller's.
        return Effect.succeed(undefined)
    }
  }
})

export type TransferRunner = AttemptRunner<TransferKey, TransferRow, TransferInput, AttemptOutput, never>

export const makeTransferRunner = (
  ctx: TransferPortsContext & { readonly sql: SqlClient.SqlClient; readonly leases: RowLeases; readonly store: TransferStore }
): TransferRunner => makeAttemptRunner({ machine: transferMachine, store: transferStore(ctx.store), ports: transferPorts(ctx), leases: ctx.leases, sql: ctx.sql })
