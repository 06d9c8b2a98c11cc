/**
 * What a service that sends its own Solana transactions needs from the RPC, in one place: bounded
 * reads (each failure the caller's own "chain unavailable" error), sending signed bytes once (a
 * node's refusal is `Refused`; a lost answer is not, the chain decides, and neither is "already
 * processed", which says these bytes reached the chain), and one look at a
 * signature: landed, reverted, can never land (its blockhash expired unlanded), or pending.
 * Confirmation is at `confirmed`.
 */
import {
  type Base64EncodedWireTransaction,
  isSolanaError,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  signature as asSignature
} from "@solana/kit"
import { Effect, Either } from "effect"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import { createNodeSolanaRpc } from "../../internal/JsonRpcHttp.js"
import { transactionErrorText } from "../launch/LaunchFailure.js"
import { causedBy } from "./NodeRefusals.js"

export interface Observed {
  readonly outcome: "landed" | "reverted" | "never_lands" | "pending"
  readonly error?: string
}

export interface Refused {
  readonly _tag: "Refused"
  readonly message: string
  /** The node's error, for a caller that reads which refusal it was (`causedBy`, `customCodeOf`). */
  readonly cause: unknown
}

export const makeTransactionWatch = <E>(rpcUrl: string, unavailable: (message: string) => E, timeoutMs = 5_000) => {
  const rpc = createNodeSolanaRpc(rpcUrl)

  /**
   * One chain read, bounded by `timeoutMs`: its own abort signal aborts the call when the deadline
   * passes (failing "timed out") or the fiber is interrupted. One timer and no fiber: a
   * `timeoutFail` race forks two fibers per read (with their fiber refs and the loser's
   * interruption), the larger part of a trade build's garbage.
   */
  const read = <A>(what: string, run: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, E> =>
    Effect.async<A, E>((resume) => {
      const controller = new AbortController()
      let settled = false
      const settle = (effect: Effect.Effect<A, E>) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(effect)
      }
      const timer = setTimeout(() => {
        settle(Effect.fail(unavailable(`${what} failed: timed out`)))
        controller.abort()
      }, timeoutMs)
      try {
        run(controller.signal).then(
          (a) => settle(Effect.succeed(a)),
          (e) => settle(Effect.fail(unavailable(`${what} failed: ${String(e)}`)))
        )
      } catch (e) {
        settle(Effect.fail(unavailable(`${what} failed: ${String(e)}`)))
      }
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        controller.abort()
      })
    })

  const send = (signedBase64: string): Effect.Effect<void, Refused> =>
    Effect.tryPromise({
      try: (signal) =>
        rpc.sendTransaction(signedBase64 as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" }).send({ abortSignal: signal }),
      catch: (e) => e
    }).pipe(
      Effect.asVoid,
      Effect.catchAll((e) =>
        // "Already processed": these very bytes (one signature) reached the chain before, by this
        // sender or another (a caller that broadcast its signed build itself). Their status decides.
        causedBy(e, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)
          ? Effect.logInfo("send: the node has these bytes already; their status decides")
          : isSolanaError(e)
            ? Effect.fail<Refused>({ _tag: "Refused", message: String(e), cause: e })
            : Effect.logWarning("send: answer lost; the chain decides", e)
      )
    )

  const statusOf = (signature: string) =>
    Effect.map(
      read("getSignatureStatuses", (signal) => rpc.getSignatureStatuses([asSignature(signature)], { searchTransactionHistory: true }).send({ abortSignal: signal })),
      (r) => r.value[0] ?? null
    )

  const observe = (signature: string, lastValidBlockHeight: bigint): Effect.Effect<Observed, E> =>
    Effect.gen(function* () {
      const status = yield* statusOf(signature)
      if (status !== null && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized")) {
        return (status.err === null ? { outcome: "landed" } : { outcome: "reverted", error: transactionErrorText(status.err) }) satisfies Observed
      }
      if (status !== null) return { outcome: "pending" } satisfies Observed
      const height = yield* read("getBlockHeight", (signal) => rpc.getBlockHeight({ commitment: "confirmed" }).send({ abortSignal: signal }))
      if (height <= lastValidBlockHeight) return { outcome: "pending" } satisfies Observed
      // Expired: one more look, in case it landed between the two reads.
      const again = yield* statusOf(signature)
      return (again === null ? { outcome: "never_lands" } : { outcome: "pending" }) satisfies Observed
    })

  /**
   * Polls `observe` (a failed read is a "not yet") until the signature settles or `deadlineMs`
   * (on `nowMs`) passes: then pending.
   */
  const settle = (signature: string, lastValidBlockHeight: bigint, deadlineMs: number, pollIntervalMs: number, nowMs: () => number): Effect.Effect<Observed> =>
    Effect.suspend(() =>
      awaitUntil(Effect.either(observe(signature, lastValidBlockHeight)), (seen) => Either.isRight(seen) && seen.right.outcome !== "pending", {
        what: `the outcome of ${signature}`,
        timeoutMs: Math.max(0, deadlineMs - nowMs()),
        intervalMs: pollIntervalMs
      })
    ).pipe(
      Effect.map((seen) => (Either.isRight(seen) ? seen.right : ({ outcome: "pending" } satisfies Observed))),
      Effect.catchTag("AwaitTimedOut", () => Effect.succeed({ outcome: "pending" } satisfies Observed))
    )

  return { rpc, read, send, observe, settle }
}
