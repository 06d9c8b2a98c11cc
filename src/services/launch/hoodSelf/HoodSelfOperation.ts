/**
 * A Hood TEE build's sequenced operation (launch spec 2.3, 3.4, endpoint rule 4), driven by its
 * pure machine (`HoodOperation.step`): each confirm reads the chain for the sent legs, takes the
 * signed next leg (recorded, hash and bytes, before it is broadcast), reissues a reverted fee leg
 * on a fresh nonce (a later leg whose relay-signed bytes already landed is recorded mined, not
 * reissued), decides the pending next leg from its sign claim (`pendingLegVerdict`: reissued at
 * the same nonce once its claim can no longer be signed and never was; its relay-signed bytes, sent
 * by the agent, recorded as the chain shows them), and records the launch (`record`) once every leg
 * is mined. The stored operation is compare-and-swapped: a confirm that lost the race writes nothing.
 */
import { Effect } from "effect"
import { type Address, getAddress, type Hex, keccak256, parseTransaction, recoverTransactionAddress, serializeTransaction } from "viem"
import { type HoodOperation, type HoodOperationLeg, step as stepOperation } from "../HoodOperation.js"
import type { HoodSelfConfirmInput } from "../HoodSelfLaunch.js"
import { launchStorage } from "../internal/LaunchGates.js"
import { failOnChainFailure, updateOperation } from "../internal/SelfBuilds.js"
import type { AttemptRef, LaunchRecord } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfContext, Stored } from "./HoodSelfContext.js"
import { makeHoodSelfLegs } from "./HoodSelfLegs.js"
import { OPERATION_WAIT_MS } from "./HoodSelfRules.js"
import type { HoodSelfSpend } from "./HoodSelfSpend.js"

const storage = launchStorage

/** Records the launch the chain shows for an attempt (`HoodSelfConfirm`'s verification). */
export type RecordLaunch = (
  row: LaunchRecord,
  stored: Stored,
  hashes: { signature: string; feeTxHash?: string | undefined; devBuySignature?: string | undefined }
) => Effect.Effect<StoredResult, LaunchError>

