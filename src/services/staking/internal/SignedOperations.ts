/**
 * `submit` and `confirm` of a linked or TEE build (spec document 2, 3.3). Submit broadcasts only a
 * transaction with every signature over the exact built message, once: the runner's conditional
 * save of `built` → `submitted` picks the one request that sends (it drives the operation under
 * its lease), the others are answered as the row stands. Confirm records a landing of the built
 * message made elsewhere without sending anything, also on an expired row.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { signedParts, toBase64 } from "../StakingChain.js"
import { type StakingError, stakingError } from "../StakingError.js"
import type { StakingCaller } from "../StakingInputs.js"
import { type Observation, type OperationEvent, type Output, step } from "../StakingMachine.js"
import { type OperationRow, stateOf } from "../StakingStore.js"
import type { StakeOperationView } from "../StakingViews.js"
import { buildNotFound, drivenElsewhere, operationView, refusal, replayView } from "./Answers.js"
import { settledAnswer, sha256Hex } from "./StakeBuild.js"
import type { StakingContext } from "./StakingContext.js"

export interface SubmitInput {
  readonly clientStakeId: string
  readonly signedTransaction: Uint8Array
}

export interface ConfirmInput {
  readonly clientStakeId: string
  readonly signature: string
}

/** The machine's answer for a stored row: its refusal, or the row as it stands. */
const answerOf = (row: OperationRow, outputs: ReadonlyArray<unknown>): Effect.Effect<StakeOperationView, StakingError> => {
  const refused = (outputs as ReadonlyArray<Output>).find((o) => o._tag === "Refuse")
  return refused?._tag === "Refuse" ? Effect.fail(refusal(refused.reason, row)) : Effect.succeed(replayView(row))
}

export const makeSignedOperations = (ctx: StakingContext) => {
  const { chain, store } = ctx

  const existing = (caller: StakingCaller, clientStakeId: string) =>
    Effect.flatMap(store.get(caller.accountId, clientStakeId), (row) => (row === undefined ? Effect.fail(buildNotFound()) : Effect.succeed(row)))

  const submit = (caller: StakingCaller, input: SubmitInput): Effect.Effect<StakeOperationView, StakingError | SqlError> =>
    Effect.gen(function* () {
      const row = yield* existing(caller, input.clientStakeId)
      const parts = signedParts(input.signedTransaction)
      if (parts === undefined) return yield* stakingError("wrong_message", "signedTransaction does not decode as a transaction")
      const exactMessage = parts.complete && sha256Hex(parts.messageBytes) === row.messageHash
      let nowHeightExpired = false
      if (row.state === "built" && exactMessage && row.lastValidBlockHeight !== null) {
        // A transaction past its blockhash can never land: the build is expired whatever the clock says.
        const seen = yield* chain.observe(parts.signature, row.lastValidBlockHeight)
        nowHeightExpired = seen.outcome === "never_lands"
      }
      const event: OperationEvent = { _tag: "Submit", signature: parts.signature, exactMessage, nowMs: nowHeightExpired ? Number.MAX_SAFE_INTEGER : yield* ctx.clock.currentTimeMillis }
      const applied = yield* ctx.operations
        .apply(row, row, { event, wire: toBase64(input.signedTransaction) })
        .pipe(Effect.catchTag("RowLeaseLost", () => drivenElsewhere({ ...row, signature: parts.signature })))
      switch (applied._tag) {
        case "Unchanged":
          return yield* answerOf(row, applied.outputs)
        case "Moved": {
          // Another request moved the row first (it sends): answered as the row stands now.
          const now = yield* existing(caller, input.clientStakeId)
          return yield* answerOf(now, step(stateOf(now), event)[1])
        }
        case "Saved":
          // An expired build is recorded expired and refused as the build it was.
          if (applied.outputs.some((o) => o._tag === "Refuse")) return yield* answerOf(row, applied.outputs)
          return yield* settledAnswer(ctx, applied.state, false)
      }
    })

  const confirm = (caller: StakingCaller, input: ConfirmInput): Effect.Effect<StakeOperationView, StakingError | SqlError> =>
    Effect.gen(function* () {
      const row = yield* existing(caller, input.clientStakeId)
      if (row.state === "confirmed") return operationView(row, true)
      const landedTx = yield* chain.landedMessage(input.signature)
      let landed: Observation
      if (landedTx === undefined) landed = row.lastValidBlockHeight === null ? "pending" : (yield* chain.observe(input.signature, row.lastValidBlockHeight)).outcome
      else landed = landedTx.err === null ? "landed" : "reverted"
      const exactMessage = landedTx === undefined ? true : sha256Hex(landedTx.messageBytes) === row.messageHash
      // A proven landing settles the row without its lease (nothing is sent).
      const applied = yield* ctx.operations
        .apply(row, row, { event: { _tag: "Confirm", signature: input.signature, exactMessage, landed } })
        .pipe(Effect.catchTag("RowLeaseLost", () => drivenElsewhere(row)))
      switch (applied._tag) {
        case "Unchanged":
          return yield* answerOf(row, applied.outputs)
        case "Moved":
          return operationView((yield* store.get(row.accountId, row.clientStakeId)) ?? row, false)
        case "Saved":
          return operationView(applied.state, false)
      }
    })

  return { submit, confirm }
}
