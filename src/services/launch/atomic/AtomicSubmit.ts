/**
 * An atomic submit (launch spec 2.4, endpoint rule 7): the bundle consumed under the row lock
 * (`SubmitBegun`; a second submit meanwhile is 409 retryable), the client legs checked (a bytes
 * refusal is resubmittable, a shape refusal consumes the bundle), the owner's legs signed
 * (`Signing` stored first: holds kept from here), then the runner sends once. A repeat after a
 * send answers the stored outcome; nothing is ever sent twice.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Effect } from "effect"
import { fromSolana, type LaunchError, launchFailure } from "../LaunchError.js"
import type { AtomicCaller, AtomicSubmitAnswer, AtomicSubmitInput } from "./AtomicLaunch.js"
import type { AtomicBundles } from "./AtomicBundles.js"
import { decodeBuild } from "./AtomicRules.js"
import { bundleIo } from "./BundleResume.js"
import { findBundle } from "./BundleStore.js"
import { checkSubmittedLegs } from "./SubmitCheck.js"

export const makeAtomicSubmit = (b: AtomicBundles, sql: SqlClient.SqlClient) => {
  const { withSql, runner, stored, notFound, load, drive, ioOf, inProgress, settle, answerSent } = b
  const { ledger, solana } = b.deps

  const submit = (caller: AtomicCaller, input: AtomicSubmitInput): Effect.Effect<AtomicSubmitAnswer, LaunchError> =>
    Effect.gen(function* () {
      if (runner === undefined) {
        return yield* launchFailure("block_engine_missing", "Atomic launches need a block engine; this server has none configured (BLOCK_ENGINE_URL)", { retryable: true })
      }
      const first = yield* load(input.bundleId)
      if (first === undefined || first.accountId !== caller.accountId) return yield* notFound()
      return yield* drive(input.bundleId, inProgress(), submitDriven(caller, input))
    })

  const submitDriven = (caller: AtomicCaller, input: AtomicSubmitInput) =>
    Effect.gen(function* () {
      // Consume under the row lock: the first submit moves `built` to `submitting` before verifying anything.
      const nowMs = yield* Clock.currentTimeMillis
      const consumed = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const row = yield* findBundle(input.bundleId, decodeBuild, true)
            if (row === undefined) return undefined
            const io = yield* bundleIo(ledger, row)
            if (row.state.phase === "built" && nowMs >= row.expiresAtMs) {
              return { row, state: yield* runner!.apply(row.state, { _tag: "Expire", atMs: nowMs }, io) }
            }
            return { row, state: yield* runner!.apply(row.state, { _tag: "SubmitBegun", atMs: nowMs }, io) }
          })
        )
        .pipe(withSql, stored("consuming the bundle"))
      if (consumed === undefined) return yield* notFound()
      const { row } = consumed
      let s = consumed.state
      const io = yield* ioOf(row)
      if (s.phase !== "submitting" || row.state.phase !== "built") {
        // Not this call's to run: the stored outcome (one recovery pass first for an unknown one), never a resend.
        if (s.phase === "submitting" || s.phase === "signing") return yield* inProgress()
        if (s.phase === "sent") s = yield* settle({ ...row, state: s })
        const answer = answerSent(row, s)
        if (answer !== undefined) return answer
        return yield* notFound()
      }
      const legs = row.build.legs.map((l) => ({ index: l.index, signer: l.signer, assembled: { wireBase64: l.wireBase64, messageBase64: l.messageBase64, bytes: l.bytes } }))
      const check = checkSubmittedLegs(legs, input.signedTxsBase64)
      if (check._tag === "Refused") {
        yield* runner!.apply(s, { _tag: "SubmitRefused", kind: check.kind, detail: check.detail, atMs: yield* Clock.currentTimeMillis }, io).pipe(stored("refusing the submit"))
        return yield* check.kind === "bytes"
          ? launchFailure("unrecognized_transaction", `${check.detail}; nothing was signed or sent: sign the leg exactly as built and submit again before expiresAt`, { field: check.field, retryable: false })
          : launchFailure("validation_failed", `${check.detail}; the bundle was consumed: build again`, { field: check.field, retryable: false })
      }
      s = yield* runner!.apply(s, { _tag: "Signing", atMs: yield* Clock.currentTimeMillis }, io).pipe(stored("recording the signing"))
      const wires: string[] = []
      for (let i = 0; i < check.wires.length; i++) {
        const w = check.wires[i]
        if (w !== null && w !== undefined) {
          wires.push(w)
          continue
        }
        const signed = yield* Effect.either(solana.signEmbedded(caller.accountId, row.build.legs[i]!.wireBase64))
        if (signed._tag === "Left") {
          // Nothing left: the attempt fails, the holds stay (rule 7: owner signing had started).
          yield* runner!.apply(s, { _tag: "SendAbandoned", atMs: yield* Clock.currentTimeMillis }, io).pipe(stored("abandoning the bundle"))
          return yield* fromSolana(signed.left)
        }
        wires.push(signed.right)
      }
      const after = yield* runner!.send(s, wires, row.build.buyers, row.mint, row.build.lastValidBlockHeight, io).pipe(stored("sending the bundle"))
      const answer = answerSent(row, after)
      if (answer === undefined) return yield* Effect.dieMessage(`AtomicLaunch: bundle ${row.bundleId} sent but has no submit answer (${after.phase})`)
      return answer
    })

  return { submit }
}