export const makeHoodSelfOperation = (ctx: HoodSelfContext, record: RecordLaunch, spend: HoodSelfSpend) => {
  const { chain, withSql } = ctx
  const { ledger } = ctx.deps
  const { reissue, decidePending } = makeHoodSelfLegs(ctx, spend)

  /** Compare-and-swap of the stored operation: a confirm that lost the race to another answers retryable and wrote nothing. */
  const saveOperation = (ref: AttemptRef, from: HoodOperation, to: HoodOperation) =>
    withSql(updateOperation(ref, from, to)).pipe(
      storage("recording the operation"),
      Effect.flatMap((saved) =>
        saved
          ? Effect.void
          : Effect.fail(launchFailure("launch_failed", "another confirm is advancing this operation; confirm again with the same operationId", { retryable: true, details: { reason: "build_in_progress" } }))
      )
    )

  /**
   * A reverted fee leg (3.4, "pay only the missing fee"): every later leg still pending is first
   * decided by `spend.supersede` (nothing is saved before this): unsigned, or signed bytes that can
   * never land → reissued; signed bytes that landed → recorded mined with their hash (`Landed`),
   * not reissued; signed bytes that can still land → the confirm fails retryable. The fee leg is
   * reissued at the payer's pending nonce and the legs still to reissue on the nonces after it.
   * Only when a dev-buy leg is among them are its new bytes reserved first (`spend.holdAgain`: a
   * hold the sweep released is decided anew; refused: nothing reissued).
   */
  const reissueFee = (caller: SelfCaller, stored: Stored, op: HoodOperation, fee: HoodOperationLeg) =>
    Effect.gen(function* () {
      let next = op
      for (const later of op.legs.filter((l) => l.index > fee.index && l.status === "pending")) {
        const landed = yield* spend.supersede(stored, later)
        if (landed !== undefined) next = stepOperation(next, { _tag: "Landed", leg: later.index, txHash: landed })
      }
      const moved = next.legs.filter((l) => l.index > fee.index && l.status === "pending")
      if (moved.some((l) => l.kind === "devBuy")) yield* spend.holdAgain(caller, stored)
      let nonce = yield* chain.rpc("nonce", (cl) => cl.getTransactionCount({ address: getAddress(stored.row.payer), blockTag: "pending" }))
      next = yield* reissue(caller, stored, next, fee, nonce)
      for (const later of moved) {
        nonce += 1
        next = yield* reissue(caller, stored, next, later, nonce)
      }
      return next
    })

  /**
   * Reads every sent leg through `chain.legOnChain` (the nonce pinned under the head, the receipt
   * read again): its receipt → `Mined` or `Reverted`; its nonce used by another transaction, on
   * that evidence → `Reverted` (it can never be mined); else no verdict: its stored bytes are
   * broadcast again (a crash or a refused send after the hash was recorded; a node refuses bytes
   * already mined). The pending next leg is then decided from its claim (`decidePending`). A
   * reverted fee leg is then reissued (`reissueFee`); a reverted buy is final (rule 4).
   */
  const observe = (caller: SelfCaller, stored: Stored, op: HoodOperation, handedBack?: string) =>
    Effect.gen(function* () {
      const from = getAddress(stored.row.payer)
      let next = op
      for (const leg of op.legs) {
        if (leg.status !== "sent" || leg.txHash === null) continue
        const seen = yield* chain.legOnChain(from, leg.txHash, leg.nonce)
        if (seen !== "open") next = stepOperation(next, { _tag: seen === "success" ? "Mined" : "Reverted", leg: leg.index })
        else if (leg.signedTransaction != null) {
          yield* chain.rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: leg.signedTransaction as Hex })).pipe(Effect.ignore)
        }
      }
      next = yield* decidePending(caller, stored, next, handedBack)
      const fee = next.legs.find((l) => l.status === "reverted" && l.kind === "feeTransfer")
      return fee === undefined ? next : yield* reissueFee(caller, stored, next, fee)
    })

  /** The signed `nextLeg`: exactly the leg's unsigned transaction, signed by the payer. */
  const signedLeg = (op: HoodOperation, payer: Address, signedTransaction: string) =>
    Effect.gen(function* () {
      const leg = op.nextLeg === null ? undefined : op.legs[op.nextLeg]
      const refused = launchFailure("validation_failed", "signedTransaction is not the operation's next leg signed by its wallet", { field: "signedTransaction", retryable: false })
      if (leg === undefined || leg.status !== "pending" || !/^0x[0-9a-fA-F]+$/.test(signedTransaction)) return yield* refused
      const parsed = yield* Effect.try({ try: () => parseTransaction(signedTransaction as Hex), catch: () => refused })
      const { r: _r, s: _s, v: _v, yParity: _y, ...fields } = parsed as typeof parsed & { r?: Hex; s?: Hex; v?: bigint; yParity?: number }
      const same = yield* Effect.try({ try: () => serializeTransaction(fields as Parameters<typeof serializeTransaction>[0]) === leg.unsignedTransaction, catch: () => refused })
      const signer = yield* Effect.tryPromise({ try: () => recoverTransactionAddress({ serializedTransaction: signedTransaction as never }), catch: () => refused })
      if (!same || getAddress(signer) !== payer) return yield* refused
      return { leg, hash: keccak256(signedTransaction as Hex) }
    })

  /** One step of a TEE operation: read the chain, take the signed next leg (recorded before it is sent), and record the launch once every leg is mined. */
  const advance = (caller: SelfCaller, row: LaunchRecord, stored: Stored, op0: HoodOperation, input: HoodSelfConfirmInput) =>
    Effect.gen(function* () {
      if (input.operationId !== op0.operationId) {
        return yield* launchFailure("validation_failed", "operationId does not name this launch's operation", { field: "operationId", retryable: false })
      }
      const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
      const payer = getAddress(stored.row.payer)
      let saved = op0
      const save = (to: HoodOperation) => (to === saved ? Effect.void : Effect.tap(saveOperation(ref, saved, to), () => Effect.sync(() => void (saved = to))))
      const handedBack = input.signedTransaction !== undefined && /^0x(?:[0-9a-fA-F]{2})+$/.test(input.signedTransaction) ? keccak256(input.signedTransaction as Hex) : undefined
      let op = yield* observe(caller, stored, op0, handedBack)
      yield* save(op)
      if (input.signedTransaction !== undefined) {
        const { leg, hash } = yield* signedLeg(op, payer, input.signedTransaction)
        // Recorded (hash and bytes) before it is broadcast: a crash or a refused send is retried from the record.
        op = stepOperation(op, { _tag: "Signed", leg: leg.index, txHash: hash, signedTransaction: input.signedTransaction })
        yield* save(op)
        yield* chain.rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: input.signedTransaction as Hex })).pipe(Effect.ignore)
        yield* chain.rpc("receipt", (c) => c.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: OPERATION_WAIT_MS })).pipe(Effect.ignore)
        op = yield* observe(caller, stored, op)
        yield* save(op)
      }
      if (op.state === "failed") {
        yield* failOnChainFailure(ledger, row)
        // createCurve reverted: the dev-buy hold is decided by its fee and buy legs' claims (`settleDead`; signed bytes can still move ETH).
        yield* spend.settleFailed(stored)
        return yield* launchFailure("launch_failed", "createCurve reverted on chain; build again with the same clientLaunchId", { retryable: true, details: { reason: "reverted" } })
      }
      if (op.nextLeg !== null) return { clientLaunchId: row.clientLaunchId, operation: op } satisfies StoredResult
      const hashOf = (kind: string) => op.legs.find((l) => l.kind === kind)?.txHash ?? undefined
      const result = yield* record(row, { ...stored, build: { ...stored.build, operation: op } }, { signature: hashOf("createCurve")!, feeTxHash: hashOf("feeTransfer"), devBuySignature: hashOf("devBuy") })
      yield* save(stepOperation(op, { _tag: "Recorded" })).pipe(Effect.ignore)
      return result
    })

  return { advance }
}
